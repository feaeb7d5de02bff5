"""fakebroker: a fake Kafka broker for tests, speaking the real wire protocol over TCP.

``FakeKafka`` (synchronous, trio in a thread), ``open_cluster`` (trio), the ``fake_kafka``
pytest fixture, and the ``fakebroker serve`` command.
"""

from fakebroker.protocol.records import Record
from fakebroker.runtime import FakeCluster, open_cluster
from fakebroker.state.cluster import ClusterError
from fakebroker.sync import FakeKafka
from fakebroker.version import __version__

__all__ = ["ClusterError", "FakeCluster", "FakeKafka", "Record", "__version__", "open_cluster"]
