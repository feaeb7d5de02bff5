"""ConsumerGroupHeartbeat (key 68): the KIP-848 consumer protocol (group.protocol=consumer).

Versions: 0 (3.9), 1 (4.x: the client chooses its member id; regex subscriptions). Flexible.

Behavior:
* Epoch 0 joins (v0: the coordinator makes the member id), -1 leaves, -2 leaves temporarily;
  otherwise the member's current (or previous) epoch, else FENCED_MEMBER_EPOCH;
  UNKNOWN_MEMBER_ID for an unknown member; NOT_COORDINATOR on another broker.
* The answer carries the member's epoch, the heartbeat interval and, when it changed, the
  member's assignment by topic id; partitions move only after their old owner revoked them.
* Server assignors: ``uniform`` (default) and ``range``; others UNSUPPORTED_ASSIGNOR.
* A subscription regex (v1) is not supported yet: INVALID_REQUEST naming it.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.context import RequestContext
from fakebroker.protocol.errors import error_code
from fakebroker.state.consumer_groups import Assignment, ConsumerGroupError

API_KEY = 68


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "member_id": request.member_id,
                              "member_epoch": request.member_epoch,
                              "heartbeat_interval_ms": 0, "assignment": None}
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    if request.subscribed_topic_regex:
        answer.update(error_code=error_code("INVALID_REQUEST"),
                      error_message="SubscribedTopicRegex is not supported by fakebroker yet")
        return answer
    owned = None
    if request.topic_partitions is not None:
        owned = by_name(ctx, {t.topic_id: t.partitions for t in request.topic_partitions})
    coordinator = ctx.cluster.consumer_groups
    try:
        member, assignment = coordinator.heartbeat(
            request.group_id, request.member_id, request.member_epoch, request.instance_id,
            request.rack_id, ctx.header.client_id or "", ctx.client_host,
            None if request.subscribed_topic_names is None
            else list(request.subscribed_topic_names),
            request.server_assignor, owned, trio.current_time())
    except ConsumerGroupError as exc:
        answer.update(error_code=error_code(exc.error), error_message=str(exc))
        return answer
    answer.update(error_code=0, member_id=member.member_id, member_epoch=member.epoch,
                  heartbeat_interval_ms=coordinator.heartbeat_interval_ms)
    if assignment is not None:
        answer["assignment"] = {"topic_partitions": by_id(ctx, assignment)}
    return answer


def by_name(ctx: RequestContext, partitions: dict[Any, list[int]]) -> Assignment:
    names = {t.id: name for name, t in ctx.cluster.topics.items()}
    return {names[tid]: set(ps) for tid, ps in partitions.items() if tid in names}


def by_id(ctx: RequestContext, assignment: Assignment) -> list[dict[str, Any]]:
    return [{"topic_id": ctx.cluster.topics[name].id, "partitions": sorted(ps)}
            for name, ps in sorted(assignment.items()) if name in ctx.cluster.topics]
