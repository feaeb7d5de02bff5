"""DescribeClientQuotas (key 48): the client quotas set, found by a filter.

Versions: 0-1. Flexible from v1.

Behavior, as Kafka 4.4's ``ClientQuotasImage.describe``: each filter component names an entity
type (``user``, ``client-id``, ``ip``) and a match: exact (0, a name), default (1, the type's
default entity) or specified (2, any name, the default included). An entity matches when it
has every component's type, matched; with ``strict``, when it has no other type (so a strict
empty filter matches nothing, a lax one everything). A filter Kafka refuses is answered with
the error at the top level, its message, and null entries: INVALID_REQUEST for an empty type,
a type named twice, a match string missing or given where it does not belong, an unknown match
type, ip beside user or client-id; UNSUPPORTED_VERSION ("Unsupported entity type group") for
another type. An entity lists its types client-id, user, ip, as Kafka's answers do; the
top-level error message is "" when there is no error. DESCRIBE_CONFIGS on the cluster, else
CLUSTER_AUTHORIZATION_FAILED at the top level with no message and null entries.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.quotas import QuotaError

API_KEY = 48
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("DESCRIBE_CONFIGS"),)


def refused_answer(request: Any, version: int, error: str) -> dict[str, Any]:
    """Kafka's DescribeClientQuotasRequest.getErrorResponse: the error at the top, no
    message (ApiError drops an error's default one), null entries."""
    return {"throttle_time_ms": 0, "error_code": error_code(error), "error_message": None,
            "entries": None}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        found = ctx.cluster.quotas.describe(components, request.strict)
    except QuotaError as refusal:
        return {"throttle_time_ms": 0, "error_code": error_code(refusal.error),
                "error_message": refusal.message, "entries": None}
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "entries": [
        {"entity": [{"entity_type": kind, "entity_name": name} for kind, name in entity],
         "values": [{"key": key, "value": value} for key, value in values.items()]}
        for entity, values in found]}
