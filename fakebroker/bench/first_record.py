"""Workload 5: time to first record for a group consumer at client default settings.

A one-partition topic holds one record. A consumer with a fresh group id, ``auto.offset.reset``
earliest (so the record already there is read) and every other setting at the client's default
subscribes and polls; the clock runs from creating the consumer until it has the record. This
is what a test that starts a group consumer waits for: the broker's join barrier, rebalance
delay and sync, then a fetch.

* confluent-kafka (librdkafka), in this process: ``rounds`` consumers one after another.
* the Apache Kafka Java client 3.9, through ``FirstRecord.java`` beside this module: all
  rounds in one JVM, so round 1 is cold (class loading, JIT) and later rounds are warm.

The Java program is the suite's own rather than the test harness's (tests/java/Harness.java):
``fakebroker.bench`` is part of the package and must not import from ``tests/``, which is not
installed and changes with the tests' needs; a 40-line program that only does this one thing
keeps the measurement stable. It is compiled once into the clients cache folder, against the
jars ``.ci/install-clients`` installs there (run on first use when they are missing).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer

from fakebroker.bench.clients import QUIET, create_topics, unique
from fakebroker.bench.systems import Running

SOURCE = Path(__file__).with_name("FirstRecord.java")
INSTALLER = Path(__file__).resolve().parents[2] / ".ci" / "install-clients"
REQUIRED_JARS = ("kafka-clients-", "slf4j-api-", "slf4j-simple-", "lz4-java-", "snappy-java-",
                 "zstd-jni-")
TIMEOUT_S = 120.0
JAVA_ON_MOCK = ("Java client not measured: against librdkafka's mock it stops after ApiVersions "
                "(its FindCoordinator gets no answer) and never joins a group")


class JavaUnavailable(RuntimeError):
    """No JDK or no Kafka client jars, and they could not be installed."""


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


def _clients_dir() -> Path:
    default = Path.home() / ".cache" / "fakebroker-clients"
    return Path(os.environ.get("FAKEBROKER_CLIENTS_DIR") or default)


def _jars() -> list[Path]:
    jars = sorted((_clients_dir() / "java").glob("*.jar"))
    if all(any(j.name.startswith(p) for j in jars) for p in REQUIRED_JARS):
        return jars
    if not INSTALLER.is_file():
        raise JavaUnavailable("Kafka Java client jars missing and no .ci/install-clients")
    subprocess.run(["bash", str(INSTALLER)], check=True, capture_output=True)
    return _jars()


def classpath() -> str:
    """The jars and the compiled program, compiled on first use (keyed by source hash)."""
    if not shutil.which("javac") or not shutil.which("java"):
        raise JavaUnavailable("no JDK (java, javac) on PATH")
    jars = _jars()
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    classes = _clients_dir() / "bench" / f"first-record-{digest}"
    if not (classes / "FirstRecord.class").is_file():
        partial = classes.with_name(classes.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        subprocess.run(["javac", "-nowarn", "-d", str(partial), "-cp",
                        os.pathsep.join(map(str, jars)), str(SOURCE)],
                       check=True, capture_output=True)
        shutil.rmtree(classes, ignore_errors=True)
        partial.rename(classes)
    return os.pathsep.join([*map(str, jars), str(classes)])


def java(system: Running, topic: str, rounds: int) -> list[float]:
    """Milliseconds to the first record, per round, for Java group consumers in one JVM."""
    result = subprocess.run(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath(),
         "FirstRecord", system.bootstrap, topic, str(rounds)],
        capture_output=True, text=True, timeout=TIMEOUT_S * rounds + 60,
    )
    if result.returncode != 0:
        raise RuntimeError(f"FirstRecord failed ({result.returncode}): {result.stderr[-500:]}")
    return [float(line) for line in result.stdout.split()]
