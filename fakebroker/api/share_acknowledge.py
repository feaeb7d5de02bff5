"""ShareAcknowledge (key 79): a share group member acknowledges records without fetching.

Versions: 0 (4.0, early access), 1 (4.1+), 2 (4.2+: renew acknowledgements, the acquisition
lock timeout). Kafka 4.4 serves 1-2. Flexible.

Behavior (as ShareFetch's acknowledgements, ``fakebroker.api.share_fetch``): a null group id,
then a member id empty or longer than 36 characters is INVALID_REQUEST first
(``check_member_id``); the
request continues the member's share session, at its next epoch (INVALID_SHARE_SESSION_EPOCH; epoch
0 too, which only a ShareFetch may open; no session: SHARE_SESSION_NOT_FOUND), or closes it
with -1 after applying the acknowledgements (the member's other acquired records are
released). Each partition's result in its ``error_code``: INVALID_RECORD_STATE for records
the member does not hold, INVALID_REQUEST for a range past the records delivered,
UNKNOWN_TOPIC_OR_PARTITION for a partition no fetch has read yet, UNKNOWN_TOPIC_ID,
NOT_LEADER_OR_FOLLOWER; a partition's refused range undoes its ranges before it
(``fakebroker.state.share_partitions``).
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups, topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.api.share_fetch import FINAL, NO_LEADER, SESSION_ERRORS, acknowledge
from fakebroker.protocol.errors import ClusterError
from fakebroker.state.share_groups import check_member_id

API_KEY = 79
ERROR_PLACEMENT = Placement(
    per_topic("topics", "responses", "topic", partitions=per_partition(
        "partitions", "partitions", "partition_index",
        error_fields={"current_leader": NO_LEADER})),
    request_errors=SESSION_ERRORS | {"GROUP_AUTHORIZATION_FAILED", "INVALID_REQUEST"})
AUTHORIZES = (groups("READ"), topics("READ"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    share = ctx.cluster.groups.share
    group_id, member_id = request.group_id or "", request.member_id or ""
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "responses": [],
                              "acquisition_lock_timeout_ms": share.lock_duration_ms(group_id),
                              "node_endpoints": []}
    try:
        if request.group_id is None:
            raise ClusterError("INVALID_REQUEST", None)
        check_member_id(member_id)
        if request.share_session_epoch == 0:
            raise ClusterError("INVALID_SHARE_SESSION_EPOCH")
        share.session(group_id, member_id, request.share_session_epoch)
    except ClusterError as exc:
        answer.update(error_code=exc.code, error_message=exc.message,
                      acquisition_lock_timeout_ms=0)
        return answer
    now = trio.current_time()
    answer["responses"] = [{"topic_id": t.topic_id, "partitions": [
        dict(zip(("error_code", "error_message"), acknowledge(
            ctx, group_id, member_id, (t.topic_id, p.partition_index),
            p.acknowledgement_batches, now), strict=True),
             partition_index=p.partition_index, current_leader=NO_LEADER)
        for p in t.partitions]} for t in request.topics]
    if request.share_session_epoch == FINAL:
        share.close_session(group_id, member_id)
    return answer
