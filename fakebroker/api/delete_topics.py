"""DeleteTopics (key 20): delete topics by name (v0-5) or by name or id (v6).

Versions: 0-6 (3.9; 4.x keeps 1-6). Flexible from v4.

Behavior: UNKNOWN_TOPIC_OR_PARTITION for an unknown name, UNKNOWN_TOPIC_ID for an unknown id,
each with Kafka's message (v5+); v6 answers INVALID_REQUEST for an entry with neither a name
nor an id, or with both; and every version a name (or id) given twice INVALID_REQUEST, answered
once and not deleted (``ControllerApis.deleteTopics``). The topic's log and producer state
go with it. Kafka shuffles the answers on purpose; here they keep the request's order.

A timeout of 0 or less is past the controller's deadline: every entry REQUEST_TIMED_OUT,
nothing deleted (``fakebroker.api.common.deadline_passed``), once an entry is left to look up
(a request whose every entry is refused is answered at once, with its refusals: measured on
Kafka 4.4).

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
from fakebroker.api.common import deadline_passed, resolve_topic
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
    """Why Kafka refuses an entry before looking the topic up, or None."""
    if name is None and topic_id == ZERO_UUID:
        return "Neither topic name nor id were specified."
    if name is not None and topic_id != ZERO_UUID:
        return "You may not specify both topic name and topic id."
    if counts[key_of(name, topic_id)] > 1:
        return f"Duplicate topic {'name' if topic_id == ZERO_UUID else 'id'}."
    return None


def key_of(name: str | None, topic_id: Any) -> Any:
    """What an entry names the topic by: its id, or else its name."""
    return name if topic_id == ZERO_UUID else topic_id


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    wanted = ([(t.name, t.topic_id) for t in request.topics] if ctx.version >= 6
              else [(name, ZERO_UUID) for name in request.topic_names])
    counts = Counter(key_of(name, topic_id) for name, topic_id in wanted
                     if (name is None) != (topic_id == ZERO_UUID))
    refusals = [refusal(name, topic_id, counts) for name, topic_id in wanted]
    if None in refusals and deadline_passed(request.timeout_ms):  # as Kafka's getErrorResponse
        return {"throttle_time_ms": 0, "responses": [
            {"name": name, "topic_id": topic_id, "error_message": None,
             "error_code": error_code("REQUEST_TIMED_OUT")} for name, topic_id in wanted]}
    responses = []
    refused_keys: set[Any] = set()  # a duplicate is answered once
    quota = mutation_quota(ctx, strict_since=5)
    for (name, topic_id), refused in zip(wanted, refusals, strict=True):
        if refused is not None and refused.startswith("Duplicate"):
            if key_of(name, topic_id) in refused_keys:
                continue
            refused_keys.add(key_of(name, topic_id))
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
