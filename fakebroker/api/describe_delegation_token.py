"""DescribeDelegationToken (key 41): the tokens of some owners, or every token.

Versions: 0-3 (v0 3.9 only; Kafka 4 serves 1-3). Flexible from v2.

Behavior, as Kafka 4.4 (``KafkaApis.handleDescribeTokensRequest``):
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on a connection that may not ask for tokens
(``fakebroker.api.token_requests``), then DELEGATION_TOKEN_AUTH_DISABLED without
``delegation_token_secret_key``, both with no tokens. ``Owners`` null: every live token; an
empty list: none; else the tokens whose owner, requester or a renewer is one of them. Each
token with its owner, times, id, HMAC and renewers; v3 adds its requester. A principal sees
the tokens it owns, asked for or renews, and others only with DESCRIBE on the token or
DESCRIBE_TOKENS on its owner (``DelegationTokenManager.filterToken``); without an authorizer,
every token.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.api.token_requests import allow_token_requests, principal_text
from fakebroker.protocol.errors import error_code
from fakebroker.state.delegation_tokens import DelegationToken, principal_parts

API_KEY = 41
ERROR_PLACEMENT = Placement(top_fields={"tokens": ()})
AUTHORIZES = (in_handler("DESCRIBE on each token, or DESCRIBE_TOKENS on its owner, "
                         "unless the caller owns, asked for or renews it"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if not allow_token_requests(ctx):
        return _answer("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
    tokens = ctx.cluster.delegation_tokens
    if not tokens.enabled:
        return _answer("DELEGATION_TOKEN_AUTH_DISABLED")
    owners = None if request.owners is None else [
        principal_text(o.principal_type, o.principal_name) for o in request.owners]
    if owners == []:
        return _answer()
    return _answer(tokens=[_entry(t) for t in tokens.tokens(ctx.now_ms())
                           if (owners is None or any(t.owner_or_renewer(o) for o in owners))
                           and _may_describe(ctx, t)])


def _may_describe(ctx: RequestContext, token: DelegationToken) -> bool:
    return (token.owner_or_renewer(ctx.principal) or token.requester == ctx.principal
            or ctx.allowed("DESCRIBE_TOKENS", "USER", token.owner)
            or ctx.allowed("DESCRIBE", "DELEGATION_TOKEN", token.token_id))


def _answer(error: str | None = None, tokens: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    return {"error_code": error_code(error) if error else 0, "tokens": tokens or [],
            "throttle_time_ms": 0}


def _entry(token: DelegationToken) -> dict[str, Any]:
    owner_type, owner_name = principal_parts(token.owner)
    requester_type, requester_name = principal_parts(token.requester)
    return {"principal_type": owner_type, "principal_name": owner_name,
            "token_requester_principal_type": requester_type,
            "token_requester_principal_name": requester_name,
            "issue_timestamp": token.issue_ms, "expiry_timestamp": token.expiry_ms,
            "max_timestamp": token.max_ms, "token_id": token.token_id, "hmac": token.hmac,
            "renewers": [dict(zip(("principal_type", "principal_name"), principal_parts(r),
                                  strict=True)) for r in token.renewers]}
