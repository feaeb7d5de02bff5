"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer runs them.

Two client messages, two server messages::

    client-first  n,[a=authzid],n=user,r=cnonce[,ext=value...]
    server-first  r=cnonce+snonce,s=base64(salt),i=iterations
    client-final  c=base64(gs2-header),r=cnonce+snonce,p=base64(ClientProof)
    server-final  v=base64(ServerSignature)

The server keeps no password, only the user's stored credential (``StoredKey``,
``ServerKey``, salt, iterations: ``fakebroker.state.credentials``). It checks the proof as RFC
5802 says: ``ClientSignature = HMAC(StoredKey, AuthMessage)``, ``H(ClientProof XOR
ClientSignature)`` must be ``StoredKey`` (compared in constant time); it proves itself with
``HMAC(ServerKey, AuthMessage)``. The primitives are the standard library's (``hmac``,
``hashlib``, ``secrets``).

As Kafka: messages are matched by Kafka's own patterns (a user name is ASCII, ``=2C`` and
``=3D`` escaped); extensions of the first message are read (``tokenauth=true`` makes the
user name a delegation token id, ``fakebroker.security.sasl.logins.scram_login``), others
ignored; the channel binding is not checked; the final message's nonce must end with the
server-first nonce; an authorization id, if sent, must be the user name (told to the client);
every other failure (unknown user, bad nonce, wrong proof, a malformed message, fewer than
4096 iterations) is ``InvalidCredentials``: the client learns no more than that.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

from fakebroker.security.sasl.logins import ScramLogin
from fakebroker.security.sasl.mechanisms import (
    AuthenticationFailed,
    ExchangeBroken,
    InvalidCredentials,
)
from fakebroker.state.credentials import MIN_ITERATIONS, hash_name

# Kafka's ScramMessages patterns, in Python's words ([\x01-\x7F&&[^=,]] and the like).
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")
TOKEN_AUTH = "tokenauth"  # the extension of a delegation-token login (Kafka's ScramLoginModule)

# Finds the SCRAM login of a user (or token id) for a mechanism: (mechanism, name, token).
LoginLookup = Callable[[str, str, bool], ScramLogin | None]


class ScramServer:
    """One SCRAM authentication with ``mechanism``; ``lookup`` finds the client's login."""

    def __init__(self, mechanism: str, lookup: LoginLookup) -> None:
        self.mechanism = mechanism
        self._hash = hash_name(mechanism)
        self._lookup = lookup
        self._login: ScramLogin | None = None
        self._first_bare = ""  # client-first-message-bare
        self._server_first = ""
        self._nonce = ""  # client nonce + server nonce
        self.extensions: dict[str, str] = {}
        self.complete = False
        self.authorization_id = ""
        self.credential_expiry_ms: int | None = None

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        if self.complete:
            raise ExchangeBroken(f"{self.mechanism}: a token after the exchange completed")
        message = token.decode("utf-8", "replace")
        if self._login is None:
            return self._first(message).encode()
        return self._final(message).encode()

    def _first(self, message: str) -> str:
        found = CLIENT_FIRST.fullmatch(message)
        if found is None:
            raise InvalidCredentials(f"Invalid SCRAM client first message format: {message}")
        extensions = found["extensions"]
        self.extensions = dict(item.split("=", 1) for item in extensions[1:].split(",")
                               ) if extensions else {}
        token = self.extensions.get(TOKEN_AUTH, "").lower() == "true"
        username = _username(found["saslname"])
        login = self._lookup(self.mechanism, username, token)
        if login is None:
            raise InvalidCredentials(f"Token Authentication failed: Invalid tokenId : {username}"
                                     if token else "Authentication failed: Invalid user "
                                     "credentials")
        if found["authzid"] and found["authzid"] != username:
            raise AuthenticationFailed("Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        if login.credential.iterations < MIN_ITERATIONS:
            raise InvalidCredentials(f"Iterations {login.credential.iterations} is less than "
                                     f"the minimum {MIN_ITERATIONS} for {self.mechanism}")
        self._login = login
        self._nonce = found["nonce"] + _server_nonce()
        self._first_bare = f"n={found['saslname']},r={found['nonce']}{extensions}"
        salt = base64.b64encode(login.credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={login.credential.iterations}"
        return self._server_first

    def _final(self, message: str) -> str:
        assert self._login is not None
        found = CLIENT_FINAL.fullmatch(message)
        if found is None:
            raise InvalidCredentials(f"Invalid SCRAM client final message format: {message}")
        if not found["nonce"].endswith(self._nonce):
            raise InvalidCredentials("Invalid client nonce in the final client message.")
        try:
            channel = base64.b64encode(base64.b64decode(found["channel"])).decode()
            proof = base64.b64decode(found["proof"])
        except binascii.Error as exc:
            raise InvalidCredentials(f"Invalid SCRAM client final message: {exc}") from None
        auth_message = (f"{self._first_bare},{self._server_first},"
                        f"c={channel},r={found['nonce']}").encode()
        credential = self._login.credential
        signature = hmac.digest(credential.stored_key, auth_message, self._hash)
        if len(proof) != len(signature):  # Kafka's xor throws: the exchange breaks
            raise ExchangeBroken(f"{self.mechanism}: a client proof of {len(proof)} bytes")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(),
                                   credential.stored_key):
            raise InvalidCredentials("Invalid client credentials")
        self.authorization_id = self._login.authorization_id
        self.credential_expiry_ms = self._login.expiry_ms
        self.complete = True
        server_signature = hmac.digest(credential.server_key, auth_message, self._hash)
        return "v=" + base64.b64encode(server_signature).decode()


def _username(saslname: str) -> str:
    """The user name a SCRAM ``saslname`` escapes (``=2C`` is ``,``, ``=3D`` is ``=``)."""
    name = saslname.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise InvalidCredentials("Authentication failed: Credentials could not be obtained")
    return name.replace("=3D", "=")


def _server_nonce() -> str:
    """A random nonce as Kafka makes one: 130 random bits written in base 36."""
    value, digits = secrets.randbits(130), []
    while value:
        value, digit = divmod(value, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
    return "".join(reversed(digits)) or "0"
