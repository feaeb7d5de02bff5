"""Producing and committing with real clients, for tests that need records or offsets first.

``produce(bootstrap, topic, values, client=...)`` sends every value with the named client's
idempotent producer (confluent-kafka, kafka-python, or the Java harness, whose values are
``v0..v<n-1>``) and returns once every record is acknowledged.
"""

from __future__ import annotations

from tests.clients.java import run_harness


def produce(bootstrap: str, topic: str, values: list[bytes],
            client: str = "confluent-kafka") -> None:
    if client == "java":
        expected = [f"v{i}".encode() for i in range(len(values))]
        assert values == expected, "the Java harness produces v0..v<n-1>"
        lines = run_harness("produce", "--bootstrap", bootstrap, "--topic", topic,
                            "--count", str(len(values)), "--value-prefix", "v", timeout=90)
        assert lines[-1] == {"done": len(values)}
    elif client == "kafka-python":
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
        for value in values:
            producer.send(topic, value)
        producer.flush(60)
        producer.close()
    else:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
        for value in values:
            producer.produce(topic, value)
        assert producer.flush(60) == 0


def commit_offset(bootstrap: str, group: str, topic: str, partition: int, offset: int) -> None:
    """Commit ``offset`` for a partition as group ``group`` (outside any membership)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
    consumer.close()


TRANSACTIONAL_CLIENTS = ("confluent-kafka", "kafka-python", "java")


class TransactionFailed(Exception):
    """A transactional call refused; ``name`` is the client's own name of the error
    (confluent-kafka: librdkafka's, ``_FENCED``; kafka-python: its exception class,
    ``ProducerFencedError``; Java: its exception class, ``ProducerFencedException``),
    ``fatal`` whether the producer is done for."""

    def __init__(self, name: str, fatal: bool):
        super().__init__(name)
        self.name, self.fatal = name, fatal


class TransactionalProducer:
    """A transactional producer of a Python client or the Java client (the harness's
    ``txn-session``, whose values are ``v<i>``), initialized (InitProducerId):
    ``begin()``, ``send(topic, values)`` (waits until every record is acknowledged),
    ``commit()``, ``abort()``, ``close()``; refusals raise ``TransactionFailed``. ``config``
    is in librdkafka spelling; the kafka-python driver translates the few it needs."""

    def __init__(self, client: str, bootstrap: str, transactional_id: str, **config):
        self.client = client
        if client == "java":
            from tests.clients.java import start_harness

            self._harness = start_harness(
                "txn-session", "--bootstrap", bootstrap, "--transactional-id", transactional_id,
                *(f"{k}={v}" for k, v in config.items()))
            self._read = 0  # lines read so far
            self._answer()
        elif client == "kafka-python":
            from kafka import KafkaProducer

            names = {"transaction.timeout.ms": "transaction_timeout_ms"}
            self._producer = KafkaProducer(bootstrap_servers=bootstrap,
                                           transactional_id=transactional_id,
                                           **{names[k]: v for k, v in config.items()})
            self._call(self._producer.init_transactions)
        else:
            from confluent_kafka import Producer

            self._producer = Producer({"bootstrap.servers": bootstrap,
                                       "transactional.id": transactional_id, "linger.ms": 5,
                                       **config})
            self._call(self._producer.init_transactions, 30)

    def _answer(self) -> None:
        """Wait for the Java harness's answer to its latest command (or its start)."""
        def answer(line: dict) -> bool:
            return "ok" in line or "failed" in line or "error" in line

        found = self._harness.wait_for(answer, timeout=90, start=self._read)
        self._read = next(i for i, line in enumerate(self._harness.lines())
                          if i >= self._read and answer(line)) + 1
        if "ok" not in found:
            raise TransactionFailed(found["error"], found.get("fatal", True))

    def _java(self, command: str) -> None:
        assert self._harness.proc.stdin is not None
        self._harness.proc.stdin.write(command.encode() + b"\n")
        self._harness.proc.stdin.flush()
        self._answer()

    def _call(self, method, *args):
        if self.client == "kafka-python":
            from kafka.errors import KafkaError

            try:
                return method(*args)
            except KafkaError as exc:
                raise TransactionFailed(type(exc).__name__,
                                        not getattr(exc, "retriable", False)) from exc
        from confluent_kafka import KafkaException

        try:
            return method(*args)
        except KafkaException as exc:
            error = exc.args[0]
            raise TransactionFailed(error.name(), error.fatal()) from exc

    def begin(self) -> None:
        if self.client == "java":
            return self._java("begin")
        self._call(self._producer.begin_transaction)

    def send(self, topic: str, values: list[bytes]) -> None:
        if self.client == "java":
            start = int(values[0][1:])
            assert values == [f"v{i}".encode() for i in range(start, start + len(values))]
            return self._java(f"send {topic} {start} {len(values)}")
        if self.client == "kafka-python":
            futures = [self._producer.send(topic, value) for value in values]
            self._call(lambda: [f.get(timeout=60) for f in futures])
        else:
            for value in values:
                self._producer.produce(topic, value)
            assert self._producer.flush(60) == 0

    def commit(self) -> None:
        self._end("commit")

    def abort(self) -> None:
        self._end("abort")

    def _end(self, outcome: str) -> None:
        """Ends the transaction with ``outcome`` ("commit" or "abort")."""
        if self.client == "java":
            return self._java(outcome)
        end = getattr(self._producer, f"{outcome}_transaction")
        timeout = () if self.client == "kafka-python" else (60,)  # librdkafka's takes one
        self._call(end, *timeout)

    def close(self) -> None:
        if self.client == "java":
            self._harness.stop()
        elif self.client == "kafka-python":
            self._producer.close(timeout=5)
        else:  # a fenced producer's flush raises its fatal error: let it go unflushed
            self._producer = None
