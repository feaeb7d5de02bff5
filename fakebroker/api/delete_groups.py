"""DeleteGroups (key 42): delete empty groups and their committed offsets.

Versions: 0-2 (3.9), 3 (4.x). Flexible from v2.

Behavior: NON_EMPTY_GROUP while a group (classic, KIP-848 or share) has members (a classic one
while it is not Empty, members or not), GROUP_ID_NOT_FOUND for an unknown one, NOT_COORDINATOR
on another broker; each group answered on its own. A deleted group's committed offsets go
with it. A group named twice is answered once, as its first naming is (Kafka's results are a
collection keyed by group id, which keeps the first: measured on Kafka 4.4, ["a", "a"] for an
empty group "a" answers one result, NONE).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 42
ERROR_PLACEMENT = Placement(per_group("groups_names", "results"))
AUTHORIZES = (groups("DELETE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    results = []
    answered: set[str] = set()
    for group_id in request.groups_names:
        if group_id in answered:
            continue
        answered.add(group_id)
        code = 0
        if not ctx.is_coordinator(group_id):
            code = error_code("NOT_COORDINATOR")
        else:
            try:
                ctx.cluster.groups.delete(group_id)
            except ClusterError as exc:
                code = error_code(exc.error)
        results.append({"group_id": group_id, "error_code": code})
    return {"throttle_time_ms": 0, "results": results}
