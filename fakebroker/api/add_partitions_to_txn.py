"""AddPartitionsToTxn (key 24): partitions join a producer's transaction.

Versions: 0-5. Flexible from v3; v4+ carries a batch of transactions (a partition leader's
request: each may be ``verify_only``), answered per transaction.

Behavior:
* Answered by the transactional id's coordinator only (NOT_COORDINATOR elsewhere, on every
  partition of that transaction).
* v0-3: a partition of an unknown topic (or beyond its partitions) gets
  UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED (answered in that
  order, as Kafka's); nothing is added.
  Otherwise the coordinator's verdict goes on every partition: an unknown transactional or
  producer id INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
  below v2, as Kafka answers older clients), an empty
  transactional id INVALID_REQUEST; the partitions join the transaction, which begins
  (Ongoing) if none was.
* v4+ ``verify_only`` (KIP-890 part 1): nothing joins; per partition NONE when it is in the
  ongoing transaction, TRANSACTION_ABORTABLE when it is not (INVALID_TXN_STATE at an
  emulated 3.6 or 3.7, as their coordinators answered); the coordinator's errors as above.
  The top-level error code is 0 (with no authorizer the cluster action is allowed).
* v4+ naming one transactional id in several entries (measured on 4.4): the partitions
  checked are its last entry's, the coordinator's verdict goes on its first entry's topics,
  and each of its entries is answered alike.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import cluster, topics, transactional_ids
from fakebroker.api.common import fenced_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, by_version, per_partition, per_topic
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 24
ERROR_PLACEMENT = Placement(by_version({
    0: per_topic("v3_and_below_topics", "results_by_topic_v3_and_below",
                 partitions=per_partition("partitions", "results_by_partition", "",
                                          "partition_index",
                                          error_field="partition_error_code")),
    4: None,  # v4+: at the top level
}))
AUTHORIZES = (cluster("CLUSTER_ACTION", versions=range(4, 100)),
              transactional_ids("WRITE", versions=range(4)),
              topics("WRITE", others="OPERATION_NOT_ATTEMPTED", versions=range(4)))

Partitions = dict[tuple[str, int], str]  # (topic, partition) -> error name


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if ctx.version >= 4:
        # Kafka keys a batch's transactions by id: a repeated id's partitions are its last
        # entry's, the coordinator's verdict is written over its first entry's topics, and
        # every entry of that id is answered with its last outcome (measured on 4.4).
        last = {txn.transactional_id: txn.topics for txn in request.transactions}
        first: dict[str, Any] = {}
        outcomes: dict[str, Partitions] = {}
        for txn in request.transactions:
            first.setdefault(txn.transactional_id, txn.topics)
            outcomes[txn.transactional_id] = answer_transaction(
                ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch,
                last[txn.transactional_id], txn.verify_only, first[txn.transactional_id])
        results = [{"transactional_id": txn.transactional_id,
                    "topic_results": by_topic(outcomes[txn.transactional_id])}
                   for txn in request.transactions]
        return {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": results}
    topics = request.v3_and_below_topics
    errors = answer_transaction(ctx, request.v3_and_below_transactional_id,
                                request.v3_and_below_producer_id,
                                request.v3_and_below_producer_epoch, topics, False, topics)
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": by_topic(errors)}


def answer_transaction(ctx: RequestContext, transactional_id: str, producer_id: int,
                       epoch: int, topics: Any, verify_only: bool, verdict_topics: Any
                       ) -> Partitions:
    """Each partition's error for one transaction of the request: the ``topics`` named are
    checked, added or verified; the coordinator's one verdict for the transaction (an error,
    or NONE when they joined) is given to each partition of ``verdict_topics``."""
    named = [(t.name, p) for t in topics for p in t.partitions]
    verdict = [(t.name, p) for t in verdict_topics for p in t.partitions]
    unknown = {tp for tp in named if ctx.cluster.partition(*tp) is None}
    if unknown:  # Kafka answers the unknown ones first
        return {**dict.fromkeys((tp for tp in named if tp in unknown),
                                "UNKNOWN_TOPIC_OR_PARTITION"),
                **dict.fromkeys((tp for tp in named if tp not in unknown),
                                "OPERATION_NOT_ATTEMPTED")}
    if transactional_id and not ctx.is_coordinator(transactional_id):
        return dict.fromkeys(verdict, "NOT_COORDINATOR")
    transactions = ctx.cluster.transactions
    try:
        if verify_only:
            return transactions.verify_partitions(transactional_id, producer_id, epoch, named)
        transactions.add_partitions(transactional_id, producer_id, epoch, named,
                                    trio.current_time())
    except ClusterError as exc:
        return dict.fromkeys(verdict, fenced_error(exc.error, ctx.version, 2))
    return dict.fromkeys(verdict, "NONE")


def by_topic(errors: Partitions) -> list[dict[str, Any]]:
    """Per-partition errors as the answer's topics, in the order named."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), error in errors.items():
        topics.setdefault(topic, []).append(
            {"partition_index": index, "partition_error_code": error_code(error)})
    return [{"name": name, "results_by_partition": results} for name, results in topics.items()]
