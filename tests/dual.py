"""Our suite's real brokers for the plugin's ``kafka`` fixture (``fakebroker.pytest_plugin``:
``--kafka=fake|real|both``, the ``fake_kafka`` and ``fake_only`` markers), imported by
tests/conftest.py.

Under ``--kafka=real`` a test runs on the session's Apache Kafka 4.4.0 broker
(tests/real_kafka.py), the session's own, so it is *exclusive*: made fresh before each test
(no groups, no topics but the marker's: ``RealCluster.reset``) and tests keep their names
unchanged. It has one node: a marker's ``brokers`` is served with that count only when the
session runs ``--kafka-nodes N`` and the marker asks for N (N > 1): the test then runs on the
plugin's local Kafka of N nodes (``real_kafka_cluster``, exclusive too); other counts run on
the one node. The marker's ``overrides`` (broker configs) start a real broker of their own
with them in its server.properties (one per distinct set, for the session); its
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
from tests.real_kafka import KAFKA_VERSION, RealKafka, require_real_kafka, start_real_kafka
from tests.real_secure_kafka import SecureRealKafka
from tests.security import SECURE

# Marker options our real brokers honour: topics; overrides (a broker of their own); brokers
# (the --kafka-nodes cluster when they match, else one node).
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


def needs_brokers(kafka: Any, count: int) -> None:
    """For a test marked ``brokers=count`` that needs that many on either side: skip it on a
    real cluster of another size (the session's one node, unless ``--kafka-nodes count``)."""
    found = len(kafka.brokers)
    if found != count:
        pytest.skip(f"the marker asks for {count} brokers, this real cluster has {found}: run "
                    f"it with --kafka-nodes {count}")


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
    nodes = request.config.getoption("kafka_nodes")
    if nodes > 1 and options.get("brokers", 1) == nodes:
        return request.getfixturevalue("real_kafka_cluster")  # the plugin's local Kafka
    return request.getfixturevalue("real_cluster")
