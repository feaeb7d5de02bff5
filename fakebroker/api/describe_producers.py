"""DescribeProducers (key 61): the producers active on partitions (idempotent and
transactional), as their leader's producer state holds them.

Versions: 0. Flexible.

Behavior: per partition, answered by its leader (an illegal topic name: INVALID_TOPIC_EXCEPTION
with Kafka's message, first, as Kafka's ``checkValidTopic``; NOT_LEADER_OR_FOLLOWER elsewhere,
UNKNOWN_TOPIC_OR_PARTITION for one that does not exist): each producer that appended to it,
with its epoch, last sequence, last batch timestamp, the coordinator epoch of its last marker
there (-1 before any; the fake's coordinators are always at epoch 0) and the first offset of
its open transaction there (-1 when none is open).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.state.cluster import invalid_topic_name

API_KEY = 61
NO_PRODUCERS = {"error_message": None, "active_producers": ()}  # beside an error
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partition_indexes", "partitions", "", "partition_index", error_fields=NO_PRODUCERS)))
AUTHORIZES = (topics("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    topics = []
    for topic in request.topics:
        partitions = []
        illegal = invalid_topic_name(topic.name)
        for index in topic.partition_indexes:
            partition = ctx.cluster.partition(topic.name, index)
            answer: dict[str, Any] = dict(NO_PRODUCERS, partition_index=index,
                                          error_code=ctx.leader_check(partition))
            if illegal is not None:
                answer.update(error_code=illegal.code, error_message=illegal.message)
            if partition is not None and not answer["error_code"]:
                states = ctx.cluster.producers.partitions.get((topic.name, index), {})
                answer["active_producers"] = [
                    {"producer_id": pid, "producer_epoch": state.epoch,
                     "last_sequence": state.last_sequence,
                     "last_timestamp": state.recent[-1].max_timestamp if state.recent else -1,
                     "coordinator_epoch": partition.log.coordinator_epochs.get(pid, -1),
                     "current_txn_start_offset": partition.log.ongoing.get(pid, -1)}
                    for pid, state in states.items()]
            partitions.append(answer)
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
