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
  (``LogSegment.fetchUpperBoundOffset``): the first entry of the read's segment at or past
  the read's end, else the next segment's base offset, else the log end offset.
* Segments (``segments``), as Kafka rolls them: an append rolls a new one when the active
  segment's bytes and the batch's would pass ``segment.bytes``, or when the batch's timestamp
  is more than ``segment.ms`` past the active segment's first batch's (``LogSegment.
  shouldRoll``); nothing rolls without an append. A read never crosses a segment's end
  (``LocalLog.read``). ``delete_segments`` drops whole segments from the oldest and moves the
  log start to the first one kept; the active segment goes too only once a new, empty one is
  rolled at the log end, so offsets keep their numbers.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from fakebroker.protocol.record_entries import Record

INDEX_INTERVAL_BYTES = 4096  # Kafka's index.interval.bytes default


class Roll(NamedTuple):
    """What decides whether an append rolls a new segment: the topic's ``segment.bytes`` and
    ``segment.ms``, and the wall clock's epoch milliseconds."""

    segment_bytes: int
    segment_ms: int
    now_ms: int


@dataclass(slots=True, eq=False)
class Segment:
    """One segment of a log: its base offset, the byte position of its first batch, when it
    was made, its first batch's timestamp (None while empty: what ``segment.ms`` counts
    from) and its largest timestamp (-1 while it has none; then ``modified_ms`` stands in,
    as Kafka's ``LogSegment.largestTimestamp`` falls back on the file's modification time)."""

    base_offset: int
    position: int
    created_ms: int
    first_timestamp: int | None = None
    max_timestamp: int = -1
    modified_ms: int = 0

    @property
    def largest_timestamp(self) -> int:
        return self.max_timestamp if self.max_timestamp >= 0 else self.modified_ms


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def readable_records(batch: StoredBatch) -> list[Record] | None:
    """``batch``'s records, or None where they do not parse. Produce reads records one by
    one only where it decodes them anyway (``api.produce_validation``), so a batch whose
    framing and CRC are right but whose records are not (which Kafka's LogValidator refuses;
    no client writes one) can be stored: its readers answer from its header instead."""
    from fakebroker.protocol.records import decode_records

    try:
        return decode_records(batch.data)
    except ValueError:  # CorruptRecordError, InvalidRecordError, a codec's error
        return None


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


class AbortedTxn(NamedTuple):
    """An aborted transaction of one producer in one log: from its first offset to its
    abort marker's offset (Kafka's AbortedTxn index entry; a named tuple, as StoredBatch)."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True, eq=False)
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
    # oldest first; the last is the active segment (never none)
    segments: list[Segment] = field(default_factory=list)
    cleaned_to: int = 0  # the compaction cleaner's first dirty offset (its checkpoint)
    # the cleaner failed on its records (Kafka's markPartitionUncleanable): never cleaned again
    uncleanable: bool = False

    def __post_init__(self) -> None:
        if not self.segments:
            now = _now_ms()
            self.segments.append(Segment(self.log_start_offset, self.size, now, modified_ms=now))

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
               producer_id: int = -1, transactional: bool = False, roll: Roll | None = None
               ) -> None:
        """Store ``data`` (already stamped with offsets starting at ``log_end_offset``),
        in a new segment first when ``roll`` says the active one is due; a transactional
        batch opens its producer's transaction here if none is open."""
        base = self.log_end_offset
        if not self.epochs or self.epochs[-1][0] != leader_epoch:
            self.begin_epoch(leader_epoch)
        self._maybe_roll(len(data), max_timestamp, roll)
        self.batches.append(StoredBatch(base, base + record_count - 1, data, max_timestamp,
                                        leader_epoch, producer_id, transactional))
        self.base_offsets.append(base)
        self._place(base + record_count - 1, len(data), max_timestamp, roll)
        self.log_end_offset = base + record_count
        if transactional:
            self.ongoing.setdefault(producer_id, base)

    def append_marker(self, data: bytes, timestamp: int, leader_epoch: int, producer_id: int,
                      commit: bool, coordinator_epoch: int, roll: Roll | None = None) -> None:
        """Store a control batch of one marker (stamped at ``log_end_offset``; in a new
        segment first when ``roll`` says so): the producer's transaction here ends; an abort
        of one that wrote here is indexed."""
        offset = self.log_end_offset
        if not self.epochs or self.epochs[-1][0] != leader_epoch:
            self.begin_epoch(leader_epoch)
        self._maybe_roll(len(data), timestamp, roll)
        self.batches.append(StoredBatch(offset, offset, data, timestamp, leader_epoch,
                                        producer_id, True, True))
        self.base_offsets.append(offset)
        self._place(offset, len(data), timestamp, roll)
        self.log_end_offset = offset + 1
        self.coordinator_epochs[producer_id] = coordinator_epoch
        first = self.ongoing.pop(producer_id, None)
        if first is not None and not commit:
            self.aborted.append(AbortedTxn(producer_id, first, offset))

    def _place(self, last_offset: int, size: int, max_timestamp: int, roll: Roll | None
               ) -> None:
        """Give the batch just appended its position, and an index entry where Kafka's
        ``LogSegment.append`` writes one; the active segment's timestamps follow."""
        if self.since_index > INDEX_INTERVAL_BYTES:
            self.index.append((last_offset, self.size))
            self.since_index = 0
        self.positions.append(self.size)
        self.size += size
        self.since_index += size
        active = self.segments[-1]
        if active.first_timestamp is None:
            active.first_timestamp = max_timestamp
        active.max_timestamp = max(active.max_timestamp, max_timestamp)
        active.modified_ms = roll.now_ms if roll is not None else _now_ms()

    def _maybe_roll(self, size: int, max_timestamp: int, roll: Roll | None) -> None:
        """Roll a new segment before a batch of ``size`` bytes stamped ``max_timestamp``
        when Kafka's ``LogSegment.shouldRoll`` would: the active segment's bytes past
        ``segment.bytes - size``, or (holding any) the batch more than ``segment.ms`` after
        its first batch (after its creation, when that has no timestamp)."""
        if roll is None:
            return
        active = self.segments[-1]
        used = self.size - active.position
        first = active.first_timestamp
        waited = max_timestamp - first if first is not None and first >= 0 \
            else roll.now_ms - active.created_ms
        if used > roll.segment_bytes - size or (used > 0 and waited > roll.segment_ms):
            self.roll(roll.now_ms)

    def roll(self, now_ms: int | None = None) -> None:
        """Start a new, empty active segment at the log end (an empty active segment is
        made anew instead, as Kafka's ``LocalLog.roll`` replaces it)."""
        now = _now_ms() if now_ms is None else now_ms
        if self.segments[-1].base_offset == self.log_end_offset:
            self.segments.pop()
        self.segments.append(Segment(self.log_end_offset, self.size, now, modified_ms=now))
        self.since_index = 0

    def segment_size(self, index: int) -> int:
        """The bytes of segment ``index`` (of ``segments``)."""
        end = self.segments[index + 1].position if index + 1 < len(self.segments) \
            else self.size
        return end - self.segments[index].position

    @property
    def stored_bytes(self) -> int:
        """The bytes of the batches the log holds (those below the log start dropped at
        once, as ``delete_before`` drops them)."""
        return self.size - self.positions[0] if self.positions else 0

    @property
    def segments_size(self) -> int:
        """The bytes of every segment: Kafka's ``UnifiedLog.size``."""
        return self.size - self.segments[0].position

    def segment_end(self, offset: int) -> int | None:
        """The base offset of the segment after the one holding ``offset`` (None: it is in
        the active segment)."""
        index = bisect.bisect_right(self.segments, offset, key=lambda s: s.base_offset)
        return self.segments[index].base_offset if index < len(self.segments) else None

    def delete_segments(self, deletable: Callable[[Segment, Segment | None], bool]) -> int:
        """Delete segments from the oldest while ``deletable(segment, next segment or None)``
        (Kafka's ``UnifiedLog.deletableSegments``: an empty active segment never is); the
        log start moves to the first segment kept, a new empty one rolled at the log end
        when every one goes. Returns how many went."""
        count = 0
        for index, segment in enumerate(self.segments):
            after = self.segments[index + 1] if index + 1 < len(self.segments) else None
            if after is None and self.segment_size(index) == 0:
                break
            if not deletable(segment, after):
                break
            count += 1
        if count == 0:
            return 0
        if count == len(self.segments):
            self.roll()
        del self.segments[:count]
        self.delete_before(self.segments[0].base_offset)
        return count

    def position_of(self, offset: int) -> int:
        """The byte position of the batch a read from ``offset`` starts with (the log's size
        past its last batch)."""
        index = self._first_holding(offset)
        return self.positions[index] if index < len(self.batches) else self.size

    def upper_bound(self, position: int, start: int | None = None) -> int:
        """An offset past every record before byte ``position``, as Kafka's offset index
        finds it for a read from byte ``start`` (default ``position``): the first index
        entry at or past ``position`` in the segment holding ``start``, else the next
        segment's base offset, else the log end offset."""
        where = position if start is None else start
        index = max(bisect.bisect_right(self.segments, where, key=lambda s: s.position) - 1, 0)
        after = self.segments[index + 1] if index + 1 < len(self.segments) else None
        found = bisect.bisect_left(self.index, position, key=lambda entry: entry[1])
        if found < len(self.index) and (after is None or self.index[found][1] < after.position):
            return self.index[found][0]
        return after.base_offset if after is not None else self.log_end_offset

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
        """Batches holding ``offset`` and after, in the segment of the first (those starting
        before ``end`` too, when given: the last stable offset of read_committed), up to
        ``max_bytes`` in all.

        With ``at_least_one`` the first batch is returned even when it alone exceeds
        ``max_bytes`` (KIP-74), so a consumer can always make progress.
        """
        index = self._first_holding(offset)
        end = self._read_end(index, end)
        chunks: list[bytes] = []
        total = 0
        for batch in self.batches[index:]:
            if end is not None and batch.base_offset >= end:
                break
            size = len(batch.data)
            if total + size > max_bytes and (chunks or not at_least_one):
                break
            chunks.append(batch.data)
            total += size
        return chunks

    def _first_holding(self, offset: int) -> int:
        """The index of the first batch holding ``offset`` or after it."""
        index = max(bisect.bisect_right(self.base_offsets, offset) - 1, 0)
        while index < len(self.batches) and self.batches[index].last_offset < offset:
            index += 1
        return index

    def read_end(self, offset: int, end: int | None = None) -> int | None:
        """Where a read from ``offset`` stops: ``end`` or the end of the segment of the first
        batch it reads, whichever is first (None: neither)."""
        return self._read_end(self._first_holding(offset), end)

    def _read_end(self, index: int, end: int | None) -> int | None:
        """``read_end`` of a read starting with batch ``index``."""
        if index < len(self.batches):
            segment_end = self.segment_end(self.batches[index].base_offset)
            if segment_end is not None:
                return segment_end if end is None else min(end, segment_end)
        return end

    def end_of_read(self, offset: int, count: int) -> int:
        """The offset after the ``count`` batches ``read(offset, ...)`` returned (``offset``
        when it returned none)."""
        last = self._first_holding(offset) + count - 1
        return self.batches[last].last_offset + 1 if count and last < len(self.batches) \
            else offset

    def delete_before(self, offset: int) -> None:
        """Advance the log start to ``offset`` (<= log end), dropping batches wholly below it."""
        self.log_start_offset = max(self.log_start_offset, offset)
        keep = bisect.bisect_right([b.last_offset for b in self.batches], offset - 1)
        self._drop_head(keep)
        self.aborted = [t for t in self.aborted if t.last_offset >= self.log_start_offset]

    def replace_batches(self, batches: list[StoredBatch], groups: list[list[Segment]]) -> None:
        """Put a cleaning's ``batches`` (the same offsets, fewer or smaller) in place of the
        log's, each of ``groups`` (consecutive segments from the oldest) merged into one
        segment; positions and the offset index are laid out anew, as Kafka's cleaned
        segments write theirs."""
        rest = self.segments[sum(map(len, groups)):]
        self.batches = batches
        self.base_offsets = [b.base_offset for b in batches]
        ends = [g[0].base_offset for g in groups[1:]] + [rest[0].base_offset]
        merged = [Segment(g[0].base_offset, g[0].position, g[0].created_ms,
                          g[0].first_timestamp, self._max_timestamp(g[0].base_offset, end),
                          g[-1].modified_ms) for g, end in zip(groups, ends, strict=True)]
        self.segments = merged + rest
        self.positions = []
        self.index = []
        position = self.segments[0].position
        starts = iter(self.segments)
        next(starts)  # the first keeps its position
        upcoming = next(starts, None)
        since = 0
        for batch in batches:
            while upcoming is not None and batch.base_offset >= upcoming.base_offset:
                current, upcoming = upcoming, next(starts, None)
                current.position, since = position, 0
            if since > INDEX_INTERVAL_BYTES:
                self.index.append((batch.last_offset, position))
                since = 0
            self.positions.append(position)
            position += len(batch.data)
            since += len(batch.data)
        while upcoming is not None:
            current, upcoming = upcoming, next(starts, None)
            current.position, since = position, 0
        self.size, self.since_index = position, since

    def _max_timestamp(self, start: int, end: int) -> int:
        """The largest max timestamp of the batches from offset ``start`` to ``end`` (-1:
        none), as a cleaned segment's time index is written anew from the batches kept."""
        first = bisect.bisect_left(self.base_offsets, start)
        last = bisect.bisect_left(self.base_offsets, end)
        return max((b.max_timestamp for b in self.batches[first:last]), default=-1)

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
        kept = [s for s in self.segments if s.base_offset <= self.log_end_offset]
        self.segments = kept or [Segment(self.log_end_offset, self.size, _now_ms(),
                                         modified_ms=_now_ms())]
        if self.segments[-1].position == self.size:  # emptied
            self.segments[-1].first_timestamp, self.segments[-1].max_timestamp = None, -1
        self.epochs = [(e, o) for e, o in self.epochs if o < self.log_end_offset]
        self.ongoing = {p: o for p, o in self.ongoing.items() if o < self.log_end_offset}
        self.aborted = [t for t in self.aborted if t.last_offset < self.log_end_offset]

    def _drop_head(self, count: int) -> None:
        """Drop the first ``count`` batches, and the offset index entries before the first
        kept (the index would otherwise grow for as long as the log is written)."""
        del self.batches[:count]
        del self.base_offsets[:count]
        del self.positions[:count]
        first = self.positions[0] if self.positions else self.size
        del self.index[:bisect.bisect_left(self.index, first, key=lambda entry: entry[1])]

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """The first (offset, timestamp) whose timestamp >= ``timestamp``, or None; in a
        batch whose records do not parse (``readable_records``), the batch's first offset
        and its maximum timestamp."""
        for batch in self.batches:
            if batch.max_timestamp >= timestamp:
                records = readable_records(batch)
                if records is None:
                    return max(batch.base_offset, self.log_start_offset), batch.max_timestamp
                for record in records:
                    if record.offset >= self.log_start_offset and record.timestamp >= timestamp:
                        return record.offset, record.timestamp
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """The (offset, timestamp) of the record with the largest timestamp (first such)."""
        best: StoredBatch | None = None
        for batch in self.batches:
            if best is None or batch.max_timestamp > best.max_timestamp:
                best = batch
        if best is None:
            return None
        for record in readable_records(best) or ():
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
