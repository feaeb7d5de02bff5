"""InitProducerId (key 22): producer ids and epochs for idempotent and transactional producers.

Versions: 0-5 (3.9; 4.x adds v6, unstable, which it does not serve). Flexible from v2.

Behavior:
* No transactional id: a new producer id at epoch 0, also when the request (v3+) names a
  producer id and epoch, as Kafka answers (an idempotent producer bumps its epoch itself).
* A transactional id (answered by its coordinator only, else NOT_COORDINATOR): keeps its
  producer id across calls and bumps the epoch each time, which fences the previous
  instance; an exhausted epoch gives a new producer id at epoch 0. An ongoing transaction is
  aborted first (its epoch fenced) and the answer is CONCURRENT_TRANSACTIONS: the client
  retries and gets the epoch after. v3+ may name the producer id and epoch it had (KIP-360):
  another id or a stale epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v4, as Kafka
  answers older clients), the epoch just handed out gets it again.
* An empty transactional id is INVALID_REQUEST; a transaction timeout above the cluster's
  ``transaction_max_timeout_ms`` (transaction.max.timeout.ms) INVALID_TRANSACTION_TIMEOUT.
* A producer id without an epoch or an epoch without a producer id (one of them -1, v3+) is
  INVALID_REQUEST before anything else is checked (``KafkaApis.handleInitProducerIdRequest``).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import idempotent_write, transactional_ids
from fakebroker.api.common import fenced_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 22
NO_PRODUCER = {"producer_id": -1, "producer_epoch": -1}  # beside an error
ERROR_PLACEMENT = Placement(top_fields=NO_PRODUCER)
AUTHORIZES = (transactional_ids("WRITE"), idempotent_write())


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    transactional_id = request.transactional_id
    try:
        if (request.producer_id == NO_PRODUCER["producer_id"]) != (
                request.producer_epoch == NO_PRODUCER["producer_epoch"]):
            raise ClusterError("INVALID_REQUEST")
        if transactional_id is None:
            producer_id, epoch = ctx.cluster.producers.init_producer()
        elif transactional_id and not ctx.is_coordinator(transactional_id):
            raise ClusterError("NOT_COORDINATOR")
        else:
            producer_id, epoch = ctx.cluster.transactions.init_producer(
                transactional_id, request.transaction_timeout_ms, request.producer_id,
                request.producer_epoch)
    except ClusterError as exc:
        return dict(NO_PRODUCER, throttle_time_ms=0,
                    error_code=error_code(fenced_error(exc.error, ctx.version, 4)))
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id,
            "producer_epoch": epoch}
