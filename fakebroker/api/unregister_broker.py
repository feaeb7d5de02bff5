"""UnregisterBroker (key 64): take a broker's registration out of the cluster's metadata.

Versions: 0 (4.x). Flexible from v0.

Behavior, as a combined-mode Kafka 4.4 node answers it on its client listener (the broker
forwards it to its controller; ``ClusterControlManager.unregisterBroker``), measured:
* A broker id the cluster has: NONE, with an empty message. Kafka then drops the broker from
  its metadata until it restarts (its heartbeats get STALE_BROKER_EPOCH: a single node lists
  no brokers and no leaders any more); the fake answers NONE and keeps the broker (see
  tests/conformance/known.toml, "unregister-live-broker").
* Any other id: BROKER_ID_NOT_REGISTERED, "Broker ID N is not currently registered".
* ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code

API_KEY = 64
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if request.broker_id not in ctx.cluster.brokers:
        return {"throttle_time_ms": 0, "error_code": error_code("BROKER_ID_NOT_REGISTERED"),
                "error_message": f"Broker ID {request.broker_id} is not currently registered"}
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": ""}
