"""ExpireDelegationToken (key 40): end a token now, or move its expiry time.

Versions: 0-2 (v0 3.9 only; Kafka 4 serves 1-2). Flexible from v2.

Behavior, as Kafka 4.4: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (expiry -1) on a connection that
may not ask for tokens (``fakebroker.api.token_requests``); DELEGATION_TOKEN_AUTH_DISABLED
without ``delegation_token_secret_key``; DELEGATION_TOKEN_NOT_FOUND for an HMAC of no live
token; DELEGATION_TOKEN_OWNER_MISMATCH unless the caller owns the token or is one of its
renewers. A negative ``ExpiryTimePeriodMs`` removes the token at once (the answer's expiry is
now): it no longer logs in, renews or shows in DescribeDelegationToken. Otherwise its expiry
becomes ``min(max time, now + period)``.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import NOTHING
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.api.token_requests import ERROR_TIMESTAMP, allow_token_requests
from fakebroker.protocol.errors import ClusterError, error_code

API_KEY = 40
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = NOTHING  # the token's owner or renewers only (checked by the token store)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if not allow_token_requests(ctx):
        return {"error_code": error_code("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"),
                "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0}
    try:
        expiry = ctx.cluster.delegation_tokens.expire(
            request.hmac, ctx.principal, request.expiry_time_period_ms, ctx.now_ms())
    except ClusterError as exc:
        return {"error_code": exc.code, "expiry_timestamp_ms": 0, "throttle_time_ms": 0}
    return {"error_code": 0, "expiry_timestamp_ms": expiry, "throttle_time_ms": 0}
