"""What the Spark tests share: their time limit, producing events, the expected totals.

The session is the pytest plugin's ``spark_kafka`` fixture (``fakebroker.spark.session``:
Spark's own Kafka connector, bound to 127.0.0.1), one per test module (~6-10 s to start).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

import pytest
from confluent_kafka import Producer

from fakebroker.spark import SPARK_VERSION, ConnectorNotInstalled, connector_jars
from tests.absent import absent

SPARK_TIMEOUT = pytest.mark.timeout(300)
"""Spark tests' time limit: the module's first test also starts the session."""


def require_spark_with_connector() -> None:
    """At a Spark test module's top: skip it when PySpark (of the connector's release line)
    or the connector's jars are not installed, but fail under ``CI=true``, where
    ``.ci/install-clients`` installs both (their absence is a broken install there)."""
    try:
        import pyspark
    except ImportError:
        absent("needs pyspark (.ci/install-clients)")
    problem = None
    if pyspark.__version__.split(".")[:2] != SPARK_VERSION.split(".")[:2]:
        problem = (f"PySpark {pyspark.__version__} is installed; Spark's Kafka connector is "
                   f"{SPARK_VERSION} (.ci/install-clients installs pyspark=={SPARK_VERSION})")
    else:
        try:
            connector_jars()
        except ConnectorNotInstalled as exc:
            problem = str(exc)
    if problem is None:
        return
    absent(problem)


def produce(bootstrap_servers: str, topic: str, records: Iterable[tuple[bytes, bytes]], *,
            timestamp_ms: int = 0, headers: Sequence[tuple[str, bytes]] | None = None) -> int:
    """Produces (key, value) records with confluent-kafka (keyed partitioning, acks=all), with
    ``timestamp_ms`` (0: now) and ``headers`` on each; returns how many, once all are
    acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap_servers, "log.connection.close": False})
    failures: list[str] = []

    def delivered(error, _message) -> None:
        if error is not None:
            failures.append(str(error))

    n = 0
    for key, value in records:
        producer.produce(topic, key=key, value=value, on_delivery=delivered,
                         timestamp=timestamp_ms, headers=list(headers or []))
        producer.poll(0)
        n += 1
    assert producer.flush(30) == 0 and not failures, failures[:3]
    return n


def events(users: int, count: int, first: int = 0) -> list[dict]:
    """``count`` JSON events {"user", "amount"} spread over ``users`` users; amounts are the
    event numbers from ``first`` on, so every total is distinct and checkable."""
    return [{"user": f"user-{i % users}", "amount": i} for i in range(first, first + count)]


def as_records(evts: Iterable[dict]) -> Iterator[tuple[bytes, bytes]]:
    """Kafka records of events: key = user, value = the JSON."""
    for e in evts:
        yield e["user"].encode(), json.dumps(e).encode()


def expected_totals(evts: Iterable[dict]) -> dict[str, tuple[int, int]]:
    """user -> (events, amount), what the pipeline must compute."""
    out: dict[str, tuple[int, int]] = {}
    for e in evts:
        n, total = out.get(e["user"], (0, 0))
        out[e["user"]] = (n + 1, total + e["amount"])
    return out
