"""ListOffsets (key 2): offsets by timestamp, earliest, latest, max timestamp.

Versions: 0-9 (3.9), 10-11 (4.x). Flexible from v6.

Behavior:
* Timestamps: -2 earliest (log start), -1 latest (high watermark; under read_committed,
  isolation level 1 from v2, the last stable offset: where an open transaction begins),
  -3 max timestamp (v7+, the first record holding the largest timestamp), -4 earliest local
  (v8+, the log start), -5 latest tiered (v9+, -1: nothing is tiered), -6 earliest pending
  upload (v11+, -1: nothing is tiered); any other value: the first record whose timestamp
  is >= it, or offset -1 and timestamp -1 when there is none.
* Refused before the partition is looked up (v1+: ``ReplicaManager.fetchOffset``): a partition
  the request names more than once is INVALID_REQUEST, answered once (Kafka's answers come
  from a map of partitions; here in the request's order, a topic named twice answered in
  one entry); a negative timestamp the version does not have (above, or any other)
  UNSUPPORTED_VERSION.
* v0 answers in ``old_style_offsets`` (at most ``max_num_offsets`` of them).
* A log of magic 0 (a topic's ``message.format.version`` before 0.10, emulating a release
  before 3.0: ``fakebroker.state.message_format``) has no timestamps: v1+ asking for a
  timestamp get UNSUPPORTED_FOR_MESSAGE_FORMAT (Kafka 2.8's ``Log.fetchOffsetByTimestamp``).
* v4+ answers the leader epoch of the offset's record (the current epoch for the log end).
* Leader-only: NOT_LEADER_OR_FOLLOWER elsewhere; FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH
  for a stale or future current_leader_epoch (only -1 is "none": -89 is stale, as Kafka
  reads it); UNKNOWN_TOPIC_OR_PARTITION for unknown ones.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state.message_format import log_magic

API_KEY = 2
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
EARLIEST_PENDING_UPLOAD = -6
# The version from which each negative timestamp is served (Kafka's
# ReplicaManager.timestampMinSupportedVersion); another negative one is never.
SINCE_VERSION = {LATEST: 1, EARLIEST: 1, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9,
                 EARLIEST_PENDING_UPLOAD: 11}
READ_COMMITTED = 1
# A partition's answer when no offset is found (and beside an error).
NOT_FOUND = {"timestamp": -1, "offset": -1, "leader_epoch": -1, "old_style_offsets": ()}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partitions", "partitions", "partition_index", error_fields=NOT_FOUND)))
AUTHORIZES = (topics("DESCRIBE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    committed = request.isolation_level == READ_COMMITTED
    if ctx.version == 0:  # Kafka 3.9's v0 path: every entry answered, nothing refused first
        return {"throttle_time_ms": 0, "topics": [
            {"name": t.name, "partitions": [lookup(ctx, ctx.cluster.topics.get(t.name), p,
                                                   committed) for p in t.partitions]}
            for t in request.topics]}
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    answers: dict[str, dict[int, dict[str, Any]]] = {}
    for wanted in request.topics:
        topic = ctx.cluster.topics.get(wanted.name)
        answered = answers.setdefault(wanted.name, {})
        for p in wanted.partitions:
            if p.partition_index in answered:
                continue
            refused = refusal(ctx.version, p.timestamp,
                              named[(wanted.name, p.partition_index)] > 1)
            answered[p.partition_index] = (
                dict(NOT_FOUND, partition_index=p.partition_index, error_code=refused)
                if refused else lookup(ctx, topic, p, committed))
    return {"throttle_time_ms": 0, "topics": [
        {"name": name, "partitions": list(partitions.values())}
        for name, partitions in answers.items()]}


def refusal(version: int, timestamp: int, duplicated: bool) -> int:
    """The error Kafka (v1+) answers a partition with before looking it up (0: none)."""
    if duplicated:
        return error_code("INVALID_REQUEST")
    if timestamp < 0 and version < SINCE_VERSION.get(timestamp, 1 << 15):
        return error_code("UNSUPPORTED_VERSION")
    return 0


def lookup(ctx: RequestContext, topic: Any, wanted: Any, committed: bool) -> dict[str, Any]:
    result: dict[str, Any] = dict(NOT_FOUND, partition_index=wanted.partition_index)
    partition = (topic.partitions[wanted.partition_index]
                 if topic is not None and 0 <= wanted.partition_index < len(topic.partitions)
                 else None)
    error = ctx.leader_check(partition)
    if partition is not None and not error:
        error = ctx.epoch_check(partition, wanted.current_leader_epoch)
    if error:
        result["error_code"] = error
        return result
    assert partition is not None
    if ctx.version >= 1 and wanted.timestamp not in (LATEST, EARLIEST) \
            and log_magic(ctx.cluster.settings.kafka_version, topic.configs) == 0:
        result["error_code"] = error_code("UNSUPPORTED_FOR_MESSAGE_FORMAT")
        return result
    log = partition.log
    found = offset_for(log, wanted.timestamp, committed)
    if found is not None:
        offset, timestamp = found
        epoch = (partition.leader_epoch if offset >= log.log_end_offset
                 else log.epoch_at(offset))
        result.update(offset=offset, timestamp=timestamp, leader_epoch=epoch,
                      old_style_offsets=[offset][: max(wanted.max_num_offsets, 0)])
    result["error_code"] = 0
    return result


def offset_for(log: Any, timestamp: int, committed: bool) -> tuple[int, int] | None:
    """(offset, timestamp) answering a ListOffsets timestamp, or None for "no such record";
    ``committed``: a read_committed reader's latest is the last stable offset."""
    if timestamp == LATEST:
        return (log.last_stable_offset if committed else log.high_watermark), -1
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return log.log_start_offset, -1
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return None
    if timestamp == MAX_TIMESTAMP:
        return log.max_timestamp_offset()
    return log.offset_for_timestamp(timestamp)
