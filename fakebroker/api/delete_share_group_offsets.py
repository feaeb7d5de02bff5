"""DeleteShareGroupOffsets (key 92): forget an empty share group's state of whole topics.

Versions: 0 (4.1+). Flexible.

Behavior: GROUP_ID_NOT_FOUND "Group g not found." for no share group, NON_EMPTY_GROUP "The
group is not empty." while it has members (for the whole request). Per topic: its
partitions' share state is forgotten (the next fetch starts again by
``share.auto.offset.reset``); an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION "This server
does not host this topic-partition.", a topic the group has no state for the same error with
"There is no offset information to delete.", both with a zero topic id, as Kafka answers. The
topics deleted are answered first, each once (a topic named twice is deleted once), then every
refused one in the request's order (measured on 4.4). A group that never had share state
(no member's topic initialized, nothing altered) is answered with no topic at all, whatever
they are: Kafka's coordinator has no record of the group's state to look them up in
(``sharePartitionsEligibleForOffsetDeletion``). NOT_COORDINATOR on another broker.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, topics
from fakebroker.api.context import RequestContext
from fakebroker.api.describe_share_group_offsets import UNKNOWN
from fakebroker.api.shapes import Placement
from fakebroker.api.share_offset_requests import refusal
from fakebroker.protocol.errors import error_code

API_KEY = 92
ERROR_PLACEMENT = Placement(top_fields={"responses": ()})
AUTHORIZES = (groups("DELETE"), topics("READ"))
NOTHING_TO_DELETE = "There is no offset information to delete."


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    share = ctx.cluster.groups.share
    if (refused := refusal(request.group_id, ctx, share.check_delete_offsets)) is not None:
        return refused
    if not share.state_recorded(request.group_id):
        return {"throttle_time_ms": 0, "error_code": 0, "responses": []}
    deleted: dict[str, dict[str, Any]] = {}  # each topic once, in the order first named
    refused: list[dict[str, Any]] = []
    for t in request.topics:
        topic = ctx.cluster.topics.get(t.topic_name)
        if topic is not None and (t.topic_name in deleted or share.delete_start_offsets(
                request.group_id, t.topic_name)):
            deleted[t.topic_name] = {"topic_name": t.topic_name, "topic_id": topic.id,
                                     "error_code": 0}
        else:
            refused.append({"topic_name": t.topic_name,
                            "error_code": error_code("UNKNOWN_TOPIC_OR_PARTITION"),
                            "error_message": UNKNOWN if topic is None else NOTHING_TO_DELETE})
    return {"throttle_time_ms": 0, "error_code": 0,
            "responses": [*deleted.values(), *refused]}
