"""Exactly-once with real clients over TCP: a confluent-kafka (librdkafka) transactional
producer commits records and a consumer's offsets in one transaction and aborts another;
read_committed consumers (confluent-kafka, kafka-python, aiokafka) see each committed record
exactly once and never an aborted or open one; kafka-python's and aiokafka's transactional
producers commit and abort too; a second instance with the same transactional.id fences the
first; a transaction past its timeout is aborted. They run on the fake and on Apache Kafka
(``--kafka=both``); what needs the fake's faults, operations or inspection runs on the fake
only."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.test_wire_transactions import READ_COMMITTED, latest

pytestmark = pytest.mark.fake_kafka(topics={"input": 1, "orders": 2})


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def transactional_producer(kafka, transactional_id: str, **settings) -> Producer:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "transactional.id": transactional_id, "linger.ms": 5, **settings})
    producer.init_transactions(30)
    return producer


def produce_values(producer: Producer, values: list[str]) -> None:
    for i, value in enumerate(values):
        producer.produce("orders", value=value.encode(), key=value.encode(), partition=i % 2)


def consume_all(consumer: Consumer, expected: int, quiet: float = 1.5,
                timeout: float = 30) -> list[str]:
    """Values consumed until ``expected`` arrived and nothing more came for ``quiet`` s."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    while time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen.append(message.value().decode())
            last = time.monotonic()
        elif len(seen) >= expected and time.monotonic() - last > quiet:
            break
    return seen


def confluent_consumer(kafka, group: str, isolation: str = "read_committed") -> Consumer:
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": group,
                         "isolation.level": isolation, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("orders", p, 0) for p in range(2)])
    return consumer


def kafka_python_values(kafka, expected: int, quiet: float = 1.5) -> list[str]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaPythonPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap_servers,
                             isolation_level="read_committed", enable_auto_commit=False,
                             auto_offset_reset="earliest")
    consumer.assign([KafkaPythonPartition("orders", p) for p in range(2)])
    consumer.seek_to_beginning()
    seen: list[str] = []
    deadline, last = time.monotonic() + 30, time.monotonic()
    try:
        while time.monotonic() < deadline:
            batches = consumer.poll(timeout_ms=200)
            for records in batches.values():
                seen += [r.value.decode() for r in records]
                last = time.monotonic()
            if len(seen) >= expected and time.monotonic() - last > quiet:
                break
    finally:
        consumer.close()
    return seen


def test_committed_transactions_are_read_once_and_aborted_ones_never(kafka):
    group = new_id("eos")
    source = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(3):
        source.produce("input", value=f"in-{i}".encode())
    source.flush(30)
    reader = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": group,
                       "auto.offset.reset": "earliest", "enable.auto.commit": False})
    reader.subscribe(["input"])
    consumed = []
    deadline = time.monotonic() + 30
    while len(consumed) < 3 and time.monotonic() < deadline:
        message = reader.poll(0.2)
        if message is not None and message.error() is None:
            consumed.append(message)
    assert len(consumed) == 3

    producer = transactional_producer(kafka, new_id("eos"))
    producer.begin_transaction()
    produce_values(producer, [f"committed-{i}" for i in range(6)])
    producer.send_offsets_to_transaction([TopicPartition("input", 0, 3)],
                                         reader.consumer_group_metadata(), 30)
    producer.commit_transaction(30)
    producer.begin_transaction()
    produce_values(producer, [f"aborted-{i}" for i in range(4)])
    producer.flush(30)  # written to the log before the abort
    producer.abort_transaction(30)
    producer.begin_transaction()
    produce_values(producer, ["committed-6", "committed-7"])
    producer.commit_transaction(30)
    reader.close()

    committed = [f"committed-{i}" for i in range(8)]
    consumer = confluent_consumer(kafka, new_id("reader"))
    try:
        assert sorted(consume_all(consumer, 8)) == committed
    finally:
        consumer.close()
    assert sorted(kafka_python_values(kafka, 8)) == committed
    everything = confluent_consumer(kafka, new_id("all"), isolation="read_uncommitted")
    try:  # the aborted records are in the log: read_uncommitted gets them
        assert sorted(consume_all(everything, 12)) == sorted(
            committed + [f"aborted-{i}" for i in range(4)])
    finally:
        everything.close()
    assert kafka.committed(group, "input", 0) == 3  # the offsets, with the first commit
    outcomes = {r.value.decode(): r.transaction for p in range(2)
                for r in kafka.records("orders", p)}
    assert outcomes == {**dict.fromkeys(committed, "committed"),
                        **{f"aborted-{i}": "aborted" for i in range(4)}}
    assert [r.transaction for r in kafka.records("orders", 0, markers=True)
            if r.is_control] == ["committed", "aborted", "committed"]


def test_a_kafka_python_transactional_producer_commits_and_aborts(kafka):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers,
                             transactional_id=new_id("kafka-python"))
    try:
        producer.init_transactions()
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            for i in range(2):
                producer.send("orders", f"{outcome}-{i}".encode(), partition=i)
            producer.flush()
            if outcome == "commit":
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    finally:
        producer.close()
    consumer = confluent_consumer(kafka, new_id("after-kafka-python"))
    try:
        assert sorted(consume_all(consumer, 4)) == ["commit-0", "commit-0", "commit-1",
                                                    "commit-1"]
    finally:
        consumer.close()


def test_aiokafka_commits_and_aborts_and_its_read_committed_consumer_sees_commits(kafka):
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition as AioPartition

    async def run() -> list[str]:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers,
                                    transactional_id=new_id("aiokafka"))
        await producer.start()
        try:
            async with producer.transaction():
                for i in range(3):
                    await producer.send("orders", f"committed-{i}".encode(), partition=0)
            with pytest.raises(RuntimeError):
                async with producer.transaction():  # an exception aborts it
                    await producer.send_and_wait("orders", b"aborted-0", partition=0)
                    raise RuntimeError("abort")
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers,
                                    isolation_level="read_committed",
                                    enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([AioPartition("orders", 0)])
            await consumer.seek_to_beginning()
            seen: list[str] = []
            deadline = time.monotonic() + 30
            while len(seen) < 3 and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                seen += [m.value.decode() for ms in batches.values() for m in ms]
            seen += [m.value.decode() for ms in (await consumer.getmany(timeout_ms=1000))
                     .values() for m in ms]  # and nothing after them
            return seen
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == ["committed-0", "committed-1", "committed-2"]
    assert [r.transaction for r in kafka.records("orders", 0)] == ["committed"] * 3 + [
        "aborted"]


def test_read_committed_consumers_wait_for_an_open_transaction(kafka):
    open_txn = transactional_producer(kafka, new_id("open"))
    open_txn.begin_transaction()
    produce_values(open_txn, ["open-0", "open-1"])
    open_txn.flush(30)
    later = transactional_producer(kafka, new_id("later"))
    later.begin_transaction()
    produce_values(later, ["later-0", "later-1"])
    later.commit_transaction(30)
    consumer = confluent_consumer(kafka, new_id("waiting"))
    try:
        assert consume_all(consumer, 0, quiet=2) == []  # nothing past the open transaction
        with WireClient(kafka.bootstrap_servers) as client:
            assert latest(client, 0, READ_COMMITTED) == 0
        held = kafka.offsets("orders", 0)
        assert held.last_stable_offset == 0 and held.high_watermark == 3  # 1 open, 1 + marker
        open_txn.commit_transaction(30)
        assert sorted(consume_all(consumer, 4)) == ["later-0", "later-1", "open-0", "open-1"]
    finally:
        consumer.close()


def test_a_second_instance_with_the_same_transactional_id_fences_the_first(kafka):
    transactional_id = new_id("fenced")
    zombie = transactional_producer(kafka, transactional_id)
    zombie.begin_transaction()
    produce_values(zombie, ["zombie-0", "zombie-1"])
    zombie.flush(30)
    successor = transactional_producer(kafka, transactional_id)  # aborts the zombie's
    successor.begin_transaction()
    produce_values(successor, ["successor-0"])
    successor.commit_transaction(30)
    with pytest.raises(KafkaException) as refused:
        zombie.commit_transaction(30)
    error = refused.value.args[0]
    assert error.fatal() and error.code() == KafkaError._FENCED
    consumer = confluent_consumer(kafka, new_id("after-fence"))
    try:
        assert consume_all(consumer, 1) == ["successor-0"]
    finally:
        consumer.close()


@pytest.mark.fake_kafka(topics={"input": 1, "orders": 2}, overrides={
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "2000"})
def test_a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced(kafka):
    transactional_id = new_id("slow")
    producer = transactional_producer(kafka, transactional_id,
                                      **{"transaction.timeout.ms": 1000})
    producer.begin_transaction()
    produce_values(producer, ["late-0", "late-1"])
    producer.flush(30)
    eventually(lambda: kafka.transactions()[transactional_id].state == "CompleteAbort",
               "the timed-out transaction aborted", timeout=30)  # looked for every 2 s
    with pytest.raises(KafkaException) as refused:
        producer.commit_transaction(30)
    error = refused.value.args[0]
    assert error.code() == KafkaError._FENCED and error.fatal()
    consumer = confluent_consumer(kafka, new_id("after-timeout"))
    try:
        assert consume_all(consumer, 0, quiet=1) == []
    finally:
        consumer.close()


def test_transactions_shows_an_ongoing_transaction_then_its_outcome(kafka):
    transactional_id = new_id("viewed")
    producer = transactional_producer(kafka, transactional_id,
                                      **{"transaction.timeout.ms": 20_000})
    producer.begin_transaction()
    produce_values(producer, ["seen-0", "seen-1"])
    producer.flush(30)
    ongoing = kafka.transactions()[transactional_id]
    assert (ongoing.state, ongoing.partitions) == ("Ongoing", (("orders", 0), ("orders", 1)))
    assert ongoing.producer_id >= 0 and ongoing.timeout_ms == 20_000
    assert ongoing.start_time_ms > 0
    producer.commit_transaction(30)
    ended = eventually(lambda: (view := kafka.transactions()[transactional_id]).state
                       == "CompleteCommit" and view, "the commit completed")
    assert (ended.producer_id, ended.partitions) == (ongoing.producer_id, ())


# -- what a test sees of transactions on the fake ---------------------------------------------


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_the_fake_shows_each_records_outcome_the_markers_and_the_last_stable_offset(
        fake_kafka):
    transactional_id = new_id("inspected")
    producer = transactional_producer(fake_kafka, transactional_id)
    for values, outcome in ((["c0", "c1"], "commit"), (["a0"], "abort"), (["o0"], "open")):
        producer.begin_transaction()
        for value in values:
            producer.produce("orders", value=value.encode(), partition=0)
        producer.flush(30)
        if outcome == "commit":
            producer.commit_transaction(30)
        elif outcome == "abort":
            producer.abort_transaction(30)
    assert [(r.offset, r.value, r.transaction) for r in fake_kafka.records("orders")] == [
        (0, b"c0", "committed"), (1, b"c1", "committed"), (3, b"a0", "aborted"),
        (5, b"o0", "open")]
    markers = [(r.offset, r.transaction) for r in fake_kafka.records("orders", markers=True)
               if r.is_control]
    assert markers == [(2, "committed"), (4, "aborted")]
    offsets = fake_kafka.offsets("orders")
    assert offsets == (0, 6) and offsets.last_stable_offset == 5
    view = fake_kafka.transactions()[transactional_id]
    assert (view.state, view.partitions, view.groups) == ("Ongoing", (("orders", 0),), ())
    assert view.start_time_ms > 0 and view.timeout_ms == 60_000  # librdkafka's default

    fake_kafka.abort_transaction(transactional_id)  # as if it timed out now
    aborted = fake_kafka.transactions()[transactional_id]
    assert (aborted.state, aborted.producer_epoch) == ("CompleteAbort", view.producer_epoch + 1)
    assert fake_kafka.records("orders")[-1].transaction == "aborted"
    assert fake_kafka.offsets("orders").last_stable_offset == 7
    with pytest.raises(KafkaException) as refused:
        producer.commit_transaction(30)
    assert refused.value.args[0].code() == KafkaError._FENCED


# -- faults on the transactional path (the fake's own) -----------------------------------------


@pytest.mark.fake_only("moves the transaction coordinator to another broker")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": 2})
def test_a_producer_follows_its_moved_transaction_coordinator(kafka):
    transactional_id = new_id("moving")
    producer = transactional_producer(kafka, transactional_id)
    producer.begin_transaction()
    produce_values(producer, ["before-0", "before-1"])
    producer.flush(30)
    kafka.move_coordinator(transactional_id)  # the old one answers NOT_COORDINATOR
    produce_values(producer, ["after-0"])
    producer.commit_transaction(30)
    assert kafka.journal(error="NOT_COORDINATOR")
    assert kafka.transactions()[transactional_id].state == "CompleteCommit"
    consumer = confluent_consumer(kafka, new_id("after-move"))
    try:
        assert sorted(consume_all(consumer, 3)) == ["after-0", "before-0", "before-1"]
    finally:
        consumer.close()


@pytest.mark.fake_only("scripts the coordinator's answers")
def test_a_commit_told_concurrent_transactions_is_retried(kafka):
    transactional_id = new_id("busy")
    producer = transactional_producer(kafka, transactional_id)
    busy = kafka.faults.add(api="EndTxn", transactional_id=transactional_id,
                            error="CONCURRENT_TRANSACTIONS", count=2)
    producer.begin_transaction()
    produce_values(producer, ["busy-0"])
    producer.commit_transaction(30)
    assert busy.hits == 2  # refused twice, retried, then committed
    assert [list(e.errors) for e in kafka.journal(api="EndTxn")] == [
        ["CONCURRENT_TRANSACTIONS"], ["CONCURRENT_TRANSACTIONS"], []]
    assert [r.transaction for r in kafka.records("orders", 0)] == ["committed"]
