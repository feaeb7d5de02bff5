"""SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer checks it, with its messages.

The client's one token is ``[authzid] NUL authcid NUL passwd``. The password is compared in
constant time with the user's (``hmac.compare_digest``); an authorization id, if sent, must be
the user name. Every failure is told to the client in Kafka's words.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from fakebroker.security.sasl.mechanisms import AuthenticationFailed, ExchangeBroken


class PlainServer:
    """One PLAIN authentication; ``password_of(user)`` is the user's password or None."""

    def __init__(self, password_of: Callable[[str], str | None]) -> None:
        self._password_of = password_of
        self.complete = False
        self.authorization_id = ""
        self.credential_expiry_ms: int | None = None

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        if self.complete:
            raise ExchangeBroken("PLAIN: a token after the exchange completed")
        authzid, user, password = _tokens(token.decode("utf-8", "replace"))
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        expected = self._password_of(user)
        if expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed("Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        self.authorization_id = user
        self.complete = True
        return b""


def _tokens(message: str) -> list[str]:
    """The message's three NUL-separated parts, split as Kafka splits them (at most four)."""
    tokens: list[str] = []
    start = 0
    for _ in range(4):
        end = message.find("\0", start)
        if end == -1:
            tokens.append(message[start:])
            break
        tokens.append(message[start:end])
        start = end + 1
    if len(tokens) != 3:
        raise AuthenticationFailed(
            f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
    return tokens
