"""CreatePartitions (key 37): grow a topic's partition count.

Versions: 0-3. Flexible from v2.

Behavior: INVALID_PARTITIONS unless the new count is larger than the current one;
UNKNOWN_TOPIC_OR_PARTITION for an unknown topic (without a message, as Kafka answers);
INVALID_REPLICA_ASSIGNMENT for assignments that do not match the new partitions or name
unknown brokers; validate_only changes nothing. Messages are Kafka's controller's.

A name the request gives twice is answered once, first, INVALID_REQUEST "Duplicate topic
name.", and left out. Kafka's controller adds at most 10,000 partitions in one request
(``MAX_PARTITIONS_PER_BATCH``), summed over the topics it is asked to grow (each named once,
each the principal may ALTER: the refused ones never reach it) that exist and would grow;
past that, each of them gets POLICY_VIOLATION "Excessively large number of additional
partitions per request.", validate_only too, nothing is added and no quota charged (measured
on Kafka 4.4: an unknown topic, or one not growing, counts nothing and is answered so too).

The client's ``controller_mutation_rate`` (KIP-599; ``fakebroker.api.throttling``) is charged
the partitions added, validate_only too, once the count is checked (before the assignments'
brokers, as Kafka's controller): from v3 a topic asked while the quota's bucket is below zero
gets THROTTLING_QUOTA_EXCEEDED (no message) and the answer the time until it is back at zero;
below v3 the partitions are added and the answer throttled by the overdraft.

A timeout of 0 or less is past the controller's deadline: the whole request
REQUEST_TIMED_OUT, nothing applied (``fakebroker.api.common.deadline_passed``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.common import deadline_passed, whole_request_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.api.throttling import mutation_quota
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.cluster import MAX_PARTITIONS_PER_BATCH, Cluster

API_KEY = 37
ERROR_PLACEMENT = Placement(per_topic("topics", "results"))
AUTHORIZES = (topics("ALTER"),)
TOO_MANY_PARTITIONS = "Excessively large number of additional partitions per request."


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if deadline_passed(request.timeout_ms):
        return whole_request_error(API_KEY, request, ctx, "REQUEST_TIMED_OUT")
    counts = Counter(t.name for t in request.topics)
    results = [{"name": name, "error_code": error_code("INVALID_REQUEST"),
                "error_message": "Duplicate topic name."}
               for name, count in counts.items() if count > 1]
    asked = [t for t in request.topics if counts[t.name] == 1]
    if added(ctx.cluster, asked) > MAX_PARTITIONS_PER_BATCH:
        return {"throttle_time_ms": 0, "results": results + [
            {"name": t.name, "error_code": error_code("POLICY_VIOLATION"),
             "error_message": TOO_MANY_PARTITIONS} for t in asked]}
    quota = mutation_quota(ctx, strict_since=3)
    for wanted in asked:
        assignments = (None if wanted.assignments is None
                       else [list(a.broker_ids) for a in wanted.assignments])
        try:
            ctx.cluster.create_partitions(wanted.name, wanted.count, assignments,
                                          request.validate_only,
                                          None if quota is None else quota.admit)
            results.append({"name": wanted.name, "error_code": 0})
        except ClusterError as exc:
            unknown = exc.error == "UNKNOWN_TOPIC_OR_PARTITION"
            results.append({"name": wanted.name, "error_code": exc.code,
                            "error_message": None if unknown else exc.message})
    return {"throttle_time_ms": quota.throttle_ms if quota else 0, "results": results}


def added(cluster: Cluster, asked: list[Any]) -> int:
    """The partitions the topic entries ``asked`` would add together, as Kafka's controller
    bounds them: unknown topics and counts that are no increase add nothing."""
    total = 0
    for wanted in asked:
        topic = cluster.topics.get(wanted.name)
        if topic is not None:
            total += max(wanted.count - len(topic.partitions), 0)
    return total
