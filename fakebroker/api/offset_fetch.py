"""OffsetFetch (key 9): a group's committed offsets.

Versions: 0-9 (3.9), 10 (4.x, topic ids). Flexible from v6; v8+ asks for several groups.

Behavior: a partition without a committed offset answers offset -1 and empty metadata (v10: a
topic named by an unknown id, the zero one too, UNKNOWN_TOPIC_ID on its partitions, after the
known topics); a null topic list (v2+) answers every committed offset of the group; an unknown
group answers like an empty one. NOT_COORDINATOR sits per partition in v0-1, at the top level
in v2-7 and per group from v8. v9+ requests to a KIP-848 consumer or streams group are checked
against the asker's member epoch before any topic (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), but
for an admin's (a null member id with a negative epoch); a classic group's member ids are not
checked, as Kafka's ClassicGroup does not.
With ``require_stable`` (v7+), a partition whose offset a transaction has committed but not
yet ended (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT and offset -1, so the client
retries until the transaction ends; without it the last committed offset is answered.
v0 (offsets kept in ZooKeeper) at an emulated KRaft release before 4.0 (3.3-3.9): every
partition UNSUPPORTED_VERSION with offset -1, as those releases answer it.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, in_handler, topics
from fakebroker.api.common import offsets_in_zookeeper
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import (
    GROUP_ERRORS,
    Placement,
    by_version,
    per_group,
    per_partition,
    per_topic,
)
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 9
# A partition's answer without a committed offset (and beside an error).
NOT_COMMITTED = {"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""}
NO_TOPICS = {"topics": ()}  # beside a group's error (v8+)
UNKNOWN_TOPIC_ID = error_code("UNKNOWN_TOPIC_ID")
# The partition indexes of each topic (the request's entries are indexes); from v8 in groups.
TOPICS = per_topic("topics", "topics", partitions=per_partition(
    "partition_indexes", "partitions", "", "partition_index", error_fields=NOT_COMMITTED))
ERROR_PLACEMENT = Placement(
    by_version({0: TOPICS,
                8: per_group("groups", "groups", key="group_id", topics=TOPICS,
                             error_fields=NO_TOPICS)}),
    request_errors=GROUP_ERRORS)
AUTHORIZES = (groups("DESCRIBE"), topics("DESCRIBE"), in_handler(
    "DESCRIBE on each topic of a group's committed offsets asked for all topics: the others are"
    " left out"))


def partitions_of(ctx: RequestContext, group_id: str, topics: Any, error: int,
                  require_stable: bool = False, by_id: bool = False) -> list[dict[str, Any]]:
    """Answers per topic for ``topics`` (None = all committed) of ``group_id``; ``by_id``
    (v10): a topic named by an id no topic has (the zero one too) gets UNKNOWN_TOPIC_ID."""
    offsets = ctx.cluster.groups.offsets.of_group(group_id)
    if topics is None:
        wanted: dict[str, list[int]] = {}
        for name, index in sorted(offsets):
            if ctx.allowed("DESCRIBE", "TOPIC", name):  # others are left out, as Kafka's
                wanted.setdefault(name, []).append(index)
        requested = [(name, None, indexes) for name, indexes in wanted.items()]
    else:
        requested = []
        for t in topics:
            name = t.name
            if by_id or t.get("topic_id", ZERO_UUID) != ZERO_UUID:
                found = ctx.cluster.topic_by_id(t.topic_id)
                name = found.name if found else None
            requested.append((name, t.get("topic_id"), list(t.partition_indexes)))
        if by_id:  # Kafka's broker answers the unknown ids after the coordinator's topics
            requested.sort(key=lambda topic: topic[0] is None)
    answer = []
    for name, topic_id, indexes in requested:
        partitions = []
        for index in indexes:
            partition = dict(NOT_COMMITTED, partition_index=index, error_code=error)
            if name is None:  # an unknown topic id
                partition["error_code"] = error or UNKNOWN_TOPIC_ID
                partitions.append(partition)
                continue
            committed = offsets.get((name, index))
            if require_stable and ctx.cluster.transactions.pending_offset(group_id, name, index):
                partition["error_code"] = error or error_code("UNSTABLE_OFFSET_COMMIT")
            elif committed:
                partition.update(committed_offset=committed.offset,
                                 committed_leader_epoch=committed.leader_epoch,
                                 metadata=committed.metadata or "")
            partitions.append(partition)
        topic = ctx.cluster.topics.get(name or "")
        answer.append({"name": name or "",
                       "topic_id": topic_id or (topic.id if topic else ZERO_UUID),
                       "partitions": partitions})
    return answer


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if ctx.version >= 8:
        groups = []
        for g in request.groups:
            error = 0 if ctx.is_coordinator(g.group_id) else error_code("NOT_COORDINATOR")
            if not error:
                try:
                    ctx.cluster.groups.validate_offset_fetch(g.group_id, g.member_id,
                                                             g.member_epoch)
                except ClusterError as exc:
                    error = error_code(exc.error)
            group = dict(NO_TOPICS, group_id=g.group_id, error_code=error)
            if not error:
                group["topics"] = partitions_of(ctx, g.group_id, g.topics, 0,
                                                request.require_stable, ctx.version >= 10)
            groups.append(group)
        return {"throttle_time_ms": 0, "groups": groups}
    if offsets_in_zookeeper(ctx):
        return {"throttle_time_ms": 0, "error_code": 0, "topics": [
            {"name": t.name, "partitions": [
                dict(NOT_COMMITTED, partition_index=index,
                     error_code=error_code("UNSUPPORTED_VERSION"))
                for index in t.partition_indexes]} for t in request.topics]}
    error = 0 if ctx.is_coordinator(request.group_id) else error_code("NOT_COORDINATOR")
    if error and ctx.version >= 2:
        return {"throttle_time_ms": 0, "error_code": error, "topics": []}
    topics = partitions_of(ctx, request.group_id, request.topics, error,
                           request.require_stable)
    return {"throttle_time_ms": 0, "error_code": 0, "topics": topics}
