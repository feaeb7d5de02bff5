"""pytest plugin (registered by the ``pytest11`` entry point): fake Kafka fixtures, and one
test body on the fake and on a real Apache Kafka cluster.

* ``fake_kafka`` — a fresh ``FakeKafka`` cluster per test, stopped afterwards. Shape it with
  ``@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})`` (any ``FakeKafka`` argument).
* ``fake_kafka_factory`` — call it for more clusters in one test; all stop after the test.
* ``kafka`` — the broker ``--kafka`` names: ``fake`` (the default) gives ``fake_kafka``;
  ``real`` a real Kafka cluster through the same inspection API (``name``, ``records``,
  ``offsets``, ``committed``, ``group``, ``transactions``, ``topics``, ``create_topic``,
  ``bootstrap_servers``: ``fakebroker.real_cluster.RealCluster``); ``both`` runs each such
  test twice, with ids ``[fake]`` and ``[real]``. The real cluster is the one
  ``--kafka-bootstrap HOST:PORT`` names (reached with the Java client properties of
  ``--kafka-client-config FILE``: SASL, TLS; ``kafka.client_config`` gives them to the
  tests, ``fakebroker.client_config.for_librdkafka`` as confluent-kafka's), shared by the
  session: each test is isolated by a name prefix of its own (``kafka.name("orders")``; its
  topics and groups are deleted after it), created with the marker's ``topics``; the
  marker's ``brokers`` shapes the fake only,
  and any other marker option (a fakebroker setting) fails the test on the real cluster:
  mark such a test ``@pytest.mark.fake_only("why")``, which runs it on the fake only and
  skips it under ``--kafka=real``. A suite can choose other real clusters per test with the
  ``pytest_fakebroker_real_cluster`` hook (``fakebroker.pytest_hookspecs``).
* ``spark_kafka`` — a local SparkSession with Spark's own Kafka connector on its classpath
  (``fakebroker.spark.session``), one per test module; needs fakebroker's ``spark`` extra and the
  connector's jars (a test using it fails naming a missing jar and how to install it).

Every fake cluster listens on OS-assigned loopback ports, and every real-cluster test has its
own prefix (the session's random part and the pytest-xdist worker in it), so tests are safe
under pytest-xdist.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fakebroker.sync import FakeKafka

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from fakebroker.real_cluster import RealCluster

MODES = {"fake": ("fake",), "real": ("real",), "both": ("fake", "real")}
# Marker options a real cluster honours: its topics are made; brokers shapes the fake only.
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
def real_kafka_cluster(pytestconfig: pytest.Config) -> Iterator[RealCluster]:
    """The running Kafka cluster ``--kafka-bootstrap`` names, shared by the session's tests
    (each isolated by its prefix: ``RealCluster.isolated``), reached as
    ``--kafka-client-config`` says; waits until it has a group coordinator and producer ids."""
    from fakebroker.client_config import read_properties
    from fakebroker.real_cluster import RealCluster

    config_file = pytestconfig.getoption("kafka_client_config")
    config = read_properties(config_file) if config_file else {}
    bootstrap = pytestconfig.getoption("kafka_bootstrap") or config.get("bootstrap.servers")
    if not bootstrap:
        pytest.fail("--kafka=real runs on a running Kafka cluster: name it with "
                    "--kafka-bootstrap HOST:PORT", pytrace=False)
    cluster = RealCluster(bootstrap, client_config=config).warm_up()
    yield cluster
    cluster.close()


@pytest.hookimpl(trylast=True)
def pytest_fakebroker_real_cluster(request: pytest.FixtureRequest,
                                   options: dict[str, Any]) -> RealCluster:
    """The session's ``real_kafka_cluster``, for a marker that shapes nothing but the fake's
    topics and broker count."""
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
