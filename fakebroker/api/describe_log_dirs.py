"""DescribeLogDirs (key 35): a broker's log directories and the partitions in each.

Versions: 0-5 (4.x; 0-4 in 3.9). Flexible from v2.

Behavior: every broker answers as a Kafka broker with one log directory (``/tmp/kafka-logs``,
``fakebroker.state.log_dir``), online, its total and usable bytes (v4+) those of the host's
temporary file system, not cordoned (v5). Listed: the partitions this broker holds a replica
of (all of them for null topics, else those named; one it does not hold is left out, and a
topic with none left), each with its size (its segments' bytes: records DeleteRecords
dropped count until retention deletes their segment, as on Kafka), offset lag 0 and not a
future replica. DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top (v3+)
and no directory.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.state import log_dir

API_KEY = 35
ERROR_PLACEMENT = Placement(top_fields={"results": ()})
AUTHORIZES = (cluster("DESCRIBE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    wanted = None if request.topics is None else {
        (t.topic, index) for t in request.topics for index in t.partitions}
    topics = []
    for topic in sorted(ctx.cluster.topics.values(), key=lambda t: t.name):
        partitions = [{"partition_index": p.index, "partition_size": log_dir.size(p.log),
                       "offset_lag": 0, "is_future_key": False}
                      for p in topic.partitions if ctx.broker.id in p.replicas
                      and (wanted is None or (topic.name, p.index) in wanted)]
        if partitions:
            topics.append({"name": topic.name, "partitions": partitions})
    total, usable = log_dir.space()
    return {"throttle_time_ms": 0, "error_code": 0, "results": [{
        "error_code": 0, "log_dir": log_dir.PATH, "topics": topics,
        "total_bytes": total, "usable_bytes": usable, "is_cordoned": False}]}
