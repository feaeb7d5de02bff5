"""EndTxn (key 26): commit or abort a producer's transaction.

Versions: 0-5. Flexible from v3; v5 is transactions v2 (KIP-890): the answer carries the
producer id and epoch to use next.

Behavior:
* Answered by the transactional id's coordinator only (NOT_COORDINATOR elsewhere).
* An ongoing transaction ends: its markers are written to each of its partitions and its
  group offsets committed (or dropped) before the answer, so a read_committed consumer sees
  the outcome as soon as the producer learns it. v5 bumps the epoch at the end (the markers
  carry the new one) and answers it; an exhausted epoch answers a new producer id at 0.
* Retries and ends with no transaction, as Kafka 4.4 answers them: the end that already
  happened again is NONE (v5: named by the epoch before the bump, answered the current
  one), the other INVALID_TXN_STATE; a commit with no transaction is INVALID_TXN_STATE, an
  abort with none too below v5, while v5 bumps the epoch and answers it.
* INVALID_PRODUCER_ID_MAPPING for an unknown transactional or producer id, PRODUCER_FENCED
  for another epoch (a fenced instance, or a transaction its timeout aborted;
  INVALID_PRODUCER_EPOCH below v2, as Kafka answers older clients), INVALID_REQUEST
  for an empty transactional id. Errors answer producer id and epoch -1 (v5).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import transactional_ids
from fakebroker.api.common import fenced_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 26
NO_PRODUCER = {"producer_id": -1, "producer_epoch": -1}  # beside an error (v5)
ERROR_PLACEMENT = Placement(top_fields=NO_PRODUCER)
AUTHORIZES = (transactional_ids("WRITE"),)
TRANSACTIONS_V2 = 5  # the first version of transactions v2


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    try:
        if request.transactional_id and not ctx.is_coordinator(request.transactional_id):
            raise ClusterError("NOT_COORDINATOR")
        producer_id, epoch = ctx.cluster.transactions.end(
            request.transactional_id, request.producer_id, request.producer_epoch,
            request.committed, 2 if ctx.version >= TRANSACTIONS_V2 else 0)
    except ClusterError as exc:
        return dict(NO_PRODUCER, throttle_time_ms=0,
                    error_code=error_code(fenced_error(exc.error, ctx.version, 2)))
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id,
            "producer_epoch": epoch}
