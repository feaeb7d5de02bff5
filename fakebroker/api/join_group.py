"""JoinGroup (key 11): the classic group join barrier.

Versions: 0-9. Flexible from v6.

Behavior:
* The coordinator runs the barrier: every known member must rejoin; the rebalance completes as
  soon as they have (no waiting out timeouts), then the leader gets every member's metadata
  for the selected protocol and followers an empty list.
* v4+: a new member without a member id gets MEMBER_ID_REQUIRED with its id and must join
  again with it; v0-3 members get their id directly. Static members (v5+ group_instance_id)
  keep their place across restarts.
* Errors: NOT_COORDINATOR (wrong broker), INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT (outside
  6000..1800000 ms by default), INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID, MEMBER_ID_REQUIRED, GROUP_MAX_SIZE_REACHED (group.max.size: a new
  member of a full group, or the last member to rejoin a full rebalance). v0 has no
  rebalance timeout: the session timeout serves as both.
* As Kafka's GroupCoordinatorService: the group id, then the session timeout, are checked
  before the coordinator and the group (a KIP-848 group's id too).
* As Kafka's coordinator: the group's protocols are checked before the member id (an Empty
  group refuses an empty protocol type), and a member that does not send SyncGroup within
  the rebalance timeout after joining leaves the group (``fakebroker.state.classic_groups``).
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.common import answer_of
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id
from fakebroker.state.mixed_groups import ClassicJoin

API_KEY = 11
NOT_JOINED = {"generation_id": -1, "leader": "", "members": ()}  # beside an error
# An error answer repeats the member id as sent.
ERROR_PLACEMENT = Placement(top_fields=NOT_JOINED, echoed=("member_id",))
AUTHORIZES = (groups("READ"),)


def refused_answer(request: Any, version: int, error: str) -> dict[str, Any]:
    """Kafka's JoinGroupRequest.getErrorResponse: no member id, and no protocol name (null
    from v7, "" before)."""
    return dict(NOT_JOINED, throttle_time_ms=0, error_code=error_code(error), member_id="",
                protocol_name=None if version >= 7 else "")


async def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = dict(NOT_JOINED, throttle_time_ms=0, member_id=request.member_id,
                                  protocol_name=None if ctx.version >= 7 else "")
    if invalid_group_id(request.group_id):
        answer["error_code"] = error_code("INVALID_GROUP_ID")
        return answer
    if not ctx.cluster.groups.classic.allows(request.session_timeout_ms):
        answer["error_code"] = error_code("INVALID_SESSION_TIMEOUT")
        return answer
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    try:
        result = await answer_of(ctx.cluster.groups.join(request.group_id, ClassicJoin(
            request.member_id, request.group_instance_id, ctx.header.client_id or "",
            ctx.client_host, request.session_timeout_ms,
            request.rebalance_timeout_ms if ctx.version >= 1 else request.session_timeout_ms,
            request.protocol_type, [(p.name, p.metadata) for p in request.protocols],
            require_known_member_id=ctx.version >= 4), trio.current_time()))
    except ClusterError as exc:
        answer["error_code"] = exc.code
        return answer
    answer.update(result)
    if ctx.version < 7 and answer["protocol_name"] is None:
        answer["protocol_name"] = ""
    return answer

