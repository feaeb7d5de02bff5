"""CreateDelegationToken (key 38): a delegation token for the caller, or for another owner.

Versions: 0-3 (v0 3.9 only; Kafka 4 serves 1-3). Flexible from v2.

Behavior, as Kafka 4.4 (``KafkaApis.handleCreateTokenRequest``, then the controller's
``DelegationTokenControlManager``): on a connection that may not ask for tokens (PLAINTEXT,
SSL without a client certificate, a session logged in with a token:
``fakebroker.api.token_requests``) DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; a token for
another owner without CREATE_TOKENS on that user DELEGATION_TOKEN_AUTHORIZATION_FAILED; a
renewer that is not a ``User`` INVALID_PRINCIPAL_TYPE; without ``delegation_token_secret_key``
DELEGATION_TOKEN_AUTH_DISABLED. Otherwise a token (``fakebroker.state.delegation_tokens``):
its id, HMAC, issue, expiry and max times. The owner is the caller unless v3 names another
(``OwnerPrincipalType``/``OwnerPrincipalName``); v3 answers name the requester too. Refused by
the broker, the answer's times are -1 (Kafka's ``ErrorTimestamp``); refused by the
controller (the key unset), 0. Either way the token id is empty and the HMAC has no bytes.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.api.token_requests import ERROR_TIMESTAMP, allow_token_requests, principal_text
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.delegation_tokens import principal_parts

API_KEY = 38
# Kafka's getErrorResponse: the owner and requester ANONYMOUS, no token, times -1.
NO_TOKEN = {"principal_type": "User", "principal_name": "ANONYMOUS",
            "token_requester_principal_type": "User",
            "token_requester_principal_name": "ANONYMOUS",
            "issue_timestamp_ms": ERROR_TIMESTAMP, "expiry_timestamp_ms": ERROR_TIMESTAMP,
            "max_timestamp_ms": ERROR_TIMESTAMP, "token_id": "", "hmac": b""}
ERROR_PLACEMENT = Placement(top_fields=NO_TOKEN)
AUTHORIZES = (in_handler("CREATE_TOKENS on the owner, for a token of another owner"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    requester = ctx.principal
    owner_name = request.owner_principal_name if ctx.version >= 3 else None
    owner = (principal_text(request.owner_principal_type, owner_name) if owner_name
             else requester)
    body = _answer(owner, requester)
    if not allow_token_requests(ctx):
        return _refused(body, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
    if owner != requester and not ctx.allowed("CREATE_TOKENS", "USER", owner):
        return _refused(body, "DELEGATION_TOKEN_AUTHORIZATION_FAILED")
    renewers = [principal_text(r.principal_type, r.principal_name) for r in request.renewers]
    try:
        token = ctx.cluster.delegation_tokens.create(owner, requester, renewers,
                                                     request.max_lifetime_ms, ctx.now_ms())
    except ClusterError as exc:
        if exc.error == "INVALID_PRINCIPAL_TYPE":  # the broker's check, before forwarding
            return _refused(body, exc.error)
        body.update(error_code=exc.code, issue_timestamp_ms=0, expiry_timestamp_ms=0,
                    max_timestamp_ms=0)
        return body
    body.update(issue_timestamp_ms=token.issue_ms, expiry_timestamp_ms=token.expiry_ms,
                max_timestamp_ms=token.max_ms, token_id=token.token_id, hmac=token.hmac)
    return body


def _answer(owner: str, requester: str) -> dict[str, Any]:
    owner_type, owner_name = principal_parts(owner)
    requester_type, requester_name = principal_parts(requester)
    return {"error_code": 0, "principal_type": owner_type, "principal_name": owner_name,
            "token_requester_principal_type": requester_type,
            "token_requester_principal_name": requester_name, "token_id": "", "hmac": b"",
            "throttle_time_ms": 0}


def _refused(body: dict[str, Any], error: str) -> dict[str, Any]:
    body.update(error_code=error_code(error), issue_timestamp_ms=ERROR_TIMESTAMP,
                expiry_timestamp_ms=ERROR_TIMESTAMP, max_timestamp_ms=ERROR_TIMESTAMP)
    return body
