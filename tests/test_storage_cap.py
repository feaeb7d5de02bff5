"""The optional cap on the bytes a fake cluster stores (``max_stored_bytes``), as a
confluent-kafka producer (and Java's) meets it: the batch past the cap is refused at once with
POLICY_VIOLATION (not retried until the delivery timeout), one warning names the cap, and
producing resumes once DeleteRecords, retention or a topic's deletion frees bytes. Kafka has
no such cap: fake only."""

from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from fakebroker.options import OptionError
from fakebroker.protocol.records import encode_batch
from fakebroker.real_cluster import wait_for
from fakebroker.state.log import PartitionLog
from fakebroker.sync import FakeKafka
from fakebroker.wire_client import WireClient
from tests.clients.java import HarnessError, run_harness

pytestmark = pytest.mark.timeout(60)

VALUE = b"x" * 100  # one record of it is a batch of 170 bytes
BATCH = 170
CAP = 2 * BATCH  # two batches fit, the third does not
QUICK_RETENTION = {"log.retention.check.interval.ms": "100", "log.initial.task.delay.ms": "0"}


def delivery(producer: Producer, topic: str, timestamp: int = 0) -> KafkaError | None:
    """Produce one record of ``VALUE`` and wait for its delivery report: its error, or None."""
    reports: list[KafkaError | None] = []
    producer.produce(topic, VALUE, timestamp=timestamp,
                     on_delivery=lambda err, _msg: reports.append(err))
    assert producer.flush(10) == 0, "no delivery report within 10 s"
    return reports[0]


def producer_of(kafka: FakeKafka) -> Producer:
    return Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})


@pytest.mark.fake_kafka(max_stored_bytes=CAP, topics={"events": 1})
def test_the_batch_past_the_cap_fails_at_once_with_one_warning_naming_the_setting(
        fake_kafka: FakeKafka, caplog: pytest.LogCaptureFixture) -> None:
    client = producer_of(fake_kafka)
    assert delivery(client, "events") is None
    assert delivery(client, "events") is None
    with caplog.at_level(logging.WARNING, logger="fakebroker"):
        started = time.monotonic()
        refused = delivery(client, "events")
        assert refused is not None and refused.code() == KafkaError.POLICY_VIOLATION
        assert not refused.retriable()
        assert time.monotonic() - started < 5  # not retried until message.timeout.ms
        assert delivery(client, "events").code() == KafkaError.POLICY_VIOLATION
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "fakebroker" and "max_stored_bytes" in r.getMessage()]
    assert warnings == [
        f"refusing a Produce to events-0: fakebroker stores {CAP} bytes of records; this "
        f"batch of {BATCH} bytes would pass its cap, max_stored_bytes={CAP} (retention, "
        "DeleteRecords or deleting topics frees bytes)"]
    assert fake_kafka.offsets("events", 0) == (0, 2)  # nothing appended past the cap


@pytest.mark.fake_kafka(max_stored_bytes=CAP, topics={"events": 1})
def test_delete_records_frees_bytes_at_once(fake_kafka: FakeKafka) -> None:
    client = producer_of(fake_kafka)
    assert [delivery(client, "events") for _ in range(2)] == [None, None]
    assert delivery(client, "events").code() == KafkaError.POLICY_VIOLATION
    admin = AdminClient({"bootstrap.servers": fake_kafka.bootstrap_servers})
    (future,) = admin.delete_records([TopicPartition("events", 0, 1)]).values()
    assert future.result(10).low_watermark == 1
    assert delivery(client, "events") is None
    assert delivery(client, "events").code() == KafkaError.POLICY_VIOLATION


@pytest.mark.fake_kafka(max_stored_bytes=CAP, topics={"events": 1, "other": 1})
def test_deleting_a_topic_frees_its_bytes_for_every_topic(fake_kafka: FakeKafka) -> None:
    client = producer_of(fake_kafka)
    assert [delivery(client, "events") for _ in range(2)] == [None, None]
    assert delivery(client, "other").code() == KafkaError.POLICY_VIOLATION
    admin = AdminClient({"bootstrap.servers": fake_kafka.bootstrap_servers})
    admin.delete_topics(["events"])["events"].result(10)
    assert delivery(client, "other") is None


@pytest.mark.fake_kafka(max_stored_bytes=CAP, overrides=QUICK_RETENTION)
def test_retention_frees_bytes_and_producing_resumes(fake_kafka: FakeKafka) -> None:
    """Two records stamped 2023 under an hour's retention.ms fill the cap; the retention
    check (every 100 ms) deletes their wholly expired segment, and the next record fits."""
    fake_kafka.create_topic("events", configs={"retention.ms": "3600000"})
    client = producer_of(fake_kafka)
    old = 1_700_000_000_000
    assert [delivery(client, "events", old) for _ in range(2)] == [None, None]
    wait_for(lambda: fake_kafka.offsets("events", 0)[0] == 2, "retention to delete both")
    assert delivery(client, "events") is None


def test_the_setting_is_a_flag_a_variable_and_a_keyword_checked_alike() -> None:
    from fakebroker.cli import parser
    from fakebroker.options import CLUSTER_SETTINGS, ClusterSettings

    setting = CLUSTER_SETTINGS["max_stored_bytes"]
    assert (setting.flag, setting.env) == ("--max-stored-bytes", "FAKEBROKER_MAX_STORED_BYTES")
    assert parser().parse_args(["serve", "--max-stored-bytes", "1048576"]).max_stored_bytes \
        == 1048576
    assert ClusterSettings.from_kwargs({}).max_stored_bytes is None
    with pytest.raises(OptionError, match="max_stored_bytes: expected a whole number >= 0"):
        ClusterSettings.from_kwargs({"max_stored_bytes": -1})


def test_a_cap_of_zero_refuses_every_produce() -> None:
    with FakeKafka(max_stored_bytes=0, topics={"events": 1}) as kafka:
        assert delivery(producer_of(kafka), "events").code() == KafkaError.POLICY_VIOLATION
        assert kafka.offsets("events", 0) == (0, 0)


def test_a_java_producer_fails_with_the_caps_message() -> None:
    """Java's producer raises the broker's message: a PolicyViolationException naming the
    cap and the setting, at once (not retriable)."""
    with FakeKafka(max_stored_bytes=0, topics={"events": 1}) as kafka, \
            pytest.raises(HarnessError) as refused:
        run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", "events",
                    "--count", "1", client_version="4.4.0")
    assert "PolicyViolationException: fakebroker stores 0 bytes of records; this batch of " \
        "72 bytes would pass its cap, max_stored_bytes=0" in str(refused.value)


def test_a_transaction_filling_the_cap_still_commits() -> None:
    """A transactional batch that fills the cap to the byte (its 170 bytes, as a plain
    one's): its commit marker is written all the same, so a transaction begun can end."""
    with FakeKafka(max_stored_bytes=BATCH, topics={"events": 1}) as kafka:
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0,
                             "transactional.id": "capped"})
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce("events", VALUE)
        producer.commit_transaction(10)
        assert kafka.offsets("events", 0) == (0, 2)  # the record and its commit marker
        assert [(r.offset, r.value) for r in kafka.records("events", 0)] == [(0, VALUE)]
        assert delivery(producer_of(kafka), "events").code() == KafkaError.POLICY_VIOLATION


def produce_to_each(kafka: FakeKafka, topic: str, partitions: int) -> list[int]:
    """One Produce v9 of one record of ``VALUE`` to each of ``topic``'s first ``partitions``
    partitions; each partition's error code."""
    batch = encode_batch([(None, VALUE, (), int(time.time() * 1000))])
    assert len(batch) == BATCH
    with WireClient(kafka.bootstrap_servers) as client:
        answer = client.request("Produce", 9, {
            "transactional_id": None, "acks": 1, "timeout_ms": 10000, "topic_data": [
                {"name": topic, "partition_data": [{"index": i, "records": batch}
                                                   for i in range(partitions)]}]})
    return [p.error_code for t in answer.responses for p in t.partition_responses]


def test_one_produce_counts_its_own_batches_against_the_cap() -> None:
    """A request whose batches fit one by one but not together: those past the cap are
    refused, the earlier ones appended."""
    with FakeKafka(max_stored_bytes=CAP, topics={"events": 3}) as kafka:
        assert produce_to_each(kafka, "events", 3) == [0, 0, KafkaError.POLICY_VIOLATION]
        assert [kafka.offsets("events", p) for p in range(3)] == [(0, 1), (0, 1), (0, 0)]


def test_a_produce_to_many_partitions_sums_the_stored_bytes_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap's cost does not grow with the square of the partitions a Produce writes: the
    request reads each log's size once (the cluster's other logs included), not once for
    each batch."""
    reads = 0
    size = PartitionLog.stored_bytes

    def counted(log: PartitionLog) -> int:
        nonlocal reads
        reads += 1
        return size.fget(log)

    monkeypatch.setattr(PartitionLog, "stored_bytes", property(counted))
    with FakeKafka(max_stored_bytes=10**9, topics={"wide": 200}) as kafka:
        assert produce_to_each(kafka, "wide", 200) == [0] * 200
        logs = sum(kafka.topics().values())
    assert 200 <= reads <= logs
