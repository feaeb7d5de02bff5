"""DeleteAcls (key 31): remove the ACL bindings each filter matches.

Versions: 0-3 (3.9; 4.x serves 1-3). Flexible from v2.

Behavior:
* With no authorizer (the ``authorizer`` setting off) every filter gets SECURITY_DISABLED,
  "No Authorizer is configured.", as Kafka answers, once the request parsed (a code of 0,
  UNKNOWN's own, closes the connection first, with or without an authorizer: measured).
* The principal needs ALTER on the cluster, else every filter gets
  CLUSTER_AUTHORIZATION_FAILED.
* Filters select as DescribeAcls' filter does (v0: ANY read as LITERAL); every filter is
  matched against the ACLs as they were before the request, so an ACL two filters match is
  listed under both (Kafka's controller deletes atomically); each filter's result lists the
  ACLs it removed, each with error 0.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.acl_requests import (
    FILTER_CODES,
    NO_AUTHORIZER,
    authorizing,
    binding_fields,
    filter_of,
    refuse_unknown,
)
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import error_code

API_KEY = 31
ERROR_PLACEMENT = Placement(each=("filters", "filter_results"))
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    refuse_unknown(request.filters, FILTER_CODES, "Filters")
    if not authorizing(ctx):
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": error_code("SECURITY_DISABLED"), "error_message": NO_AUTHORIZER,
             "matching_acls": []} for _ in request.filters]}
    filters = [filter_of(entry, ctx.version, "Filters") for entry in request.filters]
    deleted = ctx.cluster.acls.delete(filters)
    return {"throttle_time_ms": 0, "filter_results": [
        {"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 0, "error_message": None, **binding_fields(acl)} for acl in acls]}
        for acls in deleted]}
