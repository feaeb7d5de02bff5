"""TxnOffsetCommit (key 28): a transactional producer commits a group's offsets in its
transaction.

Versions: 0-5 (3.9), 6 (4.x, topic ids). Flexible from v3; v3+ names the member and its
generation (KIP-447).

Behavior:
* Answered by the group's coordinator only: NOT_COORDINATOR (and other group errors) on
  every partition.
* Per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID by id) for partitions that do
  not exist, OFFSET_METADATA_TOO_LARGE beyond 4096 bytes; the others are checked together.
* The group must be in the producer's ongoing transaction (AddOffsetsToTxn): v5+ adds it
  implicitly (transactions v2, at any finalized ``transaction.version``, as Kafka 4.4 does,
  measured); otherwise a
  group not added is INVALID_TXN_STATE. A fenced epoch is INVALID_PRODUCER_EPOCH, an unknown
  transactional or producer id INVALID_PRODUCER_ID_MAPPING, as the coordinator's
  verification answers producers. Before it asks the coordinator, Kafka checks the
  producer's state on the group's ``__consumer_offsets`` partition, whatever transactional
  id the request names: an epoch older than the producer's last there is
  INVALID_PRODUCER_EPOCH, and the partition holding the producer's transaction open at that
  epoch needs no verification (measured on Kafka 4.4).
* v3+: a member id or generation that is not the group's current one is UNKNOWN_MEMBER_ID,
  ILLEGAL_GENERATION or FENCED_INSTANCE_ID (checked as OffsetCommit checks them, so a commit
  naming no member passes).
* Accepted offsets are pending: invisible to OffsetFetch (which answers
  UNSTABLE_OFFSET_COMMIT for them when asked for stable offsets) until the transaction's
  commit makes them the group's committed offsets; an abort drops them.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups, topics, transactional_ids
from fakebroker.api.common import resolve_topic
from fakebroker.api.context import RequestContext
from fakebroker.api.offset_commit import existence_error, metadata_error
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id
from fakebroker.state.offsets import CommittedOffset, TopicPartition

API_KEY = 28
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
    "partitions", "partitions", "partition_index")))
AUTHORIZES = (transactional_ids("WRITE"), groups("READ"), topics("READ"))
TRANSACTIONS_V2 = 5  # the first version that may add its group implicitly


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    now = ctx.now_ms()
    offsets: dict[TopicPartition, CommittedOffset] = {}
    results: dict[tuple[int, int], int] = {}  # (topic entry, partition entry) -> error
    for t, wanted in enumerate(request.topics):
        topic = resolve_topic(ctx, wanted.get("name"), wanted.get("topic_id"))
        for p, partition in enumerate(wanted.partitions):
            code = (existence_error(topic, partition, unknown_id=ctx.version >= 6)
                    or metadata_error(partition))
            results[(t, p)] = code
            if not code:
                assert topic is not None
                offsets[(topic.name, partition.partition_index)] = CommittedOffset(
                    partition.committed_offset, partition.committed_leader_epoch,
                    partition.committed_metadata, now)
    if offsets:
        group_error = check(ctx, request)
        for key, code in results.items():
            if not code:
                results[key] = group_error
        if not group_error:
            ctx.cluster.transactions.commit_offsets(request.group_id, request.producer_id,
                                                    request.producer_epoch, offsets)
    topics = []
    for t, wanted in enumerate(request.topics):
        topics.append({"name": wanted.get("name"), "topic_id": wanted.get("topic_id"),
                       "partitions": [{"partition_index": partition.partition_index,
                                       "error_code": results[(t, p)]}
                                      for p, partition in enumerate(wanted.partitions)]})
    return {"throttle_time_ms": 0, "topics": topics}


def check(ctx: RequestContext, request: Any) -> int:
    """The error of the request's group and transaction, as Kafka's group coordinator and
    the transaction verification answer it (0: the offsets may be stored): an empty group id
    first (``invalid_group_id``)."""
    if invalid_group_id(request.group_id):
        return error_code("INVALID_GROUP_ID")
    if not ctx.is_coordinator(request.group_id):
        return error_code("NOT_COORDINATOR")
    transactions = ctx.cluster.transactions
    known, open_here = transactions.offsets_producer(request.group_id, request.producer_id)
    if 0 <= known and request.producer_epoch < known:  # before verifying
        return error_code("INVALID_PRODUCER_EPOCH")
    try:
        if open_here and request.producer_epoch == known:
            pass  # held open in the offsets partition: no coordinator is asked
        elif ctx.version >= TRANSACTIONS_V2:
            transactions.add_group(request.transactional_id, request.producer_id,
                                   request.producer_epoch, request.group_id,
                                   trio.current_time(), version=2)
        elif not transactions.has_group(request.transactional_id, request.producer_id,
                                        request.producer_epoch, request.group_id):
            return error_code("INVALID_TXN_STATE")
    except ClusterError as exc:
        return error_code("INVALID_PRODUCER_EPOCH" if exc.error == "PRODUCER_FENCED"
                          else exc.error)
    if ctx.version >= 3:
        try:
            ctx.cluster.groups.validate_offset_commit(
                request.group_id, request.generation_id_or_member_epoch, request.member_id,
                request.group_instance_id, trio.current_time())
        except ClusterError as exc:
            return exc.code
    return 0
