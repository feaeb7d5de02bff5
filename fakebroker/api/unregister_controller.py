"""UnregisterController (key 94): take a controller's registration out of the metadata.

Versions: 0 (4.x). Flexible from v0.

Behavior, as a combined-mode Kafka 4.4 node answers it on its client listener
(``ClusterControlManager.unregisterController``), measured: every broker of the fake is a
combined-mode node, so a controller too (``describe_quorum``).
* The active controller (Metadata's ``controller_id``): INVALID_REQUEST, "Controller cannot
  unregister itself while it is active."
* Another controller of the cluster: NONE, with an empty message (its registration is not
  shown anywhere a client reads).
* Any other id: CONTROLLER_ID_NOT_REGISTERED, "Controller ID N is not currently registered."
* ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code

API_KEY = 94
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    controller = request.controller_id
    if controller not in ctx.cluster.brokers:
        return refused("CONTROLLER_ID_NOT_REGISTERED",
                       f"Controller ID {controller} is not currently registered.")
    if controller == ctx.cluster.controller_id:
        return refused("INVALID_REQUEST",
                       "Controller cannot unregister itself while it is active.")
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": ""}


def refused(error: str, message: str) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": error_code(error), "error_message": message}
