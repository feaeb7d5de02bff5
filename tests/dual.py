"""One test body, two brokers: the ``kafka`` fixture and the ``--kafka`` option (pytest hooks,
imported by tests/conftest.py).

``pytest --kafka=fake`` (the default) runs every test that takes ``kafka`` on a fresh
FakeKafka shaped by the ``fake_kafka`` marker, as ``fake_kafka`` does; ``--kafka=real`` runs
them on the session's real Apache Kafka broker (tests/real_kafka.py) through FakeKafka's
inspection API over Kafka's own APIs (tests/real_cluster.py), made fresh for each test: no
groups, no topics but the marker's; ``--kafka=both`` runs each on both (ids ``[fake]`` and
``[real]``). On the real broker the marker's ``topics`` are created and ``brokers`` is
ignored (it has one node); any other option is a fakebroker setting, refused.

``@pytest.mark.fake_only("why")`` marks a test that needs what only the fake has (faults,
natural failures, the journal, fakebroker settings, several brokers): it takes ``kafka`` on
the fake only and is skipped under ``--kafka=real``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.real_cluster import RealCluster
from tests.real_kafka import RealKafka

MODES = {"fake": ("fake",), "real": ("real",), "both": ("fake", "real")}
# Marker options the real broker honours: its topics; its one node serves any broker count.
REAL_MARKER_OPTIONS = frozenset({"topics", "brokers"})


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


@pytest.fixture
def kafka(request: pytest.FixtureRequest) -> Any:
    """The broker under test (see the module doc): a ``FakeKafka`` or a ``RealCluster``."""
    if getattr(request, "param", "fake") == "fake":
        return request.getfixturevalue("fake_kafka")
    marker = request.node.get_closest_marker("fake_kafka")
    options = dict(marker.kwargs) if marker else {}
    refused = sorted(set(options) - REAL_MARKER_OPTIONS)
    if refused:
        pytest.fail(f"fake_kafka marker options {refused} set up the fake broker only: mark "
                    "the test @pytest.mark.fake_only(...) saying why", pytrace=False)
    cluster: RealCluster = request.getfixturevalue("real_cluster")
    cluster.reset(options.get("topics"))
    return cluster
