"""ElectLeaders (key 43): elect each named partition's preferred leader, or an unclean one.

Versions: 0-2 (v1+ election type and a top-level error). Flexible from v2.

Behavior (Kafka's ``ReplicationControlManager.electLeaders``; ``fakebroker.state.elections``):
* Election type 0 (preferred; v0 always): the first replica becomes leader;
  ELECTION_NOT_NEEDED when it leads already, PREFERRED_LEADER_NOT_AVAILABLE when it is not a
  live in-sync replica and the current leader stays. Type 1 (unclean): only a partition
  without a live leader gets one (a live replica, in sync or not), else ELECTION_NOT_NEEDED;
  none live: ELIGIBLE_LEADERS_NOT_AVAILABLE. Another type: INVALID_REQUEST for the request,
  unless it names no topic (an empty list: answered NONE with no results, as Kafka 4.4 does,
  measured).
* Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION ("No such topic as T", "No such
  partition as T-P"). Each error carries Kafka's message; NONE carries none.
* A null partition list means every partition of every topic, and then the partitions that
  needed no election are left out of the answer (each topic still listed).
* The new leader's epoch bumps (clients holding the old one get FENCED_LEADER_EPOCH, the old
  leader NOT_LEADER_OR_FOLLOWER), parked fetches wake and Metadata shows the new leader.
* A timeout of 0 or less is past the controller's deadline: the whole request
  REQUEST_TIMED_OUT, nothing applied (``fakebroker.api.common.deadline_passed``), unless the
  request names no partition (an empty list: NONE, whatever the timeout and election type;
  measured on Kafka 4.4, as its broker answers it without asking its controller).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.common import deadline_passed, whole_request_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state.elections import PREFERRED, UNCLEAN, elect_leader

API_KEY = 43
# A refusal of the whole request (no CLUSTER ALTER): at the top level (v1+) and on each
# partition, with no message where Kafka's is the error's default.
ERROR_PLACEMENT = Placement(per_topic(
    "topic_partitions", "replica_election_results", "topic", partitions=per_partition(
        "partitions", "partition_result", "", "partition_id",
        error_fields={"error_message": None})), whole_on_both=True)
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if request.topic_partitions == []:  # answered by the broker, never sent to its controller
        return {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": []}
    if deadline_passed(request.timeout_ms):
        return whole_request_error(API_KEY, request, ctx, "REQUEST_TIMED_OUT")
    election_type = request.election_type if ctx.version >= 1 else PREFERRED
    if election_type not in (PREFERRED, UNCLEAN) and request.topic_partitions != []:
        return {"throttle_time_ms": 0, "error_code": error_code("INVALID_REQUEST"),
                "replica_election_results": [
                    {"topic": t.topic, "partition_result": [
                        {"partition_id": p, "error_code": error_code("INVALID_REQUEST"),
                         "error_message": f"Unknown election type {election_type}"}
                        for p in t.partitions]}
                    for t in request.topic_partitions or ()]}
    every = request.topic_partitions is None
    wanted = ([(name, [p.index for p in topic.partitions])
               for name, topic in ctx.cluster.topics.items()] if every
              else [(t.topic, list(t.partitions)) for t in request.topic_partitions])
    results = []
    for topic, partitions in wanted:
        answered = []
        for index in partitions:
            outcome = elect_leader(ctx.cluster, topic, index, election_type)
            if every and outcome.error == "ELECTION_NOT_NEEDED":
                continue
            answered.append({"partition_id": index, "error_code": error_code(outcome.error),
                             "error_message": outcome.message})
        results.append({"topic": topic, "partition_result": answered})
    ctx.cluster.notify_append()  # parked fetches of a partition whose leader moved answer now
    return {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": results}
