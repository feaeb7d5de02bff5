"""OffsetCommit (key 8): store a group's committed offsets, with metadata.

Versions: 0-9 (3.9), 10 (4.x, topic ids). Flexible from v8.

Behavior:
* A member commits for its generation: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
  FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS (while the group awaits the leader's
  assignment). A commit with a negative generation is accepted while the group is Empty
  (assign-only consumers and admin tools; with a member id too, as Kafka's
  ClassicGroup.validateOffsetCommit) and creates the group if needed (one whose every
  offset is refused makes a group DescribeGroups does not see until a commit stores an
  offset, and that later commits find, as Kafka 4.4's); a
  member's commit (generation >= 0) to no group is GROUP_ID_NOT_FOUND from v9,
  ILLEGAL_GENERATION before, and creates none.
* Per partition: OFFSET_METADATA_TOO_LARGE beyond 4096 bytes (offset.metadata.max.bytes); the
  rest are stored.
* A KIP-848 consumer group member commits with its member epoch: STALE_MEMBER_EPOCH for
  another epoch, UNKNOWN_MEMBER_ID for an unknown member. A commit with a negative epoch is
  accepted only while the consumer group has no member; while it has members, one without a
  member id gets UNKNOWN_MEMBER_ID, and a member's commit below v9 UNSUPPORTED_VERSION (Kafka's
  ConsumerGroup.validateOffsetCommit).
* As Kafka's broker: partitions that do not exist are answered first
  (UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID), and the group is asked about the rest only:
  its errors (NOT_COORDINATOR, UNKNOWN_MEMBER_ID, ...) are given on every partition that
  exists, none when no partition does. Any group id names a group, the empty one too (Kafka
  refuses only a null id, which the request cannot carry).
* v0 (offsets kept in ZooKeeper) at an emulated KRaft release before 4.0 (3.3-3.9):
  UNSUPPORTED_VERSION on every partition, nothing stored, as those releases answer it.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups, topics
from fakebroker.api.common import offsets_in_zookeeper, resolve_topic
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.offsets import CommittedOffset, TopicPartition

API_KEY = 8
MAX_METADATA_BYTES = 4096
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partitions", "partitions", "partition_index")), errors_first=True)
AUTHORIZES = (groups("READ"), topics("READ"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    topics, existing = [], []
    for wanted in request.topics:
        topic = resolve_topic(ctx, wanted.name, wanted.topic_id)
        results = []
        for p in wanted.partitions:
            result = {"partition_index": p.partition_index,
                      "error_code": existence_error(topic, p, unknown_id=ctx.version >= 10)}
            if not result["error_code"]:
                existing.append((topic, p, result))
            results.append(result)
        topics.append({"name": wanted.name, "topic_id": wanted.topic_id, "partitions": results})
    if existing:  # Kafka's broker asks the group coordinator only about partitions that exist
        made = ctx.cluster.groups.kind(request.group_id) is None
        group_error = group_check(request, ctx)
        now = ctx.now_ms()
        accepted: dict[TopicPartition, CommittedOffset] = {}
        for topic, p, result in existing:
            result["error_code"] = group_error or metadata_error(p)
            if not result["error_code"]:
                accepted[(topic.name, p.partition_index)] = CommittedOffset(
                    p.committed_offset, p.committed_leader_epoch, p.committed_metadata, now)
        ctx.cluster.groups.offsets.commit(request.group_id, accepted)
        if not group_error:
            ctx.cluster.groups.classic.note_commit(request.group_id, made, bool(accepted))
    return {"throttle_time_ms": 0, "topics": topics}


def group_check(request: Any, ctx: RequestContext) -> int:
    """The error the group coordinator gives every partition (0: it may store them)."""
    if offsets_in_zookeeper(ctx):
        return error_code("UNSUPPORTED_VERSION")
    if not ctx.is_coordinator(request.group_id):
        return error_code("NOT_COORDINATOR")
    try:
        ctx.cluster.groups.validate_offset_commit(
            request.group_id, request.generation_id_or_member_epoch, request.member_id,
            request.group_instance_id, trio.current_time(),
            no_group="GROUP_ID_NOT_FOUND" if ctx.version >= 9 else "ILLEGAL_GENERATION",
            version=ctx.version)
    except ClusterError as exc:
        return exc.code
    return 0


def existence_error(topic: Any, partition: Any, unknown_id: bool) -> int:
    """UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist (``unknown_id``: the
    version names topics by id, so an unknown topic is UNKNOWN_TOPIC_ID), else 0."""
    if topic is None:
        return error_code("UNKNOWN_TOPIC_ID" if unknown_id else "UNKNOWN_TOPIC_OR_PARTITION")
    if not 0 <= partition.partition_index < len(topic.partitions):
        return error_code("UNKNOWN_TOPIC_OR_PARTITION")
    return 0


def metadata_error(partition: Any) -> int:
    """OFFSET_METADATA_TOO_LARGE beyond offset.metadata.max.bytes, else 0."""
    metadata = partition.committed_metadata or ""
    if len(metadata.encode()) > MAX_METADATA_BYTES:
        return error_code("OFFSET_METADATA_TOO_LARGE")
    return 0
