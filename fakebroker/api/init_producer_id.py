"""InitProducerId (key 22): producer ids and epochs for idempotent producers.

Versions: 0-5 (3.9; 4.x adds v6, unstable, which it does not serve). Flexible from v2.

Behavior:
* No transactional id: a new producer id at epoch 0, also when the request (v3+) names a
  producer id and epoch, as Kafka answers (an idempotent producer bumps its epoch itself).
* A transactional id keeps its producer id across calls and bumps the epoch each time (which
  fences the previous instance); a mismatched id/epoch for it gets PRODUCER_FENCED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.context import RequestContext
from fakebroker.faults.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 22
NO_PRODUCER = {"producer_id": -1, "producer_epoch": -1}  # beside an error
ERROR_PLACEMENT = Placement(top_fields=NO_PRODUCER)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    try:
        producer_id, epoch = ctx.cluster.producers.init_producer(
            request.transactional_id, request.producer_id, request.producer_epoch
        )
    except ClusterError as exc:
        return dict(NO_PRODUCER, throttle_time_ms=0, error_code=error_code(exc.error))
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id,
            "producer_epoch": epoch}
