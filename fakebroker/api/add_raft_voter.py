"""AddRaftVoter (key 80): add a controller to the KRaft metadata quorum (KIP-853).

Versions: 0-1 (4.x; v1 adds ``ack_when_committed``). Flexible from v0.

Behavior, as a combined-mode Kafka 4.4 node answers it on its client listener
(``KafkaRaftClient.handleAddVoterRequest``, ``AddVoterHandler``), measured; the voters are the
fake's brokers (``describe_quorum``), whose controller listener is named CONTROLLER:
* A cluster id other than the cluster's (null names none): INCONSISTENT_CLUSTER_ID,
  'The given id "X" doesn't match the cluster id "Y"'.
* A negative voter id or a zero directory id: INVALID_REQUEST, "Add voter request didn't
  include a valid voter".
* No CONTROLLER listener among the listeners: INVALID_REQUEST, "Add voter request didn't
  include the endpoint (Endpoints(endpoints={ListenerName(NAME)=HOST/<unresolved>:PORT,
  ...})) for the default listener ListenerName(CONTROLLER)". Listener names are read in
  upper case (Kafka's ``ListenerName.normalised``): "controller" is CONTROLLER, and the
  message names each listener so.
* A voter id already in the set: DUPLICATE_VOTER, "The voter id for ReplicaKey(id=N,
  directoryId=D) is already part of the set of voters [ReplicaKey(...), ...]".
* Otherwise Kafka asks the new controller for its ApiVersions first; the fake has no other
  controller to ask, so it answers as Kafka does when that controller cannot be reached:
  REQUEST_TIMED_OUT, "Aborted add voter operation for since API_VERSIONS returned an error
  BROKER_NOT_AVAILABLE" (Kafka's wording).
* ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.describe_quorum import (
    inconsistent_cluster,
    refused,
    replica_key,
    voter_set,
)
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.codec import ZERO_UUID

API_KEY = 80
CONTROLLER_LISTENER = "CONTROLLER"
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    refusal = inconsistent_cluster(ctx, request.cluster_id)
    if refusal is not None:
        return refusal
    voter, directory = request.voter_id, request.voter_directory_id
    if voter < 0 or directory == ZERO_UUID:
        return refused("INVALID_REQUEST", "Add voter request didn't include a valid voter")
    endpoints = {listener.name.upper(): listener for listener in request.listeners}
    if CONTROLLER_LISTENER not in endpoints:
        endpoints_text = ", ".join(f"ListenerName({name})={listener.host}/<unresolved>:"
                                   f"{listener.port}" for name, listener in endpoints.items())
        return refused("INVALID_REQUEST", "Add voter request didn't include the endpoint "
                       f"(Endpoints(endpoints={{{endpoints_text}}})) for the default listener "
                       f"ListenerName({CONTROLLER_LISTENER})")
    if voter in ctx.cluster.brokers:
        return refused("DUPLICATE_VOTER", f"The voter id for {replica_key(voter, directory)} "
                                          f"is already part of the set of voters "
                                          f"{voter_set(ctx)}.")
    return refused("REQUEST_TIMED_OUT", "Aborted add voter operation for since API_VERSIONS "
                                        "returned an error BROKER_NOT_AVAILABLE")
