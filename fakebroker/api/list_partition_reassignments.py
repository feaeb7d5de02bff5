"""ListPartitionReassignments (key 46): the reassignments in progress.

Versions: 0. Flexible from v0.

Behavior (Kafka's ``ReplicationControlManager.listPartitionReassignments``): each partition
being reassigned with its replicas (the target's, then those being removed), its adding and
its removing replicas. A null topic list: every partition being reassigned; named topics: the
named partitions among them (unknown topics and partitions are left out, no error). The fake
completes a reassignment at once, so only one waiting for a broker that is down is listed.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.state.cluster import Partition
from fakebroker.state.elections import in_progress

API_KEY = 46
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("DESCRIBE"),)


def _listed(partition: Partition) -> dict[str, Any]:
    return {"partition_index": partition.index, "replicas": list(partition.replicas),
            "adding_replicas": list(partition.adding_replicas),
            "removing_replicas": list(partition.removing_replicas)}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if request.topics is None:
        wanted = [(t, [p.index for p in t.partitions]) for t in ctx.cluster.topics.values()]
    else:
        wanted = [(ctx.cluster.topics[t.name], list(t.partition_indexes))
                  for t in request.topics if t.name in ctx.cluster.topics]
    topics = []
    for topic, indexes in wanted:
        listed = [_listed(topic.partitions[i]) for i in indexes
                  if 0 <= i < len(topic.partitions) and in_progress(topic.partitions[i])]
        if listed:
            topics.append({"name": topic.name, "partitions": listed})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": topics}
