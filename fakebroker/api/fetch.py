"""Fetch (key 1): read stored batches, long-polling until enough bytes or max_wait_ms.

Versions: 0-17 (3.9), 18 (4.x). Flexible from v12; topic ids instead of names from v13.

Behavior:
* Answers at once when min_bytes of data are available, when any partition has an error, or
  when max_wait_ms is 0; otherwise parks until an append anywhere in the cluster or until
  max_wait_ms passes (trio's clock, so MockClock tests need no real waiting).
* Per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID from v13),
  NOT_LEADER_OR_FOLLOWER from a broker that does not lead it (v12+ names the current leader;
  v16+ also its endpoint), FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when the client's
  current_leader_epoch is older / newer, OFFSET_OUT_OF_RANGE below the log start offset or
  above the log end offset (the end itself is valid and returns nothing). As in Kafka, a
  partition's error answer has no offsets (high watermark, last stable and log start
  offsets -1) and names the current leader for NOT_LEADER_OR_FOLLOWER and
  FENCED_LEADER_EPOCH only.
* Records are the stored batches from the one holding fetch_offset, whole batches, within the
  partition's and the response's max_bytes, except that the first batch of the response is
  always returned whole (KIP-74). Fetch v0-3 clients get stored batches down-converted to
  magic 0 (v0-1) or magic 1 (v2-3).
* No fetch sessions: session_id 0 is answered, so clients keep sending full fetches.
* read_committed: last_stable_offset is the high watermark (no open transactions yet) and an
  empty aborted transaction list is returned.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.common import node_endpoints, resolve_topic
from fakebroker.api.context import RequestContext
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.records import down_convert

API_KEY = 1
READ_COMMITTED = 1
# The errors whose answer names the partition's current leader (KIP-951).
LEADER_NAMED = frozenset(map(error_code, ("NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH")))


async def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    deadline = trio.current_time() + max(request.max_wait_ms, 0) / 1000
    while True:
        response, size, failed = assemble(request, ctx)
        remaining = deadline - trio.current_time()
        if size >= request.min_bytes or failed or remaining <= 0:
            return response
        await ctx.wait_for_append(remaining)


def assemble(request: Any, ctx: RequestContext) -> tuple[dict[str, Any], int, bool]:
    """The response as things stand: (body, bytes of records, whether any partition failed)."""
    budget = request.max_bytes if ctx.version >= 3 else 2**31 - 1
    total = 0
    failed = False
    leaders: set[int] = set()
    topics = []
    for wanted in request.topics:
        topic = resolve_topic(ctx, wanted.topic, wanted.topic_id)
        partitions = []
        for p in wanted.partitions:
            result = read_partition(ctx, request, topic, p, budget - total, first=total == 0)
            error = result["error_code"]
            if error:
                failed = True
                if "current_leader" in result:
                    leaders.add(result["current_leader"]["leader_id"])
            total += result.pop("size")
            partitions.append(result)
        topics.append({"topic": wanted.topic, "topic_id": wanted.topic_id,
                       "partitions": partitions})
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": topics,
            "node_endpoints": node_endpoints(ctx, leaders) if leaders else []}
    return body, total, failed


def read_partition(ctx: RequestContext, request: Any, topic: Any, wanted: Any, budget: int,
                   first: bool) -> dict[str, Any]:
    """One partition's answer; its ``size`` entry (bytes of stored records read, taken out by
    ``assemble``) is not a wire field."""
    result: dict[str, Any] = {"partition_index": wanted.partition, "records": b"",
                              "size": 0, "high_watermark": -1, "last_stable_offset": -1,
                              "log_start_offset": -1, "aborted_transactions": None}
    if topic is None:
        result["error_code"] = error_code("UNKNOWN_TOPIC_ID" if ctx.version >= 13
                                          else "UNKNOWN_TOPIC_OR_PARTITION")
        return result
    partition = (topic.partitions[wanted.partition]
                 if 0 <= wanted.partition < len(topic.partitions) else None)
    error = ctx.leader_check(partition)
    if partition is not None and not error:
        error = ctx.epoch_check(partition, wanted.current_leader_epoch)
    if error:
        result["error_code"] = error
        if partition is not None and error in LEADER_NAMED:
            result["current_leader"] = {"leader_id": partition.leader,
                                        "leader_epoch": partition.leader_epoch}
        return result
    assert partition is not None
    log = partition.log
    offset = wanted.fetch_offset
    if not log.log_start_offset <= offset <= log.log_end_offset:
        result["error_code"] = error_code("OFFSET_OUT_OF_RANGE")
        return result
    result.update(high_watermark=log.high_watermark, last_stable_offset=log.high_watermark,
                  log_start_offset=log.log_start_offset)
    if request.isolation_level == READ_COMMITTED:
        result["aborted_transactions"] = []
    limit = min(wanted.partition_max_bytes, budget) if ctx.version >= 3 \
        else wanted.partition_max_bytes
    chunks = log.read(offset, max(limit, 0), at_least_one=first or ctx.version < 3)
    if ctx.version <= 3 and chunks:
        converted = down_convert(b"".join(chunks), 0 if ctx.version <= 1 else 1)
        result.update(error_code=0, records=converted, size=len(converted))
    else:  # a list of stored batches: written in a row by the codec, never joined
        result.update(error_code=0, records=chunks, size=sum(map(len, chunks)))
    return result
