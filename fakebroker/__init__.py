"""fakebroker: a fake Kafka broker for tests, speaking the real wire protocol over TCP.

``FakeKafka`` (synchronous, trio in a thread), ``open_cluster`` (trio), the ``fake_kafka``
pytest fixture, and the ``fakebroker serve`` command.

The names below are imported when first used, so ``import fakebroker.cli`` (the command) or
``fakebroker.options`` does not pay for the broker's modules until it needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fakebroker.version import __version__

if TYPE_CHECKING:
    from fakebroker.protocol.errors import ClusterError
    from fakebroker.protocol.records import Record
    from fakebroker.runtime import FakeCluster, open_cluster
    from fakebroker.sync import ClusterStopped, FakeKafka

_WHERE = {
    "ClusterError": "fakebroker.protocol.errors",
    "ClusterStopped": "fakebroker.sync",
    "FakeCluster": "fakebroker.runtime",
    "FakeKafka": "fakebroker.sync",
    "Record": "fakebroker.protocol.records",
    "open_cluster": "fakebroker.runtime",
}

__all__ = ["ClusterError", "ClusterStopped", "FakeCluster", "FakeKafka", "Record", "__version__",
           "open_cluster"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'fakebroker' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
