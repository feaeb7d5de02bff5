"""DeleteRecords (key 21): advance a partition's log start offset.

Versions: 0-2. Flexible from v2.

Behavior: offset -1 means the high watermark; an offset above the high watermark (or negative
other than -1) gets OFFSET_OUT_OF_RANGE; the answer carries the new low watermark (log start).
Leader-only: NOT_LEADER_OR_FOLLOWER elsewhere. Kafka's internal topics (``__consumer_offsets``
...) get INVALID_TOPIC_EXCEPTION, as Kafka's ReplicaManager refuses them. Consumers
positioned below the new log start get OFFSET_OUT_OF_RANGE on their next fetch. A partition
named twice is answered once, for the offset named last (as Kafka's maps keep it).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import topics
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import error_code

API_KEY = 21
HIGH_WATERMARK = -1
# Beside a partition's error: no low watermark.
NOT_DELETED = {"low_watermark": -1}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partitions", "partitions", "partition_index", error_fields=NOT_DELETED)))
AUTHORIZES = (topics("DELETE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    # Kafka reads the request into maps keyed by partition: a partition named twice is
    # answered once, for the offset named last (KafkaApis.handleDeleteRecordsRequest).
    wanted: dict[str, dict[int, int]] = {}
    for topic in request.topics:
        for p in topic.partitions:
            wanted.setdefault(topic.name, {})[p.partition_index] = p.offset
    topics = []
    for name, offsets in wanted.items():
        results = []
        for index, asked in offsets.items():
            partition = ctx.cluster.partition(name, index)
            result = dict(NOT_DELETED, partition_index=index)
            error = ctx.leader_check(partition)
            if partition is not None and ctx.cluster.topics[name].internal:
                error = error_code("INVALID_TOPIC_EXCEPTION")  # never from a client's request
            if not error and partition is not None:
                log = partition.log
                offset = log.high_watermark if asked == HIGH_WATERMARK else asked
                if not 0 <= offset <= log.high_watermark:
                    error = error_code("OFFSET_OUT_OF_RANGE")
                else:
                    log.delete_before(offset)
                    result["low_watermark"] = log.log_start_offset
            result["error_code"] = error
            results.append(result)
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}
