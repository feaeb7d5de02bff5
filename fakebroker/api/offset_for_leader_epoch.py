"""OffsetForLeaderEpoch (key 23): where a leader epoch ends, for log truncation detection.

Versions: 0-4 (3.9; 4.x keeps 2-4). Flexible from v4.

Behavior:
* Answers from the partition's epoch history as Kafka's leader epoch cache does: the current
  epoch ends at the log end offset; an older epoch ends where the next known epoch begins,
  reported with the largest known epoch <= the requested one; an unknown newer epoch gives
  epoch -1 and offset -1.
* Leader-only (consumers send replica_id -1): NOT_LEADER_OR_FOLLOWER elsewhere;
  FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a stale or future current_leader_epoch.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic

API_KEY = 23
# A partition's answer for an epoch it does not know (and beside an error).
UNDEFINED_EPOCH = {"leader_epoch": -1, "end_offset": -1}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", "topic", partitions=per_partition(
    "partitions", "partitions", "partition", error_fields=UNDEFINED_EPOCH)))
AUTHORIZES = (topics("DESCRIBE", unless_cluster="CLUSTER_ACTION"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    topics = []
    for wanted in request.topics:
        topic = ctx.cluster.topics.get(wanted.topic)
        results = []
        for p in wanted.partitions:
            partition = (topic.partitions[p.partition]
                         if topic is not None and 0 <= p.partition < len(topic.partitions)
                         else None)
            error = ctx.leader_check(partition)
            if partition is not None and not error:
                error = ctx.epoch_check(partition, p.current_leader_epoch)
            result = dict(UNDEFINED_EPOCH, error_code=error, partition=p.partition)
            if not error and partition is not None:
                epoch, end = partition.log.epoch_end_offset(p.leader_epoch)
                result.update(leader_epoch=epoch, end_offset=end)
            results.append(result)
        topics.append({"topic": wanted.topic, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}
