"""DeleteTopics (key 20): delete topics by name (v0-5) or by name or id (v6).

Versions: 0-6 (3.9; 4.x keeps 1-6). Flexible from v4.

Behavior: UNKNOWN_TOPIC_OR_PARTITION for an unknown name, UNKNOWN_TOPIC_ID for an unknown id,
each with Kafka's message (v5+); INVALID_REQUEST for a name given twice (every version: Kafka's
controller checks the names of all), and in v6 for an entry with neither a name nor an id, or
with both, and for an id given twice. The topic's log and producer state
go with it. Kafka shuffles the answers on purpose; here they keep the request's order.

The client's ``controller_mutation_rate`` (KIP-599; ``fakebroker.api.throttling``) is charged
each topic's partitions once the topic is found: from v5 a topic asked while the quota's
bucket is below zero gets THROTTLING_QUOTA_EXCEEDED (no message) and stays, and the answer the
time until the bucket is back at zero; below v5 every topic goes and the answer is throttled
by the overdraft.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.common import resolve_topic
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, by_version, per_topic
from fakebroker.api.throttling import mutation_quota
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_code

API_KEY = 20
ERROR_PLACEMENT = Placement(by_version({
    0: per_topic("topic_names", "responses", "", "name"),  # the entries are names
    6: per_topic("topics", "responses"),
}))
AUTHORIZES = (topics("DELETE", unless_cluster="DELETE"),)


UNKNOWN_NAME = "This server does not host this topic-partition."
UNKNOWN_ID = "This server does not host this topic ID."


def refusal(name: str | None, topic_id: Any, counts: Counter[Any]) -> str | None:
    """Why Kafka refuses an entry before looking the topic up, or None (before v6, whose
    entries are names, only a name given twice)."""
    if name is None and topic_id == ZERO_UUID:
        return "Neither topic name nor id were specified."
    if name is not None and topic_id != ZERO_UUID:
        return "You may not specify both topic name and topic id."
    if counts[name if topic_id == ZERO_UUID else topic_id] > 1:
        return f"Duplicate topic {'name' if topic_id == ZERO_UUID else 'id'}."
    return None


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    wanted = ([(t.name, t.topic_id) for t in request.topics] if ctx.version >= 6
              else [(name, ZERO_UUID) for name in request.topic_names])
    counts = Counter(name if topic_id == ZERO_UUID else topic_id for name, topic_id in wanted)
    responses = []
    quota = mutation_quota(ctx, strict_since=5)
    for name, topic_id in wanted:
        refused = refusal(name, topic_id, counts)
        if refused is not None:
            responses.append({"name": name, "topic_id": topic_id,
                              "error_code": error_code("INVALID_REQUEST"),
                              "error_message": refused})
            continue
        topic = resolve_topic(ctx, name, topic_id)
        if topic is None:
            by_id = topic_id != ZERO_UUID
            responses.append({"name": name, "topic_id": topic_id, "error_code": error_code(
                "UNKNOWN_TOPIC_ID" if by_id else "UNKNOWN_TOPIC_OR_PARTITION"),
                "error_message": UNKNOWN_ID if by_id else UNKNOWN_NAME})
            continue
        if quota is not None and not quota.admit(len(topic.partitions)):
            responses.append({"name": topic.name, "topic_id": topic.id, "error_message": None,
                              "error_code": error_code("THROTTLING_QUOTA_EXCEEDED")})
            continue
        ctx.cluster.delete_topic(topic.name)
        ctx.cluster.producers.forget_partition(topic.name)
        responses.append({"name": topic.name, "topic_id": topic.id, "error_code": 0})
    return {"throttle_time_ms": quota.throttle_ms if quota else 0, "responses": responses}
