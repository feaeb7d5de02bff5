"""The real Apache Kafka broker (tests/real_kafka.py) works as the tests' oracle: confluent-kafka
and the Java client (3.9.1 and 4.4.0) produce to it and read back every record exactly once,
at the offsets the producer's acknowledgements named. Without an install the fixture skips
(locally) or fails (CI=true)."""

from __future__ import annotations

import uuid

import pytest

from fakebroker.wire_client import WireClient
from tests import real_kafka as real_kafka_module
from tests.clients.java import run_harness

pytestmark = pytest.mark.timeout(180)

COUNT = 100
PARTITIONS = 3


def new_topic(real_kafka, partitions: int = PARTITIONS) -> str:
    """A topic of its own (the broker is shared by the whole session)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"oracle-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": real_kafka.bootstrap_servers})
    futures = admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=30)
    futures[name].result(timeout=60)
    return name


def test_without_an_install_the_fixture_skips_but_fails_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKEBROKER_CLIENTS_DIR", str(tmp_path))
    assert not real_kafka_module.kafka_available()
    with pytest.raises(real_kafka_module.RealKafkaMissing, match="fakebroker kafka install"):
        real_kafka_module.start_real_kafka(tmp_path / "run")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="fakebroker kafka install"):
        real_kafka_module.require_real_kafka()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="fakebroker kafka install"):
        real_kafka_module.require_real_kafka()


@pytest.mark.real_kafka
def test_the_broker_is_a_single_node_kraft_kafka(real_kafka):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": real_kafka.bootstrap_servers})
    metadata = admin.list_topics(timeout=30)
    assert list(metadata.brokers) == [1]
    assert metadata.cluster_id == real_kafka.cluster_id
    assert real_kafka.process.poll() is None
    assert 0 < real_kafka.startup_seconds < 90


@pytest.mark.real_kafka
def test_confluent_kafka_round_trip_every_record_once_at_its_offset(real_kafka):
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = new_topic(real_kafka)
    acks: dict[bytes, tuple[int, int]] = {}
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            acks[msg.value()] = (msg.partition(), msg.offset())

    producer = Producer({"bootstrap.servers": real_kafka.bootstrap_servers,
                         "enable.idempotence": True, "linger.ms": 5})
    values = [f"v{i}".encode() for i in range(COUNT)]
    for i, value in enumerate(values):
        producer.produce(topic, value, key=f"k{i}".encode(), on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert errors == [] and sorted(acks) == sorted(values)
    # Each partition's offsets are 0..n-1, each named once.
    by_partition: dict[int, list[int]] = {}
    for partition, offset in acks.values():
        by_partition.setdefault(partition, []).append(offset)
    assert sum(len(o) for o in by_partition.values()) == COUNT
    for offsets in by_partition.values():
        assert sorted(offsets) == list(range(len(offsets)))

    consumer = Consumer({"bootstrap.servers": real_kafka.bootstrap_servers,
                         "group.id": f"g-{topic}", "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                for p in range(PARTITIONS)}
        assert {p: high for p, (low, high) in ends.items()} == {
            p: len(by_partition.get(p, [])) for p in range(PARTITIONS)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen: list[tuple[bytes, int, int]] = []
        while len(seen) < COUNT:
            msg = consumer.poll(30)
            assert msg is not None, f"only {len(seen)} of {COUNT} records read"
            assert msg.error() is None, msg.error()
            seen.append((msg.value(), msg.partition(), msg.offset()))
        positions = consumer.position([TopicPartition(topic, p) for p in range(PARTITIONS)])
        assert {p.partition: p.offset for p in positions} == {  # read to the end: no more
            p: high for p, (_, high) in ends.items()}
    finally:
        consumer.close()
    assert sorted(v for v, _, _ in seen) == sorted(values)
    assert {v: (p, o) for v, p, o in seen} == acks


@pytest.mark.real_kafka
@pytest.mark.java
def test_java_round_trip_every_record_once_at_its_offset(real_kafka, java_client):
    topic = new_topic(real_kafka)
    bootstrap = ("--bootstrap", real_kafka.bootstrap_servers, "--topic", topic)
    lines = run_harness("produce", *bootstrap, "--count", str(COUNT), "--headers",
                        client_version=java_client)
    assert lines[-1] == {"done": COUNT}
    acks = lines[:-1]
    assert len(acks) == COUNT

    lines = run_harness("consume", *bootstrap, client_version=java_client)
    assert lines[-1] == {"done": COUNT}
    consumed = [line for line in lines if "offset" in line and "value" in line]
    assert len(consumed) == COUNT
    assert sorted((r["partition"], r["offset"]) for r in consumed) == sorted(
        (a["partition"], a["offset"]) for a in acks)
    assert sorted(r["value"] for r in consumed) == sorted(f"v{i}" for i in range(COUNT))
    for partition in range(PARTITIONS):
        offsets = sorted(a["offset"] for a in acks if a["partition"] == partition)
        assert offsets == list(range(len(offsets)))
    for record in consumed:
        i = record["value"][1:]
        assert record["key"] == f"k{i}" and record["headers"] == [["h", i]]
    # The producer's acknowledged offset of record i is where the consumer found it.
    by_value = {r["value"]: (r["partition"], r["offset"], r["timestamp"]) for r in consumed}
    for i, ack in enumerate(acks):
        assert by_value[f"v{i}"] == (ack["partition"], ack["offset"], ack["timestamp"])


@pytest.mark.real_kafka
def test_a_transaction_a_test_left_open_is_aborted_before_the_next_test_gets_its_topics(
        real_cluster):
    """The real side's reset before each test ends every open transaction: left open, Kafka
    would abort it at its timeout (here a minute) and write its marker into the next test's
    topic of the same name, one offset no record of that test explains."""
    from tests.test_wire_transactions import add_partitions, coordinator, init, produce, txn_batch

    real_cluster.reset({"orders": 2})
    transactional_id = f"left-open-{uuid.uuid4().hex[:8]}"
    with coordinator(real_cluster, transactional_id) as client:
        started = init(client, transactional_id, timeout_ms=60_000)
        pid, epoch = started.producer_id, started.producer_epoch
        assert add_partitions(client, transactional_id, pid, epoch, {"orders": [0]}) == {
            ("orders", 0): 0}
    with WireClient(real_cluster.bootstrap_servers) as client:
        assert produce(client, transactional_id, 0, txn_batch([b"open"], pid, epoch)) == 0
    assert real_cluster.transactions()[transactional_id].state == "Ongoing"

    real_cluster.reset({"orders": 2})  # aborted: its id fenced, as a new producer fences it
    assert real_cluster.transactions()[transactional_id].state == "Empty"
    assert real_cluster.offsets("orders", 0).high_watermark == 0
