"""The client's side of the SASL exchanges, for tests that speak SASL frame by frame.

Built from the RFCs with the standard library, independently of the broker's code: a PLAIN
message (RFC 4616), a SCRAM client (RFC 5802/7677) and an unsecured JWS as Kafka's
OAuthBearerUnsecuredLoginCallbackHandler makes one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any


def plain(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


class ScramClient:
    """One SCRAM exchange of a client: ``first()``, ``final(server_first)``, then
    ``verify(server_final)``."""

    def __init__(self, mechanism: str, user: str, password: str,
                 extensions: str = "") -> None:
        self.hash = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.user, self.password = user, password
        self.nonce = secrets.token_urlsafe(18)
        self.first_bare = f"n={user},r={self.nonce}{extensions}"
        self.auth_message = b""
        self.salted = b""

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes, nonce: str | None = None) -> bytes:
        """The client-final message; ``nonce`` overrides the combined nonce it sends."""
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        combined = nonce if nonce is not None else fields["r"]
        self.salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(),
                                          base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c={base64.b64encode(b'n,,').decode()},r={combined}"
        self.auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.digest(self.salted, b"Client Key", self.hash)
        stored_key = hashlib.new(self.hash, client_key).digest()
        signature = hmac.digest(stored_key, self.auth_message, self.hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        server_key = hmac.digest(self.salted, b"Server Key", self.hash)
        expected = hmac.digest(server_key, self.auth_message, self.hash)
        return server_final == b"v=" + base64.b64encode(expected)


def unsecured_jws(claims: dict[str, Any], header: dict[str, Any] | None = None) -> str:
    """An unsecured JWS (alg none, no signature) carrying ``claims``."""
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part(header if header is not None else {'alg': 'none'})}.{part(claims)}."


def jwt_claims(sub: str = "alice", lifetime_s: float = 3600, **more: Any) -> dict[str, Any]:
    """Claims issued now (whole seconds, as librdkafka writes them) for ``lifetime_s``."""
    now = int(time.time())
    return {"sub": sub, "iat": now, "exp": now + lifetime_s, **more}


def oauthbearer(token: str, authzid: str = "", **extensions: str) -> bytes:
    """The client's first OAUTHBEARER message (RFC 7628) for ``token``."""
    pairs = "".join(f"{key}={value}\x01" for key, value in extensions.items())
    gs2 = f"n,{'a=' + authzid if authzid else ''},"
    return f"{gs2}\x01auth=Bearer {token}\x01{pairs}\x01".encode()
