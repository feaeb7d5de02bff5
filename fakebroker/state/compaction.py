"""Log compaction as Kafka's cleaner does it (``LogCleanerManager``, ``Cleaner``), for topics
whose ``cleanup.policy`` has ``compact``.

Guarantees, each as Kafka 4.4's cleaner behaves:

* What is cleanable (``cleanable``): from the first dirty offset (where the last cleaning
  ended; the log start at first) to the first uncleanable segment: the active segment, the
  segment holding the last stable offset (an open transaction), the first segment with a
  record newer than ``min.compaction.lag.ms``, whichever is first. The log is cleaned when
  its cleanable bytes are more than ``min.cleanable.dirty.ratio`` of its bytes up to there,
  or (having any) when a dirty segment's first record is older than
  ``max.compaction.lag.ms``; the filthiest such log first (``filthiest``).
* A cleaning (``clean``) maps each key of the dirty part to its latest offset (records of
  aborted transactions left out), then rewrites every segment from the log start to the
  dirty part's end: a keyed record stays when no later record of its key is in the map, a
  record without a key goes, records of aborted transactions go; a tombstone (null value)
  stays until its batch's delete horizon, set by the cleaning that first kept it (then plus
  ``delete.retention.ms``), has passed at a later cleaning; a transaction's marker likewise
  goes at a later cleaning once none of its transaction's records is left. A batch left
  without records is dropped, but for the last of the cleaned range and a producer's last
  data batch, kept empty (its offsets and producer state). Offsets keep their numbers (with
  gaps); the log start stays; the active segment is never touched. Consecutive cleaned
  segments are merged while their bytes fit ``segment.bytes`` (``groupSegmentsBySize``).

Not modelled: the offset map's size (``log.cleaner.dedupe.buffer.size``: every dirty key is
mapped in one cleaning), producers' expiry (a producer's last data batch is kept emptied for
as long as the log holds it), and legacy (magic 0/1) message sets, kept as they are.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakebroker.protocol.compression import DecompressionError
from fakebroker.protocol.record_entries import MAGIC_AT, CorruptRecordError, InvalidRecordError
from fakebroker.protocol.records import (
    COMMIT_MARKER,
    Record,
    decode_records,
    delete_horizon,
    read_batch_headers,
    rebuild_batch,
)
from fakebroker.state.log import AbortedTxn, PartitionLog, Segment, StoredBatch

if TYPE_CHECKING:
    from fakebroker.state.cluster import Cluster, Partition, Topic

logger = logging.getLogger("fakebroker")

@dataclass(frozen=True, slots=True)
class Cleanable:
    """A log the cleaner may clean: its dirty range and its share of the log's bytes."""

    topic: Topic
    partition: Partition
    first_dirty: int
    first_uncleanable: int
    ratio: float
    overdue: bool = False  # a dirty record older than max.compaction.lag.ms, bytes to clean


def cleanable(topic: Topic, partition: Partition, now_ms: int) -> Cleanable | None:
    """The log's cleanable range (``LogCleanerManager.cleanableOffsets``), None when it has
    no bytes up to its first uncleanable segment."""
    log = partition.log
    if log.uncleanable:
        return None
    first_dirty = log.cleaned_to if log.log_start_offset <= log.cleaned_to \
        <= log.log_end_offset else log.log_start_offset
    active = log.segments[-1].base_offset
    bounds = [log.last_stable_offset, active]
    lag = max(int(topic.config("min.compaction.lag.ms", partition.leader)), 0)
    if lag > 0:
        bounds += [log.segments[i].base_offset for i in _overlapping(log, first_dirty, active)
                   if log.segments[i].largest_timestamp > now_ms - lag][:1]
    uncleanable = max(first_dirty, min(bounds))
    first_uncleanable = active if uncleanable >= active \
        else log.segments[_overlapping(log, uncleanable, uncleanable + 1)[0]].base_offset
    clean_bytes = sum(log.segment_size(i) for i in _overlapping(log, -1, first_dirty))
    dirty_bytes = sum(log.segment_size(i) for i in _overlapping(
        log, min(first_dirty, first_uncleanable), first_uncleanable))
    total = clean_bytes + dirty_bytes
    if total == 0:
        return None
    firsts = [log.segments[i].first_timestamp for i in _overlapping(log, first_dirty, active)]
    earliest = min((t for t in firsts if t is not None and t > 0), default=None)
    overdue = earliest is not None and earliest < now_ms - max(
        int(topic.config("max.compaction.lag.ms", partition.leader)), 0)
    return Cleanable(topic, partition, first_dirty, first_uncleanable, dirty_bytes / total,
                     overdue and dirty_bytes > 0)


def _overlapping(log: PartitionLog, start: int, end: int) -> list[int]:
    """The indexes of the segments holding offsets of ``[start, end)`` (Kafka's
    ``logSegments(from, to)``)."""
    segments = log.segments
    return [i for i, s in enumerate(segments) if s.base_offset < end
            and (i + 1 == len(segments) or segments[i + 1].base_offset > start)]


def filthiest(cluster: Cluster, now_ms: int) -> Cleanable | None:
    """The compacted log to clean now: the highest dirty ratio above its topic's
    ``min.cleanable.dirty.ratio`` (``grabFilthiestCompactedLog``), or None."""
    found = [c for topic in list(cluster.topics.values())
             for partition in topic.partitions
             if "compact" in topic.config("cleanup.policy", partition.leader).split(",")
             and (c := cleanable(topic, partition, now_ms)) is not None
             and (c.overdue or c.ratio > float(topic.config("min.cleanable.dirty.ratio",
                                                            partition.leader)))]
    return max(found, key=lambda c: c.ratio, default=None)


def clean(target: Cleanable, now_ms: int) -> None:
    """Clean the log's cleanable range (``Cleaner.doClean``)."""
    log = target.partition.log
    topic, leader = target.topic, target.partition.leader
    aborted = sorted(log.aborted, key=lambda t: t.first_offset)
    latest, last_offset = _offset_map(log, target.first_dirty, target.first_uncleanable, aborted)
    if last_offset < 0:
        log.cleaned_to = target.first_uncleanable
        return
    end = last_offset + 1
    retention = int(topic.config("delete.retention.ms", leader))
    last_data = _last_data_batches(log)
    state = _Transactions(aborted)
    rebuilt: list[StoredBatch] = []
    for batch in log.batches:
        if batch.base_offset >= end:
            rebuilt.append(batch)
            continue
        kept = _clean_batch(batch, latest, last_offset, state, now_ms, retention,
                            keep_empty=batch.last_offset + 1 == target.first_uncleanable
                            or last_data.get(batch.producer_id) == batch.last_offset)
        if kept is not None:
            rebuilt.append(kept)
    groups = _groups(log, end, int(topic.config("segment.bytes", leader)))
    log.replace_batches(rebuilt, groups)
    log.aborted = state.indexed + [t for t in log.aborted if t.last_offset >= end]
    log.cleaned_to = end


def _offset_map(log: PartitionLog, start: int, end: int, aborted: list[AbortedTxn]
                ) -> tuple[dict[bytes, int], int]:
    """Each key of ``[start, end)`` -> its latest offset there, and the last offset mapped
    (-1: none), aborted records left out (``buildOffsetMap``)."""
    latest: dict[bytes, int] = {}
    last = -1
    state = _Transactions(aborted)
    for batch in log.batches:
        if batch.base_offset >= end:
            break
        if batch.last_offset < start:
            continue
        if batch.control:
            state.on_marker(batch, decode_records(batch.data))
        elif not state.on_batch(batch):
            for record in decode_records(batch.data):
                if record.key is not None and record.offset >= start:
                    latest[record.key] = record.offset
        last = max(last, batch.last_offset)
    return latest, last


def _last_data_batches(log: PartitionLog) -> dict[int, int]:
    """Producer id -> the last offset of its last data batch (Kafka keeps it, emptied)."""
    found: dict[int, int] = {}
    for batch in log.batches:
        if batch.producer_id >= 0 and not batch.control:
            found[batch.producer_id] = batch.last_offset
    return found


class _Transactions:
    """The transactions a cleaning walks through (``CleanedTransactionMetadata``)."""

    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self.pending = list(aborted)  # by first offset
        self.aborted: dict[int, tuple[AbortedTxn, bool]] = {}  # producer -> (txn, seen)
        self.committed: set[int] = set()
        self.indexed: list[AbortedTxn] = []  # the cleaned index: those whose records went

    def _reach(self, offset: int) -> None:
        while self.pending and self.pending[0].first_offset <= offset:
            txn = self.pending.pop(0)
            self.aborted.setdefault(txn.producer_id, (txn, False))

    def on_batch(self, batch: StoredBatch) -> bool:
        """A data batch: True when it belongs to an aborted transaction (it goes)."""
        self._reach(batch.last_offset)
        if not batch.transactional:
            return False
        if batch.producer_id in self.aborted:
            self.aborted[batch.producer_id] = (self.aborted[batch.producer_id][0], True)
            return True
        self.committed.add(batch.producer_id)
        return False

    def on_marker(self, batch: StoredBatch, records: list[Record]) -> bool:
        """A control batch: True when it may go (none of its transaction's records seen)."""
        self._reach(batch.last_offset)
        if not records:
            return True
        kind = int.from_bytes((records[0].key or b"\0\0\0\0")[2:4], "big", signed=True)
        if kind == COMMIT_MARKER:
            if batch.producer_id in self.committed:
                self.committed.discard(batch.producer_id)
                return False
            return True
        found = self.aborted.pop(batch.producer_id, None)
        if found is not None and found[1]:
            self.indexed.append(found[0])  # its records went now: still indexed
            return False
        return True


def _clean_batch(batch: StoredBatch, latest: dict[bytes, int], last_offset: int,
                 state: _Transactions, now_ms: int, retention_ms: int, keep_empty: bool
                 ) -> StoredBatch | None:
    """The batch as the cleaning leaves it, or None when it goes (``cleanInto``); a legacy
    (magic 0/1) message set stays as it is."""
    if batch.data[MAGIC_AT] != 2:
        return batch
    records = decode_records(batch.data)
    horizon = delete_horizon(batch.data)
    if batch.control:
        discardable = state.on_marker(batch, records)
        discard = discardable and horizon is not None and horizon <= now_ms
    else:
        discardable = discard = state.on_batch(batch)
    if discard:
        kept: list[Record] = []
    elif batch.control:
        kept = records
    else:
        kept = [r for r in records if _retained(r, latest, last_offset, horizon, now_ms)]
    if not kept:
        if not keep_empty:
            return None
        return _stored(batch, rebuild_batch(batch.data, [], None))
    tombstones = any(r.value is None for r in kept) or (discardable and batch.control)
    new_horizon = now_ms + retention_ms if tombstones and horizon is None else horizon
    if len(kept) == len(records) and new_horizon == horizon:
        return batch
    return _stored(batch, rebuild_batch(batch.data, kept, new_horizon))


def _retained(record: Record, latest: dict[bytes, int], last_offset: int, horizon: int | None,
              now_ms: int) -> bool:
    """``Cleaner.shouldRetainRecord``."""
    if record.offset > last_offset:
        return True
    if record.key is None:
        return False
    if record.offset < latest.get(record.key, -1):
        return False
    return record.value is not None or horizon is None or now_ms < horizon


def _stored(batch: StoredBatch, data: bytes) -> StoredBatch:
    """The batch rebuilt as ``data``, with its header's max timestamp: that of the records
    kept (an emptied batch keeps its own, as Kafka's writeEmptyHeader)."""
    [header] = read_batch_headers(data, stored=True)
    return batch._replace(data=data, max_timestamp=header.max_timestamp)


def _groups(log: PartitionLog, end: int, segment_bytes: int) -> list[list[Segment]]:
    """The segments below ``end`` grouped as Kafka merges them when cleaning: consecutive
    ones while their bytes together fit ``segment.bytes``."""
    cleaned = [(s, log.segment_size(i)) for i, s in enumerate(log.segments)
               if s.base_offset < end and i < len(log.segments) - 1]
    groups: list[list[Segment]] = []
    size = 0
    for segment, bytes_ in cleaned:
        if groups and size + bytes_ <= segment_bytes:
            groups[-1].append(segment)
            size += bytes_
        else:
            groups.append([segment])
            size = bytes_
    return groups


def clean_filthiest(cluster: Cluster, now_ms: int) -> bool:
    """Clean the filthiest log, if one is due; whether one was. Records the cleaner cannot
    read (stored as a client sent them: produce checks batches, not every record) leave
    the log as it was, marked uncleanable with one warning, as Kafka's cleaner thread marks
    such a partition and goes on with the others: not a cleaning (False), so the cleaner
    backs off before the next, as Kafka's (``LogCleaner.cleanFilthiestLog``)."""
    target = filthiest(cluster, now_ms)
    if target is None:
        return False
    try:
        clean(target, now_ms)
    except (CorruptRecordError, InvalidRecordError, DecompressionError) as exc:
        target.partition.log.uncleanable = True
        logger.warning("the cleaner cannot read %s-%d (%s): marked uncleanable",
                    target.topic.name, target.partition.index, exc)
        return False
    return True
