"""pytest plugin (registered by the ``pytest11`` entry point): fake Kafka fixtures, and one
test body on the fake and on a real Apache Kafka cluster.

* ``fake_kafka`` — a fresh ``FakeKafka`` cluster per test, stopped afterwards. Shape it with
  ``@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})`` (any ``FakeKafka`` argument).
* ``fake_kafka_factory`` — call it for more clusters in one test; all stop after the test.
* ``kafka`` — the broker ``--kafka`` names: ``fake`` (the default) gives ``fake_kafka``;
  ``real`` a real Kafka cluster through the same inspection API (``name``, ``records``,
  ``offsets``, ``committed``, ``group``, ``transactions``, ``topics``, ``create_topic``,
  ``bootstrap_servers``: ``fakebroker.real_cluster.RealCluster``); ``both`` runs each such
  test twice, with ids ``[fake]`` and ``[real]``. The real cluster is the session's
  (``real_kafka_cluster``): the running one ``--kafka-bootstrap HOST:PORT`` names (reached
  with the Java client properties of ``--kafka-client-config FILE``: SASL, TLS;
  ``kafka.client_config`` gives them to the tests, ``fakebroker.client_config.for_librdkafka``
  as confluent-kafka's; the file's ``bootstrap.servers`` stands for ``--kafka-bootstrap``),
  shared, each test isolated by a name prefix of its own (``kafka.name("orders")``; its topics
  and groups are deleted after it); or else a local Apache Kafka the session starts for itself
  (``local_kafka``: installed by ``fakebroker kafka install``, ``--kafka-nodes N`` nodes, 1 by
  default), made fresh before each test (no topics, no groups) with names unchanged. Either
  way the marker's ``topics`` are created; its ``brokers`` shapes the fake (the real cluster
  has the brokers it has: ``--kafka-nodes 3`` gives a test marked ``brokers=3`` the same
  count), and any other marker option (a fakebroker setting) fails the test on the real
  cluster: mark such a test ``@pytest.mark.fake_only("why")``, which runs it on the fake only
  and skips it under ``--kafka=real``. A suite can choose other real clusters per test with
  the ``pytest_fakebroker_real_cluster`` hook (``fakebroker.pytest_hookspecs``).
* ``local_kafka`` — the session's local Apache Kafka itself
  (``fakebroker.real.launch.KafkaCluster``: its nodes, to stop one and start it again),
  started on first use with ``--kafka-nodes`` nodes (each broker and controller; replication
  factor N, min.insync.replicas 2 from two nodes on) and stopped, its folder removed, after the
  session (each pytest-xdist worker its own).
* ``spark_kafka`` — a local SparkSession with Spark's own Kafka connector on its classpath
  (``fakebroker.spark.session``), one per test module; needs fakebroker's ``spark`` extra and the
  connector's jars (a test using it fails naming a missing jar and how to install it).

Every fake cluster and local Kafka listens on OS-assigned loopback ports, and every test on a
shared real cluster has its own prefix (the session's random part and the pytest-xdist worker
in it), so tests are safe under pytest-xdist.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fakebroker.sync import FakeKafka

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from fakebroker.real.launch import KafkaCluster
    from fakebroker.real_cluster import RealCluster

MODES = {"fake": ("fake",), "real": ("real",), "both": ("fake", "real")}
# Marker options a real cluster honours: its topics are made; brokers is the fewest brokers the
# test runs on (the real cluster has the brokers it has: a test marked for more is skipped).
REAL_MARKER_OPTIONS = frozenset({"topics", "brokers"})
# This process's part of every real-cluster test's name prefix (random: sessions sharing a
# cluster never meet), and the tests' numbers after it.
SESSION = secrets.token_hex(3)
_TESTS = itertools.count(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakebroker", "fakebroker: one test body, the fake or real Kafka")
    group.addoption(
        "--kafka", choices=sorted(MODES), default="fake",
        help="which broker the `kafka` fixture's tests run on: fake (default), real (the "
             "cluster --kafka-bootstrap names) or both (ids [fake] and [real])")
    group.addoption(
        "--kafka-bootstrap", metavar="HOST:PORT", default=None,
        help="bootstrap servers of the running Kafka cluster --kafka=real uses (default: "
             "the client config's bootstrap.servers); shared: each test has its own topic "
             "and group names, deleted after it")
    group.addoption(
        "--kafka-client-config", metavar="FILE", default=None,
        help="Java client properties reaching that cluster (security.protocol, SASL, TLS: "
             "fakebroker.client_config), for the plugin's own connections and the tests' "
             "(kafka.client_config)")
    group.addoption(
        "--kafka-nodes", type=_node_count, default=1, metavar="N",
        help="without --kafka-bootstrap, --kafka=real starts a local Apache Kafka (`fakebroker "
             "kafka install`) of N nodes: a KRaft cluster of N brokers, replication factor N "
             "(default 1)")


def _node_count(text: str) -> int:
    count = int(text)
    if count < 1:
        raise ValueError(f"a cluster has at least one node, not {count}")
    return count


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from fakebroker import pytest_hookspecs

    pluginmanager.add_hookspecs(pytest_hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_kafka(**options): options of the fake_kafka fixture's cluster"
    )
    config.addinivalue_line(
        "markers", "fake_only(reason): needs what only the fake has (faults, the journal, "
        "fakebroker settings): the `kafka` fixture is the fake's, skipped under --kafka=real")
    config.addinivalue_line(
        "markers", "real_kafka: runs against a real Apache Kafka (the `kafka` fixture's "
        "[real] tests carry it); -m 'not real_kafka' skips them")


def _takes_our_kafka(metafunc: pytest.Metafunc) -> bool:
    """The test's ``kafka`` is this plugin's fixture (not a suite's own of that name)."""
    definitions = getattr(metafunc, "_arg2fixturedefs", {}).get("kafka")
    return bool(definitions) and getattr(definitions[-1].func, "__module__", None) == __name__


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kafka" not in metafunc.fixturenames or not _takes_our_kafka(metafunc):
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


@pytest.fixture
def fake_kafka_factory() -> Iterator[Callable[..., FakeKafka]]:
    """Start ``FakeKafka(**options)`` clusters on demand; each is stopped after the test."""
    started: list[FakeKafka] = []

    def start(**options: Any) -> FakeKafka:
        cluster = FakeKafka(**options).start()
        started.append(cluster)
        return cluster

    yield start
    for cluster in reversed(started):
        cluster.stop()


@pytest.fixture
def fake_kafka(request: pytest.FixtureRequest,
               fake_kafka_factory: Callable[..., FakeKafka]) -> FakeKafka:
    """A running fake Kafka cluster for this test (see the ``fake_kafka`` marker)."""
    marker = request.node.get_closest_marker("fake_kafka")
    options = dict(marker.kwargs) if marker else {}
    return fake_kafka_factory(**options)


@pytest.fixture(scope="session")
def local_kafka(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[KafkaCluster]:
    """The session's local Apache Kafka: ``--kafka-nodes`` KRaft nodes (see the module doc);
    the test fails, saying how to install it, when Kafka or a JDK is missing."""
    from fakebroker.real.launch import RealKafkaMissing, start_kafka_cluster

    if pytestconfig.getoption("kafka_bootstrap"):
        pytest.fail("local_kafka is the Kafka --kafka=real starts without --kafka-bootstrap",
                    pytrace=False)
    folder = tmp_path_factory.mktemp("local-kafka")
    try:
        cluster = start_kafka_cluster(folder, nodes=pytestconfig.getoption("kafka_nodes"))
    except RealKafkaMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    with cluster:
        yield cluster
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def real_kafka_cluster(request: pytest.FixtureRequest) -> Iterator[RealCluster]:
    """The session's real cluster: the running one ``--kafka-bootstrap`` names, shared by the
    session's tests (each isolated by its prefix: ``RealCluster.isolated``), or else
    ``local_kafka``, the session's own (cleared before each test); waits until it has a group
    coordinator and producer ids."""
    from fakebroker.client_config import read_properties
    from fakebroker.real_cluster import RealCluster

    config_file = request.config.getoption("kafka_client_config")
    config = read_properties(config_file) if config_file else {}
    bootstrap = request.config.getoption("kafka_bootstrap") or config.get("bootstrap.servers")
    if bootstrap:
        cluster = RealCluster(bootstrap, client_config=config).warm_up()
    else:
        local: KafkaCluster = request.getfixturevalue("local_kafka")
        cluster = RealCluster(local.bootstrap_servers, shared=False, local=local).warm_up()
    yield cluster
    cluster.close()


@pytest.hookimpl(trylast=True)
def pytest_fakebroker_real_cluster(request: pytest.FixtureRequest,
                                   options: dict[str, Any]) -> RealCluster:
    """The session's ``real_kafka_cluster``, for a marker that shapes nothing but the topics
    and the fake's broker count."""
    refused = sorted(set(options) - REAL_MARKER_OPTIONS)
    if refused:
        pytest.fail(f"fake_kafka marker options {refused} set up the fake broker only: mark "
                    "the test @pytest.mark.fake_only(...) saying why", pytrace=False)
    return request.getfixturevalue("real_kafka_cluster")


def name_prefix() -> str:
    """A new name prefix for a test on a shared real cluster: ``fakebroker-<session>-<worker>
    -<n>-`` (the worker is pytest-xdist's, ``main`` without it)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"fakebroker-{SESSION}-{worker}-{next(_TESTS)}-"


@pytest.fixture
def kafka(request: pytest.FixtureRequest) -> Iterator[FakeKafka | RealCluster]:
    """The broker under test, as ``--kafka`` names it (see the module doc): the test's
    ``fake_kafka``, or a real cluster through the same inspection API."""
    if getattr(request, "param", "fake") == "fake":
        yield request.getfixturevalue("fake_kafka")
        return
    marker = request.node.get_closest_marker("fake_kafka")
    options = dict(marker.kwargs) if marker else {}
    cluster: RealCluster = request.node.ihook.pytest_fakebroker_real_cluster(
        request=request, options=options)
    wanted = options.get("brokers", 1)
    if wanted > 1 and len(found := cluster.brokers) < wanted:
        pytest.skip(f"the fake_kafka marker asks for {wanted} brokers; the real cluster has "
                    f"{len(found)} (a local Kafka of {wanted} nodes: --kafka-nodes {wanted})")
    with cluster.isolated(name_prefix(), options.get("topics")) as isolated:
        yield isolated


@pytest.fixture(scope="module")
def spark_kafka() -> Iterator[SparkSession]:
    """A local SparkSession whose ``.format("kafka")`` is Spark's own connector, shared by the
    tests of a module and stopped (with its JVM) after them: see ``fakebroker.spark.session``.
    """
    from fakebroker.spark import session

    with session(app_name="fakebroker-tests") as spark:
        yield spark
