"""ShareGroupDescribe (key 77): share groups, their epochs, members and assignments.

Versions: 0 (4.0, early access), 1 (4.1+; Kafka 4.4 serves only 1). Flexible.

Behavior: INVALID_GROUP_ID for an empty group id, answered first; GROUP_ID_NOT_FOUND with an
empty state, as Kafka answers, for no group ("Group g not found.") or a group of another type
("Group g is not a share group.", as ConsumerGroupDescribe answers for its own type),
NOT_COORDINATOR on another broker; states Empty and Stable; the assignor is ``simple``. Asked
for them, a described group's authorized operations: every group operation with no authorizer,
those the principal may do with one.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, in_handler
from fakebroker.api.common import GROUP_OPERATIONS
from fakebroker.api.consumer_group_describe import partitions
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code
from fakebroker.state.groups import invalid_group_id
from fakebroker.state.share_groups import ASSIGNOR

API_KEY = 77
# Beside a group's error: nothing described.
UNDESCRIBED = {"group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
               "members": ()}
ERROR_PLACEMENT = Placement(per_group("group_ids", "groups", error_fields=UNDESCRIBED))
AUTHORIZES = (groups("DESCRIBE"),
              in_handler("each group's authorized operations, asked for"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    # the empty ids' answers first, as Kafka's coordinator service completes them at once
    described = sorted((describe(ctx, g) for g in request.group_ids),
                       key=lambda group: bool(group["group_id"]))
    if request.include_authorized_operations:
        for group in described:
            if not group["error_code"]:
                group["authorized_operations"] = ctx.authorized_operations(
                    "GROUP", group["group_id"], GROUP_OPERATIONS)
    return {"throttle_time_ms": 0, "groups": described}


def describe(ctx: RequestContext, group_id: str) -> dict[str, Any]:
    if invalid_group_id(group_id):
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("INVALID_GROUP_ID"))
    if not ctx.is_coordinator(group_id):
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("NOT_COORDINATOR"))
    group = ctx.cluster.groups.share_group(group_id)
    if group is None:
        why = "not found" if ctx.cluster.groups.kind(group_id) is None \
            else "is not a share group"
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("GROUP_ID_NOT_FOUND"),
                    error_message=f"Group {group_id} {why}.")
    members = [{
        "member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.epoch,
        "client_id": m.client_id, "client_host": m.client_host,
        "subscribed_topic_names": m.subscribed,
        "assignment": {"topic_partitions": partitions(ctx, m.assigned)},
    } for m in group.members.values()]
    return {"group_id": group_id, "error_code": 0, "group_state": group.state,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "assignor_name": ASSIGNOR, "members": members}
