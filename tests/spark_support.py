"""A local Spark session for the Spark tests (pyspark, pyarrow and a JDK: .ci/install-clients).

One session per test module (a session takes ~10 s to start), its JVM stopped with it::

    @pytest.fixture(scope="module")
    def spark():
        with spark_session() as session:
            yield session

Spark binds to 127.0.0.1 only and its Python workers run this interpreter.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pytest
from confluent_kafka import Producer

SPARK_TIMEOUT = pytest.mark.timeout(300)
"""Spark tests' time limit: the module's first test also starts the session."""


@contextmanager
def spark_session() -> Iterator:
    """A local[2] SparkSession with fakebroker's Kafka source registered; on exit the session
    and its JVM are stopped."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from fakebroker.spark import register

    session = (
        SparkSession.builder.master("local[2]")
        .appName("fakebroker-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "10s")
        # C1 only and the serial collector: a short-lived JVM on two cores starts twice as fast
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()
        _stop_jvm(SparkContext)


def _stop_jvm(context: type) -> None:
    """Ends the JVM behind SparkContext (py4j gateway), so the next session starts a new one."""
    gateway = context._gateway
    if gateway is None:
        return
    gateway.shutdown()  # the JVM outlives the session: it exits at the end of its stdin
    gateway.proc.stdin.close()
    try:
        gateway.proc.wait(30)
    finally:
        if gateway.proc.poll() is None:
            gateway.proc.kill()
    context._gateway = None
    context._jvm = None


def produce(bootstrap_servers: str, topic: str, records: Iterable[tuple[bytes, bytes]]) -> int:
    """Produces (key, value) records with confluent-kafka (keyed partitioning, acks=all);
    returns how many, once all are acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap_servers, "log.connection.close": False})
    failures: list[str] = []

    def delivered(error, _message) -> None:
        if error is not None:
            failures.append(str(error))

    n = 0
    for key, value in records:
        producer.produce(topic, key=key, value=value, on_delivery=delivered)
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
