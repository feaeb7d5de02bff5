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


TRANSACTIONAL_CLIENTS = ("confluent-kafka", "kafka-python")


class TransactionFailed(Exception):
    """A transactional call refused; ``name`` is the client's own name of the error
    (confluent-kafka: librdkafka's, ``_FENCED``; kafka-python: its exception class,
    ``ProducerFencedError``), ``fatal`` whether the producer is done for."""

    def __init__(self, name: str, fatal: bool):
        super().__init__(name)
        self.name, self.fatal = name, fatal


class TransactionalProducer:
    """A transactional producer of either Python client, initialized (InitProducerId):
    ``begin()``, ``send(topic, values)`` (waits until every record is acknowledged),
    ``commit()``, ``abort()``, ``close()``; refusals raise ``TransactionFailed``. ``config``
    is in librdkafka spelling; the kafka-python driver translates the few it needs."""

    def __init__(self, client: str, bootstrap: str, transactional_id: str, **config):
        self.client = client
        if client == "kafka-python":
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
        self._call(self._producer.begin_transaction)

    def send(self, topic: str, values: list[bytes]) -> None:
        if self.client == "kafka-python":
            futures = [self._producer.send(topic, value) for value in values]
            self._call(lambda: [f.get(timeout=60) for f in futures])
        else:
            for value in values:
                self._producer.produce(topic, value)
            assert self._producer.flush(60) == 0

    def commit(self) -> None:
        if self.client == "kafka-python":
            self._call(self._producer.commit_transaction)
        else:
            self._call(self._producer.commit_transaction, 60)

    def abort(self) -> None:
        if self.client == "kafka-python":
            self._call(self._producer.abort_transaction)
        else:
            self._call(self._producer.abort_transaction, 60)

    def close(self) -> None:
        if self.client == "kafka-python":
            self._producer.close(timeout=5)
        else:  # a fenced producer's flush raises its fatal error: let it go unflushed
            self._producer = None
