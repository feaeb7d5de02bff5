"""CreateAcls (key 30): add ACL bindings to the authorizer's ACLs.

Versions: 0-3 (3.9; 4.x serves 1-3). Flexible from v2.

Behavior:
* With no authorizer (the ``authorizer`` setting off) every creation gets SECURITY_DISABLED,
  "No Authorizer is configured.", as Kafka answers, once the request parsed (a code of 0,
  UNKNOWN's own, closes the connection first, with or without an authorizer: measured).
* The principal needs ALTER on the cluster, else every creation gets
  CLUSTER_AUTHORIZATION_FAILED.
* A creation with resource type ANY, pattern type ANY or MATCH, operation ANY or permission
  ANY fails the whole request: every creation gets UNKNOWN_SERVER_ERROR without a message
  (Kafka's ``AclBinding`` refuses to be built); a code Kafka does not know (UNKNOWN), or a
  non-literal pattern at v0, closes the connection (its request parsing fails).
* Each creation is checked as Kafka's AclApis and controller check it: INVALID_REQUEST "The
  only valid name for the CLUSTER resource is kafka-cluster", "Invalid empty resource name",
  "Could not parse principal from `alice` (no colon ...)"; the others are created (creating
  an existing ACL succeeds and changes nothing).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.acl_requests import (
    CREATION_CODES,
    NO_AUTHORIZER,
    acl_of,
    authorizing,
    refuse_unknown,
)
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import error_code
from fakebroker.state.acls import AclError

API_KEY = 30
ERROR_PLACEMENT = Placement(each=("creations", "results"))
AUTHORIZES = (cluster("ALTER"),)
UNBUILDABLE = {"resource_type": {"ANY"}, "pattern_type": {"ANY", "MATCH"},
               "operation": {"ANY"}, "permission": {"ANY"}}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    creations = request.creations
    refuse_unknown(creations, CREATION_CODES, "CreatableAcls")
    if not authorizing(ctx):
        return every(creations, "SECURITY_DISABLED", NO_AUTHORIZER)
    acls = [acl_of(creation) for creation in creations]
    if ctx.version == 0 and any(acl.pattern_type != "LITERAL" for acl in acls):
        raise ConnectionClosed("malformed request: version 0 only supports literal resource "
                               "pattern types")
    if any(getattr(acl, name) in refused for acl in acls
           for name, refused in UNBUILDABLE.items()):
        return every(creations, "UNKNOWN_SERVER_ERROR", None)
    results = []
    for acl in acls:
        try:
            ctx.cluster.acls.create(acl)
            results.append({"error_code": 0, "error_message": ""})  # as Kafka
        except AclError as exc:
            results.append({"error_code": error_code("INVALID_REQUEST"),
                            "error_message": str(exc)})
    return {"throttle_time_ms": 0, "results": results}


def every(creations: Any, error: str, message: str | None) -> dict[str, Any]:
    """The answer giving every creation ``error``."""
    return {"throttle_time_ms": 0, "results": [
        {"error_code": error_code(error), "error_message": message} for _ in creations]}
