"""AlterShareGroupOffsets (key 91): set the start offset of an empty share group's partitions.

Versions: 0 (4.1+). Flexible.

Behavior: the group must have no member (NON_EMPTY_GROUP "The group is not empty.", for the
whole request); a group that does not exist is made, empty, as Kafka makes it, once the
request names a topic that exists (whatever its partitions; naming none, or only unknown
topics, makes no group: measured on Kafka 4.4). Each
partition's share state starts afresh at the offset given (a negative one: set again by
``share.auto.offset.reset`` at the next fetch); a partition of an unknown topic, or past the
topic's, answers UNKNOWN_TOPIC_OR_PARTITION "This server does not host this
topic-partition." (an unknown topic with a zero topic id). A negative partition index of a
known topic fails the whole request, nothing altered: UNKNOWN_SERVER_ERROR "Initialize share
group parameters has invalid partitionId - <group> <topic id> <partition>" (Kafka 4.4's
InitializeShareGroupStateParameters refusing it, measured; the first such partition named),
and the group's next DeleteGroups fails (``ShareGroupCoordinator.delete``).
NOT_COORDINATOR on another broker.
"""

from __future__ import annotations

import base64
from typing import Any

from fakebroker.api.access import groups, topics
from fakebroker.api.context import RequestContext
from fakebroker.api.describe_share_group_offsets import UNKNOWN
from fakebroker.api.shapes import Placement
from fakebroker.api.share_offset_requests import refusal
from fakebroker.protocol.errors import error_code

API_KEY = 91
ERROR_PLACEMENT = Placement(top_fields={"responses": ()})
AUTHORIZES = (groups("READ"), topics("READ"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    share = ctx.cluster.groups.share
    if (refused := refusal(request.group_id, ctx, share.check_alter)) is not None:
        return refused
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "responses": []}
    for t in request.topics:
        topic = ctx.cluster.topics.get(t.topic_name)
        negative = [p.partition_index for p in t.partitions if p.partition_index < 0]
        if topic is not None and negative:
            topic_id = base64.urlsafe_b64encode(topic.id.bytes).decode().rstrip("=")
            share.refuse_alter(request.group_id)
            return dict(answer, error_code=error_code("UNKNOWN_SERVER_ERROR"), error_message=(
                "Initialize share group parameters has invalid partitionId - "
                f"{request.group_id} {topic_id} {negative[0]}"))
    for t in request.topics:
        topic = ctx.cluster.topics.get(t.topic_name)
        if topic is not None:
            share.alter_group(request.group_id)
        partitions = []
        for p in t.partitions:
            if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                partitions.append({"partition_index": p.partition_index, "error_message": UNKNOWN,
                                   "error_code": error_code("UNKNOWN_TOPIC_OR_PARTITION")})
                continue
            share.alter_start_offset(request.group_id, t.topic_name, p.partition_index,
                                     p.start_offset)
            partitions.append({"partition_index": p.partition_index, "error_code": 0})
        answer["responses"].append({"topic_name": t.topic_name, "partitions": partitions,
                                    **({"topic_id": topic.id} if topic else {})})
    return answer
