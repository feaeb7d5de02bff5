"""pytest plugin (registered by the ``pytest11`` entry point): fake Kafka fixtures.

* ``fake_kafka`` — a fresh ``FakeKafka`` cluster per test, stopped afterwards. Shape it with
  ``@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})`` (any ``FakeKafka`` argument).
* ``fake_kafka_factory`` — call it for more clusters in one test; all stop after the test.

Every cluster listens on OS-assigned loopback ports, so tests are safe under pytest-xdist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fakebroker.sync import FakeKafka


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
