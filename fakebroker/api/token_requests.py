"""What the four delegation-token APIs share: who may ask, and how a principal is written.

Kafka answers a token request (CreateDelegationToken, Renew, Expire, Describe) only on a
connection that proves who it is (``KafkaApis.allowTokenRequests``): not on a PLAINTEXT
listener, not on an SSL listener whose client showed no certificate (``User:ANONYMOUS``), and
never on a connection that itself logged in with a delegation token. Every other connection —
SASL_PLAINTEXT, SASL_SSL, SSL with a client certificate — may.
"""

from __future__ import annotations

from fakebroker.api.context import RequestContext

ANONYMOUS = "User:ANONYMOUS"
# Kafka's DelegationTokenManager.ErrorTimestamp: the times of a refused token request.
ERROR_TIMESTAMP = -1


def allow_token_requests(ctx: RequestContext) -> bool:
    """Whether this connection may create, renew, expire or describe tokens."""
    if ctx.token_authenticated or ctx.listener == "PLAINTEXT":
        return False
    return not (ctx.listener == "SSL" and ctx.principal == ANONYMOUS)


def principal_text(principal_type: str | None, principal_name: str) -> str:
    """A principal as Kafka's ``KafkaPrincipal.toString`` writes it: ``User:alice``."""
    return f"{principal_type}:{principal_name}"
