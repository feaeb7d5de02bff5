"""SaslAuthenticate (key 36): one SASL token of the client, answered by the server's.

Versions: 0-2. Flexible from v2. ``session_lifetime_ms`` from v1 (KIP-368).

Behavior (``fakebroker.security.sasl``: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER):
* After SaslHandshake v1 on a SASL listener, each token gets the mechanism's answer; the
  last one authenticates the connection (its principal becomes ``User:<name>``) and carries
  the session's lifetime (0: none).
* A failed exchange gets SASL_AUTHENTICATION_FAILED with Kafka's message (PLAIN's
  "Authentication failed: Invalid username or password"; SCRAM's "Authentication failed
  during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"), then
  the connection closes; an exchange Kafka's SaslServer breaks off closes it unanswered.
* After authentication, or on a PLAINTEXT or SSL listener: ILLEGAL_SASL_STATE, "SaslAuthenticate
  request received after successful authentication", as Kafka's request handler answers.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import NOTHING
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code

API_KEY = 36
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = NOTHING  # Kafka authorizes neither: they come before a principal exists


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    sasl = ctx.sasl
    if sasl is None or sasl.authenticated:
        return {"error_code": error_code("ILLEGAL_SASL_STATE"),
                "error_message": "SaslAuthenticate request received after successful "
                                 "authentication", "auth_bytes": b""}
    from fakebroker.security.sasl.mechanisms import ExchangeBroken

    try:
        return sasl.authenticate(ctx.version, bytes(request.auth_bytes), ctx.now_ms())
    except ExchangeBroken as exc:
        raise ConnectionClosed(f"SASL authentication failed: {exc}") from None
