"""DescribeQuorum (key 55): the KRaft metadata quorum (``__cluster_metadata`` partition 0).

Versions: 0-2 (4.x). Flexible from v0.

Behavior: the fake answers as a cluster of combined-mode KRaft nodes (``process.roles=
broker,controller``, as Kafka 4.4's quickstart runs one): every broker is a voter (the voter
set is static: a stopped broker stays one), the controller (``controller_id``, as Metadata
reports it: the lowest live broker) leads at epoch 1, and there are no observers (a combined
node's broker side is the voter itself, as a single Kafka 4.4 combined node answers: one
voter, no observer). The metadata log's high watermark, and every live voter's log end
offset, is the count of metadata changes so far (topics created, deleted, grown, leaders
moved); a stopped voter's is unknown (-1). v1+: every live voter fetched and caught up now
(a stopped one: -1). v2: each voter's directory id (fixed per cluster id and node id) and,
in ``nodes``, its CONTROLLER listener: the fake has no listener of its own for controllers,
so it gives the broker's address.

A request naming anything but ``__cluster_metadata`` partition 0 alone gets, on every
partition it names, UNKNOWN_TOPIC_OR_PARTITION with Kafka's message, as KafkaRaftClient
answers it (no nodes). DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import error_code

API_KEY = 55
METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
UNKNOWN = "This server does not host this topic-partition."
ERROR_PLACEMENT = Placement(top_fields={"topics": (), "nodes": ()})
AUTHORIZES = (cluster("DESCRIBE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    (topic,) = request.topics if len(request.topics) == 1 else (None,)
    if topic is None or topic.topic_name != METADATA_TOPIC or [
            p.partition_index for p in topic.partitions] != [0]:
        return unknown(request)
    voters = sorted(ctx.cluster.brokers.values(), key=lambda b: b.id)
    offset = ctx.cluster.generation
    now = ctx.now_ms()
    return {"error_code": 0, "error_message": "", "topics": [{
        "topic_name": METADATA_TOPIC, "partitions": [{
            "partition_index": 0, "error_code": 0, "error_message": "",
            "leader_id": ctx.cluster.controller_id, "leader_epoch": LEADER_EPOCH,
            "high_watermark": offset, "observers": [],
            "current_voters": [{
                "replica_id": b.id, "replica_directory_id": directory_id(ctx, b.id),
                "log_end_offset": offset if b.up else -1,
                "last_fetch_timestamp": now if b.up else -1,
                "last_caught_up_timestamp": now if b.up else -1} for b in voters]}]}],
        "nodes": [{"node_id": b.id, "listeners": [
            {"name": "CONTROLLER", "host": b.host, "port": b.port}]} for b in voters]}


def unknown(request: Any) -> dict[str, Any]:
    """Every partition the request names answered UNKNOWN_TOPIC_OR_PARTITION."""
    return {"error_code": 0, "error_message": "", "nodes": [], "topics": [{
        "topic_name": t.topic_name, "partitions": [{
            "partition_index": p.partition_index,
            "error_code": error_code("UNKNOWN_TOPIC_OR_PARTITION"), "error_message": UNKNOWN,
            "leader_id": 0, "leader_epoch": 0, "high_watermark": 0,
            "current_voters": [], "observers": []} for p in t.partitions]}
        for t in request.topics]}


def directory_id(ctx: RequestContext, node_id: int) -> uuid.UUID:
    """A voter's metadata log directory id: fixed for a cluster id and node id."""
    return directory_id_of(ctx.cluster.cluster_id, node_id)


def directory_id_of(cluster_id: str, node_id: int) -> uuid.UUID:
    """The metadata log directory id of node ``node_id`` of cluster ``cluster_id``."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"fakebroker:{cluster_id}:{node_id}")


def replica_key(node_id: int, directory: uuid.UUID) -> str:
    """A voter as Kafka's ``ReplicaKey.toString`` prints it (the directory id in Kafka's
    ``Uuid`` text form)."""
    text = base64.urlsafe_b64encode(directory.bytes).decode().rstrip("=")
    return f"ReplicaKey(id={node_id}, directoryId={text})"


def voter_set(ctx: RequestContext) -> str:
    """The voters (every broker, a combined-mode node each) as Kafka's messages list them."""
    return "[" + ", ".join(replica_key(b, directory_id(ctx, b))
                           for b in sorted(ctx.cluster.brokers)) + "]"


def inconsistent_cluster(ctx: RequestContext, cluster_id: str | None) -> dict[str, Any] | None:
    """A KRaft request's refusal for naming another cluster (null names none), as
    KafkaRaftClient answers it; else None."""
    if cluster_id is None or cluster_id == ctx.cluster.cluster_id:
        return None
    return refused("INCONSISTENT_CLUSTER_ID", f'The given id "{cluster_id}" doesn\'t match '
                                              f'the cluster id "{ctx.cluster.cluster_id}"')


def refused(error: str, message: str) -> dict[str, Any]:
    """A KRaft voter request's answer: ``error`` with ``message``."""
    return {"throttle_time_ms": 0, "error_code": error_code(error), "error_message": message}
