"""LeaveGroup (key 13): members leave; the rest rebalance.

Versions: 0-5. Flexible from v4; v3+ removes a batch of members, by member or instance id.

Behavior: UNKNOWN_MEMBER_ID for a member the group does not have (per member from v3),
FENCED_INSTANCE_ID when an instance id is paired with another member id, NOT_COORDINATOR at
the top level, and before it INVALID_GROUP_ID for an empty group id (``invalid_group_id``).
The group rebalances without the leavers, or becomes Empty.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.groups import invalid_group_id

API_KEY = 13
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (groups("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if invalid_group_id(request.group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("INVALID_GROUP_ID")}
    if not ctx.is_coordinator(request.group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("NOT_COORDINATOR")}
    leaving = ([(m.member_id, m.group_instance_id) for m in request.members]
               if ctx.version >= 3 else [(request.member_id, None)])
    errors = ctx.cluster.groups.leave(request.group_id, leaving, trio.current_time())
    results = [{"member_id": member_id, "group_instance_id": instance_id,
                "error_code": error_code(error) if error else 0}
               for (member_id, instance_id), error in zip(leaving, errors, strict=True)]
    top = results[0]["error_code"] if ctx.version < 3 else 0
    return {"throttle_time_ms": 0, "error_code": top, "members": results}
