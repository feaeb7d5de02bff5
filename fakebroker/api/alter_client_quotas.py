"""AlterClientQuotas (key 49): set and remove client quotas, per entity.

Versions: 0-1. Flexible from v1.

Behavior, as Kafka 4.4's controller (``ClientQuotaControlManager``): each entry names an
entity (``user``, ``client-id`` or both, or ``ip``; a null name is the default entity; a type
named twice keeps its last name) and ops: a key and a value, or a removal. One result per
entity, which lists its types client-id, user, ip. INVALID_REQUEST, with Kafka's message, for
an empty entity ("Invalid empty client quota entity"), another type ("Unhandled client quota
entity type: group"), an empty name ("Empty user not supported"), ip beside user or client-id,
an ip that is no address and does not resolve, a key the entity does not take ("Invalid
configuration key ..."; user and client-id take producer_byte_rate, consumer_byte_rate,
request_percentage and controller_mutation_rate, ip connection_creation_rate), a value not
above 0, a fractional or too large byte rate, a key named twice or an entity named twice
("Ignoring duplicate entity ClientQuotaEntity(entries={user=bob})"; the first entry of an
entity named twice is applied all the same, as in Kafka). Removals are not checked; removing
a key not set succeeds. With ``validate_only`` nothing changes. Quotas set here are enforced
(``fakebroker.state.quotas``). ALTER_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED
on every entry (``refused_answer``: the answer has no top-level error).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import MESSAGES, cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.quotas import Entity, entity_of

API_KEY = 49
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER_CONFIGS"),)


def refused_answer(request: Any, version: int, error: str) -> dict[str, Any]:
    """Kafka's AlterClientQuotasRequest.getErrorResponse: the error, with its default
    message, on every entry, its entity as sent."""
    return {"throttle_time_ms": 0, "entries": [
        {"error_code": error_code(error), "error_message": MESSAGES.get(error),
         "entity": [{"entity_type": e.entity_type, "entity_name": e.entity_name}
                    for e in entry.entity]}
        for entry in request.entries]}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    entries = [(entity_of([(e.entity_type, e.entity_name) for e in entry.entity]),
                [(op.key, None if op.remove else op.value) for op in entry.ops])
               for entry in request.entries]
    results = ctx.cluster.quotas.alter(entries, request.validate_only)
    return {"throttle_time_ms": 0, "entries": [
        {"error_code": error_code(refusal.error) if refusal else 0,
         "error_message": refusal.message if refusal else None, "entity": _entity(entity)}
        for entity, refusal in results]}


def _entity(entity: Entity) -> list[dict[str, Any]]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in entity]
