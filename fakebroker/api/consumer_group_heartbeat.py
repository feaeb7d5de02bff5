"""ConsumerGroupHeartbeat (key 68): the KIP-848 consumer protocol (group.protocol=consumer).

Versions: 0 (3.9), 1 (4.x: the client chooses its member id; regex subscriptions). Flexible.

Behavior (fakebroker/state/consumer_groups.py has the details):
* Epoch 0 joins (v0: the coordinator makes the member id), -1 leaves, -2 leaves temporarily
  (a static member keeps its assignment until its session times out or its instance id
  rejoins); otherwise the member's current epoch, else FENCED_MEMBER_EPOCH;
  UNKNOWN_MEMBER_ID for an unknown member, GROUP_ID_NOT_FOUND for an unknown group,
  UNRELEASED_INSTANCE_ID / FENCED_INSTANCE_ID for static members, INVALID_REQUEST for the
  request shapes Kafka refuses; NOT_COORDINATOR on another broker; GROUP_MAX_SIZE_REACHED
  for a member the group does not hold once it has group.consumer.max.size members.
* Subscriptions by topic names and (v1) by a regex matched against whole topic names,
  re-resolved as topics come and go; INVALID_REGULAR_EXPRESSION for one that does not compile.
* The answer carries the member's epoch, the heartbeat interval (its group's
  consumer.heartbeat.interval.ms, else the broker's) and, when it changed (or the
  request was a full one, e.g. a join), the member's assignment by topic id; partitions move
  only after their old owner revoked them.
* Server assignors: ``uniform`` (default, sticky) and ``range``; others UNSUPPORTED_ASSIGNOR.
* An error answer carries no member id and epoch 0, as Kafka's.
* group.version finalized at 0 (UpdateFeatures, ``kafka-features disable``) turns KIP-848
  off: UNSUPPORTED_VERSION with a null message, as Kafka answers then.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.consumer_groups import Assignment, Heartbeat
from fakebroker.state.features import GROUP_VERSION

API_KEY = 68
ERROR_PLACEMENT = Placement(top_fields={"member_epoch": -1})
AUTHORIZES = (groups("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "member_id": None, "member_epoch": 0,
                              "heartbeat_interval_ms": 0, "assignment": None}
    if not ctx.cluster.features.at_least(GROUP_VERSION, 1):  # KIP-848 turned off
        answer["error_code"] = error_code("UNSUPPORTED_VERSION")
        return answer
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    owned = None
    if request.topic_partitions is not None:
        owned = by_name(ctx, request.topic_partitions)
    names = request.subscribed_topic_names
    heartbeat = Heartbeat(
        group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, instance_id=request.instance_id,
        rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if names is None else list(names),
        subscribed_topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor, owned=owned,
        client_id=ctx.header.client_id or "", client_host=ctx.client_host, version=ctx.version)
    coordinator = ctx.cluster.groups.consumer
    try:
        member, assignment = coordinator.heartbeat(heartbeat, trio.current_time(), int(
            ctx.cluster.broker_config("group.consumer.max.size") or "2147483647"))
    except ClusterError as exc:
        answer.update(error_code=error_code(exc.error), error_message=str(exc))
        return answer
    answer.update(error_code=0, member_id=member.member_id, member_epoch=member.epoch)
    if member.epoch >= 0:  # not for a leave
        answer["heartbeat_interval_ms"] = coordinator.heartbeat_interval(request.group_id)
    if assignment is not None:
        answer["assignment"] = {"topic_partitions": by_id(ctx, assignment)}
    return answer


def by_name(ctx: RequestContext, topics: Any) -> Assignment:
    """Owned partitions by topic name; entries of one topic add up, unknown topic ids drop."""
    names = {t.id: name for name, t in ctx.cluster.topics.items()}
    owned: Assignment = {}
    for t in topics:
        if t.topic_id in names:
            owned.setdefault(names[t.topic_id], set()).update(t.partitions)
    return owned


def by_id(ctx: RequestContext, assignment: Assignment) -> list[dict[str, Any]]:
    return [{"topic_id": ctx.cluster.topics[name].id, "partitions": sorted(ps)}
            for name, ps in sorted(assignment.items()) if name in ctx.cluster.topics]
