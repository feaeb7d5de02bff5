"""Where the mechanisms find credentials: the cluster's users' store, read at each login.

A login reads the store when it happens, so a user added, changed or removed at run time
(``FakeCluster.set_sasl_user``, AlterUserScramCredentials) counts from the next
authentication or re-authentication on; sessions already authenticated are not touched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakebroker.state.delegation_tokens import principal_parts

if TYPE_CHECKING:
    from fakebroker.state.cluster import Cluster
    from fakebroker.state.credentials import ScramCredential


@dataclass(frozen=True, slots=True)
class ScramLogin:
    """What a SCRAM exchange checks a client against, and who it then is."""

    credential: ScramCredential
    authorization_id: str  # the user, or a delegation token's owner
    expiry_ms: int | None = None  # a delegation token's expiry (bounds the session)


def scram_login(cluster: Cluster, mechanism: str, name: str, token: bool) -> ScramLogin | None:
    """The SCRAM login of ``name`` for ``mechanism``, or None when there is none.

    ``token``: the client sent the ``tokenauth=true`` extension, so ``name`` is a delegation
    token's id and the token's SCRAM credential and owner are looked up instead of a user's
    (Kafka's ScramServerCallbackHandler): the session is then the owner's (``User:`` and the
    owner's name, as Kafka's principal builder makes it) and ends when the token expires.
    An unknown, expired or removed token id finds no login.
    """
    if token:
        found = cluster.delegation_tokens.get(name, time.time_ns() // 1_000_000)
        if found is None or mechanism not in found.scram:
            return None
        return ScramLogin(found.scram[mechanism], principal_parts(found.owner)[1],
                          found.expiry_ms)
    credential = cluster.credentials.scram(mechanism, name)
    return None if credential is None else ScramLogin(credential, name)


def plain_password(cluster: Cluster, name: str) -> str | None:
    """The PLAIN password of user ``name``, or None for no such user."""
    return cluster.credentials.plain_password(name)
