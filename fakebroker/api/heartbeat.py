"""Heartbeat (key 12): keeps a classic member's session alive; tells it to rejoin.

Versions: 0-4. Flexible from v4.

Behavior: INVALID_GROUP_ID for an empty group id, first (``invalid_group_id``);
REBALANCE_IN_PROGRESS while the group prepares a rebalance (the member must
rejoin), ILLEGAL_GENERATION for another generation, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
NOT_COORDINATOR. During CompletingRebalance heartbeats succeed, as in Kafka.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id

API_KEY = 12
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (groups("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if invalid_group_id(request.group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("INVALID_GROUP_ID")}
    if not ctx.is_coordinator(request.group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("NOT_COORDINATOR")}
    try:
        ctx.cluster.groups.heartbeat(request.group_id, request.generation_id,
                                     request.member_id, request.group_instance_id,
                                     trio.current_time())
    except ClusterError as exc:
        return {"throttle_time_ms": 0, "error_code": exc.code}
    return {"throttle_time_ms": 0, "error_code": 0}
