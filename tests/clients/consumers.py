"""One group consumer, any client, running in the background: the cookbook's consumer.

``start_consumer(client, bootstrap, topic, group, **config)`` starts a real consumer
(``"confluent-kafka"``, ``"kafka-python"`` in a thread; ``"java"`` as a harness process) that
subscribes to ``topic`` from the earliest offset, commits synchronously after each record
(commit failures are recorded, and the consumer goes on, as an application would: the Python
clients commit what they consumed again on their next idle poll after a refused commit, e.g.
one refused by a rebalance, so the group's committed offsets catch up), and keeps what it
consumed. ``config`` holds client properties in Java/librdkafka spelling
(``request.timeout.ms``); the kafka-python driver translates the few it needs.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from tests.clients.java import start_harness

Consumed = tuple[int, int, bytes]  # partition, offset, value
CLIENTS = ("confluent-kafka", "kafka-python", "java")


class BackgroundConsumer(Protocol):
    def consumed(self) -> list[Consumed]: ...
    def commit_errors(self) -> list[str]: ...
    def wait_for(self, count: int, timeout: float = 60) -> list[Consumed]: ...
    def wait_for_values(self, values: list[bytes], timeout: float = 60) -> list[Consumed]: ...
    def stop(self) -> list[Consumed]: ...


def _wait_for_values(consumer: BackgroundConsumer, values: list[bytes], timeout: float
                     ) -> list[Consumed]:
    """Wait until every one of ``values`` was consumed at least once."""
    wanted = set(values)
    deadline = time.monotonic() + timeout
    while True:
        consumed = consumer.consumed()
        missing = wanted - {value for _, _, value in consumed}
        if not missing:
            return consumed
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(missing)} record(s) never consumed within {timeout} "
                                 f"s, e.g. {sorted(missing)[:5]}")
        consumer.wait_for(len(consumed) + 1, timeout=max(deadline - time.monotonic(), 0.01))


class ThreadConsumer(threading.Thread):
    """A Python client polling in its own thread."""

    def __init__(self, client: str, bootstrap: str, topic: str, group: str,
                 config: dict[str, Any]):
        super().__init__(daemon=True, name=f"{client}-{group}")
        self.client, self.bootstrap, self.topic, self.group = client, bootstrap, topic, group
        self.config = config
        self._seen: list[Consumed] = []
        self._errors: list[str] = []
        self._lock = threading.Condition()
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            if self.client == "confluent-kafka":
                self._confluent()
            else:
                self._kafka_python()
        except BaseException as exc:  # reported by wait_for / stop
            self.error = exc
        finally:
            with self._lock:
                self._lock.notify_all()

    def _record(self, partition: int, offset: int, value: bytes) -> None:
        with self._lock:
            self._seen.append((partition, offset, value))
            self._lock.notify_all()

    def _confluent(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        names = {"request.timeout.ms": "socket.timeout.ms"}  # librdkafka's consumer name
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             **{names.get(k, k): v for k, v in self.config.items()}})
        consumer.subscribe([self.topic])

        def commit(message: Any = None) -> bool:
            try:
                if message is None:  # what was consumed, again after a refused commit
                    consumer.commit(asynchronous=False)
                else:
                    consumer.commit(message, asynchronous=False)
            except KafkaException as exc:
                self._errors.append(exc.args[0].name())
                return False
            return True

        refused = False
        while not self.stopping.is_set():
            message = consumer.poll(0.1)
            if message is None or message.error():
                if refused:
                    refused = not commit()
                continue
            self._record(message.partition(), message.offset(), message.value())
            refused = not commit(message)
        consumer.close()

    def _kafka_python(self) -> None:
        from kafka import KafkaConsumer
        from kafka.errors import KafkaError

        names = {"request.timeout.ms": "request_timeout_ms",
                 "session.timeout.ms": "session_timeout_ms",
                 "heartbeat.interval.ms": "heartbeat_interval_ms",
                 "fetch.max.wait.ms": "fetch_max_wait_ms"}
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.group,
            auto_offset_reset="earliest", enable_auto_commit=False,
            **{names[k]: v for k, v in self.config.items()})
        # kafka-python 3.0.12's group leader assigns from the metadata it holds when the join
        # answer comes; with no rebalance delay that can be before its first Metadata answer:
        # it assigns nothing ("No partition metadata") and rejoins once the metadata comes (its
        # snapshot changed). A poll that times out during such a rejoin leaves it
        # "rebalancing" for good (no heartbeats, every commit refused locally), or never
        # applies the rejoin's assignment: the join task ends after the poll gave up, its
        # assignment makes need_rejoin() false, and only the rejoin loop would apply it.
        # Real Kafka hides the race behind group.initial.rebalance.delay.ms (3 s); at 0 (as
        # the suite runs it) poll(1) lost the assignment on Kafka 4.4.0 too (1 run of 3;
        # the fake 3 of 3, as it answers faster). Loading the topic's
        # metadata after subscribing (not before: the snapshot is only taken for a
        # subscription) makes the first assignment whole, and no rejoin follows.
        consumer.subscribe([self.topic])
        consumer.partitions_for_topic(self.topic)

        def commit() -> bool:
            try:
                consumer.commit()
            except KafkaError as exc:
                self._errors.append(type(exc).__name__)
                return False
            return True

        refused = False
        while not self.stopping.is_set():
            batches = consumer.poll(timeout_ms=100).values()
            if not batches and refused:
                refused = not commit()
            for records in batches:
                for record in records:
                    self._record(record.partition, record.offset, record.value)
                    refused = not commit()
        consumer.close()

    def consumed(self) -> list[Consumed]:
        with self._lock:
            return list(self._seen)

    def commit_errors(self) -> list[str]:
        return list(self._errors)

    def wait_for(self, count: int, timeout: float = 60) -> list[Consumed]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._seen) < count:
                if self.error is not None:
                    raise AssertionError(f"{self.client} consumer failed") from self.error
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{self.client} consumed {len(self._seen)} records, "
                                         f"not {count}, within {timeout} s")
                self._lock.wait(remaining)
            return list(self._seen)

    def wait_for_values(self, values: list[bytes], timeout: float = 60) -> list[Consumed]:
        return _wait_for_values(self, values, timeout)

    def stop(self) -> list[Consumed]:
        self.stopping.set()
        self.join(30)
        return self.consumed()


class JavaConsumer:
    """The Java client's group consumer (tests/java/Harness.java group-consume)."""

    def __init__(self, bootstrap: str, topic: str, group: str, config: dict[str, Any]):
        props = [f"{k}={v}" for k, v in config.items()]
        self.member = start_harness("group-consume", "--bootstrap", bootstrap, "--topic",
                                    topic, "--group", group, "--idle-exit-ms", "120000", *props)

    def consumed(self) -> list[Consumed]:
        return [(r["partition"], r["offset"], (r["value"] or "").encode())
                for r in self.member.records()]

    def commit_errors(self) -> list[str]:
        return [e["error"] for e in self.member.events("commit-failed")]

    def wait_for(self, count: int, timeout: float = 60) -> list[Consumed]:
        deadline = time.monotonic() + timeout
        while len(self.member.records()) < count:
            if self.member.returncode is not None:
                raise AssertionError(f"the Java consumer exited:\n{self.member.lines()[-5:]}"
                                     f"\n{self.member.stderr_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"java consumed {len(self.member.records())} records, "
                                     f"not {count}, within {timeout} s")
            time.sleep(0.05)
        return self.consumed()

    def wait_for_values(self, values: list[bytes], timeout: float = 60) -> list[Consumed]:
        return _wait_for_values(self, values, timeout)

    def stop(self) -> list[Consumed]:
        self.member.stop()
        return self.consumed()


def start_consumer(client: str, bootstrap: str, topic: str, group: str,
                   **config: Any) -> BackgroundConsumer:
    """Start a consumer of ``topic`` in group ``group`` (see the module docstring)."""
    if client == "java":
        return JavaConsumer(bootstrap, topic, group, config)
    consumer = ThreadConsumer(client, bootstrap, topic, group, config)
    consumer.start()
    return consumer


def read_committed(bootstrap: str, topic: str, count: int, quiet: float = 1.0,
                   timeout: float = 30) -> list[bytes]:
    """Every value of ``topic`` a read_committed confluent-kafka consumer reads from the
    start (no group), once ``count`` arrived and nothing more came for ``quiet`` seconds."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "read-committed",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    seen: list[bytes] = []
    deadline, last = time.monotonic() + timeout, time.monotonic()
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                seen.append(message.value())
                last = time.monotonic()
            elif len(seen) >= count and time.monotonic() - last > quiet:
                break
    finally:
        consumer.close()
    return seen
