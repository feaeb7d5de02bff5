"""Workload 5: time to first record for a group consumer at client default settings.

A one-partition topic holds one record. A consumer with a fresh group id, ``auto.offset.reset``
earliest (so the record already there is read) and every other setting at the client's default
subscribes and polls; the clock runs from creating the consumer until it has the record. This
is what a test that starts a group consumer waits for: the broker's join barrier, rebalance
delay and sync, then a fetch.

* confluent-kafka (librdkafka), in this process: ``rounds`` consumers one after another.
* kafka-python, in this process, the same way: ``subscribe`` then ``poll`` with a timeout
  (kafka-python 3.0.12's ``poll()`` at its default timeout of 0 can leave its group join
  unfinished for good, on Apache Kafka as on fakebroker: measured, both brokers).
* the Apache Kafka Java client 3.9, through the project's Java harness
  (``tests/java/Harness.java first-record``, driven by ``tests.clients.java``): ``rounds``
  consumers one after another in one JVM, so round 0 is cold (class loading, interpreted code)
  and later rounds are warm; a run takes several JVMs, as a cold round's time varies most.

A real Kafka broker waits ``group.initial.rebalance.delay.ms`` (3000 ms by default) before it
completes a new group's first rebalance; the ``kafka`` and ``kafka-nodelay`` systems measure
it at that default and at 0, and the report judges fakebroker's time as a ratio to
kafka-nodelay's with the same client.

The suite uses the harness rather than a Java program of its own: the harness is the project's
one Java driver, compiled once with a class-data-sharing archive and the JVM flags the tests
use, and its ``first-record`` output is pinned by a test
(tests/test_clients_groups_jvm_node.py) as the benchmark's contract. The price is that the
Java figures need a checkout (``tests/`` is not installed) — as does the jar installer,
``.ci/install-clients``, run on first use.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer

from fakebroker.bench.clients import QUIET, create_topics, unique
from fakebroker.bench.systems import Running

INSTALLER = Path(__file__).resolve().parents[2] / ".ci" / "install-clients"
TIMEOUT_S = 120.0
NOT_ON_MOCK = ("Java and kafka-python clients not measured: against librdkafka's mock the Java "
               "client stops after ApiVersions (its FindCoordinator gets no answer) and never "
               "joins a group; kafka-python 3.0.12 cannot bootstrap (KafkaTimeoutError)")


class JavaUnavailable(RuntimeError):
    """The Java harness cannot run here (no checkout)."""


def seeded_topic(system: Running) -> str:
    """A fresh one-partition topic holding one record."""
    topic = unique("first-record")
    create_topics(system, [topic])
    producer = Producer({"bootstrap.servers": system.bootstrap, **QUIET})
    producer.produce(topic, b"first", partition=0)
    if producer.flush(30):
        raise KafkaException("the seed record was not delivered")
    return topic


def confluent(system: Running, topic: str, rounds: int) -> list[float]:
    """Milliseconds to the first record, per round, for confluent-kafka group consumers."""
    times = []
    for _ in range(rounds):
        begin = time.perf_counter()
        consumer = Consumer({"bootstrap.servers": system.bootstrap, "group.id": unique("g"),
                             "auto.offset.reset": "earliest", **QUIET})
        try:
            consumer.subscribe([topic])
            while True:
                message = consumer.poll(0.05)
                if message is not None and message.error() is None:
                    break
                if time.perf_counter() - begin > TIMEOUT_S:
                    raise KafkaException(f"no record in {TIMEOUT_S} s")
            times.append((time.perf_counter() - begin) * 1000)
        finally:
            consumer.close()
    return times


def kafka_python(system: Running, topic: str, rounds: int) -> list[float]:
    """Milliseconds to the first record, per round, for kafka-python group consumers."""
    from kafka import KafkaConsumer

    times = []
    for _ in range(rounds):
        begin = time.perf_counter()
        consumer = KafkaConsumer(bootstrap_servers=system.bootstrap, group_id=unique("g"),
                                 auto_offset_reset="earliest")
        try:
            consumer.subscribe([topic])
            while not any(consumer.poll(timeout_ms=1000).values()):
                if time.perf_counter() - begin > TIMEOUT_S:
                    raise KafkaException(f"no record in {TIMEOUT_S} s")
            times.append((time.perf_counter() - begin) * 1000)
        finally:
            consumer.close()
    return times


def java(system: Running, topic: str, rounds: int) -> list[float]:
    """Milliseconds from creating each consumer to its first record, per round, for Java group
    consumers in one JVM (round 0 cold)."""
    try:
        from tests.clients.java import JavaClientsMissing, run_harness
    except ImportError as exc:
        raise JavaUnavailable("the Java figures need a checkout (tests/java/Harness.java), "
                              "run from its root") from exc
    args = ("--bootstrap", system.bootstrap, "--topic", topic, "--rounds", str(rounds))
    try:
        lines = run_harness("first-record", *args, timeout=TIMEOUT_S * rounds + 60)
    except JavaClientsMissing:
        if not INSTALLER.is_file():
            raise
        subprocess.run(["bash", str(INSTALLER)], check=True, capture_output=True)
        lines = run_harness("first-record", *args, timeout=TIMEOUT_S * rounds + 60)
    return [line["createMs"] + line["firstRecordMs"] for line in lines if "round" in line]
