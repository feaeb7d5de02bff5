"""SaslHandshake (key 17): the SASL mechanism a client means to authenticate with.

Versions: 0-1. Never flexible.

Behavior:
* On a SASL listener (SASL_PLAINTEXT, SASL_SSL) before authentication: a mechanism the
  cluster enables (``sasl_mechanisms``) is accepted, and the answer lists the enabled ones in
  the order Kafka lists them; another gets UNSUPPORTED_SASL_MECHANISM with that list, then
  the connection closes. v1: the tokens follow in SaslAuthenticate requests; v0: unframed,
  as raw size-prefixed tokens (``fakebroker.security.sasl.connection``).
* On an authenticated SASL connection whose session has a lifetime
  (``connections_max_reauth_ms``, an OAUTHBEARER token's expiry), it starts a
  re-authentication (KIP-368), at most one a second, with the same mechanism.
* Anywhere else (a PLAINTEXT or SSL listener, a session without a lifetime, a second
  re-authentication within a second): ILLEGAL_SASL_STATE with no mechanisms, as Kafka's
  request handler answers.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import NOTHING
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code

API_KEY = 17
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = NOTHING  # Kafka authorizes neither: they come before a principal exists


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    sasl, now_ms = ctx.sasl, ctx.now_ms()
    if sasl is None or (sasl.authenticated and not sasl.may_reauthenticate(now_ms)):
        return {"error_code": error_code("ILLEGAL_SASL_STATE"), "mechanisms": []}
    return sasl.handshake(ctx.version, request.mechanism, now_ms)
