"""SyncGroup (key 14): the leader's assignment reaches every member.

Versions: 0-5. Flexible from v4; v5 carries the protocol type and name both ways.

Behavior: the leader's SyncGroup stores every member's assignment and makes the group Stable;
followers that synced first wait for it. ILLEGAL_GENERATION for another generation,
REBALANCE_IN_PROGRESS when a rebalance started (also for waiting followers),
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL (v5; also for a v5+
request without its mandatory protocol type or name, checked first as Kafka does),
NOT_COORDINATOR.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.common import answer_of
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id

API_KEY = 14
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (groups("READ"),)


async def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "assignment": b"",
                              "protocol_type": None, "protocol_name": None}
    if ctx.version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        answer["error_code"] = error_code("INCONSISTENT_GROUP_PROTOCOL")
        return answer
    if invalid_group_id(request.group_id):
        answer["error_code"] = error_code("INVALID_GROUP_ID")
        return answer
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    groups = ctx.cluster.groups
    try:
        assignment = await answer_of(groups.sync(
            request.group_id, request.generation_id, request.member_id,
            request.group_instance_id, request.protocol_type, request.protocol_name,
            {a.member_id: a.assignment for a in request.assignments}, trio.current_time(),
        ))
    except ClusterError as exc:
        answer["error_code"] = exc.code
        return answer
    group = groups.classic_group(request.group_id)
    if group is None:  # a classic member of a consumer group: the request's, as Kafka echoes
        answer.update(error_code=0, assignment=assignment,
                      protocol_type=request.protocol_type, protocol_name=request.protocol_name)
    else:
        answer.update(error_code=0, assignment=assignment, protocol_type=group.protocol_type,
                      protocol_name=group.protocol_name)
    return answer
