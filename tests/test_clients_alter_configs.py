"""Real admin clients change topic configs — confluent-kafka's ``incremental_alter_configs``
and (legacy, replacing) ``alter_configs``, kafka-python's ``alter_configs`` both ways — and
real producers and consumers see the change at once:
a record over the new ``max.message.bytes`` is refused, ``LogAppendTime`` stamps records with
the broker's time. On the fake and on Apache Kafka (``--kafka=both``); the real broker applies
a change a moment after the admin call returns, so each test awaits DescribeConfigs' report
before producing.
"""

from __future__ import annotations

import time

import pytest

from fakebroker.real_cluster import wait_for as eventually

pytestmark = pytest.mark.fake_kafka(topics={"sized": 1, "stamped": 1})


def topic_config(kafka, topic: str, name: str) -> str:
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    resource = ConfigResource(ResourceType.TOPIC, topic)
    return admin.describe_configs([resource])[resource].result(timeout=10)[name].value


def produce(kafka, topic: str, value: bytes) -> str | None:
    """Produce one record with confluent-kafka: the delivery error's name, or None."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "message.timeout.ms": 10000})
    outcome: list[str | None] = []
    producer.produce(topic, value, on_delivery=lambda err, _: outcome.append(
        err.name() if err else None))
    assert producer.flush(15) == 0
    return outcome[0]


def test_confluent_incremental_alter_configs_limits_what_a_producer_may_send(kafka):
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})

    def alter(op: AlterConfigOpType, value: str | None) -> None:
        resource = ConfigResource(ResourceType.TOPIC, "sized", incremental_configs=[
            ConfigEntry("max.message.bytes", value, incremental_operation=op)])
        admin.incremental_alter_configs([resource])[resource].result(timeout=10)

    assert produce(kafka, "sized", b"x" * 5000) is None
    alter(AlterConfigOpType.SET, "2000")
    eventually(lambda: topic_config(kafka, "sized", "max.message.bytes") == "2000",
               "max.message.bytes=2000")
    assert produce(kafka, "sized", b"x" * 5000) == "MSG_SIZE_TOO_LARGE"
    assert produce(kafka, "sized", b"x" * 1000) is None
    alter(AlterConfigOpType.DELETE, None)
    eventually(lambda: topic_config(kafka, "sized", "max.message.bytes") == "1048588",
               "max.message.bytes back to its default")
    assert produce(kafka, "sized", b"x" * 5000) is None
    assert [len(r.value) for r in kafka.records("sized")] == [5000, 1000, 5000]


def test_kafka_python_alter_configs_makes_the_broker_stamp_records(kafka):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    try:
        answer = admin.alter_configs([ConfigResource(
            ConfigResourceType.TOPIC, "stamped",
            configs={"message.timestamp.type": "LogAppendTime"})], incremental=False)
    finally:
        admin.close()
    assert {kind: {name: str(result) for name, result in by_name.items()}
            for kind, by_name in answer.items()} == {"topic": {"stamped": "OK"}}
    eventually(lambda: topic_config(kafka, "stamped", "message.timestamp.type")
               == "LogAppendTime", "message.timestamp.type=LogAppendTime")
    before = int(time.time() * 1000)
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    producer.send("stamped", b"v", timestamp_ms=1_700_000_000_000).get(timeout=10)
    producer.close(timeout=10)
    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap_servers,
                             consumer_timeout_ms=10000)
    consumer.assign([TopicPartition("stamped", 0)])
    consumer.seek_to_beginning()
    (record,) = [next(consumer)]
    consumer.close()
    assert record.timestamp_type == 1 and record.timestamp >= before


def test_kafka_python_appends_and_confluent_alter_configs_replaces_a_topics_configs(kafka):
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
    from kafka.admin import AlterConfigOp, KafkaAdminClient
    from kafka.admin import ConfigResource as KafkaPythonResource

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    try:
        answer = admin.alter_configs([KafkaPythonResource(
            "TOPIC", "sized", configs={"cleanup.policy": (AlterConfigOp.APPEND, "compact"),
                                       "retention.ms": "1000"})])
    finally:
        admin.close()
    assert str(answer["topic"]["sized"]) == "OK"
    eventually(lambda: topic_config(kafka, "sized", "cleanup.policy") == "delete,compact",
               "cleanup.policy=delete,compact")
    assert topic_config(kafka, "sized", "retention.ms") == "1000"
    confluent = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    resource = ConfigResource(ResourceType.TOPIC, "sized", set_config={"segment.ms": "5000"})
    with pytest.warns(DeprecationWarning, match="alter_configs has been deprecated"):
        futures = confluent.alter_configs([resource])  # the legacy API, still served by Kafka
    futures[resource].result(timeout=10)
    eventually(lambda: topic_config(kafka, "sized", "segment.ms") == "5000", "segment.ms=5000")
    assert (topic_config(kafka, "sized", "cleanup.policy"),
            topic_config(kafka, "sized", "retention.ms")) == ("delete", "604800000")


@pytest.mark.fake_kafka(brokers=3)
def test_confluent_alters_each_brokers_own_config_on_that_broker(kafka):
    """The admin client sends a broker's resource to that broker (Kafka refuses another's);
    each broker then describes its own value as DYNAMIC_BROKER_CONFIG."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigSource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})

    def alter(broker: int, op: AlterConfigOpType, value: str | None) -> None:
        resource = ConfigResource(ResourceType.BROKER, str(broker), incremental_configs=[
            ConfigEntry("message.max.bytes", value, incremental_operation=op)])
        admin.incremental_alter_configs([resource])[resource].result(timeout=10)

    def described(broker: int) -> tuple[str, int]:
        resource = ConfigResource(ResourceType.BROKER, str(broker))
        entry = admin.describe_configs([resource])[resource].result(timeout=10)[
            "message.max.bytes"]
        return entry.value, entry.source

    ids = [b.id for b in kafka.brokers]
    try:
        for broker in ids:
            alter(broker, AlterConfigOpType.SET, str(2_000_000 + broker))
        for broker in ids:
            eventually(lambda broker=broker: described(broker) == (
                str(2_000_000 + broker), ConfigSource.DYNAMIC_BROKER_CONFIG.value),
                f"broker {broker}'s own message.max.bytes")
    finally:
        for broker in ids:
            alter(broker, AlterConfigOpType.DELETE, None)
