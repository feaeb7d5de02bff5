"""Retention as Apache Kafka 4.4 enforces it: by record timestamps (``retention.ms``) and by
bytes (``retention.bytes``), a whole segment at a time, segments rolled as Kafka rolls them
(``segment.bytes``, with its 1 MiB minimum; ``segment.ms``, by record timestamps), the log
start moving and offsets keeping their numbers. Both brokers check retention every 100 ms
from their start (``log.retention.check.interval.ms``, ``log.initial.task.delay.ms``: the
marker's overrides; the real broker of these overrides is this file's own). Run on both
brokers with ``--kafka=both``."""

from __future__ import annotations

import time
from typing import Any

import pytest

from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.protocol.records import decode_records, encode_batch
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.bodies import fetch_body, produce_body

# Retention checked every 100 ms from the start, the cleaner idle 100 ms when it found nothing.
QUICK_LOG_TASKS = {"log.retention.check.interval.ms": "100", "log.initial.task.delay.ms": "0",
                   "log.cleaner.backoff.ms": "100"}
retention_checked = pytest.mark.fake_kafka(overrides=QUICK_LOG_TASKS)

OLD = 1_700_000_000_000  # November 2023: long expired under an hour's retention
HOUR_MS = "3600000"
MIB = 1 << 20


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def produced(kafka: Any, topic: str, value: bytes, timestamp: int) -> int:
    """Append one batch of one record; its offset."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        records = encode_batch([(b"k", value, [], timestamp)])
        (answer,) = client.request("Produce", 9, produce_body(topic, 0, records)).responses
    (partition,) = answer.partition_responses
    assert partition.error_code == 0, ErrorCode(partition.error_code).name
    return partition.base_offset


def log_start_reaches(kafka: Any, topic: str, offset: int) -> None:
    wait_for(lambda: kafka.offsets(topic, 0)[0] >= offset,
             f"{topic}'s log start to reach {offset}")


def fetched(kafka: Any, topic: str, offset: int) -> Any:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        return client.request("Fetch", 12, fetch_body(topic, 0, offset)).responses[0] \
            .partitions[0]


@retention_checked
def test_expired_segments_go_and_the_log_start_moves_to_the_first_kept(kafka: Any) -> None:
    """Three records stamped 2023, then one stamped now: its timestamp is more than
    segment.ms (7 days) past the segment's first, so it rolls a segment of its own. Time
    retention deletes the expired segment and keeps the fresh one; a consumer at offset 0
    is out of range."""
    kafka.create_topic("events", configs={"retention.ms": HOUR_MS})
    for value in (b"a", b"b", b"c"):
        produced(kafka, "events", value, OLD)
    assert produced(kafka, "events", b"fresh", now_ms()) == 3
    log_start_reaches(kafka, "events", 3)
    assert kafka.offsets("events", 0) == (3, 4)
    assert [r.value for r in kafka.records("events", 0)] == [b"fresh"]
    assert fetched(kafka, "events", 0).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


@retention_checked
def test_once_every_record_expired_the_active_segment_goes_too_and_numbering_continues(
        kafka: Any) -> None:
    kafka.create_topic("events", configs={"retention.ms": HOUR_MS})
    for value in (b"a", b"b", b"c"):
        produced(kafka, "events", value, OLD)
    log_start_reaches(kafka, "events", 3)
    assert kafka.offsets("events", 0) == (3, 3)
    assert produced(kafka, "events", b"d", now_ms()) == 3
    assert [r.value for r in kafka.records("events", 0)] == [b"d"]


@retention_checked
def test_records_within_retention_ms_stay(kafka: Any) -> None:
    """One topic's records expire, another's (the same age, a longer retention.ms) do not:
    once the first log's start moved, a later check has seen the second."""
    kafka.create_topic("kept", configs={"retention.ms": str(10 * 365 * 24 * 3600 * 1000)})
    kafka.create_topic("gone", configs={"retention.ms": HOUR_MS})
    produced(kafka, "kept", b"a", OLD)
    produced(kafka, "gone", b"a", OLD)
    log_start_reaches(kafka, "gone", 1)
    produced(kafka, "gone", b"b", OLD)
    log_start_reaches(kafka, "gone", 2)
    assert kafka.offsets("kept", 0) == (0, 1)


@retention_checked
def test_size_retention_keeps_the_fewest_newest_segments_holding_retention_bytes(
        kafka: Any) -> None:
    """Batches of ~100 kB in segments of 1 MiB: ten batches fill a segment (an eleventh
    would pass 1 MiB, so it rolls one), 25 batches make segments [0, 10), [10, 20) and the
    active [20, 25). With retention.bytes 1.5 MB the oldest segment goes (the other two still
    hold 1.5 MB), the second stays (without it 0.5 MB would)."""
    kafka.create_topic("sized", configs={"segment.bytes": str(MIB),
                                         "retention.bytes": "1500000"})
    for _ in range(25):
        produced(kafka, "sized", b"x" * 100_000, now_ms())
    log_start_reaches(kafka, "sized", 10)
    assert kafka.offsets("sized", 0) == (10, 25)
    assert fetched(kafka, "sized", 9).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


@retention_checked
def test_size_retention_never_deletes_the_active_segment(kafka: Any) -> None:
    """Retention.bytes of 1 byte: every segment but the active one goes."""
    kafka.create_topic("sized", configs={"segment.bytes": str(MIB), "retention.bytes": "1"})
    for _ in range(15):
        produced(kafka, "sized", b"x" * 100_000, now_ms())
    log_start_reaches(kafka, "sized", 10)
    assert kafka.offsets("sized", 0) == (10, 15)


@retention_checked
def test_a_fetch_reads_one_segment_at_a_time(kafka: Any) -> None:
    """A fetch from the segment [0, 10) stops at its end, however much it may read."""
    kafka.create_topic("sized", configs={"segment.bytes": str(MIB)})
    for _ in range(12):
        produced(kafka, "sized", b"x" * 100_000, now_ms())
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        body = fetch_body("sized", 0, 5)
        body["max_bytes"] = body["topics"][0]["partitions"][0]["partition_max_bytes"] = 4 * MIB
        (partition,) = client.request("Fetch", 12, body).responses[0].partitions
    assert [r.offset for r in decode_records(partition.records)] == [5, 6, 7, 8, 9]


def test_a_segment_bytes_below_one_mib_is_an_invalid_config(kafka: Any) -> None:
    with pytest.raises(ClusterError) as refused:
        kafka.create_topic("small", configs={"segment.bytes": str(MIB - 1)})
    assert refused.value.error == "INVALID_CONFIG"


@retention_checked
def test_a_consumer_below_the_log_start_resets_to_it(kafka: Any) -> None:
    """confluent-kafka asked to read from offset 0 after retention moved the log start to 3:
    OFFSET_OUT_OF_RANGE, and with auto.offset.reset=earliest it reads on from 3."""
    from confluent_kafka import Consumer, TopicPartition

    kafka.create_topic("events", configs={"retention.ms": HOUR_MS})
    for value in (b"a", b"b", b"c"):
        produced(kafka, "events", value, OLD)
    produced(kafka, "events", b"fresh", now_ms())
    log_start_reaches(kafka, "events", 3)
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "reader",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition("events", 0, 0)])
        message = None
        deadline = time.monotonic() + 30
        while message is None or message.error():
            assert time.monotonic() < deadline, "the consumer read nothing"
            message = consumer.poll(0.5)
        assert (message.offset(), message.value()) == (3, b"fresh")
    finally:
        consumer.close()


@retention_checked
def test_compact_and_delete_deletes_expired_segments_too(kafka: Any) -> None:
    """cleanup.policy=compact,delete: retention applies as well (by the cleaner, on its
    backoff): every record stamped 2023 goes, numbering continues."""
    kafka.create_topic("table", configs={"cleanup.policy": "compact,delete",
                                         "retention.ms": HOUR_MS})
    for key in (b"a", b"b"):
        produced(kafka, "table", key, OLD)
    log_start_reaches(kafka, "table", 2)
    assert kafka.offsets("table", 0) == (2, 2)


@pytest.mark.fake_kafka(overrides={**QUICK_LOG_TASKS,
                                   "log.cleaner.backoff.ms": str(24 * 3600 * 1000)})
def test_compact_and_delete_waits_for_the_cleaners_next_pass(kafka: Any) -> None:
    """A compacted log's time retention is the cleaner's, not the retention checks': with the
    cleaner idle for a day after its first pass (at the start, nothing to clean), expired
    records of a compact,delete topic stay however often retention is checked. The
    differential fuzzer idles both cleaners so (tests/fuzz/differential.py, CLEANER_IDLE)."""
    kafka.create_topic("idle-table", configs={"cleanup.policy": "compact,delete",
                                              "retention.ms": "1000"})
    for key in (b"a", b"b"):
        produced(kafka, "idle-table", key, OLD)
    time.sleep(2)  # twenty retention checks, records a second past retention.ms
    assert kafka.offsets("idle-table", 0) == (0, 2)
