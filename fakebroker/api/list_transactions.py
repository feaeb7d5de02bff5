"""ListTransactions (key 66): the transactional ids a coordinator knows, filtered.

Versions: 0-2. Flexible. v1 adds the duration filter (KIP-994), v2 a transactional id
pattern (a regular expression, KIP-1152).

Behavior: every transactional id this broker coordinates, with its producer id and state,
kept by every filter given: its state among ``state_filters`` (names Kafka does not know
are answered back in ``unknown_state_filters`` and match nothing), its producer id among
``producer_id_filters``, its ongoing transaction running longer than ``duration_filter`` ms
(v1+, -1 none), its id matching ``transactional_id_pattern`` whole (v2+, null or empty none;
a pattern that does not compile is INVALID_REGULAR_EXPRESSION).
"""

from __future__ import annotations

import re
from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.transactions import TxnState

API_KEY = 66
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (in_handler(
    "DESCRIBE on each transactional id: the others are left out"),)
STATES = frozenset(state.value for state in TxnState)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    wanted_states = set(request.state_filters)
    producer_ids = set(request.producer_id_filters)
    duration = request.duration_filter
    pattern = request.transactional_id_pattern
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0,
                              "unknown_state_filters": sorted(wanted_states - STATES),
                              "transaction_states": []}
    try:
        matcher = re.compile(pattern) if pattern else None
    except re.error:
        return dict(answer, error_code=error_code("INVALID_REGULAR_EXPRESSION"))
    now = ctx.cluster.transactions.wall_ms()
    for txn in ctx.cluster.transactions.transactions.values():
        if not ctx.is_coordinator(txn.transactional_id):
            continue
        if wanted_states and txn.state.value not in wanted_states:
            continue
        if producer_ids and txn.producer_id not in producer_ids:
            continue
        if duration >= 0 and not (txn.state is TxnState.ONGOING
                                  and now - txn.start_time_ms > duration):
            continue
        if matcher is not None and not matcher.fullmatch(txn.transactional_id):
            continue
        if not ctx.allowed("DESCRIBE", "TRANSACTIONAL_ID", txn.transactional_id):
            continue
        answer["transaction_states"].append({"transactional_id": txn.transactional_id,
                                             "producer_id": txn.producer_id,
                                             "transaction_state": txn.state.value})
    return answer
