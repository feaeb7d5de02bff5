"""InitProducerId (key 22): producer ids and epochs for idempotent producers.

Versions: 0-5 (3.9), 6 (4.x, latest unstable: not advertised). Flexible from v2.

Behavior:
* No transactional id: a new producer id at epoch 0, even when the request names a producer
  id and epoch (v3+, KIP-360): Kafka "blindly accepts" those; an idempotent producer bumps
  its epoch itself, and its first batch at the new epoch starts at sequence 0.
* A transactional id keeps its producer id across calls and bumps the epoch each time (which
  fences the previous instance); a mismatched id/epoch for it gets PRODUCER_FENCED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.context import RequestContext
from fakebroker.protocol.errors import error_code
from fakebroker.state.producers import SequenceError

API_KEY = 22


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    try:
        producer_id, epoch = ctx.cluster.producers.init_producer(
            request.transactional_id, request.producer_id, request.producer_epoch
        )
    except SequenceError as exc:
        return {"throttle_time_ms": 0, "error_code": error_code(exc.error),
                "producer_id": -1, "producer_epoch": -1}
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id,
            "producer_epoch": epoch}
