"""WriteTxnMarkers (key 27): a transaction coordinator has partition leaders write the commit
or abort markers of a transaction.

Versions: 0-2 (Kafka 4 serves 1-2; 3.9 served 0-1). Flexible from v1; v2 names the
transaction version.

Behavior: answered as a broker answers its coordinator: for each marker, per partition,
UNKNOWN_TOPIC_OR_PARTITION for one that does not exist, NOT_LEADER_OR_FOLLOWER from a broker
that does not lead it, INVALID_PRODUCER_EPOCH for an epoch older than the producer's last on
that partition (its batches' and markers' there, not its coordinator's: Kafka's
``ProducerAppendInfo`` is the partition's),
TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than the last the partition took
for the producer (-1 for one it has not seen: ``ProducerAppendInfo.checkCoordinatorEpoch``);
otherwise the control batch is appended (ending the producer's transaction in that
partition: the last stable offset moves past it, an abort is indexed for read_committed
fetches). Refused partitions are answered before the written ones, as Kafka answers. The
fake's own coordinator writes its markers without this request.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group, per_partition, per_topic
from fakebroker.protocol.errors import error_code

API_KEY = 27
ERROR_PLACEMENT = Placement(per_group(
    "markers", "markers", "producer_id", key="producer_id", entry_error=False,
    topics=per_topic("topics", "topics", partitions=per_partition(
        "partition_indexes", "partitions", "", "partition_index"))))
AUTHORIZES = (cluster("CLUSTER_ACTION", unless_cluster="ALTER"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    markers = []
    for marker in request.markers:
        topics = []
        for topic in marker.topics:
            partitions = [{"partition_index": index,
                           "error_code": error_code(write(ctx, marker, topic.name, index))}
                          for index in topic.partition_indexes]
            partitions.sort(key=lambda p: p["error_code"] == 0)  # Kafka: refusals first
            topics.append({"name": topic.name, "partitions": partitions})
        markers.append({"producer_id": marker.producer_id, "topics": topics})
    return {"markers": markers}


def write(ctx: RequestContext, marker: Any, topic: str, index: int) -> str:
    """Write one partition's marker; its error name (NONE: written)."""
    partition = ctx.cluster.partition(topic, index)
    leader_error = ctx.leader_check(partition)
    if leader_error:
        return "NOT_LEADER_OR_FOLLOWER" if partition is not None \
            else "UNKNOWN_TOPIC_OR_PARTITION"
    known = ctx.cluster.producers.epoch(topic, index, marker.producer_id)
    if marker.producer_epoch < (-1 if known is None else known):  # Kafka's NO_PRODUCER_EPOCH
        return "INVALID_PRODUCER_EPOCH"
    if marker.coordinator_epoch < partition.log.coordinator_epochs.get(marker.producer_id, -1):
        return "TRANSACTION_COORDINATOR_FENCED"
    return ctx.cluster.write_markers(marker.producer_id, marker.producer_epoch,
                                     marker.transaction_result, [(topic, index)],
                                     marker.coordinator_epoch)[(topic, index)]
