"""DescribeTransactions (key 65): the state of transactional ids.

Versions: 0. Flexible.

Behavior: per transactional id, answered by its coordinator (NOT_COORDINATOR elsewhere):
its state (Empty, Ongoing, CompleteCommit, CompleteAbort ...), producer id and epoch,
transaction timeout, the start time of its transaction (wall-clock ms, -1 when none began)
and the partitions of its ongoing transaction (none once it ended, as Kafka's);
TRANSACTIONAL_ID_NOT_FOUND for an unknown id, INVALID_REQUEST for an empty one, as Kafka's
coordinator answers.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler, transactional_ids
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code

API_KEY = 65
# Beside an error: Kafka leaves the state's other fields at their defaults.
NOT_DESCRIBED = {"transaction_state": "", "transaction_timeout_ms": 0,
                 "transaction_start_time_ms": 0, "producer_id": 0, "producer_epoch": 0,
                 "topics": ()}
ERROR_PLACEMENT = Placement(per_group("transactional_ids", "transaction_states",
                                      "transactional_id", error_fields=NOT_DESCRIBED))
AUTHORIZES = (transactional_ids("DESCRIBE", entries=True),
              in_handler("DESCRIBE on each topic of a transaction: the others are left out"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    return {"throttle_time_ms": 0,
            "transaction_states": [describe(ctx, t) for t in request.transactional_ids]}


def describe(ctx: RequestContext, transactional_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = dict(NOT_DESCRIBED, transactional_id=transactional_id)
    txn = ctx.cluster.transactions.transactions.get(transactional_id)
    if not transactional_id:
        error = "INVALID_REQUEST"
    elif not ctx.is_coordinator(transactional_id):
        error = "NOT_COORDINATOR"
    elif txn is None:
        error = "TRANSACTIONAL_ID_NOT_FOUND"
    else:
        topics: dict[str, list[int]] = {}
        for topic, index in sorted(txn.partitions):
            if ctx.allowed("DESCRIBE", "TOPIC", topic):  # others left out, as Kafka's
                topics.setdefault(topic, []).append(index)
        answer.update(transaction_state=txn.state.value, transaction_timeout_ms=txn.timeout_ms,
                      transaction_start_time_ms=txn.start_time_ms,
                      producer_id=txn.producer_id, producer_epoch=txn.producer_epoch,
                      topics=[{"topic": t, "partitions": p} for t, p in topics.items()])
        error = "NONE"
    answer["error_code"] = error_code(error)
    return answer
