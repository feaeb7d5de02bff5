"""Our suite's real brokers for the plugin's ``kafka`` fixture (``fakebroker.pytest_plugin``:
``--kafka=fake|real|both``, the ``fake_kafka`` and ``fake_only`` markers), imported by
tests/conftest.py.

Under ``--kafka=real`` a test runs on the session's Apache Kafka 4.4.0 broker
(tests/real_kafka.py), the session's own, so it is *exclusive*: made fresh before each test
(no groups, no topics but the marker's: ``RealCluster.reset``) and tests keep their names
unchanged. It has one node: a test whose marker asks for several brokers (``brokers=2`` or
3) runs on the plugin's local Kafka of ``--kafka-nodes N`` nodes (``real_kafka_cluster``,
exclusive too) when N is at least that many; with fewer nodes (the default 1) it is skipped
saying so, or fails under CI (tests/absent.py): never run on fewer brokers than it asks for.
CI's 1-node step deselects those tests and its 3-node step runs them all
(``-m "real_kafka and (fake_kafka(brokers=2) or fake_kafka(brokers=3))"``). The marker's
``overrides`` (broker configs) start a real broker of their own with them in its
server.properties (one per distinct set, for the session); its
``kafka_version``, when it names the real broker's release (4.4), is what that broker is
already; any other option is a fakebroker setting, refused, but for the secure preset: a
marker carrying ``tests.security.SECURE``'s options, all of them with its values, gets the
session's secure Apache Kafka instead (tests/real_secure_kafka.py: started only when such a
test runs; its ACLs deleted too before each test).

A user's suite gets the plugin's own choice instead: the running cluster
``--kafka-bootstrap`` names, shared, each test isolated by a name prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any

import pytest

from fakebroker.protocol.releases import release_line
from fakebroker.real_cluster import RealCluster
from tests.absent import absent
from tests.real_kafka import KAFKA_VERSION, RealKafka, require_real_kafka, start_real_kafka
from tests.real_secure_kafka import SecureRealKafka
from tests.security import SECURE

# Marker options our real brokers honour: topics; overrides (a broker of their own); brokers
# (above 1: the --kafka-nodes cluster, when it has that many).
REAL_MARKER_OPTIONS = frozenset({"topics", "brokers", "overrides"})


@pytest.fixture(scope="session")
def real_cluster(real_kafka: RealKafka) -> Iterator[RealCluster]:
    """The session's real broker through FakeKafka's inspection API."""
    cluster = RealCluster(real_kafka.bootstrap_servers, shared=False).warm_up()
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def secure_real_cluster(secure_real_kafka: SecureRealKafka) -> Iterator[RealCluster]:
    """The session's secure real broker (the SECURE preset) through the inspection API."""
    cluster = RealCluster(secure_real_kafka.bootstrap_servers, secure_real_kafka.listeners,
                          secure_real_kafka.ssl, authorizer=True, shared=False).warm_up()
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def overridden_real_clusters(tmp_path_factory: pytest.TempPathFactory
                             ) -> Iterator[Callable[[Mapping[str, Any]], RealCluster]]:
    """Real brokers started with broker config overrides in their server.properties (as
    ``kafka-server-start.sh --override``): the cluster for a set of overrides, each set's
    broker started on first use and kept for the session."""
    from fakebroker.options import CLUSTER_SETTINGS

    require_real_kafka()
    started: dict[tuple[tuple[str, str], ...], RealCluster] = {}
    with ExitStack() as stack:
        def cluster(overrides: Mapping[str, Any]) -> RealCluster:
            key = CLUSTER_SETTINGS["overrides"].checked(overrides)
            if key not in started:
                broker = stack.enter_context(start_real_kafka(
                    tmp_path_factory.mktemp("real-kafka-overrides"), overrides=dict(key)))
                started[key] = RealCluster(broker.bootstrap_servers, shared=False).warm_up()
                stack.callback(started[key].close)
            return started[key]
        yield cluster


def _is_secure_preset(options: dict[str, Any]) -> bool:
    """The marker carries every option of SECURE, each with SECURE's value."""
    def same(a: Any, b: Any) -> bool:
        return (tuple(a) == tuple(b)) if isinstance(b, tuple) and isinstance(a, list | tuple) \
            else a == b
    return all(name in options and same(options[name], value) for name, value in SECURE.items())


def pytest_fakebroker_real_cluster(request: pytest.FixtureRequest,
                                   options: dict[str, Any]) -> RealCluster:
    """The real broker for a test's marker options (see the module doc)."""
    secure = _is_secure_preset(options)
    if release_line(str(options.get("kafka_version", KAFKA_VERSION))) \
            == release_line(KAFKA_VERSION):  # the fake answers as the real broker's release
        options = {k: v for k, v in options.items() if k != "kafka_version"}
    refused = sorted(set(options) - REAL_MARKER_OPTIONS - (set(SECURE) if secure else set()))
    if refused:
        pytest.fail(f"fake_kafka marker options {refused} set up the fake broker only: mark "
                    "the test @pytest.mark.fake_only(...) saying why (security settings: "
                    "the whole tests.security.SECURE preset, or none)", pytrace=False)
    if "overrides" in options:
        return request.getfixturevalue("overridden_real_clusters")(options["overrides"])
    if secure:
        return request.getfixturevalue("secure_real_cluster")
    wanted, nodes = options.get("brokers", 1), request.config.getoption("kafka_nodes")
    if wanted == 1:
        return request.getfixturevalue("real_cluster")
    if nodes < wanted:
        absent(f"the fake_kafka marker asks for {wanted} brokers; the session's real Kafka "
               f"has {nodes} node(s): run it with --kafka-nodes {wanted} (CI's 3-node step)")
    return request.getfixturevalue("real_kafka_cluster")  # the plugin's local Kafka
