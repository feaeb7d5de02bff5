"""FindCoordinator (key 10): which broker coordinates a group or transactional id.

Versions: 0-6. Flexible from v3; v4+ looks up a batch of keys (coordinator_keys).

Behavior: a key maps to a broker deterministically (or where it was moved); key type 0 is a
group, 1 a transactional id, others get INVALID_REQUEST. A coordinator on a broker that is
down answers COORDINATOR_NOT_AVAILABLE. The empty key is a key like any (Kafka 4.4 finds its
coordinator). A found coordinator's error message is "NONE" in v1-3 and "" in v4+, as Kafka
writes them. The coordinator is named at its listener of the request's connection (a client
stays on the listener it came on).

The first key of a type makes its coordinator's topic, as Kafka does: ``__consumer_offsets``
for a group, ``__transaction_state`` for a transactional id (50 partitions each, internal,
with Kafka's configs: ``Cluster.coordinator_topic``). Kafka answers that first request
COORDINATOR_NOT_AVAILABLE while it makes the topic (clients retry); the fake answers it at
once (tests/conformance/known.toml, "coordinator-topic-made-at-once").
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, transactional_ids
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Keys, Placement, by_version, per_group
from fakebroker.protocol.errors import error_code
from fakebroker.state.cluster import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC

API_KEY = 10
GROUP, TRANSACTION = 0, 1
# Each key type's coordinator topic, made on the first look-up of a key of that type.
COORDINATOR_TOPICS = {GROUP: OFFSETS_TOPIC, TRANSACTION: TRANSACTION_STATE_TOPIC}
NO_COORDINATOR = {"node_id": -1, "host": "", "port": -1}  # beside an error
ERROR_PLACEMENT = Placement(
    by_version({0: None,  # v0-3 (one key): at the top level
                4: per_group("coordinator_keys", "coordinators", "key",
                             error_fields=NO_COORDINATOR)}),
    top_fields=NO_COORDINATOR,
    keys=Keys(("key", "coordinator_keys"), "key_type", groups=GROUP,
              transactional_ids=TRANSACTION))
AUTHORIZES = (groups("DESCRIBE"), transactional_ids("DESCRIBE"))


def locate(ctx: RequestContext, key: str, key_type: int) -> dict[str, Any]:
    if key_type not in (GROUP, TRANSACTION):
        return dict(NO_COORDINATOR, key=key, error_code=error_code("INVALID_REQUEST"),
                    error_message="Invalid coordinator key")
    ctx.cluster.coordinator_topic(COORDINATOR_TOPICS[key_type])
    broker = ctx.cluster.brokers[ctx.cluster.coordinator_of(key)]
    if not broker.up:
        return dict(NO_COORDINATOR, key=key, error_code=error_code("COORDINATOR_NOT_AVAILABLE"),
                    error_message=None)
    return {"key": key, "error_code": 0, "node_id": broker.id, "host": broker.host,
            "port": broker.endpoints[ctx.listener],
            "error_message": "" if ctx.version >= 4 else "NONE"}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if ctx.version >= 4:
        return {"throttle_time_ms": 0,
                "coordinators": [locate(ctx, k, request.key_type)
                                 for k in request.coordinator_keys]}
    answer = locate(ctx, request.key, request.key_type)
    answer["throttle_time_ms"] = 0
    return answer
