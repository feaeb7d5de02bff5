"""OffsetDelete (key 47): delete a group's committed offsets for some partitions.

Versions: 0. Not flexible.

Behavior: GROUP_ID_NOT_FOUND for an unknown group or a share group, NOT_COORDINATOR, and
NON_EMPTY_GROUP for a classic group with members of another protocol type than "consumer", at
the top level;
per partition UNKNOWN_TOPIC_OR_PARTITION for a partition the cluster does not have,
GROUP_SUBSCRIBED_TO_TOPIC while the group's members subscribe to the topic (read from their
consumer-protocol subscriptions; a KIP-848 group's by name or regex), else the offset is
removed.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import GROUP_ERRORS, Placement, per_partition, per_topic
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id

API_KEY = 47
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partitions", "partitions", "partition_index")), request_errors=GROUP_ERRORS)
AUTHORIZES = (groups("DELETE"), topics("READ"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if invalid_group_id(request.group_id):
        return {"error_code": error_code("INVALID_GROUP_ID"), "throttle_time_ms": 0,
                "topics": []}
    if not ctx.is_coordinator(request.group_id):
        return {"error_code": error_code("NOT_COORDINATOR"), "throttle_time_ms": 0,
                "topics": []}
    groups = ctx.cluster.groups
    try:
        groups.validate_offset_delete(request.group_id)
    except ClusterError as exc:
        return {"error_code": exc.code, "throttle_time_ms": 0, "topics": []}
    in_use = groups.subscribed_topics(request.group_id)
    topics = []
    for wanted in request.topics:
        partitions = []
        topic = ctx.cluster.topics.get(wanted.name)
        for p in wanted.partitions:
            if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code = error_code("UNKNOWN_TOPIC_OR_PARTITION")
            elif wanted.name in in_use:
                code = error_code("GROUP_SUBSCRIBED_TO_TOPIC")
            else:
                groups.offsets.delete(request.group_id, wanted.name, p.partition_index)
                code = 0
            partitions.append({"partition_index": p.partition_index, "error_code": code})
        topics.append({"name": wanted.name, "partitions": partitions})
    return {"error_code": 0, "throttle_time_ms": 0, "topics": topics}
