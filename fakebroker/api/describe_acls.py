"""DescribeAcls (key 29): the ACL bindings a filter matches, grouped by resource pattern.

Versions: 0-3 (3.9; 4.x serves 1-3). Flexible from v2.

Behavior:
* With no authorizer (the ``authorizer`` setting off): SECURITY_DISABLED, "No Authorizer is
  configured on the broker", as Kafka answers, once the request parsed (a code of 0, UNKNOWN's
  own, closes the connection first, with or without an authorizer: measured).
* The principal needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
* The filter selects as Kafka's ``AclBindingFilter``: a null name, principal or host and the
  code ANY match anything; pattern type MATCH with a name selects every ACL that applies to
  that name (literal, the wildcard ``*``, prefixes). v0 reads ANY as LITERAL (and refuses
  other pattern types); a code Kafka does not know closes the connection.
* The bindings come grouped by resource pattern, in the order the patterns were first used
  (Kafka's order is its hash map's: clients must not rely on it).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.acl_requests import FILTER_CODES, authorizing, filter_of, refuse_unknown
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.acls import OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES

API_KEY = 29
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("DESCRIBE"),)
NO_AUTHORIZER = "No Authorizer is configured on the broker"  # Kafka's message


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    refuse_unknown([request], FILTER_CODES, "DescribeAclsRequest")
    if not authorizing(ctx):
        return {"throttle_time_ms": 0, "error_code": error_code("SECURITY_DISABLED"),
                "error_message": NO_AUTHORIZER, "resources": []}
    selecting = filter_of(request, ctx.version, "DescribeAclsRequest")
    resources: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for acl in ctx.cluster.acls.describe(selecting):
        resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
            {"principal": acl.principal, "host": acl.host,
             "operation": OPERATIONS[acl.operation],
             "permission_type": PERMISSIONS[acl.permission]})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "resources": [
        {"resource_type": RESOURCE_TYPES[resource_type], "resource_name": name,
         "pattern_type": PATTERN_TYPES[pattern_type], "acls": acls}
        for (resource_type, name, pattern_type), acls in resources.items()]}
