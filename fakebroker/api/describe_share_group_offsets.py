"""DescribeShareGroupOffsets (key 90): each share-partition's start offset (and lag, v1).

Versions: 0 (4.0), 1 (4.1+: lag). Flexible.

Behavior: for each group, its share-partitions (fetched, altered, or assigned to a member)
with their start offset, the partition's leader epoch and (v1) the lag: records from the
start offset to the high watermark not yet acknowledged or archived; or the partitions
named. Both as Kafka's share coordinator last wrote them, which lags behind the live state:
-1 until the first acknowledgement (or alteration) is written, and the start offset written
with the acknowledgements that move it (``SharePartition.described``). A group that does
not exist (or is no share group) is answered with no
topics and no error, as Kafka answers; NOT_COORDINATOR on another broker. Named partitions
of unknown topics answer UNKNOWN_TOPIC_OR_PARTITION (Kafka 4.4 leaves the whole request
unanswered).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code

API_KEY = 90
ERROR_PLACEMENT = Placement(per_group("groups", "groups", key="group_id",
                                      error_fields={"topics": ()}))
AUTHORIZES = (groups("DESCRIBE"), topics("DESCRIBE"))
UNKNOWN = "This server does not host this topic-partition."


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "groups": [describe(ctx, g) for g in request.groups]}


def describe(ctx: RequestContext, group: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"group_id": group.group_id, "error_code": 0, "topics": []}
    if not ctx.is_coordinator(group.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    share = ctx.cluster.groups.share
    if group.topics is None:
        wanted = share.known_partitions(group.group_id)
    else:
        wanted = [(t.topic_name, p) for t in group.topics for p in t.partitions]
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for name, index in wanted:
        by_topic.setdefault(name, []).append(offsets(ctx, group.group_id, name, index))
    answer["topics"] = [{"topic_name": name, "topic_id": t.id if (t := ctx.cluster.topics.get(
        name)) else None, "partitions": partitions} for name, partitions in by_topic.items()]
    for topic in answer["topics"]:
        if topic["topic_id"] is None:
            del topic["topic_id"]
    return answer


def offsets(ctx: RequestContext, group_id: str, topic: str, index: int) -> dict[str, Any]:
    partition = ctx.cluster.partition(topic, index)
    if partition is None:
        return {"partition_index": index, "start_offset": -1, "leader_epoch": -1, "lag": -1,
                "error_code": error_code("UNKNOWN_TOPIC_OR_PARTITION"), "error_message": UNKNOWN}
    share = ctx.cluster.groups.share.start_offset(group_id, topic, index)
    start, lag = (-1, -1) if share is None else share.described(partition.log.high_watermark)
    return {"partition_index": index, "start_offset": start,
            "leader_epoch": partition.leader_epoch, "lag": lag, "error_code": 0}
