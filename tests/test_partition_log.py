"""The in-memory partition log: offsets, reads of whole batches, log start, truncation and
the leader-epoch history OffsetForLeaderEpoch answers from."""

from __future__ import annotations

from fakebroker.protocol.records import (
    assign_offsets,
    decode_records,
    encode_batch,
    encode_marker,
)
from fakebroker.state.log import PartitionLog, Roll


def append(log: PartitionLog, values: list[bytes], epoch: int = 0, timestamp: int = 1000) -> None:
    data = encode_batch([(None, v, [], timestamp + i) for i, v in enumerate(values)])
    stored = assign_offsets(data, log.log_end_offset, epoch, None)
    log.append(stored, len(values), timestamp + len(values) - 1, epoch)


def values(chunks: list[bytes]) -> list[bytes]:
    return [r.value for chunk in chunks for r in decode_records(chunk)]


def test_appends_take_consecutive_offsets_and_move_the_high_watermark():
    log = PartitionLog()
    append(log, [b"a", b"b"])
    append(log, [b"c"])
    assert (log.log_start_offset, log.high_watermark) == (0, 3)
    assert values(log.read(0, 1 << 20)) == [b"a", b"b", b"c"]


def test_reads_return_whole_batches_from_the_one_holding_the_offset():
    log = PartitionLog()
    append(log, [b"a", b"b"])
    append(log, [b"c"])
    assert values(log.read(1, 1 << 20)) == [b"a", b"b", b"c"]
    assert values(log.read(2, 1 << 20)) == [b"c"]
    assert log.read(3, 1 << 20) == []


def test_the_first_batch_is_returned_even_over_max_bytes_but_no_more():
    log = PartitionLog()
    append(log, [b"x" * 100])
    append(log, [b"y"])
    assert values(log.read(0, 10)) == [b"x" * 100]
    assert log.read(0, 10, at_least_one=False) == []


def test_delete_before_moves_the_log_start_and_drops_whole_batches_below_it():
    log = PartitionLog()
    append(log, [b"a", b"b"])
    append(log, [b"c"])
    log.delete_before(1)
    assert log.log_start_offset == 1 and len(log.batches) == 2
    log.delete_before(2)
    assert len(log.batches) == 1 and values(log.read(2, 1 << 20)) == [b"c"]


def test_truncation_removes_the_tail_and_the_epochs_started_there():
    log = PartitionLog()
    log.begin_epoch(0)
    append(log, [b"a", b"b"], epoch=0)
    log.begin_epoch(1)
    append(log, [b"c"], epoch=1)
    log.truncate_to(2)
    assert log.log_end_offset == 2 and values(log.read(0, 1 << 20)) == [b"a", b"b"]
    assert log.epochs == [(0, 0)]  # as Kafka, epochs starting at or past the new end go


def test_epoch_end_offsets_follow_kafkas_leader_epoch_cache():
    log = PartitionLog()
    log.begin_epoch(0)
    append(log, [b"a", b"b"], epoch=0)
    log.begin_epoch(3)
    append(log, [b"c"], epoch=3)
    assert log.epoch_end_offset(3) == (3, 3)  # the current epoch ends at the log end
    assert log.epoch_end_offset(0) == (0, 2)  # an older one where the next begins
    assert log.epoch_end_offset(2) == (0, 2)  # an unknown middle epoch: the largest below
    assert log.epoch_end_offset(7) == (-1, -1)  # newer than any known
    assert log.epoch_at(2) == 3 and log.epoch_at(0) == 0


def test_timestamp_lookups_find_the_first_record_at_or_after():
    log = PartitionLog()
    append(log, [b"a", b"b"], timestamp=1000)
    append(log, [b"c"], timestamp=5000)
    assert log.offset_for_timestamp(1001) == (1, 1001)
    assert log.offset_for_timestamp(2000) == (2, 5000)
    assert log.offset_for_timestamp(9000) is None
    assert log.max_timestamp_offset() == (2, 5000)


def transactional(log: PartitionLog, values: list[bytes], producer_id: int) -> None:
    data = encode_batch([(None, v, [], 1000) for v in values], producer_id=producer_id,
                        producer_epoch=0, base_sequence=0, transactional=True)
    log.append(assign_offsets(data, log.log_end_offset, 0, None), len(values), 1000, 0,
               producer_id, True)


def marker(log: PartitionLog, producer_id: int, commit: bool) -> None:
    data = encode_marker(producer_id, 0, commit, 0, 1000)
    log.append_marker(assign_offsets(data, log.log_end_offset, 0, None), 1000, 0, producer_id,
                      commit, 0)


def test_open_transactions_hold_the_last_stable_offset_and_aborts_are_indexed():
    log = PartitionLog()
    append(log, [b"plain"])
    transactional(log, [b"a1", b"a2"], producer_id=7)  # offsets 1-2
    transactional(log, [b"b1"], producer_id=8)  # offset 3
    assert (log.last_stable_offset, log.high_watermark) == (1, 4)
    assert values(log.read(0, 1 << 20, end=log.last_stable_offset)) == [b"plain"]
    marker(log, 7, commit=False)  # offset 4
    assert log.last_stable_offset == 3  # producer 8's is still open
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in log.aborted] == [(7, 1, 4)]
    assert [t.first_offset for t in log.aborted_between(0, 3)] == [1]
    assert log.aborted_between(5, 9) == []
    assert [log.outcome(7, 1), log.outcome(8, 3)] == ["aborted", "open"]
    marker(log, 8, commit=True)  # offset 5
    assert (log.last_stable_offset, log.high_watermark) == (6, 6)
    assert log.outcome(8, 3) == "committed"


def test_the_last_stable_offset_never_falls_below_the_log_start():
    log = PartitionLog()
    transactional(log, [b"a"], producer_id=7)
    append(log, [b"b", b"c"])
    log.delete_before(2)
    assert (log.last_stable_offset, log.high_watermark) == (2, 3)


def test_a_truncated_transaction_is_forgotten_with_its_records():
    log = PartitionLog()
    append(log, [b"a"])
    transactional(log, [b"b"], producer_id=7)
    marker(log, 7, commit=False)
    transactional(log, [b"c"], producer_id=8)
    log.truncate_to(1)
    assert (log.ongoing, log.aborted, log.last_stable_offset) == ({}, [], 1)


def test_the_offset_index_has_an_entry_per_4096_bytes_as_kafkas_segment_writes_it():
    """Kafka's segment indexes the first batch appended after more than 4,096 bytes since
    its last entry (the batch's last offset, its position); ``upper_bound`` finds the first
    entry at or past a position, else the log end; truncation drops the entries past it."""
    log = PartitionLog()
    for _ in range(10):
        append(log, [b"x" * 1000, b"y"])
    size = len(log.batches[0].data)
    assert log.positions == [k * size for k in range(10)]
    after = 4096 // size + 1  # batches before the first entry: more than 4096 bytes
    assert log.index == [(2 * after + 1, after * size), (4 * after + 1, 2 * after * size)]
    assert log.upper_bound(1) == 2 * after + 1
    assert log.upper_bound(after * size + 1) == 4 * after + 1
    assert log.upper_bound(log.size) == log.log_end_offset == 20
    assert log.position_of(3) == size and log.position_of(20) == log.size
    log.truncate_to(2 * after + 2)
    assert (log.index, log.size) == ([(2 * after + 1, after * size)], (after + 1) * size)


def rolled(log: PartitionLog, values: list[bytes], timestamp: int, segment_bytes: int = 1 << 30,
           segment_ms: int = 1 << 40) -> None:
    """Append with Kafka's rolling by ``segment.bytes`` and ``segment.ms``."""
    data = encode_batch([(None, v, [], timestamp) for v in values])
    log.append(assign_offsets(data, log.log_end_offset, 0, None), len(values), timestamp, 0,
               roll=Roll(segment_bytes, segment_ms, timestamp))


def test_an_append_rolls_a_segment_when_the_active_one_would_pass_segment_bytes():
    log = PartitionLog()
    rolled(log, [b"x" * 100], 1000, segment_bytes=300)
    size = log.size
    rolled(log, [b"x" * 100], 1000, segment_bytes=2 * size)
    rolled(log, [b"x" * 100], 1000, segment_bytes=2 * size)  # 3 * size > 2 * size: rolls
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert [log.segment_size(i) for i in range(2)] == [2 * size, size]


def test_an_append_rolls_a_segment_when_its_timestamp_is_past_segment_ms_from_the_first():
    log = PartitionLog()
    rolled(log, [b"a"], 1000, segment_ms=500)
    rolled(log, [b"b"], 1500, segment_ms=500)  # 500 after the first: not past it
    rolled(log, [b"c"], 1501, segment_ms=500)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_a_read_never_crosses_its_segments_end():
    log = PartitionLog()
    rolled(log, [b"a", b"b"], 1000, segment_ms=1)
    rolled(log, [b"c"], 2000, segment_ms=1)
    assert values(log.read(1, 1 << 20)) == [b"a", b"b"]
    assert values(log.read(2, 1 << 20)) == [b"c"]


def test_deleting_every_segment_rolls_an_empty_one_at_the_log_end():
    """Offsets keep their numbers: the log start becomes the log end."""
    log = PartitionLog()
    rolled(log, [b"a", b"b"], 1000, segment_ms=1)
    rolled(log, [b"c"], 2000, segment_ms=1)
    assert log.delete_segments(lambda _segment, _after: True) == 2
    assert (log.log_start_offset, log.log_end_offset, log.batches) == (3, 3, [])
    assert [(s.base_offset, log.segment_size(0)) for s in log.segments] == [(3, 0)]
    assert log.delete_segments(lambda _segment, _after: True) == 0  # an empty active: stays
