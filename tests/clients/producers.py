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
