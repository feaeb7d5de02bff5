"""The credential APIs under the authorizer, on the secure preset, on both brokers (run with
``--kafka=both``): alice (no super user) logs in by SCRAM-SHA-512 on SASL_PLAINTEXT, the admin
(a super user) likewise, and ACLs are granted over the PLAINTEXT listener (ANONYMOUS is a
super user there).

As Kafka 4.4 authorizes them (KafkaApis, ControllerApis, DelegationTokenManager.filterToken):
DescribeUserScramCredentials needs DESCRIBE on the cluster and AlterUserScramCredentials ALTER
(else CLUSTER_AUTHORIZATION_FAILED); a delegation token for another owner needs CREATE_TOKENS
on ``User:<owner>`` (else DELEGATION_TOKEN_AUTHORIZATION_FAILED, no token, times -1); and
DescribeDelegationToken lists only the tokens the caller owns, asked for or renews, or may
describe (DESCRIBE on the token, DESCRIBE_TOKENS on its owner).

The real broker is shared by the session: each test names its own owners and users, and looks
only at the tokens it made. Kafka applies a token or an ACL on its controller and answers from
each broker's copy a moment later: the tests wait for what they made to be shown.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.protocol.errors import error_code
from fakebroker.real_cluster import wait_for
from fakebroker.state.credentials import salted_password
from fakebroker.wire_client import WireClient
from tests.security import SECURE, allow, logged_in

pytestmark = [pytest.mark.security, pytest.mark.fake_kafka(**SECURE)]

# Kafka's ResourceType and AclOperation codes.
CLUSTER, DELEGATION_TOKEN, USER = 4, 6, 7
ALTER, DESCRIBE, CREATE_TOKENS, DESCRIBE_TOKENS = 7, 8, 13, 14


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def alice(kafka: Any) -> Iterator[WireClient]:
    with logged_in(kafka, "alice") as client:
        yield client


@pytest.fixture
def admin(kafka: Any) -> Iterator[WireClient]:
    with logged_in(kafka, "admin") as client:
        yield client


def create_token(client: WireClient, owner: str | None = None,
                 renewers: tuple[str, ...] = ()) -> Any:
    """CreateDelegationToken v3 (for ``owner``, default the caller)."""
    return client.request("CreateDelegationToken", 3, {
        "owner_principal_type": "User" if owner else None, "owner_principal_name": owner,
        "renewers": [{"principal_type": "User", "principal_name": r} for r in renewers],
        "max_lifetime_ms": -1})


def shown_ids(client: WireClient) -> set[str]:
    answer = client.request("DescribeDelegationToken", 3, {"owners": None})
    assert answer.error_code == 0, answer
    return {token.token_id for token in answer.tokens}


# -- SCRAM credentials ----------------------------------------------------------------------------

def test_describing_scram_users_needs_describe_on_the_cluster(kafka, alice):
    asked = {"users": [{"name": "alice"}]}
    refused = alice.request("DescribeUserScramCredentials", 0, asked)
    denied = error_code("CLUSTER_AUTHORIZATION_FAILED")
    assert (refused.error_code, refused.error_message) == (denied, None)
    assert [(r.user, r.error_code, r.error_message, list(r.credential_infos))
            for r in refused.results] == [("", denied, None, [])]  # one per user, nameless

    allow(kafka, CLUSTER, "kafka-cluster", DESCRIBE)
    allowed = alice.request("DescribeUserScramCredentials", 0, asked)
    assert allowed.error_code == 0
    assert [(r.user, r.error_code, len(r.credential_infos)) for r in allowed.results] == [
        ("alice", 0, 2)]


def test_altering_scram_users_needs_alter_on_the_cluster(kafka, alice, admin):
    user, salt = unique("user"), os.urandom(16)
    body = {"deletions": [], "upsertions": [{
        "name": user, "mechanism": 2, "iterations": 8192, "salt": salt,
        "salted_password": salted_password("SCRAM-SHA-512", "secret", salt, 8192)}]}
    refused = alice.request("AlterUserScramCredentials", 0, body)
    # Kafka's message quotes its request object (CONFORMANCE.md): the code is compared.
    assert [(r.user, r.error_code) for r in refused.results] == [
        (user, error_code("CLUSTER_AUTHORIZATION_FAILED"))]

    allow(kafka, CLUSTER, "kafka-cluster", ALTER)
    try:
        allowed = alice.request("AlterUserScramCredentials", 0, body)
        assert [(r.user, r.error_code) for r in allowed.results] == [(user, 0)]
    finally:
        admin.request("AlterUserScramCredentials", 0, {
            "deletions": [{"name": user, "mechanism": 2}], "upsertions": []})


# -- delegation tokens ----------------------------------------------------------------------------

def test_a_token_for_another_owner_needs_create_tokens_on_that_user(kafka, alice):
    owner = unique("owner")
    refused = create_token(alice, owner)
    assert (refused.error_code, refused.issue_timestamp_ms, refused.expiry_timestamp_ms,
            refused.max_timestamp_ms, refused.token_id, refused.hmac) == (
        error_code("DELEGATION_TOKEN_AUTHORIZATION_FAILED"), -1, -1, -1, "", b"")
    assert (refused.principal_type, refused.principal_name) == ("User", owner)
    assert (refused.token_requester_principal_type,
            refused.token_requester_principal_name) == ("User", "alice")

    allow(kafka, USER, f"User:{owner}", CREATE_TOKENS)  # named by the principal
    token = create_token(alice, owner)
    assert token.error_code == 0 and token.principal_name == owner
    # alice asked for it: she sees it, though she neither owns nor renews it.
    wait_for(lambda: token.token_id in shown_ids(alice), "the token shown to its requester")


def test_describe_lists_only_the_tokens_the_caller_owns_renews_or_may_describe(
        kafka, alice, admin):
    own = create_token(alice)
    renewed = create_token(admin, unique("owner"), renewers=("alice",))
    hidden = create_token(admin, unique("owner"))
    owner = unique("owner")
    by_owner = create_token(admin, owner)
    by_id = create_token(admin, unique("owner"))
    made = {t.token_id for t in (own, renewed, hidden, by_owner, by_id)}
    assert all(t.error_code == 0 for t in (own, renewed, hidden, by_owner, by_id))
    wait_for(lambda: made <= shown_ids(admin), "every token shown to a super user")
    assert shown_ids(alice) & made == {own.token_id, renewed.token_id}

    allow(kafka, USER, f"User:{owner}", DESCRIBE_TOKENS)
    allow(kafka, DELEGATION_TOKEN, by_id.token_id, DESCRIBE)
    assert shown_ids(alice) & made == {own.token_id, renewed.token_id, by_owner.token_id,
                                       by_id.token_id}
