"""DeleteTopics (key 20): delete topics by name (v0-5) or by name or id (v6).

Versions: 0-6 (3.9; 4.x keeps 1-6). Flexible from v4.

Behavior: UNKNOWN_TOPIC_OR_PARTITION for an unknown name, UNKNOWN_TOPIC_ID for an unknown id;
the topic's log and producer state go with it.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.common import resolve_topic
from fakebroker.api.context import RequestContext
from fakebroker.faults.shapes import Placement, by_version, per_topic
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_code

API_KEY = 20
ERROR_PLACEMENT = Placement(by_version({
    0: per_topic("topic_names", "responses", "", "name"),  # the entries are names
    6: per_topic("topics", "responses"),
}))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    wanted = ([(t.name, t.topic_id) for t in request.topics] if ctx.version >= 6
              else [(name, ZERO_UUID) for name in request.topic_names])
    responses = []
    for name, topic_id in wanted:
        topic = resolve_topic(ctx, name, topic_id)
        if topic is None:
            error = "UNKNOWN_TOPIC_ID" if topic_id != ZERO_UUID else "UNKNOWN_TOPIC_OR_PARTITION"
            responses.append({"name": name, "topic_id": topic_id,
                              "error_code": error_code(error)})
            continue
        ctx.cluster.delete_topic(topic.name)
        ctx.cluster.producers.forget_partition(topic.name)
        responses.append({"name": topic.name, "topic_id": topic.id, "error_code": 0})
    return {"throttle_time_ms": 0, "responses": responses}
