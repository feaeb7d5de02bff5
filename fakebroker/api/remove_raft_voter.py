"""RemoveRaftVoter (key 81): take a voter out of the KRaft metadata quorum (KIP-853).

Versions: 0 (4.x). Flexible from v0.

Behavior, as a combined-mode Kafka 4.4 node answers it on its client listener
(``KafkaRaftClient.handleRemoveVoterRequest``, ``RemoveVoterHandler``), measured; the voters
are the fake's brokers (``describe_quorum``):
* A cluster id other than the cluster's (null names none): INCONSISTENT_CLUSTER_ID,
  'The given id "X" doesn't match the cluster id "Y"'.
* A negative voter id or a zero directory id: INVALID_REQUEST, "Remove voter request didn't
  include a valid voter".
* A voter not in the set (id and directory id), or the last voter (a quorum cannot be left
  empty): VOTER_NOT_FOUND, "Cannot remove voter ReplicaKey(id=N, directoryId=D) from the set
  of voters [ReplicaKey(...), ...]".
* Another voter of a fake of several brokers: NONE; the voter set the fake describes does not
  change (see tests/conformance/known.toml, "raft-voter-changes").
* ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.describe_quorum import (
    directory_id,
    inconsistent_cluster,
    refused,
    replica_key,
    voter_set,
)
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.codec import ZERO_UUID

API_KEY = 81
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    refusal = inconsistent_cluster(ctx, request.cluster_id)
    if refusal is not None:
        return refusal
    voter, directory = request.voter_id, request.voter_directory_id
    if voter < 0 or directory == ZERO_UUID:
        return refused("INVALID_REQUEST", "Remove voter request didn't include a valid voter")
    if (voter not in ctx.cluster.brokers or directory != directory_id(ctx, voter)
            or len(ctx.cluster.brokers) == 1):
        return refused("VOTER_NOT_FOUND", f"Cannot remove voter {replica_key(voter, directory)} "
                                          f"from the set of voters {voter_set(ctx)}")
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": ""}
