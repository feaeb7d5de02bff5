"""ListGroups (key 16): the groups this broker coordinates.

Versions: 0-5. Flexible from v3; v4 filters by state, v5 by type ("classic").

Behavior: lists groups whose coordinator is this broker, as every Kafka broker answers for
its own groups; state filters compare case-insensitively, as Kafka does.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.context import RequestContext

API_KEY = 16
CLASSIC = "classic"


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    states = {s.lower() for s in request.states_filter}
    types = {t.lower() for t in request.types_filter}
    groups = []
    for group in ctx.cluster.groups.groups.values():
        if not ctx.is_coordinator(group.group_id):
            continue
        if states and group.state.value.lower() not in states:
            continue
        if types and CLASSIC not in types:
            continue
        groups.append({"group_id": group.group_id, "protocol_type": group.protocol_type or "",
                       "group_state": group.state.value, "group_type": CLASSIC})
    return {"throttle_time_ms": 0, "error_code": 0, "groups": groups}
