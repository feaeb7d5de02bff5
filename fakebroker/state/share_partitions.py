"""One share group's view of one partition (KIP-932's share-partition): ``SharePartition``.

Guarantees, following Kafka's SharePartition:

* The partition has a start offset (-1 until the group first fetches it, then set by
  ``share.auto.offset.reset``: the log end for ``latest``, the log start for ``earliest``)
  and an end: every offset in ``[start_offset, end_offset)`` has been handed out at least
  once and is in flight, in one of the states Available, Acquired, Acknowledged, Archived
  (Kafka's RecordState); offsets from ``end_offset`` on have never been delivered.
* ``acquire`` hands a member first the Available in-flight records (a released one, or one
  whose lock expired), lowest first, then new records of the log in whole batches, until
  ``max_records`` are acquired (a batch is never split, so the last may exceed it) and while
  fewer than ``max_in_flight`` records are in flight. Each acquired record's delivery count
  goes up by one and it is locked to the member until ``now + lock_s``.
* Records made Available again are acquired again together with those first acquired with
  them (Kafka's in-flight batch), never split by ``max_records``.
* ``acquire`` reads the log as Kafka's share fetch reads it (``ReplicaManager.readFromLog``,
  as a Fetch): from the next fetch offset (the lowest Available record, else the end
  offset) to the end of that offset's segment (``read_end``), so records past it, Available
  or new, wait for a later fetch.
* ``acknowledge`` applies a member's acknowledgement of offsets it holds (Acquired by it):
  ACCEPT makes them Acknowledged, REJECT and GAP Archived, RELEASE Available again (Archived
  once their delivery count reached ``delivery_limit``), RENEW locks them again for
  ``lock_s``; offsets below the start offset are settled already and ignored. Anything else
  about a range is refused, and the request's earlier ranges undone, with Kafka's errors:
  an offset another member holds, or one not Acquired, or any offset with nothing in
  flight, INVALID_RECORD_STATE; a range starting or ending past every record delivered, or
  a count of types that matches neither one nor the range's length, INVALID_REQUEST. The
  messages are Kafka's, which name the batch or the offset as Kafka tracks the in-flight
  batch's state: as one until a range acknowledges part of it or types it offset by offset
  (or the start offset moved into it), per offset from then on (``InFlight.tracked``).
* A lock expiring, or the member's session ending (``release``), makes its records Available
  again, or Archived at the delivery limit: ``expire(now)`` applies the locks due.
* The start offset moves past every Acknowledged or Archived record at its head, and past
  records deleted from the log (the log start offset).

Time comes in (``now``, seconds on the caller's clock); nothing here waits.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from fakebroker.protocol.errors import ClusterError

# Acknowledgement types, as ShareFetch and ShareAcknowledge carry them.
GAP, ACCEPT, RELEASE, REJECT, RENEW = range(5)
ACK_TYPES = frozenset(range(5))


class RecordState(enum.IntEnum):
    """Kafka's RecordState, with its ids."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


@dataclass(slots=True)
class InFlight:
    """One delivered record's state, how often it was delivered, and who holds it until when."""

    state: RecordState
    delivery_count: int
    member_id: str | None = None
    lock_deadline: float | None = None
    batch: int = 0  # the first offset of the records first acquired with it (one fetch's)
    # whether Kafka tracks its in-flight batch's state per offset (Kafka's offsetState): from
    # the first acknowledgement of part of the batch, or of it offset by offset, on
    tracked: bool = False


@dataclass(frozen=True, slots=True)
class Acquired:
    """A run of acquired offsets with one delivery count (ShareFetch's AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass
class SharePartition:
    start_offset: int = -1
    end_offset: int = -1
    records: dict[int, InFlight] = field(default_factory=dict)  # offset -> in flight
    # What Kafka's share coordinator last wrote of this partition: (start offset, records
    # settled from it), at each change of state but an acquisition; None: nothing written.
    written: tuple[int, int] | None = None
    # Whether a fetch has read it: Kafka's broker holds a share-partition (SharePartition, in
    # its cache) from the first ShareFetch of it on; an acknowledgement before answers
    # UNKNOWN_TOPIC_OR_PARTITION (measured on Kafka 4.4: a partition assigned, never fetched).
    fetched: bool = False

    @property
    def initialized(self) -> bool:
        return self.start_offset >= 0

    def initialize(self, offset: int) -> None:
        """Set the start offset (the first fetch's ``share.auto.offset.reset``, or
        AlterShareGroupOffsets): nothing in flight before it."""
        self.start_offset = self.end_offset = offset
        self.records.clear()

    def write(self) -> None:
        """Note the state as Kafka's coordinator writes it, before the start offset moves."""
        self.written = (self.start_offset, sum(
            1 for r in self.records.values()
            if r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)))

    def acquire(self, member_id: str, batches: Iterable[tuple[int, int]], log_start: int,
                log_end: int, max_records: int, max_in_flight: int, now: float,
                lock_s: float, read_end: Callable[[int], int | None] = lambda _offset: None
                ) -> list[Acquired]:
        """Acquire records for ``member_id`` (module docstring); ``batches``: the log's
        (base offset, last offset), in order; ``read_end``: where a read of the log from an
        offset stops (None: at ``log_end``; by default the log is one segment). Returns the
        runs acquired, lowest first."""
        self._skip_to(log_start)
        available = [o for o in sorted(self.records)
                     if self.records[o].state is RecordState.AVAILABLE]
        read_to = read_end(available[0] if available else self.end_offset)
        end = log_end if read_to is None else min(read_to, log_end)
        deadline = now + lock_s
        taken: list[int] = []
        batch = None
        for offset in available:
            record = self.records[offset]
            if offset >= end:
                break
            if record.batch != batch and len(taken) >= max_records:
                break
            batch = record.batch
            record.state, record.member_id, record.lock_deadline = \
                RecordState.ACQUIRED, member_id, deadline
            record.delivery_count += 1
            taken.append(offset)
        run = None  # the first of the new records acquired now: one in-flight batch
        for base, last in batches:
            if len(taken) >= max_records or self.end_offset - self.start_offset >= max_in_flight \
                    or self.end_offset >= end:
                break
            if last < self.end_offset:
                continue
            first = max(base, self.end_offset)
            run = first if run is None else run
            for offset in range(first, last + 1):
                self.records[offset] = InFlight(RecordState.ACQUIRED, 1, member_id, deadline,
                                                run)
                taken.append(offset)
            self.end_offset = last + 1
        return _runs(taken, self.records)

    def acknowledge(self, member_id: str, batches: Sequence[tuple[int, int, Sequence[int]]],
                    now: float, lock_s: float, delivery_limit: int) -> None:
        """Apply one request's acknowledgement batches (first offset, last offset, types) of
        ``member_id`` in order (module docstring), then note the state written once, as
        Kafka's coordinator writes a request's acknowledgements; raises ``ClusterError`` at
        the first batch refused, and then the states the batches before it changed are
        rolled back (Kafka's ``rollbackOrProcessStateUpdates``; a lock they renewed stays
        renewed, as on Kafka)."""
        undo: dict[int, InFlight] = {}  # offset -> its record before this request
        changed = False
        try:
            for first, last, types in batches:
                changed |= self._acknowledge(member_id, first, last, types, now, lock_s,
                                             delivery_limit, undo)
        except ClusterError:
            self.records.update(undo)
            raise
        if changed:
            self._written_advance()

    def _acknowledge(self, member_id: str, first: int, last: int, types: Sequence[int],
                     now: float, lock_s: float, delivery_limit: int,
                     undo: dict[int, InFlight]) -> bool:
        """One batch; whether it changed anything (offsets below the start offset, settled
        already, are left alone). A record whose state it changes is kept in ``undo`` as it
        was first."""
        count = last - first + 1
        if count <= 0 or not types or (len(types) != 1 and len(types) != count) \
                or not set(types) <= ACK_TYPES:
            raise ClusterError("INVALID_REQUEST")
        if last < self.start_offset:
            return False
        if not self.records:
            raise ClusterError("INVALID_RECORD_STATE", "Batch record not found. The request "
                               "batch offsets are not found in the cache.")
        if first >= self.end_offset:
            raise ClusterError("INVALID_REQUEST", "Batch record not found. The first offset in "
                               "request is past acquired records.")
        if last >= self.end_offset:
            raise ClusterError("INVALID_REQUEST", "Batch record not found. The last offset in "
                               "request is past acquired records.")
        whole: set[int] = set()  # the batches checked and acknowledged whole
        for offset in range(max(first, self.start_offset), last + 1):
            record = self.records.get(offset)
            if record is None:
                raise ClusterError("INVALID_RECORD_STATE")
            if record.batch in whole:
                continue
            if not record.tracked and self._check_batch(member_id, record, first, last,
                                                        len(types) > 1):
                whole.add(record.batch)
                continue
            if record.state is not RecordState.ACQUIRED:
                raise ClusterError("INVALID_RECORD_STATE", "The offset cannot be acknowledged. "
                                   "The offset is not acquired.")
            if record.member_id != member_id:
                raise ClusterError("INVALID_RECORD_STATE", "Member is not the owner of offset")
        for i, offset in enumerate(range(first, last + 1)):
            kind = types[0] if len(types) == 1 else types[i]
            record = self.records.get(offset)
            if record is None:  # below the start offset: settled already
                continue
            if kind != RENEW:
                undo.setdefault(offset, replace(record))
            if kind == ACCEPT:
                self._settle(record, RecordState.ACKNOWLEDGED)
            elif kind in (REJECT, GAP):
                self._settle(record, RecordState.ARCHIVED)
            elif kind == RELEASE:
                self._release(record, delivery_limit)
            else:  # RENEW
                record.lock_deadline = now + lock_s
        return True

    def _check_batch(self, member_id: str, record: InFlight, first: int, last: int,
                     per_offset: bool) -> bool:
        """Check the in-flight batch of ``record`` (tracked as one) against an acknowledgement
        of ``first``-``last`` (Kafka's acknowledgeBatchRecords): refused unless its member
        holds it; whether it is acknowledged whole (the range covers it, with one type, and
        the start offset is not within it), else tracked per offset from now on."""
        if record.state is not RecordState.ACQUIRED:
            raise ClusterError("INVALID_RECORD_STATE", "The batch cannot be acknowledged. The "
                               "batch is not in the acquired state.")
        if record.member_id != member_id:
            raise ClusterError("INVALID_RECORD_STATE", "Member is not the owner of batch record")
        batch = {o: r for o, r in self.records.items() if r.batch == record.batch}
        if per_offset or record.batch < max(first, self.start_offset) or max(batch) > last:
            for kept in batch.values():
                kept.tracked = True
            return False
        return True

    def release(self, member_id: str, delivery_limit: int) -> bool:
        """Every record ``member_id`` holds back to Available (Archived at the limit);
        whether there was any."""
        held = [r for r in self.records.values()
                if r.state is RecordState.ACQUIRED and r.member_id == member_id]
        for record in held:
            self._release(record, delivery_limit)
        if held:
            self._written_advance()
        return bool(held)

    def expire(self, now: float, delivery_limit: int) -> bool:
        """Release every record whose lock ran out at ``now``; whether there was any."""
        due = [r for r in self.records.values() if r.state is RecordState.ACQUIRED
               and r.lock_deadline is not None and r.lock_deadline <= now]
        for record in due:
            self._release(record, delivery_limit)
        if due:
            self._written_advance()
        return bool(due)

    def expire_locks(self) -> None:
        """Make every lock due at once (a fault: the locks expire now)."""
        for record in self.records.values():
            if record.state is RecordState.ACQUIRED:
                record.lock_deadline = float("-inf")

    def available(self) -> bool:
        """Whether any in-flight record waits to be acquired again."""
        return any(r.state is RecordState.AVAILABLE for r in self.records.values())

    def next_deadline(self) -> float:
        return min((r.lock_deadline for r in self.records.values()
                    if r.state is RecordState.ACQUIRED and r.lock_deadline is not None),
                   default=float("inf"))

    def described(self, log_end: int) -> tuple[int, int]:
        """(start offset, lag) as DescribeShareGroupOffsets reports them: from the state last
        written (Kafka's persisted one, which lags behind: the start offset written with the
        acknowledgements that later move it), the lag being the records from there to
        ``log_end`` not settled; (-1, -1) before any write or with the start offset unset."""
        if self.written is None or self.written[0] < 0:
            return -1, -1
        start, settled = self.written
        return start, log_end - start - settled

    def in_flight(self) -> list[tuple[int, InFlight]]:
        """The in-flight records by offset, lowest first."""
        return sorted(self.records.items())

    @staticmethod
    def _settle(record: InFlight, state: RecordState) -> None:
        record.state, record.member_id, record.lock_deadline = state, None, None

    def _release(self, record: InFlight, delivery_limit: int) -> None:
        self._settle(record, RecordState.ARCHIVED if record.delivery_count >= delivery_limit
                     else RecordState.AVAILABLE)

    def _skip_to(self, log_start: int) -> None:
        """Records deleted from the log are no longer in flight."""
        if self.start_offset < log_start:
            for offset in [o for o in self.records if o < log_start]:
                del self.records[offset]
            self.start_offset = log_start
            self.end_offset = max(self.end_offset, log_start)

    def _written_advance(self) -> None:
        self.write()
        self._advance()

    def _advance(self) -> None:
        while self.start_offset < self.end_offset:
            record = self.records.get(self.start_offset)
            if record is not None and record.state not in (RecordState.ACKNOWLEDGED,
                                                           RecordState.ARCHIVED):
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1


def _runs(offsets: list[int], records: dict[int, InFlight]) -> list[Acquired]:
    """Consecutive offsets of one delivery count, as runs."""
    runs: list[Acquired] = []
    for offset in sorted(offsets):
        count = records[offset].delivery_count
        if runs and runs[-1].last_offset == offset - 1 and runs[-1].delivery_count == count:
            runs[-1] = Acquired(runs[-1].first_offset, offset, count)
        else:
            runs.append(Acquired(offset, offset, count))
    return runs
