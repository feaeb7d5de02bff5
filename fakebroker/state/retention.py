"""Retention as Kafka's log manager applies it: what rolls a segment, and which segments a
retention check deletes (``UnifiedLog.deleteOldSegments``).

Guarantees, each as Kafka 4.4's broker behaves:

* ``roll_for``: an append rolls by the topic's ``segment.bytes`` and ``segment.ms``
  (``fakebroker.state.log``).
* ``delete_old_segments``: segments wholly below the log start go (records deleted by
  DeleteRecords); with ``delete`` in ``cleanup.policy``, then the oldest segments while the
  log's bytes less theirs still hold ``retention.bytes`` (-1: no limit), so the shortest run
  of newest segments holding at least that many stays, then the oldest while their largest
  record timestamp is more than ``retention.ms`` before now (-1: forever). Both stop at the
  first segment that may stay. Time retention takes the active segment too once all of it
  has expired: a new empty segment is rolled at the log end, so the log start becomes the
  log end and offsets keep their numbers.
* ``check``: every partition's log, as the retention task runs it every
  ``log.retention.check.interval.ms`` for topics not compacted, and the cleaner after each
  of its runs for compacted ones (``fakebroker.log_tasks``).

A deleted segment's bytes are freed at once: Kafka renames its files and deletes them
``file.delete.delay.ms`` (``log.segment.delete.delay.ms``) later, which no client sees.
``segment.jitter.ms`` (a random shortening of ``segment.ms``) is not applied; nor are the
rolls of a full offset or time index (10 MiB of index entries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakebroker.state.log import PartitionLog, Roll, Segment

if TYPE_CHECKING:
    from fakebroker.state.cluster import Cluster, Partition, Topic


def roll_for(topic: Topic, partition: Partition, now_ms: int) -> Roll:
    """What decides whether an append to ``partition`` now rolls a segment."""
    return Roll(int(topic.config("segment.bytes", partition.leader)),
                int(topic.config("segment.ms", partition.leader)), now_ms)


def delete_old_segments(log: PartitionLog, topic: Topic, leader: int, now_ms: int) -> int:
    """Delete the segments a retention check deletes now; how many went."""
    deleted = log.delete_segments(
        lambda _segment, after: after is not None and after.base_offset <= log.log_start_offset)
    if "delete" not in topic.config("cleanup.policy", leader).split(","):
        return deleted
    retention_bytes = int(topic.config("retention.bytes", leader))
    if retention_bytes >= 0 and log.segments_size >= retention_bytes:
        excess = log.segments_size - retention_bytes
        sizes = iter([log.segment_size(i) for i in range(len(log.segments))])

        def over_size(_segment: Segment, _after: Segment | None) -> bool:
            nonlocal excess
            size = next(sizes)  # called in order, from the oldest
            if excess - size < 0:
                return False
            excess -= size
            return True

        deleted += log.delete_segments(over_size)
    retention_ms = int(topic.config("retention.ms", leader))
    if retention_ms >= 0:
        deleted += log.delete_segments(
            lambda segment, _after: now_ms - segment.largest_timestamp > retention_ms)
    return deleted


def check(cluster: Cluster, now_ms: int, compacted: bool) -> int:
    """A retention check of the logs of topics compacted (``cleanup.policy`` with
    ``compact``: the cleaner's) or not (the retention task's); how many segments went."""
    return sum(delete_old_segments(partition.log, topic, partition.leader, now_ms)
               for topic in list(cluster.topics.values())
               for partition in topic.partitions
               if ("compact" in topic.config("cleanup.policy", partition.leader).split(","))
               == compacted)
