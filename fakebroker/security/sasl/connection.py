"""The SASL side of one connection of a SASL listener, as Kafka's broker runs it.

``SaslConnection`` is Kafka's SaslServerAuthenticator with the session rules of KafkaChannel
and SocketServer, with no I/O in it: the pipeline asks it about each frame (``admit``) and
tells it each answer (``answered``), and the SaslHandshake and SaslAuthenticate handlers run
the exchange through it (``handshake``, ``authenticate``).

Before authentication (Kafka's SaslServerAuthenticator):

* A connection may send ApiVersions (once answered without error, not again) and then must
  send SaslHandshake; any other request closes it unanswered.
* SaslHandshake names a mechanism: one not enabled gets UNSUPPORTED_SASL_MECHANISM with the
  enabled ones (listed in the order Kafka's HashSet gives them), then the connection closes.
  After SaslHandshake v1 the tokens come in SaslAuthenticate requests; any other request
  gets that request's answer with ILLEGAL_SASL_STATE, then the connection closes. After
  SaslHandshake v0 the tokens come unframed: each frame is a raw token answered by a raw
  size-prefixed token (``admit`` answers it), and a failure closes the connection
  unanswered.
* A failed SaslAuthenticate gets SASL_AUTHENTICATION_FAILED with Kafka's message, then the
  connection closes (Kafka first waits connection.failed.authentication.delay.ms, 100 ms;
  here the answer goes at once).
* On success the connection's principal becomes ``User:<name>``.

Sessions (KIP-368): with ``connections_max_reauth_ms`` > 0, or a credential that expires (an
OAUTHBEARER token's ``exp``), the session has a lifetime, sent in SaslAuthenticate v1+'s
``session_lifetime_ms`` (the shorter of the two, never negative). The first request other
than SaslHandshake that comes after the session's end closes the connection unanswered
(SocketServer's expired-session check). SaslHandshake on an authenticated connection with a
session lifetime starts a re-authentication (at most one a second: one sooner, and any
SaslHandshake on a session without a lifetime, is answered ILLEGAL_SASL_STATE as Kafka's
request handler answers it); the same mechanism and principal must be used, else the
re-authentication fails and the connection closes; while it runs, only SaslAuthenticate may
come. Connections already authenticated keep working when credentials change: they are
checked again only when the client re-authenticates.

A frame is judged when its handling starts. Kafka reads a connection's frames one at a time
while it authenticates; here a request sent before the answer to the SaslAuthenticate that
completes the exchange may be judged before that one is handled, and refused (no client
does this: each waits for its authentication to complete).
"""

from __future__ import annotations

import enum
import logging
import struct
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from fakebroker.protocol.errors import error_code
from fakebroker.security.sasl.logins import plain_password, scram_login
from fakebroker.security.sasl.mechanisms import (
    AuthenticationFailed,
    ExchangeBroken,
    InvalidCredentials,
    MechanismServer,
)

if TYPE_CHECKING:
    from fakebroker.outcomes import Peer
    from fakebroker.state.cluster import Cluster

log = logging.getLogger("fakebroker")

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
MIN_REAUTH_INTERVAL_MS = 1000  # KafkaChannel: at most one re-authentication a second
_API_KEY = struct.Struct(">h")
_SIZE = struct.Struct(">i")


class State(enum.Enum):
    """Where a connection's exchange stands (Kafka's SaslState, its INITIAL_REQUEST merged
    into HANDSHAKE_OR_VERSIONS: Kafka 4 tells them apart in a log line only)."""

    HANDSHAKE_OR_VERSIONS = "ApiVersions or SaslHandshake expected"
    HANDSHAKE = "SaslHandshake expected"
    AUTHENTICATE = "SASL tokens expected"
    REAUTH_BAD_MECHANISM = "re-authentication with another mechanism"
    COMPLETE = "authenticated"
    FAILED = "authentication failed"


class Refused:
    """``admit``'s verdict on a frame the connection closes for: ``reason`` is logged;
    ``illegal_state``: the request is first answered with ILLEGAL_SASL_STATE."""

    __slots__ = ("reason", "illegal_state")

    def __init__(self, reason: str, illegal_state: bool = False) -> None:
        self.reason = reason
        self.illegal_state = illegal_state


class SaslConnection:
    """The SASL exchange and session of one connection; ``peer`` is its connection, whose
    principal it sets, and ``cluster`` the cluster whose settings and users it reads."""

    def __init__(self, peer: Peer, cluster: Cluster) -> None:
        self.peer = peer
        self.cluster = cluster
        self.enabled = java_hash_set_order(cluster.settings.sasl_mechanisms)
        self.state = State.HANDSHAKE_OR_VERSIONS
        self.mechanism: str | None = None
        self.framed = True  # tokens in SaslAuthenticate requests (SaslHandshake v1+)
        self.server: MechanismServer | None = None
        self.expires_ms: int | None = None  # when the session ends, if it does
        self.failure: str | None = None  # why the exchange failed
        self._previous: tuple[str, str] | None = None  # mechanism, principal: re-authenticating
        self._reauth_started_ms: int | None = None

    # -- what the pipeline asks -----------------------------------------------------------

    def admit(self, frame: bytes, now_ms: int) -> Refused | bytes | None:
        """What becomes of a request frame: None to serve it; ``Refused`` to close the
        connection; or, for an unframed token, the raw answer to write (size-prefixed)."""
        state = self.state
        if state is State.COMPLETE:
            if len(frame) >= 2 and _API_KEY.unpack_from(frame)[0] == SASL_HANDSHAKE \
                    and self.may_reauthenticate(now_ms):
                return None
            if self.expires_ms is not None and now_ms > self.expires_ms:
                return Refused(f"SASL session of {self.peer.principal} expired "
                               f"{now_ms - self.expires_ms} ms ago (no re-authentication)")
            return None
        if state is State.AUTHENTICATE and not self.framed:
            return self._raw_token(frame, now_ms)
        if state is State.FAILED:
            return Refused(f"SASL authentication failed: {self.failure}")
        if state is State.REAUTH_BAD_MECHANISM:
            return self._fail(self.failure or "")
        api_key = _API_KEY.unpack_from(frame)[0] if len(frame) >= 2 else -1
        if state is State.AUTHENTICATE:
            if api_key == SASL_AUTHENTICATE:
                return None
            return Refused(f"unexpected request (API key {api_key}) during SASL "
                           "authentication", illegal_state=True)
        if api_key == SASL_HANDSHAKE or (api_key == API_VERSIONS
                                         and state is State.HANDSHAKE_OR_VERSIONS):
            return None
        return Refused(f"unexpected request (API key {api_key}) during SASL handshake: "
                       "authenticate first")

    def answered(self, api_key: int, response: Mapping[str, Any]) -> str | None:
        """Take note of the answer to a request ``admit`` let through; the reason to close
        the connection after writing it, if it must close (a failed exchange, also one a
        fault rule failed)."""
        failed = response.get("error_code", 0)
        if api_key == API_VERSIONS:
            if not failed and self.state is State.HANDSHAKE_OR_VERSIONS:
                self.state = State.HANDSHAKE
            return None
        if api_key not in (SASL_HANDSHAKE, SASL_AUTHENTICATE) or self.state is State.COMPLETE:
            return None
        if failed and self.state is not State.FAILED:
            self._fail(response.get("error_message") or f"error {failed}")
        return None if self.state is not State.FAILED else \
            f"SASL authentication failed: {self.failure}"

    # -- what the handlers run ------------------------------------------------------------

    @property
    def authenticated(self) -> bool:
        """Whether the connection is authenticated (and not re-authenticating)."""
        return self.state is State.COMPLETE

    def may_reauthenticate(self, now_ms: int) -> bool:
        """Whether a SaslHandshake now starts a re-authentication (KafkaChannel's rules: an
        authenticated session with a lifetime, the last re-authentication a second ago)."""
        return (self.state is State.COMPLETE and self.expires_ms is not None
                and (self._reauth_started_ms is None
                     or now_ms - self._reauth_started_ms >= MIN_REAUTH_INTERVAL_MS))

    def handshake(self, version: int, mechanism: str, now_ms: int) -> dict[str, Any]:
        """SaslHandshake's answer (the caller checked ``may_reauthenticate`` when the
        connection is authenticated)."""
        if self.state is State.COMPLETE:
            assert self.mechanism is not None
            self._previous = (self.mechanism, self.peer.principal)
            self._reauth_started_ms = now_ms
        self.framed = version >= 1
        if mechanism not in self.enabled:
            self._fail(f"Unsupported SASL mechanism {mechanism}")
            return {"error_code": error_code("UNSUPPORTED_SASL_MECHANISM"),
                    "mechanisms": self.enabled}
        if self._previous is not None and mechanism != self._previous[0]:
            self.failure = (f"SASL mechanism '{mechanism}' requested by client is not "
                            f"supported for re-authentication of mechanism "
                            f"'{self._previous[0]}'")
            self.state = State.REAUTH_BAD_MECHANISM
        else:
            self.mechanism = mechanism
            self.server = self._server(mechanism)
            self.state = State.AUTHENTICATE
        return {"error_code": 0, "mechanisms": self.enabled}

    def authenticate(self, version: int, token: bytes, now_ms: int) -> dict[str, Any]:
        """SaslAuthenticate's answer to a token (state ``AUTHENTICATE``); raises
        ``ExchangeBroken`` when the connection must close unanswered."""
        try:
            challenge = self._evaluate(token, now_ms)
        except AuthenticationFailed as exc:
            return self._failed(str(exc))
        except InvalidCredentials as exc:
            log.info("SASL %s: %s", self.mechanism, exc)
            return self._failed(f"Authentication failed during {self._doing()} due to "
                                f"invalid credentials with SASL mechanism {self.mechanism}")
        except ExchangeBroken as exc:
            self._fail(str(exc))
            raise
        lifetime_ms = self._session_lifetime(now_ms) if self.state is State.COMPLETE else 0
        return {"error_code": 0, "error_message": "", "auth_bytes": challenge,
                "session_lifetime_ms": lifetime_ms}

    # -- the steps ------------------------------------------------------------------------

    def _server(self, mechanism: str) -> MechanismServer:
        cluster = self.cluster
        if mechanism == "PLAIN":
            from fakebroker.security.sasl.plain import PlainServer

            return PlainServer(lambda name: plain_password(cluster, name))
        if mechanism == "OAUTHBEARER":
            from fakebroker.security.sasl.oauthbearer import OAuthBearerServer

            return OAuthBearerServer()
        from fakebroker.security.sasl.scram import ScramServer

        return ScramServer(mechanism, lambda *login: scram_login(cluster, *login))

    def _evaluate(self, token: bytes, now_ms: int) -> bytes:
        """The server's challenge; on completion the principal is set (the same one when
        re-authenticating) and ``state`` is ``COMPLETE``."""
        server = self.server
        assert server is not None
        challenge = server.evaluate(token, now_ms)
        if server.complete:
            principal = f"User:{server.authorization_id}"
            if self._previous is not None and principal != self._previous[1]:
                before = self._previous[1].replace(":", ".", 1)
                raise AuthenticationFailed("Cannot change principals during re-authentication "
                                           f"from {before}: {principal.replace(':', '.', 1)}")
            self.peer.principal = principal
            self.state = State.COMPLETE
        return challenge

    def _session_lifetime(self, now_ms: int) -> int:
        """The session's lifetime from now (0: none), as Kafka's ReauthInfo works it out;
        the session ends then. A connection without one needs no more looking after."""
        assert self.server is not None
        expiry = self.server.credential_expiry_ms
        most = self.cluster.settings.connections_max_reauth_ms
        self._previous = None
        if expiry is None and not most:
            self.expires_ms = None
            self.peer.gated = False
            return 0
        if expiry is None:
            lifetime = most
        else:
            lifetime = max(0, expiry - now_ms if not most else min(expiry - now_ms, most))
        self.expires_ms = now_ms + lifetime
        return lifetime

    def _raw_token(self, frame: bytes, now_ms: int) -> Refused | bytes:
        """The raw answer to an unframed token (SaslHandshake v0); a failure closes the
        connection unanswered."""
        try:
            challenge = self._evaluate(frame, now_ms)
        except (AuthenticationFailed, InvalidCredentials, ExchangeBroken) as exc:
            return self._fail(str(exc))
        if self.state is State.COMPLETE:
            self._session_lifetime(now_ms)
        return _SIZE.pack(len(challenge)) + challenge

    def _failed(self, message: str) -> dict[str, Any]:
        self._fail(message)
        return {"error_code": error_code("SASL_AUTHENTICATION_FAILED"),
                "error_message": message, "auth_bytes": b""}

    def _fail(self, reason: str) -> Refused:
        self.state = State.FAILED
        self.failure = reason
        return Refused(f"SASL authentication failed: {reason}")

    def _doing(self) -> str:
        return "re-authentication" if self._previous is not None else "authentication"


def java_hash_set_order(names: Iterable[str]) -> list[str]:
    """``names`` in the order Java's ``new ArrayList<>(new HashSet<>(names))`` lists them, as
    Kafka lists its enabled mechanisms: by bucket of the HashMap's table (16 buckets for up
    to 11 names), each bucket in insertion order. Names are ASCII, as mechanism names are."""
    unique = list(dict.fromkeys(names))
    buckets = 16
    while buckets < int(len(unique) / 0.75) + 1:
        buckets *= 2

    def bucket(name: str) -> int:
        h = 0
        for char in name:  # String.hashCode
            h = (31 * h + ord(char)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (buckets - 1)

    return sorted(unique, key=bucket)  # stable: insertion order within a bucket
