"""What every mechanism's server is: tokens in, tokens out, and the failures Kafka tells apart.

Kafka's SaslServerAuthenticator answers a failed exchange by the kind of exception the
mechanism's ``SaslServer`` raised:

* ``AuthenticationFailed`` (Kafka's SaslAuthenticationException): SASL_AUTHENTICATION_FAILED
  with this message, written for the client ("Authentication failed: Invalid username or
  password");
* ``InvalidCredentials`` (Kafka's SaslException): SASL_AUTHENTICATION_FAILED with a message
  that tells nothing of the cause ("Authentication failed during authentication due to invalid
  credentials with SASL mechanism SCRAM-SHA-256"); the cause is only logged;
* ``ExchangeBroken`` (any other exception escaping Kafka's SaslServer): the connection closes
  without an answer.
"""

from __future__ import annotations

from typing import Protocol


class AuthenticationFailed(Exception):
    """The exchange failed; the client is told this message."""


class InvalidCredentials(Exception):
    """The exchange failed; the client is told only that its credentials were invalid."""


class ExchangeBroken(Exception):
    """The exchange cannot go on; the connection closes unanswered."""


class MechanismServer(Protocol):
    """The server side of one mechanism's exchange, for one authentication."""

    complete: bool  # the client is authenticated
    authorization_id: str  # once complete: who it is (the principal's name)
    credential_expiry_ms: int | None  # once complete: when its credential expires, if ever

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        """The challenge answering the client's ``token`` (``now_ms``: wall-clock time);
        raises one of this module's exceptions when the exchange fails."""
        ...
