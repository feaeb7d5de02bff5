"""The delegation tokens of a cluster, as Kafka's controller makes and keeps them (KIP-48).

A token has an id (a random Kafka ``Uuid`` in its text form), an HMAC (HMAC-SHA512 of the id's
UTF-8 bytes keyed with ``delegation.token.secret.key``, Kafka's
``DelegationTokenControlManager.createHmac``), an owner, the principal that asked for it, the
principals that may renew it, and three times in epoch milliseconds: issued, expiry (renewed
up to) and max (never renewed past).

Guarantees, as Kafka 4.4 keeps them:

* Without a secret key nothing is made: every change answers DELEGATION_TOKEN_AUTH_DISABLED.
* Create: a renewer that is not a ``User`` principal is INVALID_PRINCIPAL_TYPE (checked first,
  by the broker, before the controller looks at the key); lifetime
  ``min(delegation.token.max.lifetime.ms, asked)`` (asked <= 0: the setting), expiry
  ``min(max, now + delegation.token.expiry.time.ms)``.
* Renew and expire find the token by its HMAC (DELEGATION_TOKEN_NOT_FOUND), refuse anyone
  but its owner and its renewers (DELEGATION_TOKEN_OWNER_MISMATCH, Kafka's
  ``allowedToRenew``); renew by ``min(period, expiry.time.ms)`` (period <= 0: the setting)
  up to the max; expire with a negative period removes the token at once, otherwise
  moves its expiry to ``min(max, now + period)``.
* A token whose expiry or max time has passed is removed the next time the tokens are read,
  as Kafka's controller removes it at its expiry sweep (``delegation.token.expiry.check.
  interval.ms``, an hour by default: the fake sweeps at every use, so an expired token is gone
  at once, never half-alive).
* Each token is a SCRAM user for SCRAM-SHA-256 and SCRAM-SHA-512 (Kafka's ``TokenCache``):
  user name the token id, password the HMAC in standard base64, 4096 iterations, a random
  salt. A client logs in with it with the SCRAM extension ``tokenauth=true`` and is then its
  owner.

Times come in as arguments (``now_ms``, wall-clock epoch milliseconds), so this module keeps no
clock; nothing here is I/O, and all of it runs on the cluster's trio thread.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass, field

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.credentials import SCRAM_MECHANISMS, ScramCredential
from fakebroker.state.kafka_ids import kafka_uuid_text

USER_TYPE = "User"
LONG_MAX = 2**63 - 1


def token_hmac(secret_key: str, token_id: str) -> bytes:
    """HMAC-SHA512 of the token id keyed with the secret key (both UTF-8), as Kafka makes it."""
    return hmac.digest(secret_key.encode(), token_id.encode(), hashlib.sha512)


def principal_parts(principal: str) -> tuple[str, str]:
    """``"User:alice"`` -> ``("User", "alice")`` (Kafka's ``KafkaPrincipal`` text)."""
    kind, _, name = principal.partition(":")
    return kind, name


def _sum(now: int, duration: int) -> int:
    """``now + duration``, held at Java's ``Long.MAX_VALUE`` as Kafka holds it."""
    return LONG_MAX if now > LONG_MAX - duration else now + duration


@dataclass(slots=True)
class DelegationToken:
    """One token, as Kafka's ``TokenInformation`` and its HMAC."""

    token_id: str
    hmac: bytes
    owner: str  # principal text: "User:alice"
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int
    # mechanism -> the SCRAM credential a client logs in with (password: the HMAC, base64)
    scram: dict[str, ScramCredential] = field(default_factory=dict, repr=False)

    @property
    def hmac_base64(self) -> str:
        """The HMAC in standard base64: the token's SCRAM password."""
        return base64.b64encode(self.hmac).decode()

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's ``TokenInformation.ownerOrRenewer``: its owner, requester or a renewer."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms


class DelegationTokens:
    """The tokens of one cluster, by id; made from the ``delegation_token_*`` settings."""

    def __init__(self, secret_key: str | None, max_lifetime_ms: int,
                 expiry_time_ms: int) -> None:
        self.secret_key = secret_key
        self.max_lifetime_ms = max_lifetime_ms
        self.expiry_time_ms = expiry_time_ms
        self._tokens: dict[str, DelegationToken] = {}

    @property
    def enabled(self) -> bool:
        """Whether tokens can be made (Kafka: ``delegation.token.secret.key`` is set)."""
        return self.secret_key is not None

    def _check_enabled(self) -> None:
        if not self.enabled:
            raise ClusterError("DELEGATION_TOKEN_AUTH_DISABLED")

    def create(self, owner: str, requester: str, renewers: list[str], max_lifetime_ms: int,
               now_ms: int) -> DelegationToken:
        """A new token for ``owner``, asked by ``requester`` (principal texts)."""
        if any(principal_parts(r)[0] != USER_TYPE for r in renewers):
            raise ClusterError("INVALID_PRINCIPAL_TYPE")
        self._check_enabled()
        assert self.secret_key is not None
        lifetime = self.max_lifetime_ms
        if max_lifetime_ms > 0:
            lifetime = min(lifetime, max_lifetime_ms)
        max_ms = _sum(now_ms, lifetime)
        token_id = kafka_uuid_text()
        token = DelegationToken(
            token_id, token_hmac(self.secret_key, token_id), owner, requester, tuple(renewers),
            now_ms, max_ms, min(max_ms, _sum(now_ms, self.expiry_time_ms)))
        token.scram = {mechanism: ScramCredential.from_password(mechanism, token.hmac_base64)
                       for mechanism in SCRAM_MECHANISMS}
        self._tokens[token_id] = token
        return token

    def renew(self, token_hmac_bytes: bytes, principal: str, renew_period_ms: int,
              now_ms: int) -> int:
        """Renew the token of this HMAC for ``principal``; returns its new expiry time."""
        token = self._renewable(token_hmac_bytes, principal, now_ms)
        period = self.expiry_time_ms
        if renew_period_ms > 0:
            period = min(period, renew_period_ms)
        token.expiry_ms = min(token.max_ms, now_ms + period)
        return token.expiry_ms

    def expire(self, token_hmac_bytes: bytes, principal: str, expiry_period_ms: int,
               now_ms: int) -> int:
        """Expire the token of this HMAC in ``expiry_period_ms`` (negative: now, the token
        removed); returns its expiry time."""
        token = self._renewable(token_hmac_bytes, principal, now_ms)
        if expiry_period_ms < 0:
            del self._tokens[token.token_id]
            return now_ms
        token.expiry_ms = min(token.max_ms, _sum(now_ms, expiry_period_ms))
        return token.expiry_ms

    def _renewable(self, token_hmac_bytes: bytes, principal: str,
                   now_ms: int) -> DelegationToken:
        self._check_enabled()
        token = next((t for t in self.tokens(now_ms)
                      if hmac.compare_digest(t.hmac, token_hmac_bytes)), None)
        if token is None:
            raise ClusterError("DELEGATION_TOKEN_NOT_FOUND")
        if principal != token.owner and principal not in token.renewers:
            raise ClusterError("DELEGATION_TOKEN_OWNER_MISMATCH")
        return token

    def tokens(self, now_ms: int) -> list[DelegationToken]:
        """Every live token, oldest first (expired ones are swept away first)."""
        for token_id in [t.token_id for t in self._tokens.values() if t.expired(now_ms)]:
            del self._tokens[token_id]
        return list(self._tokens.values())

    def get(self, token_id: str, now_ms: int) -> DelegationToken | None:
        """The live token of this id, or None."""
        token = self._tokens.get(token_id)
        if token is None or token.expired(now_ms):
            return None
        return token

    def scram(self, mechanism: str, token_id: str, now_ms: int) -> ScramCredential | None:
        """The SCRAM credential of a live token for ``mechanism`` (the ``tokenauth=true``
        login), or None."""
        token = self.get(token_id, now_ms)
        return None if token is None else token.scram.get(mechanism)
