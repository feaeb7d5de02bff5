"""The SASL users of a cluster: PLAIN passwords and SCRAM credentials, as Kafka keeps them.

Kafka keeps no SCRAM password, only what RFC 5802 lets a server keep: per user and mechanism a
salt, an iteration count, ``StoredKey = H(HMAC(SaltedPassword, "Client Key"))`` and
``ServerKey = HMAC(SaltedPassword, "Server Key")``, with ``SaltedPassword =
PBKDF2-HMAC(password, salt, iterations)`` (RFC 7677 for SHA-256). The primitives are the
standard library's (``hashlib.pbkdf2_hmac``, ``hmac``).

Guarantees:

* Every ``NAME:PASSWORD`` of the ``sasl_users`` setting is a PLAIN user and has a SCRAM
  credential for SCRAM-SHA-256 and SCRAM-SHA-512 (``DEFAULT_ITERATIONS``, a random salt).
* SCRAM credentials change at run time (AlterUserScramCredentials, an operation): a change
  applies to the next authentication; sessions already authenticated keep working.
* Nothing here is I/O; all of it is changed on the cluster's trio thread.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

SCRAM_MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
DEFAULT_ITERATIONS = 4096  # Kafka's default (and minimum) for both mechanisms
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


def hash_name(mechanism: str) -> str:
    """The hashlib name of a SCRAM mechanism (``KeyError`` for another mechanism)."""
    return SCRAM_MECHANISMS[mechanism]


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """``Hi(Normalize(password), salt, i)`` of RFC 5802 (Kafka applies no SASLprep)."""
    return hashlib.pbkdf2_hmac(hash_name(mechanism), password.encode(), salt, iterations)


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What a server keeps of a SCRAM user for one mechanism."""

    mechanism: str
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: str, salted: bytes, salt: bytes,
                             iterations: int) -> ScramCredential:
        """The credential of a salted password (AlterUserScramCredentials sends one)."""
        name = hash_name(mechanism)
        client_key = hmac.digest(salted, b"Client Key", name)
        return cls(mechanism, salt, hashlib.new(name, client_key).digest(),
                   hmac.digest(salted, b"Server Key", name), iterations)

    @classmethod
    def from_password(cls, mechanism: str, password: str, salt: bytes | None = None,
                      iterations: int = DEFAULT_ITERATIONS) -> ScramCredential:
        """A new credential for ``password`` (a random salt unless given)."""
        salt = os.urandom(32) if salt is None else salt
        return cls.from_salted_password(
            mechanism, salted_password(mechanism, password, salt, iterations), salt,
            iterations)


class Credentials:
    """The users of one cluster, by name."""

    def __init__(self, users: tuple[str, ...] = ()) -> None:
        """``users``: ``NAME:PASSWORD`` texts (the ``sasl_users`` setting)."""
        self._plain: dict[str, str] = {}
        self._scram: dict[str, dict[str, ScramCredential]] = {}
        for user in users:
            name, _, password = user.partition(":")
            self._plain[name] = password
            for mechanism in SCRAM_MECHANISMS:
                self.set_scram(name, ScramCredential.from_password(mechanism, password))

    def set_user(self, user: str, password: str) -> None:
        """Add ``user``, or give it a new password, for PLAIN and both SCRAM mechanisms."""
        self._plain[user] = password
        for mechanism in SCRAM_MECHANISMS:
            self.set_scram(user, ScramCredential.from_password(mechanism, password))

    def remove_user(self, user: str) -> bool:
        """Remove ``user``'s PLAIN password and SCRAM credentials; False if it had none."""
        had = self._plain.pop(user, None) is not None
        return self._scram.pop(user, None) is not None or had

    def plain_password(self, user: str) -> str | None:
        """The PLAIN password of ``user``, or None for no such user."""
        return self._plain.get(user)

    def scram(self, mechanism: str, user: str) -> ScramCredential | None:
        """``user``'s credential for ``mechanism``, or None."""
        return self._scram.get(user, {}).get(mechanism)

    def set_scram(self, user: str, credential: ScramCredential) -> None:
        """Add or replace ``user``'s credential for ``credential.mechanism``."""
        self._scram.setdefault(user, {})[credential.mechanism] = credential

    def delete_scram(self, user: str, mechanism: str) -> bool:
        """Remove ``user``'s credential for ``mechanism``; False if there was none."""
        mechanisms = self._scram.get(user, {})
        if mechanisms.pop(mechanism, None) is None:
            return False
        if not mechanisms:
            del self._scram[user]
        return True

    def scram_users(self) -> dict[str, dict[str, ScramCredential]]:
        """Every user with a SCRAM credential -> mechanism -> credential (a copy)."""
        return {user: dict(mechanisms) for user, mechanisms in self._scram.items()}
