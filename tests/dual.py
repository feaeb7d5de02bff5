"""One test body, two brokers: the ``kafka`` fixture and the ``--kafka`` option (pytest hooks,
imported by tests/conftest.py).

``pytest --kafka=fake`` (the default) runs every test that takes ``kafka`` on a fresh
FakeKafka shaped by the ``fake_kafka`` marker, as ``fake_kafka`` does; ``--kafka=real`` runs
them on the session's real Apache Kafka broker (tests/real_kafka.py) through FakeKafka's
inspection API over Kafka's own APIs (tests/real_cluster.py), made fresh for each test: no
groups, no topics but the marker's; ``--kafka=both`` runs each on both (ids ``[fake]`` and
``[real]``). On the real broker the marker's ``topics`` are created and ``brokers`` is
ignored (it has one node), its ``overrides`` (broker configs) start a real broker of their own
with them in its server.properties (one per distinct set, for the session); any other option
is a fakebroker setting, refused, but for the secure preset: a marker carrying
``tests.security.SECURE``'s options, all of them with its values, gets the session's secure
Apache Kafka instead (tests/real_secure_kafka.py: started only when such a test runs; its ACLs
deleted too before each test).

``@pytest.mark.fake_only("why")`` marks a test that needs what only the fake has (faults,
natural failures, the journal, fakebroker settings, several brokers): it takes ``kafka`` on
the fake only and is skipped under ``--kafka=real``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any

import pytest

from tests.real_cluster import RealCluster
from tests.real_kafka import RealKafka, require_real_kafka, start_real_kafka
from tests.real_secure_kafka import SecureRealKafka
from tests.security import SECURE

MODES = {"fake": ("fake",), "real": ("real",), "both": ("fake", "real")}
# Marker options the real broker honours: its topics; its one node serves any broker count.
REAL_MARKER_OPTIONS = frozenset({"topics", "brokers", "overrides"})


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kafka", choices=sorted(MODES), default="fake",
        help="which broker the `kafka` fixture's tests run on: fake (default), real (a real "
             "Apache Kafka 4.4.0, tests/real_kafka.py) or both",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kafka" not in metafunc.fixturenames:
        return
    brokers = MODES[metafunc.config.getoption("kafka")]
    if metafunc.definition.get_closest_marker("fake_only"):
        brokers = ("fake",)
    metafunc.parametrize("kafka", [
        pytest.param(b, marks=pytest.mark.real_kafka) if b == "real" else b for b in brokers
    ], indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every fake_only marker says why; under ``--kafka=real`` its tests are skipped."""
    real_only = config.getoption("kafka") == "real"
    for item in items:
        marker = item.get_closest_marker("fake_only")
        if marker is None:
            continue
        if len(marker.args) != 1 or not isinstance(marker.args[0], str) or not marker.args[0]:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.fake_only needs one reason")
        if real_only:
            item.add_marker(pytest.mark.skip(reason=f"fake only: {marker.args[0]}"))


@pytest.fixture(scope="session")
def real_cluster(real_kafka: RealKafka) -> Iterator[RealCluster]:
    """The session's real broker through FakeKafka's inspection API."""
    cluster = RealCluster(real_kafka.bootstrap_servers).warm_up()
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def secure_real_cluster(secure_real_kafka: SecureRealKafka) -> Iterator[RealCluster]:
    """The session's secure real broker (the SECURE preset) through the inspection API."""
    cluster = RealCluster(secure_real_kafka.bootstrap_servers, secure_real_kafka.listeners,
                          secure_real_kafka.ssl, authorizer=True).warm_up()
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
                started[key] = RealCluster(broker.bootstrap_servers).warm_up()
                stack.callback(started[key].close)
            return started[key]
        yield cluster


def _is_secure_preset(options: dict[str, Any]) -> bool:
    """The marker carries every option of SECURE, each with SECURE's value."""
    def same(a: Any, b: Any) -> bool:
        return (tuple(a) == tuple(b)) if isinstance(b, tuple) and isinstance(a, list | tuple) \
            else a == b
    return all(name in options and same(options[name], value) for name, value in SECURE.items())


@pytest.fixture
def kafka(request: pytest.FixtureRequest) -> Any:
    """The broker under test (see the module doc): a ``FakeKafka`` or a ``RealCluster``."""
    if getattr(request, "param", "fake") == "fake":
        return request.getfixturevalue("fake_kafka")
    marker = request.node.get_closest_marker("fake_kafka")
    options = dict(marker.kwargs) if marker else {}
    secure = _is_secure_preset(options)
    refused = sorted(set(options) - REAL_MARKER_OPTIONS - (set(SECURE) if secure else set()))
    if refused:
        pytest.fail(f"fake_kafka marker options {refused} set up the fake broker only: mark "
                    "the test @pytest.mark.fake_only(...) saying why (security settings: "
                    "the whole tests.security.SECURE preset, or none)", pytrace=False)
    if "overrides" in options:
        cluster: RealCluster = request.getfixturevalue("overridden_real_clusters")(
            options["overrides"])
        cluster.reset(options.get("topics"))
        return cluster
    cluster = request.getfixturevalue("secure_real_cluster" if secure else "real_cluster")
    cluster.reset(options.get("topics"))
    return cluster
