"""DescribeCluster (key 60): cluster id, controller and brokers (the AdminClient's view).

Versions: 0-1 (3.9), 2 (4.x). Flexible from v0.

Behavior: lists the live brokers; v2 marks no broker fenced. From v1 endpoint_type must be 1
(brokers): 2 (controllers) gets MISMATCHED_ENDPOINT_TYPE, any other UNSUPPORTED_ENDPOINT_TYPE,
each with Kafka's message, an empty cluster id, controller -1, no brokers and no authorized
operations (measured on Kafka 4.4, v1 and v2). Asked for them,
the cluster's authorized operations are every cluster operation with no authorizer; with
one, those the principal may do (0 without DESCRIBE on the cluster), as Kafka answers.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.common import CLUSTER_OPERATIONS, broker_entries
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.acls import CLUSTER_NAME

API_KEY = 60
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (in_handler("the cluster's authorized operations, asked for"),)
BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if ctx.version >= 1 and request.endpoint_type != BROKERS_ENDPOINT:
        return refused(request.endpoint_type)
    body: dict[str, Any] = {"throttle_time_ms": 0, "endpoint_type": BROKERS_ENDPOINT,
                            "cluster_id": ctx.cluster.cluster_id,
                            "controller_id": ctx.cluster.controller_id,
                            "brokers": broker_entries(ctx), "error_code": 0}
    if request.include_cluster_authorized_operations:
        body["cluster_authorized_operations"] = ctx.authorized_operations(
            "CLUSTER", CLUSTER_NAME, CLUSTER_OPERATIONS) if ctx.allowed(
            "DESCRIBE", "CLUSTER", CLUSTER_NAME) else 0
    return body


def refused(endpoint_type: int) -> dict[str, Any]:
    """Kafka's answer to a DescribeCluster for endpoints other than brokers'."""
    if endpoint_type == CONTROLLERS_ENDPOINT:
        error, message = "MISMATCHED_ENDPOINT_TYPE", (
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
            "type CONTROLLER")
    else:
        error, message = "UNSUPPORTED_ENDPOINT_TYPE", f"Unsupported endpoint type {endpoint_type}"
    return {"throttle_time_ms": 0, "error_code": error_code(error), "error_message": message,
            "endpoint_type": BROKERS_ENDPOINT, "cluster_id": "", "controller_id": -1,
            "brokers": []}
