"""Real Python clients — kafka-python, confluent-kafka (librdkafka), aiokafka — produce with
their default settings and read back with assign/seek: every record arrives exactly once with
key, value, headers and timestamp intact, with every compression codec, across brokers. They
run on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
COUNT = 60


@dataclass(frozen=True, order=True)
class Seen:
    """What a consumer saw of one record."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def sent_records(tag: str) -> list[tuple[bytes, bytes, list[tuple[str, bytes]], int]]:
    base = 1_700_000_000_000
    return [(f"k{i}".encode(), f"{tag}-v{i}".encode(), [("n", str(i).encode())], base + i)
            for i in range(COUNT)]


def stored(kafka, topic: str) -> list[Seen]:
    partitions = kafka.topics()[topic]
    return sorted(
        Seen(p, r.offset, r.key, r.value, r.headers, r.timestamp)
        for p in range(partitions) for r in kafka.records(topic, p)
    )


def assert_exactly_once(seen: list[Seen], tag: str) -> None:
    """Every sent record was seen once, intact, with offsets 0..n-1 per partition."""
    sent = {(k, v, tuple(h), t) for k, v, h, t in sent_records(tag)}
    got = [(s.key, s.value, s.headers, s.timestamp) for s in seen]
    assert len(got) == len(sent) and set(got) == sent
    by_partition: dict[int, list[int]] = {}
    for s in seen:
        by_partition.setdefault(s.partition, []).append(s.offset)
    for offsets in by_partition.values():
        assert sorted(offsets) == list(range(len(offsets)))


# -- kafka-python -----------------------------------------------------------------------------


def kafka_python_round_trip(kafka, topic: str, codec: str) -> list[Seen]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers,
                             compression_type=None if codec == "none" else codec)
    acks = [producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=timestamp)
            for key, value, headers, timestamp in sent_records(codec)]
    producer.flush(timeout=30)
    for ack in acks:
        ack.get(timeout=1)  # every record acknowledged, or the error that refused it
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap_servers,
                             enable_auto_commit=False)
    partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
    consumer.assign(partitions)
    consumer.seek_to_beginning()
    end = consumer.end_offsets(partitions)
    seen: list[Seen] = []
    deadline = time.monotonic() + 30
    while any(consumer.position(tp) < end[tp] for tp in partitions):
        assert time.monotonic() < deadline, "kafka-python did not reach the end offsets"
        for records in consumer.poll(timeout_ms=500).values():
            seen += [Seen(r.partition, r.offset, r.key, r.value,
                          tuple((k, v) for k, v in r.headers), r.timestamp) for r in records]
    consumer.close()
    return sorted(seen)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_kafka_python_produces_idempotently_and_reads_back_everything(kafka, codec):
    seen = kafka_python_round_trip(kafka, "orders", codec)
    assert_exactly_once(seen, codec)
    assert seen == stored(kafka, "orders")


# -- confluent-kafka --------------------------------------------------------------------------


def confluent_round_trip(kafka, topic: str, codec: str) -> list[Seen]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "compression.type": codec, "enable.idempotence": True})
    for key, value, headers, timestamp in sent_records(codec):
        producer.produce(topic, key=key, value=value, headers=headers, timestamp=timestamp)
    assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "unused",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    metadata = consumer.list_topics(topic, timeout=10)
    partitions = [TopicPartition(topic, p, OFFSET_BEGINNING)
                  for p in metadata.topics[topic].partitions]
    consumer.assign(partitions)
    ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in partitions}
    at_end = {p for p, end in ends.items() if end == 0}
    seen: list[Seen] = []
    deadline = time.monotonic() + 30
    while len(at_end) < len(partitions):
        assert time.monotonic() < deadline, "confluent-kafka did not reach the end offsets"
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            assert message.error().code() == message.error()._PARTITION_EOF, message.error()
            at_end.add(message.partition())
            continue
        seen.append(Seen(message.partition(), message.offset(), message.key(), message.value(),
                         tuple(message.headers() or ()), message.timestamp()[1]))
    consumer.close()
    return sorted(seen)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_confluent_kafka_produces_idempotently_and_reads_back_everything(kafka, codec):
    seen = confluent_round_trip(kafka, "orders", codec)
    assert_exactly_once(seen, codec)
    assert seen == stored(kafka, "orders")


@pytest.mark.fake_only("fakebroker serve, the standalone process")
def test_confluent_kafka_at_default_settings_against_fakebroker_serve(served_cluster):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    producer = Producer({"bootstrap.servers": served_cluster})
    for i in range(10):
        producer.produce("served", value=f"v{i}".encode())
    assert producer.flush(30) == 0
    topics = AdminClient({"bootstrap.servers": served_cluster}).list_topics(timeout=10).topics
    assert len(topics["served"].partitions) == 3


# -- aiokafka ---------------------------------------------------------------------------------


async def aiokafka_round_trip(bootstrap: str, topic: str, partition_count: int, codec: str
                             ) -> list[Seen]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap,
                                compression_type=None if codec == "none" else codec)
    await producer.start()
    try:
        for key, value, headers, timestamp in sent_records(codec):
            await producer.send(topic, key=key, value=value, headers=headers,
                                timestamp_ms=timestamp)
        await producer.flush()
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    seen: list[Seen] = []
    try:
        partitions = [TopicPartition(topic, p) for p in range(partition_count)]
        consumer.assign(partitions)
        await consumer.seek_to_beginning()
        end = await consumer.end_offsets(partitions)
        deadline = time.monotonic() + 30
        while [tp for tp in partitions if await consumer.position(tp) < end[tp]]:
            assert time.monotonic() < deadline, "aiokafka did not reach the end offsets"
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                seen += [Seen(r.partition, r.offset, r.key, r.value, tuple(r.headers),
                              r.timestamp) for r in records]
    finally:
        await consumer.stop()
    return sorted(seen)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_aiokafka_produces_and_reads_back_everything(kafka, codec):
    seen = asyncio.run(aiokafka_round_trip(kafka.bootstrap_servers, "orders", 3, codec))
    assert_exactly_once(seen, codec)
    assert seen == stored(kafka, "orders")


# -- several brokers --------------------------------------------------------------------------


@pytest.mark.fake_kafka(brokers=3)
def test_leaders_spread_over_brokers_and_clients_follow_them(kafka):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for tag, round_trip in (("none", kafka_python_round_trip), ("gzip", confluent_round_trip)):
        spread = kafka.name(f"spread-{tag}")
        kafka.create_topic(spread, partitions=6)
        partitions = admin.list_topics(spread, timeout=10).topics[spread].partitions
        assert {p.leader for p in partitions.values()} == {1, 2, 3}
        seen = round_trip(kafka, spread, tag)
        assert_exactly_once(seen, tag)
        assert {s.partition for s in seen} == set(range(6))


def broker_configs(kafka, names) -> dict[str, str]:
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    resource = ConfigResource(ResourceType.BROKER, str(kafka.brokers[0].id))
    configs = admin.describe_configs([resource])[resource].result(timeout=10)
    return {name: configs[name].value for name in names}


def test_describe_configs_reports_the_configuration_the_broker_runs_with(kafka):
    expected = {"auto.create.topics.enable": "true", "num.partitions": "1",
                "group.initial.rebalance.delay.ms": "0"}
    assert broker_configs(kafka, expected) == expected


@pytest.mark.fake_only("fakebroker settings (Kafka's are the broker's server.properties)")
def test_describe_configs_reports_the_settings_the_fake_cluster_runs_with(fake_kafka_factory):
    kafka = fake_kafka_factory(auto_create_topics=False, default_partitions=4,
                               group_initial_rebalance_delay_ms=250)
    assert broker_configs(kafka, ["auto.create.topics.enable", "num.partitions",
                                  "group.initial.rebalance.delay.ms"]) == {
        "auto.create.topics.enable": "false", "num.partitions": "4",
        "group.initial.rebalance.delay.ms": "250"}
