"""CreatePartitions (key 37): grow a topic's partition count.

Versions: 0-3. Flexible from v2.

Behavior: INVALID_PARTITIONS unless the new count is larger than the current one;
UNKNOWN_TOPIC_OR_PARTITION for an unknown topic (without a message, as Kafka answers);
INVALID_REPLICA_ASSIGNMENT for assignments that do not match the new partitions or name
unknown brokers; validate_only changes nothing. Messages are Kafka's controller's.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 37
ERROR_PLACEMENT = Placement(per_topic("topics", "results"))
AUTHORIZES = (topics("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    results = []
    for wanted in request.topics:
        assignments = (None if wanted.assignments is None
                       else [list(a.broker_ids) for a in wanted.assignments])
        try:
            ctx.cluster.create_partitions(wanted.name, wanted.count, assignments,
                                          request.validate_only)
            results.append({"name": wanted.name, "error_code": 0})
        except ClusterError as exc:
            unknown = exc.error == "UNKNOWN_TOPIC_OR_PARTITION"
            results.append({"name": wanted.name, "error_code": error_code(exc.error),
                            "error_message": None if unknown else str(exc)})
    return {"throttle_time_ms": 0, "results": results}
