"""DescribeGroups (key 15): state, protocol, leader-elected members and their assignments.

Versions: 0-5 (3.9), 6 (4.x). Flexible from v5.

Behavior: an unknown group is described as Dead with no members (v6: GROUP_ID_NOT_FOUND, as
Kafka 4 answers), a group only a commit that stored nothing made too, until a record is
written to its ``__consumer_offsets`` partition (as Kafka's reads do not see it; which requests
write: ``ClassicGroups._partition_written``), a KIP-848
consumer, share or streams group too (v6: "Group g is not a classic group.");
NOT_COORDINATOR per group on another broker. The selected protocol, the members' metadata
for it are described once the group is Stable (before: "" and empty bytes, as Kafka describes
a rebalancing group); each member's assignment in every state (the last one synced, until a
rebalance begins from CompletingRebalance, which clears them all, as Kafka's does). Asked
for them (v3+), a described group's authorized operations (those the principal may do with an
authorizer) are every group operation (no authorizer, as a Kafka broker without one answers).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, in_handler
from fakebroker.api.common import group_operations
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code
from fakebroker.state.classic_groups import GroupState
from fakebroker.state.groups import GroupKind

API_KEY = 15
# Beside a group's error: nothing described.
UNDESCRIBED = {"group_state": "", "protocol_type": "", "protocol_data": "", "members": ()}
ERROR_PLACEMENT = Placement(per_group("groups", "groups", error_fields=UNDESCRIBED),
                            errors_first=True)
AUTHORIZES = (groups("DESCRIBE"),
              in_handler("each group's authorized operations, asked for"))


def describe(ctx: RequestContext, group_id: str) -> dict[str, Any]:
    if not ctx.is_coordinator(group_id):
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("NOT_COORDINATOR"))
    group = ctx.cluster.groups.classic_group(group_id)
    if group is None or group.unwritten:
        why = "is not a classic group" \
            if ctx.cluster.groups.kind(group_id) in (GroupKind.CONSUMER, GroupKind.SHARE,
                                                     GroupKind.STREAMS) \
            else "not found"
        return {"group_id": group_id, "group_state": GroupState.DEAD.value,
                "error_code": error_code("GROUP_ID_NOT_FOUND") if ctx.version >= 6 else 0,
                "error_message": f"Group {group_id} {why}." if ctx.version >= 6 else None,
                "protocol_type": "", "protocol_data": "", "members": []}
    stable = group.state is GroupState.STABLE
    members = [{
        "member_id": m.member_id, "group_instance_id": m.instance_id,
        "client_id": m.client_id, "client_host": m.client_host,
        "member_metadata": m.metadata_for(group.protocol_name)
        if stable and group.protocol_name else b"",
        "member_assignment": m.assignment,
    } for m in group.members.values()]
    return {"group_id": group_id, "error_code": 0, "group_state": group.state.value,
            "protocol_type": group.protocol_type or "",
            "protocol_data": (group.protocol_name or "") if stable else "", "members": members}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    groups = [describe(ctx, g) for g in request.groups]
    if request.include_authorized_operations:
        for group in groups:
            if not group["error_code"]:
                group["authorized_operations"] = ctx.authorized_operations(
                    "GROUP", group["group_id"],
                    group_operations(ctx.cluster.settings.kafka_version))
    return {"throttle_time_ms": 0, "groups": groups}
