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
    if token_authenticated(ctx) or ctx.listener == "PLAINTEXT":
        return False
    return not (ctx.listener == "SSL" and ctx.principal == ANONYMOUS)


def token_authenticated(ctx: RequestContext) -> bool:
    """Whether the connection logged in with a delegation token (Kafka's
    ``KafkaPrincipal.tokenAuthenticated``: a SCRAM login with the ``tokenauth=true``
    extension, ``SaslServerAuthenticator``)."""
    server = None if ctx.sasl is None else ctx.sasl.server
    if server is None:
        return False
    from fakebroker.security.sasl.scram import TOKEN_AUTH, ScramServer

    return isinstance(server, ScramServer) and server.complete and \
        server.extensions.get(TOKEN_AUTH, "").lower() == "true"


def principal_text(principal_type: str | None, principal_name: str) -> str:
    """A principal as Kafka's ``KafkaPrincipal.toString`` writes it: ``User:alice``."""
    return f"{principal_type}:{principal_name}"
