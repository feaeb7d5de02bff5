"""SASL/OAUTHBEARER (RFC 7628) as Kafka's OAuthBearerSaslServer runs it with its default,
unsecured token validator (OAuthBearerUnsecuredValidatorCallbackHandler).

The client's first message is ``n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A...]^A``
(``^A`` is 0x01). The token must be an unsecured JWS as Kafka's OAuthBearerUnsecuredJws reads
one: three dot-separated base64url parts, a header whose ``alg`` is ``none``, an empty
signature; claims with ``exp`` (a number, in the future), ``sub`` (a non-blank string: the
principal's name), ``iat`` if present a number not in the future and before ``exp``; a
``scope`` claim, if present, a string or a list. No clock skew is allowed and no scope is
required (the validator's defaults).

A token that fails gets Kafka's error exchange: the server answers ``{"status":
"invalid_token"}`` (not an error: a challenge), the client sends ``^A`` and the server then
fails the authentication with that JSON as the message. A message that does not parse is
``InvalidCredentials``; a header without ``alg``, or a scheme other than Bearer, breaks the
exchange (Kafka throws where it catches nothing: the connection closes unanswered).
Extensions are accepted (the unsecured validator accepts every one). Once complete, the
token's ``exp`` is the credential's expiry, which bounds the session (KIP-368).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any

from fakebroker.security.sasl.mechanisms import (
    AuthenticationFailed,
    ExchangeBroken,
    InvalidCredentials,
)

_SEPARATOR = "\x01"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)", re.ASCII)
INVALID_TOKEN = '{"status":"invalid_token"}'


class InvalidToken(Exception):
    """The token is not valid (the message is logged; the client gets ``invalid_token``)."""


class OAuthBearerServer:
    """One OAUTHBEARER authentication, tokens checked by Kafka's unsecured validator."""

    def __init__(self) -> None:
        self._error: str | None = None  # the JSON error sent, awaiting the client's ^A
        self.complete = False
        self.authorization_id = ""
        self.credential_expiry_ms: int | None = None
        self.extensions: dict[str, str] = {}

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        if self.complete:
            raise ExchangeBroken("OAUTHBEARER: a token after the exchange completed")
        if token == _SEPARATOR.encode() and self._error is not None:
            raise AuthenticationFailed(self._error)
        self._error = None
        authzid, bearer, extensions = _client_first(token.decode("utf-8", "replace"))
        try:
            principal, expiry_ms = validate_unsecured_jws(bearer, now_ms)
        except InvalidToken:
            self._error = INVALID_TOKEN
            return INVALID_TOKEN.encode()
        if authzid and authzid != principal:
            raise AuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) "
                f"that is different from the token's principal name ({principal})")
        self.extensions = extensions
        self.authorization_id = principal
        self.credential_expiry_ms = expiry_ms
        self.complete = True
        return b""


def _client_first(message: str) -> tuple[str, str, dict[str, str]]:
    """The authorization id, bearer token and extensions of a client's first message."""
    found = CLIENT_FIRST.fullmatch(message)
    if found is None:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message")
    pairs = dict(item.split("=", 1) for item in found["kvpairs"].split(_SEPARATOR) if item)
    auth = pairs.pop("auth", None)
    if auth is None:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message: 'auth' not "
                                 "specified")
    bearer = AUTH.fullmatch(auth)
    if bearer is None:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message: invalid 'auth' "
                                 "format")
    if bearer["scheme"].lower() != "bearer":  # Kafka's message names a group its pattern
        raise ExchangeBroken("Invalid scheme in OAUTHBEARER client first message")  # lacks
    return found["authzid"] or "", bearer["token"], pairs


def validate_unsecured_jws(token: str, now_ms: int) -> tuple[str, int]:
    """The principal name and expiry (ms) of an unsecured JWS valid at ``now_ms``, checked
    as Kafka's OAuthBearerUnsecuredJws and its unsecured validator check it; ``InvalidToken``
    if it is not valid."""
    if ".." in token:
        raise InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("Unsecured JWS compact serializations must have 3 dot-separated "
                           "Base64URL-encoded values")
    header, claims = _json_part(parts[0]), _json_part(parts[1])
    if "alg" not in header:
        raise ExchangeBroken("JWS header must have an Algorithm value")
    if header["alg"] != "none":
        raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise InvalidToken("Unsecured JWS must not contain a digital signature")
    scope = claims.get("scope")
    if scope is not None and not isinstance(scope, str | list):
        raise InvalidToken("The 'scope' claim was not of type List")
    expiry, issued = _number_claim(claims, "exp"), _number_claim(claims, "iat")
    if expiry is None:
        raise InvalidToken("No expiration time in JWT")
    principal = claims.get("sub")
    if not isinstance(principal, str):
        raise InvalidToken("The 'sub' claim was not of type String" if principal is not None
                           else "No principal name in JWT claim: sub")
    if not principal.strip():
        raise InvalidToken("No principal name in JWT claim: sub")
    if issued is not None and 1000 * issued > now_ms:
        raise InvalidToken("The Issued At value was after the indicated time")
    if now_ms >= 1000 * expiry:
        raise InvalidToken("The indicated time was on or after the Expiration Time value")
    if issued is not None and expiry <= issued:
        raise InvalidToken("The Expiration Time time was not after the Issued At time")
    return principal, math.floor(expiry * 1000 + 0.5)  # Java's Math.round


def _json_part(part: str) -> dict[str, Any]:
    """A base64url part's JSON object, members converted as Kafka converts them (a number
    stays one; an array becomes a list of texts; anything else its text, so ``true`` is
    ``"true"`` and ``null`` is ``"null"``); a JSON value that is no object has no members."""
    try:
        decoded = base64.b64decode(part + "=" * (-len(part) % 4), altchars=b"-_",
                                   validate=True)
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed Base64 URL encoded value") from None
    if len(part) % 4 == 1 or "+" in part or "/" in part:
        raise InvalidToken("malformed Base64 URL encoded value")
    try:
        text = decoded.decode()
        value, _ = json.JSONDecoder(parse_constant=_no_constant).raw_decode(text.lstrip())
    except (UnicodeDecodeError, ValueError):
        raise InvalidToken("malformed JSON") from None
    if not isinstance(value, dict):
        return {}
    return {name: [_text(item) for item in member] if isinstance(member, list)
            else member if _is_number(member) else _text(member)
            for name, member in value.items()}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(value: Any) -> str:
    """A JSON value's text, as Jackson's ``asText`` writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if _is_number(value):
        return str(value)
    return ""


def _number_claim(claims: dict[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is not None and not _is_number(value):
        raise InvalidToken(f"The '{name}' claim was not of type Number")
    return value
