"""AddOffsetsToTxn (key 25): a consumer group's offsets join a producer's transaction.

Versions: 0-4. Flexible from v3.

Behavior: answered by the transactional id's coordinator only (NOT_COORDINATOR elsewhere).
The group joins the transaction (which begins if none was), so the producer's
TxnOffsetCommit for it is accepted and its offsets are committed with the transaction.
Errors as AddPartitionsToTxn's: INVALID_PRODUCER_ID_MAPPING for an unknown transactional or
producer id, PRODUCER_FENCED for another epoch (INVALID_PRODUCER_EPOCH below v2),
INVALID_REQUEST for an empty transactional id.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups, transactional_ids
from fakebroker.api.common import fenced_error
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 25
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (transactional_ids("WRITE"), groups("READ"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    try:
        if request.transactional_id and not ctx.is_coordinator(request.transactional_id):
            raise ClusterError("NOT_COORDINATOR")
        ctx.cluster.transactions.add_group(request.transactional_id, request.producer_id,
                                           request.producer_epoch, request.group_id,
                                           trio.current_time())
    except ClusterError as exc:
        return {"throttle_time_ms": 0,
                "error_code": error_code(fenced_error(exc.error, ctx.version, 2))}
    return {"throttle_time_ms": 0, "error_code": 0}
