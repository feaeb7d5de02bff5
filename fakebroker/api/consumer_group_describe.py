"""ConsumerGroupDescribe (key 69): KIP-848 groups, their epochs, members and assignments.

Versions: 0 (3.9), 1 (4.x: member type). Flexible.

Behavior: INVALID_GROUP_ID for an empty group id, answered first; GROUP_ID_NOT_FOUND with an
empty state, as Kafka answers, for a group of another type ("Group g is not a consumer group.")
or none ("Group g not found."), NOT_COORDINATOR on another broker; states Empty, Assigning,
Reconciling, Stable. A member without a regex subscription reports "" as its regex, and (v1)
member type 1, a consumer-protocol member. Asked for them, a described group's authorized
operations: every group operation with no authorizer, those the principal may do with one.
group.version finalized at 0 (UpdateFeatures) turns KIP-848 off: every group named gets
UNSUPPORTED_VERSION with a null message, as Kafka answers then.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, in_handler
from fakebroker.api.common import GROUP_OPERATIONS
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code
from fakebroker.state.consumer_groups import Assignment
from fakebroker.state.features import GROUP_VERSION
from fakebroker.state.groups import invalid_group_id

API_KEY = 69
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1  # MemberType: -1 unknown, 0 classic, 1 consumer
# Beside a group's error: nothing described.
UNDESCRIBED = {"group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
               "members": ()}
ERROR_PLACEMENT = Placement(per_group("group_ids", "groups", error_fields=UNDESCRIBED))
AUTHORIZES = (groups("DESCRIBE"),
              in_handler("each group's authorized operations, asked for"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if not ctx.cluster.features.at_least(GROUP_VERSION, 1):  # KIP-848 turned off
        return {"throttle_time_ms": 0, "groups": [
            dict(UNDESCRIBED, group_id=g, error_code=error_code("UNSUPPORTED_VERSION"))
            for g in request.group_ids]}
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
    group = ctx.cluster.groups.consumer_group(group_id)
    if group is None:
        why = "not found" if ctx.cluster.groups.kind(group_id) is None \
            else "is not a consumer group"
        return {"group_id": group_id, "error_code": error_code("GROUP_ID_NOT_FOUND"),
                "error_message": f"Group {group_id} {why}.", "group_state": "",
                "assignor_name": "", "members": []}
    members = [{
        "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
        "member_epoch": m.epoch, "client_id": m.client_id, "client_host": m.client_host,
        "subscribed_topic_names": m.subscribed, "subscribed_topic_regex": m.regex or "",
        "assignment": {"topic_partitions": partitions(ctx, m.assigned)},
        "target_assignment": {"topic_partitions": partitions(
            ctx, group.target.get(m.member_id, {}))},
        "member_type": CONSUMER_MEMBER if m.classic is None else CLASSIC_MEMBER,
    } for m in group.members.values()]
    return {"group_id": group_id, "error_code": 0, "group_state": group.state,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "assignor_name": group.assignor, "members": members}


def partitions(ctx: RequestContext, assignment: Assignment) -> list[dict[str, Any]]:
    return [{"topic_id": ctx.cluster.topics[name].id, "topic_name": name,
             "partitions": sorted(ps)}
            for name, ps in sorted(assignment.items()) if name in ctx.cluster.topics]
