"""AlterPartitionReassignments (key 45): move partitions' replicas to other brokers, or cancel.

Versions: 0-1 (v1: allow_replication_factor_change). Flexible from v0.

Behavior (Kafka's ``ReplicationControlManager.alterPartitionReassignments``;
``fakebroker.state.elections``):
* A partition's target replicas are checked as Kafka checks a manual assignment:
  INVALID_REPLICA_ASSIGNMENT for an empty list, a broker that does not exist or one named
  twice, with Kafka's messages. Then, with allow_replication_factor_change false (v1), a
  target of another size gets INVALID_REPLICATION_FACTOR ("The replication factor is changed
  from 1 to 2", Kafka 4.4's ``validatePartitionReplicationFactorUnchanged``).
* The reassignment completes at once (every live target replica is in sync at once: the
  fake's replicas share one log); one naming a broker that is down stays in progress until the
  broker is back. The leader stays where it is if it remains a replica, else the first live
  target replica leads; the leader epoch bumps when the leader changes or replicas are
  removed, parked fetches wake and Metadata shows the new replicas and leader.
* Null replicas cancel the partition's reassignment in progress: NO_REASSIGNMENT_IN_PROGRESS
  when there is none. Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION ("Unable to find
  a topic named T.", "Unable to find partition T:P.").
* A timeout of 0 or less is past the controller's deadline: the whole request
  REQUEST_TIMED_OUT, nothing applied (``fakebroker.api.common.deadline_passed``). A request
  with no topics is answered NONE whatever its timeout, as Kafka's
  ``QuorumController.alterPartitionReassignments`` answers it before it queues anything.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.common import deadline_passed, whole_request_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state.elections import (
    DONE,
    Outcome,
    cancel,
    check_assignment,
    find_partition,
    reassign,
)

API_KEY = 45
# A refusal of the whole request (no CLUSTER ALTER): at the top level and on each partition,
# with no message where Kafka's is the error's default.
ERROR_PLACEMENT = Placement(per_topic("topics", "responses", partitions=per_partition(
    "partitions", "partitions", "partition_index", error_fields={"error_message": None})),
    whole_on_both=True)
AUTHORIZES = (cluster("ALTER"),)


def _alter(ctx: RequestContext, topic: str, index: int, replicas: list[int] | None,
           allow_factor_change: bool) -> Outcome:
    partition, outcome = find_partition(ctx.cluster, topic, index)
    if partition is None:
        return outcome
    if replicas is None:
        return cancel(ctx.cluster, partition)
    outcome = check_assignment(ctx.cluster, replicas)
    if outcome is not DONE:
        return outcome
    # The factor now: that of the reassignment in progress's target, if there is one.
    current = [r for r in partition.replicas if r not in partition.removing_replicas]
    if not allow_factor_change and len(replicas) != len(current):
        return Outcome("INVALID_REPLICATION_FACTOR",
                       f"The replication factor is changed from {len(current)} to "
                       f"{len(replicas)}")
    reassign(ctx.cluster, partition, list(replicas))
    return DONE


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if request.topics and deadline_passed(request.timeout_ms):
        return whole_request_error(API_KEY, request, ctx, "REQUEST_TIMED_OUT")
    allow = request.allow_replication_factor_change if ctx.version >= 1 else True
    responses = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            replicas = None if p.replicas is None else list(p.replicas)
            outcome = _alter(ctx, topic.name, p.partition_index, replicas, allow)
            partitions.append({"partition_index": p.partition_index,
                               "error_code": error_code(outcome.error),
                               "error_message": outcome.message})
        responses.append({"name": topic.name, "partitions": partitions})
    ctx.cluster.notify_append()  # parked fetches of a partition whose leader moved answer now
    return {"throttle_time_ms": 0, "allow_replication_factor_change": allow, "error_code": 0,
            "error_message": None, "responses": responses}
