"""AlterReplicaLogDirs (key 34): move replicas between a broker's log directories.

Versions: 0-2. Flexible from v2.

Behavior, as Kafka's ReplicaManager.alterReplicaLogDirs answers on a broker with one log
directory (``fakebroker.state.log_dir``): per partition, in this order, INVALID_TOPIC_EXCEPTION
when its future directory's name would pass 255 characters (KAFKA-4893), LOG_DIR_NOT_FOUND for
a path other than the broker's directory, UNKNOWN_TOPIC_OR_PARTITION for a partition that does
not exist, REPLICA_NOT_AVAILABLE for one this broker holds no replica of, else no error (it is
already there: nothing moves). A partition named twice is answered once, for its last
directory. ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every partition; a fault
rule's whole-request error goes on every partition too (``refused_answer``: the answer has no
top-level error).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state import log_dir

API_KEY = 34
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)
# A future log's directory name: "<topic>-<partition>.<32 hex digits>-future".
FUTURE_SUFFIX = len(".") + 32 + len("-future")
MAX_DIR_NAME = 255


def refused_answer(request: Any, version: int, error: str) -> dict[str, Any]:
    """Kafka's AlterReplicaLogDirsRequest.getErrorResponse: the error on every partition (the
    authorizer's refusal, a fault rule's whole-request error)."""
    return {"throttle_time_ms": 0, "results": [
        {"topic_name": t.name, "partitions": [
            {"partition_index": index, "error_code": error_code(error)}
            for index in t.partitions]}
        for d in request.dirs for t in d.topics]}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    destinations = {(t.name, index): d.path
                    for d in request.dirs for t in d.topics for index in t.partitions}
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), path in destinations.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": index, "error_code": error_code(check(ctx, topic, index, path))})
    return {"throttle_time_ms": 0, "results": [
        {"topic_name": topic, "partitions": partitions}
        for topic, partitions in by_topic.items()]}


def check(ctx: RequestContext, topic: str, index: int, path: str) -> str:
    """The error of moving ``topic``-``index`` to ``path`` on this broker."""
    if len(f"{topic}-{index}") + FUTURE_SUFFIX > MAX_DIR_NAME:
        return "INVALID_TOPIC_EXCEPTION"
    if path != log_dir.PATH:
        return "LOG_DIR_NOT_FOUND"
    partition = ctx.cluster.partition(topic, index)
    if partition is None:
        return "UNKNOWN_TOPIC_OR_PARTITION"
    if ctx.broker.id not in partition.replicas:
        return "REPLICA_NOT_AVAILABLE"
    return "NONE"
