"""An in-memory partition log of stored record batches.

Guarantees:

* Batches are stored as the bytes that were appended (offsets already assigned); reads return
  whole stored batches, never partial ones, in offset order.
* ``log_start_offset <= high_watermark == log_end_offset``: every append is committed at once
  (the fake cluster has no lagging followers), so the high watermark is the log end offset.
* ``delete_before`` moves the log start forward and drops whole batches below it;
  ``truncate_to`` drops everything from an offset on (an unclean leader election).
* ``epoch_end_offset`` answers OffsetForLeaderEpoch from the epochs this log has seen.
* Transactions: a producer's first transactional batch opens its transaction here
  (``ongoing``); its control batch (``append_marker``) closes it, and an abort is kept in the
  aborted index (``aborted``: producer id, first offset, marker offset), as Kafka's log keeps
  it. The last stable offset is the first offset of the earliest open transaction, or the
  high watermark when none is open; read_committed readers stop there (``read``'s ``end``).
* The offset index (``index``): as Kafka's segment appends to its sparse offset index, an
  entry (the appended batch's last offset, its byte position) for the first batch appended
  after more than ``INDEX_INTERVAL_BYTES`` since the last entry. ``upper_bound`` reads it as
  Kafka bounds the aborted transactions of a read_committed fetch
  (``LogSegment.fetchUpperBoundOffset``): the first entry at or past the read's end, else
  the log end offset (the log is one segment: Kafka's never rolled one).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import NamedTuple

INDEX_INTERVAL_BYTES = 4096  # Kafka's index.interval.bytes default


class StoredBatch(NamedTuple):
    """One appended batch: its offsets, bytes and the facts fetch and ListOffsets need (a
    named tuple: made on every append, and cheaper to declare than a frozen dataclass)."""

    base_offset: int
    last_offset: int
    data: bytes
    max_timestamp: int
    leader_epoch: int
    producer_id: int = -1
    transactional: bool = False
    control: bool = False


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction of one producer in one log: from its first offset to its
    abort marker's offset (Kafka's AbortedTxn index entry)."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class PartitionLog:
    """The records of one partition."""

    batches: list[StoredBatch] = field(default_factory=list)
    base_offsets: list[int] = field(default_factory=list)  # parallel to batches, for bisect
    positions: list[int] = field(default_factory=list)  # parallel: each batch's byte position
    size: int = 0  # bytes appended: the next batch's position
    # Kafka's sparse offset index: (last offset of a batch, its position), ascending
    index: list[tuple[int, int]] = field(default_factory=list)
    since_index: int = 0  # bytes appended since the last index entry
    log_start_offset: int = 0
    log_end_offset: int = 0
    # (leader epoch, first offset written in it), ascending: OffsetForLeaderEpoch's facts.
    epochs: list[tuple[int, int]] = field(default_factory=list)
    # producer id -> first offset of its open transaction in this log
    ongoing: dict[int, int] = field(default_factory=dict)
    aborted: list[AbortedTxn] = field(default_factory=list)  # by marker offset
    # producer id -> the coordinator epoch of its last marker here (DescribeProducers)
    coordinator_epochs: dict[int, int] = field(default_factory=dict)

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """Where read_committed readers stop: the earliest open transaction's first offset
        (never below the log start: records deleted there are not waited for, as Kafka's)."""
        return max(min(self.ongoing.values(), default=self.high_watermark),
                   self.log_start_offset)

    def append(self, data: bytes, record_count: int, max_timestamp: int, leader_epoch: int,
               producer_id: int = -1, transactional: bool = False) -> None:
        """Store ``data`` (already stamped with offsets starting at ``log_end_offset``); a
        transactional batch opens its producer's transaction here if none is open."""
        base = self.log_end_offset
        if not self.epochs or self.epochs[-1][0] != leader_epoch:
            self.begin_epoch(leader_epoch)
        self.batches.append(StoredBatch(base, base + record_count - 1, data, max_timestamp,
                                        leader_epoch, producer_id, transactional))
        self.base_offsets.append(base)
        self._place(base + record_count - 1, len(data))
        self.log_end_offset = base + record_count
        if transactional:
            self.ongoing.setdefault(producer_id, base)

    def append_marker(self, data: bytes, timestamp: int, leader_epoch: int, producer_id: int,
                      commit: bool, coordinator_epoch: int) -> None:
        """Store a control batch of one marker (stamped at ``log_end_offset``): the
        producer's transaction here ends; an abort of one that wrote here is indexed."""
        offset = self.log_end_offset
        if not self.epochs or self.epochs[-1][0] != leader_epoch:
            self.begin_epoch(leader_epoch)
        self.batches.append(StoredBatch(offset, offset, data, timestamp, leader_epoch,
                                        producer_id, True, True))
        self.base_offsets.append(offset)
        self._place(offset, len(data))
        self.log_end_offset = offset + 1
        self.coordinator_epochs[producer_id] = coordinator_epoch
        first = self.ongoing.pop(producer_id, None)
        if first is not None and not commit:
            self.aborted.append(AbortedTxn(producer_id, first, offset))

    def _place(self, last_offset: int, size: int) -> None:
        """Give the batch just appended its position, and an index entry where Kafka's
        ``LogSegment.append`` writes one."""
        if self.since_index > INDEX_INTERVAL_BYTES:
            self.index.append((last_offset, self.size))
            self.since_index = 0
        self.positions.append(self.size)
        self.size += size
        self.since_index += size

    def position_of(self, offset: int) -> int:
        """The byte position of the batch a read from ``offset`` starts with (the log's size
        past its last batch)."""
        index = max(bisect.bisect_right(self.base_offsets, offset) - 1, 0)
        while index < len(self.batches) and self.batches[index].last_offset < offset:
            index += 1
        return self.positions[index] if index < len(self.batches) else self.size

    def upper_bound(self, position: int) -> int:
        """An offset past every record before byte ``position``, as Kafka's offset index
        finds it: the first index entry at or past ``position``, else the log end offset."""
        found = bisect.bisect_left(self.index, position, key=lambda entry: entry[1])
        return self.index[found][0] if found < len(self.index) else self.log_end_offset

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """The aborted transactions a read_committed fetch of ``[start, end)`` must be told
        of: those ending at or after ``start`` and starting before ``end``."""
        return [t for t in self.aborted if t.last_offset >= start and t.first_offset < end]

    def outcome(self, producer_id: int, offset: int) -> str:
        """What became of the transactional record (or marker) at ``offset`` of
        ``producer_id``: "open", "aborted" or "committed"."""
        first = self.ongoing.get(producer_id)
        if first is not None and offset >= first:
            return "open"
        if any(t.producer_id == producer_id and t.first_offset <= offset <= t.last_offset
               for t in self.aborted):
            return "aborted"
        return "committed"

    def read(self, offset: int, max_bytes: int, at_least_one: bool = True,
             end: int | None = None) -> list[bytes]:
        """Batches holding ``offset`` and after (those starting before ``end``, when given:
        the last stable offset of read_committed), up to ``max_bytes`` in all.

        With ``at_least_one`` the first batch is returned even when it alone exceeds
        ``max_bytes`` (KIP-74), so a consumer can always make progress.
        """
        index = bisect.bisect_right(self.base_offsets, offset) - 1
        if index < 0:
            index = 0
        chunks: list[bytes] = []
        total = 0
        for batch in self.batches[index:]:
            if batch.last_offset < offset:
                continue
            if end is not None and batch.base_offset >= end:
                break
            size = len(batch.data)
            if total + size > max_bytes and (chunks or not at_least_one):
                break
            chunks.append(batch.data)
            total += size
        return chunks

    def end_of_read(self, offset: int, count: int) -> int:
        """The offset after the ``count`` batches ``read(offset, ...)`` returned (``offset``
        when it returned none)."""
        index = max(bisect.bisect_right(self.base_offsets, offset) - 1, 0)
        while index < len(self.batches) and self.batches[index].last_offset < offset:
            index += 1
        last = index + count - 1
        return self.batches[last].last_offset + 1 if count and last < len(self.batches) \
            else offset

    def delete_before(self, offset: int) -> None:
        """Advance the log start to ``offset`` (<= log end), dropping batches wholly below it."""
        self.log_start_offset = max(self.log_start_offset, offset)
        keep = bisect.bisect_right([b.last_offset for b in self.batches], offset - 1)
        self._drop_head(keep)
        self.aborted = [t for t in self.aborted if t.last_offset >= self.log_start_offset]

    def truncate_to(self, offset: int) -> None:
        """Remove every record at or after ``offset``; the log end becomes ``offset``."""
        offset = max(offset, self.log_start_offset)
        index = bisect.bisect_left(self.base_offsets, offset)
        # A batch straddling ``offset`` goes whole: batches are never split.
        if index > 0 and self.batches[index - 1].last_offset >= offset:
            index -= 1
            offset = self.batches[index].base_offset
        if index < len(self.batches):
            self.size = self.positions[index]
            self.since_index = 0
        del self.batches[index:]
        del self.base_offsets[index:]
        del self.positions[index:]
        self.index = [(o, p) for o, p in self.index if p < self.size]
        self.log_end_offset = max(offset, self.log_start_offset)
        self.epochs = [(e, o) for e, o in self.epochs if o < self.log_end_offset]
        self.ongoing = {p: o for p, o in self.ongoing.items() if o < self.log_end_offset}
        self.aborted = [t for t in self.aborted if t.last_offset < self.log_end_offset]

    def _drop_head(self, count: int) -> None:
        del self.batches[:count]
        del self.base_offsets[:count]
        del self.positions[:count]

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """The first (offset, timestamp) whose timestamp >= ``timestamp``, or None."""
        from fakebroker.protocol.records import decode_records

        for batch in self.batches:
            if batch.max_timestamp >= timestamp:
                for record in decode_records(batch.data):
                    if record.offset >= self.log_start_offset and record.timestamp >= timestamp:
                        return record.offset, record.timestamp
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """The (offset, timestamp) of the record with the largest timestamp (first such)."""
        from fakebroker.protocol.records import decode_records

        best: StoredBatch | None = None
        for batch in self.batches:
            if best is None or batch.max_timestamp > best.max_timestamp:
                best = batch
        if best is None:
            return None
        for record in decode_records(best.data):
            if record.timestamp == best.max_timestamp and record.offset >= self.log_start_offset:
                return record.offset, record.timestamp
        return best.last_offset, best.max_timestamp

    def begin_epoch(self, epoch: int) -> None:
        """Record that leader epoch ``epoch`` starts at the current log end offset."""
        if self.epochs and self.epochs[-1][1] == self.log_end_offset:
            self.epochs[-1] = (epoch, self.log_end_offset)
        else:
            self.epochs.append((epoch, self.log_end_offset))

    def epoch_at(self, offset: int) -> int:
        """The leader epoch the record at ``offset`` was (or will be) written in; -1 if none."""
        found = -1
        for epoch, start in self.epochs:
            if start <= offset:
                found = epoch
        return found

    def epoch_end_offset(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch, as Kafka's leader epoch cache answers.

        The latest epoch ends at the log end offset; an older one ends where the next known
        epoch starts (reported as the largest known epoch <= ``epoch``); an epoch newer than
        any known, or -1, gives (-1, -1).
        """
        if epoch < 0 or not self.epochs:
            return -1, -1
        if epoch == self.epochs[-1][0]:
            return epoch, self.log_end_offset
        higher = next(((e, o) for e, o in self.epochs if e > epoch), None)
        if higher is None:
            return -1, -1
        floor = [e for e, _ in self.epochs if e <= epoch]
        return (floor[-1] if floor else epoch), higher[1]
