"""pytest plugin (registered by the ``pytest11`` entry point): fake Kafka fixtures.

* ``fake_kafka`` — a fresh ``FakeKafka`` cluster per test, stopped afterwards. Shape it with
  ``@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})`` (any ``FakeKafka`` argument).
* ``fake_kafka_factory`` — call it for more clusters in one test; all stop after the test.
* ``spark_kafka`` — a local SparkSession with Spark's own Kafka connector on its classpath
  (``fakebroker.spark.session``), one per test module; needs fakebroker's ``spark`` extra and the
  connector's jars (a test using it fails naming a missing jar and how to install it).

Every cluster listens on OS-assigned loopback ports, so tests are safe under pytest-xdist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fakebroker.sync import FakeKafka

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_kafka(**options): options of the fake_kafka fixture's cluster"
    )


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


@pytest.fixture(scope="module")
def spark_kafka() -> Iterator[SparkSession]:
    """A local SparkSession whose ``.format("kafka")`` is Spark's own connector, shared by the
    tests of a module and stopped (with its JVM) after them: see ``fakebroker.spark.session``.
    """
    from fakebroker.spark import session

    with session(app_name="fakebroker-tests") as spark:
        yield spark
