"""Log compaction as Apache Kafka 4.4's cleaner does it (``cleanup.policy=compact``): the
latest record of each key in the cleaned part only (the active segment untouched), offsets
keeping their numbers with gaps, the log start staying; tombstones kept for
``delete.retention.ms`` and removed by a later cleaning, one after a later write. Each record
here is stamped a second after the one before and ``segment.ms`` is 500 ms, so every record
rolls a segment of its own (Kafka rolls by record timestamps). The cleaner idles 100 ms
between looks (``log.cleaner.backoff.ms``, the marker's overrides, shared with
tests/test_retention.py). Run on both brokers with ``--kafka=both``."""

from __future__ import annotations

import struct
import time
import uuid
from types import SimpleNamespace
from typing import Any

import crc32c

from fakebroker.protocol.conversion import down_converted
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.record_entries import entries
from fakebroker.protocol.records import (
    assign_offsets,
    decode_records,
    encode_batch,
    encode_marker,
    next_offset,
    read_batch_headers,
)
from fakebroker.real_cluster import wait_for
from fakebroker.state.cluster import Partition, Topic
from fakebroker.state.compaction import clean, clean_filthiest, cleanable
from fakebroker.state.log import AbortedTxn, PartitionLog, Roll
from fakebroker.wire_client import WireClient
from tests.bodies import produce_body
from tests.test_retention import retention_checked
from tests.test_wire_transactions import (
    READ_UNCOMMITTED,
    add_partitions,
    coordinator,
    end,
    fetch,
    init,
    new_id,
    produce,
    txn_batch,
)

COMPACTED = {"cleanup.policy": "compact", "segment.ms": "500",
             "min.cleanable.dirty.ratio": "0.01"}


class Writer:
    """Appends one keyed record a batch, each stamped a second after the last."""

    def __init__(self, kafka: Any, topic: str) -> None:
        self.kafka, self.topic = kafka, topic
        self.timestamp = time.time_ns() // 1_000_000 - 600_000  # ten minutes ago

    def __call__(self, key: bytes, value: bytes | None) -> int:
        self.timestamp += 1000
        with WireClient(self.kafka.bootstrap_servers.split(",")[0]) as client:
            records = encode_batch([(key, value, [], self.timestamp)])
            answer = client.request("Produce", 9, produce_body(self.topic, 0, records))
        (partition,) = answer.responses[0].partition_responses
        assert partition.error_code == 0, ErrorCode(partition.error_code).name
        return partition.base_offset


def stored(kafka: Any, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for r in kafka.records(topic, 0)]


def becomes(kafka: Any, topic: str, expected: list[tuple[int, bytes | None, bytes | None]]
            ) -> None:
    wait_for(lambda: stored(kafka, topic) == expected, f"{topic} to hold {expected}")


@retention_checked
def test_the_cleaned_part_keeps_the_latest_record_of_each_key(kafka: Any) -> None:
    """k1 and k2 twice each, then k1 again in the active segment: the cleaned part keeps
    k1@2 and k2@3 (k1@4, in the active segment, does not count: it is not cleaned); the
    log start stays 0 and the offsets keep their numbers."""
    kafka.create_topic("table", configs=COMPACTED)
    write = Writer(kafka, "table")
    for key, value in ((b"k1", b"a"), (b"k2", b"b"), (b"k1", b"c"), (b"k2", b"d"),
                       (b"k1", b"e")):
        write(key, value)
    becomes(kafka, "table", [(2, b"k1", b"c"), (3, b"k2", b"d"), (4, b"k1", b"e")])
    assert kafka.offsets("table", 0) == (0, 5)


@retention_checked
def test_max_compaction_lag_cleans_a_log_its_dirty_ratio_would_not(kafka: Any) -> None:
    """min.cleanable.dirty.ratio 1 (no log is ever dirtier than that); records older than
    max.compaction.lag.ms (1 ms) make the log due all the same."""
    kafka.create_topic("table", configs=dict(COMPACTED, **{"min.cleanable.dirty.ratio": "1",
                                                           "max.compaction.lag.ms": "1"}))
    write = Writer(kafka, "table")
    for key, value in ((b"k1", b"a"), (b"k1", b"b"), (b"k1", b"c")):
        write(key, value)
    becomes(kafka, "table", [(1, b"k1", b"b"), (2, b"k1", b"c")])


@retention_checked
def test_a_tombstone_stays_until_a_cleaning_after_its_delete_retention(kafka: Any) -> None:
    """A tombstone's first cleaning keeps it (and sets its batch's delete horizon: now plus
    delete.retention.ms, here 0); nothing is dirty after it, so it stays until a later write
    makes the log dirty again: the next cleaning removes it."""
    kafka.create_topic("table", configs=dict(COMPACTED, **{"delete.retention.ms": "0"}))
    write = Writer(kafka, "table")
    write(b"a", b"1")
    write(b"a", None)
    write(b"b", b"2")
    becomes(kafka, "table", [(1, b"a", None), (2, b"b", b"2")])
    write(b"c", b"3")
    becomes(kafka, "table", [(2, b"b", b"2"), (3, b"c", b"3")])
    assert kafka.offsets("table", 0) == (0, 4)


# The cleaner's handling of transactions, on the fake's log itself.

def topic_log(**configs: str) -> tuple[Topic, Partition]:
    partition = Partition("t", 0, 1, [1], [1])
    return Topic("t", uuid.uuid4(), [partition], dict(COMPACTED, **configs)), partition


def keyed(log: PartitionLog, key: bytes, timestamp: int, producer_id: int = -1) -> None:
    data = encode_batch([(key, b"v", [], timestamp)], producer_id=producer_id,
                        producer_epoch=0, base_sequence=0 if producer_id >= 0 else -1,
                        transactional=producer_id >= 0)
    log.append(assign_offsets(data, log.log_end_offset, 0, None), 1, timestamp, 0, producer_id,
               producer_id >= 0, roll=Roll(1 << 30, 500, timestamp))


def ended(log: PartitionLog, producer_id: int, commit: bool, timestamp: int) -> None:
    data = encode_marker(producer_id, 0, commit, 0, timestamp)
    log.append_marker(assign_offsets(data, log.log_end_offset, 0, None), timestamp, 0,
                      producer_id, commit, 0, roll=Roll(1 << 30, 500, timestamp))


def cleaned(topic: Topic, partition: Partition, now_ms: int) -> list[tuple[int, bool]]:
    """Clean the log now; its (offset, is a marker) left."""
    target = cleanable(topic, partition, now_ms)
    assert target is not None
    clean(target, now_ms)
    return [(r.offset, r.is_control) for r in decode_records(b"".join(
        b.data for b in partition.log.batches))]


def test_aborted_records_go_at_once_their_marker_two_cleanings_later():
    """An aborted transaction's records go at the first cleaning, its marker stays (and
    the aborted-transaction index keeps it); the next cleaning finds none of its records:
    it sets the marker's delete horizon (delete.retention.ms, here 0, from now) and drops the
    index entry; the one after removes it. A committed transaction's marker stays while its
    records do. Each cleaning after a write (the previous active segment now cleanable).
    (The producer's later transaction holds its last data batch: Kafka would keep the
    aborted one's batch, emptied, as the last of an active producer, and the marker with it.)
    """
    topic, partition = topic_log(**{"delete.retention.ms": "0"})
    log = partition.log
    keyed(log, b"a", 1000, producer_id=7)  # 0
    ended(log, 7, commit=False, timestamp=2000)  # 1
    keyed(log, b"b", 3000, producer_id=7)  # 2
    ended(log, 7, commit=True, timestamp=4000)  # 3
    keyed(log, b"c", 5000)  # 4: the active segment
    assert cleaned(topic, partition, 10_000) == [(1, True), (2, False), (3, True), (4, False)]
    assert log.aborted == [AbortedTxn(7, 0, 1)]
    keyed(log, b"d", 6000)  # 5
    assert cleaned(topic, partition, 10_001) == [(1, True), (2, False), (3, True), (4, False),
                                                 (5, False)]
    assert log.aborted == []
    keyed(log, b"e", 7000)  # 6
    assert cleaned(topic, partition, 10_002) == [(2, False), (3, True), (4, False),
                                                 (5, False), (6, False)]
    assert log.log_start_offset == 0


def test_no_cleaning_below_an_open_transaction():
    """The last stable offset bounds what is cleanable: the segment holding it and on."""
    topic, partition = topic_log()
    log = partition.log
    keyed(log, b"a", 1000)  # 0
    keyed(log, b"a", 2000, producer_id=7)  # 1: open
    keyed(log, b"a", 3000)  # 2
    keyed(log, b"a", 4000)  # 3
    target = cleanable(topic, partition, 10_000)
    assert target is not None and target.first_uncleanable == 1


@retention_checked
def test_a_cleaning_removes_the_records_of_an_aborted_transaction(kafka: Any) -> None:
    """Records stamped 2023 in a transaction, aborted: its marker (stamped now) rolls a
    segment, the records' segment is cleanable and its cleaning removes them (their batch
    kept empty: the producer's last); the marker, in the active segment, stays."""
    kafka.create_topic("orders", configs=COMPACTED)
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert add_partitions(client, txn_id, pid, epoch, {"orders": [0]}) == {
            ("orders", 0): 0}
        assert produce(broker, txn_id, 0, txn_batch([b"a", b"b"], pid, epoch)) == 0
        assert end(client, txn_id, pid, epoch, False).error_code == 0
        wait_for(lambda: [(r.offset, r.is_control) for r in kafka.records(
            "orders", 0, markers=True)] == [(2, True)], "the aborted records to be cleaned")
        emptied = fetch(broker, 0, 0, READ_UNCOMMITTED)  # a read stays in its segment
        assert (decode_records(emptied.records), next_offset(emptied.records)) == ([], 2)
    assert kafka.offsets("orders", 0) == (0, 3)


@retention_checked
def test_min_compaction_lag_holds_back_segments_with_newer_records(kafka: Any) -> None:
    """With min.compaction.lag.ms an hour, the cleanable part ends at the first segment
    holding a record of the last hour: of five records of one key (stamped 3 h, 2 h, 10 min,
    9 min, 8 min ago, a segment each) only the first two segments are cleaned."""
    kafka.create_topic("table", configs=dict(COMPACTED, **{"min.compaction.lag.ms": "3600000"}))
    write = Writer(kafka, "table")
    now = time.time_ns() // 1_000_000
    for minutes in (180, 120, 10, 9, 8):
        write.timestamp = now - minutes * 60_000 - 1000  # the writer adds its second
        write(b"a", str(minutes).encode())
    held_back = [(1, b"a", b"120"), (2, b"a", b"10"), (3, b"a", b"9"), (4, b"a", b"8")]
    becomes(kafka, "table", held_back)
    time.sleep(1)  # ten cleaner backoffs: a cleaner ignoring the lag would now keep 3 and 4
    assert stored(kafka, "table") == held_back


def test_a_cleaned_log_is_down_converted_for_an_old_fetcher():
    """A batch the cleaner thinned (two records, one kept) and one it emptied (kept for its
    producer's state) read by a Fetch v0-3 fetcher: the kept records, at their offsets, in
    magic 1; the empty batch skipped, as Kafka's RecordsUtil.downConvert skips a batch with
    no record to convert (it used to fail the header check and close the connection)."""
    topic, partition = topic_log()
    log = partition.log
    both = encode_batch([(b"a", b"old", [], 1000), (b"b", b"kept", [], 1000)])
    log.append(assign_offsets(both, 0, 0, None), 2, 1000, 0, -1, False,
               roll=Roll(1 << 30, 500, 1000))  # 0-1
    keyed(log, b"a", 2000, producer_id=7)  # 2: emptied by the aborted transaction
    ended(log, 7, commit=False, timestamp=3000)  # 3
    keyed(log, b"a", 4000)  # 4
    keyed(log, b"c", 5000)  # 5: the active segment
    assert cleaned(topic, partition, 10_000) == [(1, False), (3, True), (4, False), (5, False)]
    stored = b"".join(b.data for b in log.batches)
    assert any(h.record_count == 0 for h in read_batch_headers(stored, stored=True))
    old = down_converted(stored, 1, 0)
    assert [(magic, r.offset, r.key, r.value)
            for start, end, magic in entries(old, allow_partial=True)
            for r in decode_records(old[start:end])] == [
        (1, 1, b"b", b"kept"), (1, 4, b"a", b"v"), (1, 5, b"c", b"v")]


def test_records_the_cleaner_cannot_read_mark_only_their_log_uncleanable(caplog):
    """A batch whose CRC holds but whose record does not parse (produce checks batches, not
    each record) stops neither the cleaner nor the cluster: that log stays as it was, marked
    uncleanable with one warning (Kafka's markPartitionUncleanable); other logs are cleaned.
    Marking it is not a cleaning: the cleaner backs off before the next, as Kafka's."""
    (topic, partition), (good_topic, good) = topic_log(), topic_log()
    bad = bytearray(encode_batch([(b"a", b"v", [], 1000)]))
    bad[61] = 0x7E  # the record's length (after the 61-byte header): 63, past the batch
    struct.pack_into(">I", bad, 17, crc32c.crc32c(bytes(bad[21:])))  # its CRC made good
    partition.log.append(bytes(bad), 1, 1000, 0, -1, False, roll=Roll(1 << 30, 500, 1000))
    for log in (partition.log, good.log):
        for timestamp in (2000, 3000, 4000):
            keyed(log, b"a", timestamp)
    before = [b.data for b in partition.log.batches]
    cluster = SimpleNamespace(topics={"bad": topic, "good": good_topic})
    cleaned = [clean_filthiest(cluster, 10_000) for _ in range(3)]
    assert partition.log.uncleanable and [b.data for b in partition.log.batches] == before
    assert [r.offset for r in decode_records(b"".join(b.data for b in good.log.batches))] == [
        1, 2]  # a@0 superseded; a@2 in the active segment
    assert [r.getMessage() for r in caplog.records] == [
        "the cleaner cannot read t-0 (bad record length 63): marked uncleanable"]
    # The bad log (the filthier: one batch more) marked, which is no cleaning; then the
    # good one cleaned; then none is due.
    assert cleaned == [False, True, False]


def test_a_record_without_a_key_is_refused_by_a_compacted_topic(kafka: Any) -> None:
    """Kafka's LogValidator.validateKey: the whole batch refused, INVALID_RECORD, each
    record without a key named in record_errors (Produce v8+), the first three in the
    message; nothing appended."""
    kafka.create_topic("table", configs=COMPACTED)
    said = "Compacted topic cannot accept message without key in topic partition table-0"
    records = encode_batch([(b"k", b"v", [], 1000), (None, b"v", [], 1000),
                            (None, b"w", [], 1000)])
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        answers = {version: client.request("Produce", version, produce_body(
            "table", 0, records)).responses[0].partition_responses[0]
            for version in (7, 9)}
    assert answers[7].error_code == answers[9].error_code == ErrorCode.INVALID_RECORD
    assert [(e.batch_index, e.batch_index_error_message) for e in answers[9].record_errors
            ] == [(1, said), (2, said)]
    assert answers[9].error_message == (
        "One or more records have been rejected due to 2 record errors in total, and only "
        "showing the first three errors at most: [RecordError(batchIndex=1, "
        f"message='{said}'), RecordError(batchIndex=2, message='{said}')]")
    assert stored(kafka, "table") == []


def test_a_cleaned_segment_keeps_the_largest_timestamp_of_the_records_it_kept():
    """Kafka writes a cleaned segment's time index anew from the batches kept: ListOffsets'
    max timestamp (-3) and time retention then see the kept records' timestamps, not those
    of the records cleaned away."""
    topic, partition = topic_log()
    log = partition.log
    both = encode_batch([(b"b", b"kept", [], 1000), (b"a", b"old", [], 9000)])
    log.append(assign_offsets(both, 0, 0, None), 2, 9000, 0, -1, False,
               roll=Roll(1 << 30, 500, 1000))  # 0-1
    keyed(log, b"a", 10_000)  # 2
    keyed(log, b"c", 11_000)  # 3: the active segment
    assert cleaned(topic, partition, 20_000) == [(0, False), (2, False), (3, False)]
    assert [(s.base_offset, s.max_timestamp) for s in log.segments] == [(0, 10_000),
                                                                         (3, 11_000)]
    assert log.batches[0].max_timestamp == 1000
