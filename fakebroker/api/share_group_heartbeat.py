"""ShareGroupHeartbeat (key 76): a member of a share group (KIP-932) joins, heartbeats, leaves.

Versions: 0 (4.0, early access), 1 (4.1+; Kafka 4.4 serves only 1). Flexible.

Behavior (fakebroker/state/share_groups.py has the details):
* Epoch 0 joins with the subscribed topic names, -1 leaves; otherwise the member's epoch,
  else FENCED_MEMBER_EPOCH. UNKNOWN_MEMBER_ID for an unknown member, GROUP_ID_NOT_FOUND for
  an unknown group ("Share group g not found."; "Group g not found." for a leave) or an id a
  group of another kind holds, INVALID_REQUEST for the request shapes Kafka refuses, with
  its messages; NOT_COORDINATOR on another broker. A member id empty or longer than 36
  characters is INVALID_REQUEST before the group is looked up, on any broker
  (``check_member_id``, as ShareFetch's; measured on Kafka 4.4).
* The answer carries the member's epoch (the target assignment's: a new group starts at
  epoch 1, so its first join answers 2), the group's heartbeat interval
  (``share.heartbeat.interval.ms``) and, on a join, a full request or when it changed, the
  member's assignment by topic id (the simple assignor: partitions shared when members
  outnumber them). Both compute a new target at most once per
  ``share.assignment.interval.ms`` (1 s), so a member joining within it waits at the old
  target's epoch. Kafka assigns a partition only once the share coordinator initialized the
  group's state for it (asynchronously), so its join answers an empty assignment first;
  the fake assigns at once.
* An error answer carries no member id and epoch 0, as Kafka's.
* share.version finalized at 0 (UpdateFeatures) turns share groups off: UNSUPPORTED_VERSION
  with a null message, as Kafka answers then.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.consumer_group_heartbeat import by_id
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.features import SHARE_VERSION
from fakebroker.state.share_groups import Heartbeat, check_member_id

API_KEY = 76
ERROR_PLACEMENT = Placement(top_fields={"member_epoch": 0})
AUTHORIZES = (groups("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "member_id": None, "member_epoch": 0,
                              "heartbeat_interval_ms": 0, "assignment": None}
    if not ctx.cluster.features.at_least(SHARE_VERSION, 1):  # share groups turned off
        answer["error_code"] = error_code("UNSUPPORTED_VERSION")
        return answer
    try:
        check_member_id(request.member_id)
    except ClusterError as exc:
        answer.update(error_code=exc.code, error_message=exc.message)
        return answer
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    names = request.subscribed_topic_names
    heartbeat = Heartbeat(
        group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, rack_id=request.rack_id,
        subscribed_topic_names=None if names is None else list(names),
        client_id=ctx.header.client_id or "", client_host=ctx.client_host)
    coordinator = ctx.cluster.groups.share
    try:
        member, assignment = coordinator.heartbeat(heartbeat, trio.current_time())
    except ClusterError as exc:
        answer.update(error_code=error_code(exc.error), error_message=exc.message)
        return answer
    answer.update(error_code=0, member_id=member.member_id, member_epoch=member.epoch)
    if member.epoch >= 0:
        answer["heartbeat_interval_ms"] = coordinator.heartbeat_interval_ms(request.group_id)
    if assignment is not None:
        answer["assignment"] = {"topic_partitions": by_id(ctx, assignment)}
    return answer
