"""DescribeUserScramCredentials and AlterUserScramCredentials change and show the SCRAM users
at run time, answered as Apache Kafka 4.4 answers them (the ``kafka`` fixture: run with
``--kafka=both``). On PLAINTEXT neither API needs authentication, on either broker.

Apache Kafka applies a change on its controller and answers Describe from each broker's copy
of the metadata, a moment later: ``described`` waits until the answer is the one expected.
The real broker is shared by the session: each test names its own users and deletes them.
The last test logs in on the fake's SASL listener: a change counts from the next login."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.errors import error_name as kafka_error_name
from fakebroker.real_cluster import wait_for
from fakebroker.state.credentials import ScramCredential, salted_password
from fakebroker.wire_client import WireClient
from tests.sasl_tokens import ScramClient

SHA_256, SHA_512 = 1, 2
NAMES = {SHA_256: "SCRAM-SHA-256", SHA_512: "SCRAM-SHA-512"}
NOT_FOUND = "RESOURCE_NOT_FOUND"
TWICE = ("DUPLICATE_RESOURCE", "A user credential cannot be altered twice in the same request")


def upsertion(name: str, mechanism: int = SHA_256, iterations: int = 8192,
              password: str = "secret", salt: bytes | None = None) -> dict[str, Any]:
    """An upsertion as an admin client sends it: salted by the client."""
    salt = os.urandom(16) if salt is None else salt
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt,
            "salted_password": salted_password(NAMES[mechanism], password, salt, iterations)}


def error_name(code: int) -> str:
    return kafka_error_name(code) if code else "NONE"


def alter(client: WireClient, upsertions: Sequence[dict[str, Any]] = (),
          deletions: Sequence[dict[str, Any]] = ()) -> dict[str, tuple[str, str | None]]:
    """Send one AlterUserScramCredentials; each user's (error name, message)."""
    answer = client.request("AlterUserScramCredentials", 0,
                            {"deletions": list(deletions), "upsertions": list(upsertions)})
    results = {r.user: (error_name(r.error_code), r.error_message) for r in answer.results}
    assert len(results) == len(answer.results), "one result per user"
    return results


def describe(client: WireClient, users: Sequence[str] | None) -> Any:
    return client.request("DescribeUserScramCredentials", 0,
                          {"users": None if users is None else [{"name": u} for u in users]})


def view(answer: Any) -> dict[str, Any]:
    """Each user of a Describe answer -> its (mechanism, iterations), or its error name."""
    return {r.user: {(i.mechanism, i.iterations) for i in r.credential_infos}
            if r.error_code == 0 else error_name(r.error_code) for r in answer.results}


def described(client: WireClient, users: Sequence[str], expected: dict[str, Any]) -> Any:
    """The Describe answer for ``users`` once it shows ``expected`` (or after 10 s: the
    assertion then shows what it did show)."""
    answers: list[Any] = []

    def shown() -> bool:
        answers.append(describe(client, users))
        return view(answers[-1]) == expected

    try:
        wait_for(shown, "the SCRAM users", timeout=10)
    except TimeoutError:
        pass
    assert view(answers[-1]) == expected
    return answers[-1]


@pytest.fixture
def users(kafka: Any) -> Iterator[list[str]]:
    """Fresh user names (a test may add more); their credentials are deleted after it (the
    controller's own view: no waiting for the broker's)."""
    names = [f"user-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    yield names
    with WireClient(kafka.bootstrap_servers) as client:
        for mechanism in NAMES:
            alter(client, deletions=[{"name": n, "mechanism": mechanism} for n in names if n])


def test_an_upserted_user_is_described_by_mechanism_and_iterations(kafka, users):
    alice, bob = users
    with WireClient(kafka.bootstrap_servers) as client:
        assert alter(client, [upsertion(alice, SHA_256, 4096), upsertion(bob, SHA_512, 16384)]
                     ) == {alice: ("NONE", None), bob: ("NONE", None)}
        assert alter(client, [upsertion(alice, SHA_512, 8192)]) == {alice: ("NONE", None)}
        answer = described(client, [alice, bob], {alice: {(SHA_256, 4096), (SHA_512, 8192)},
                                                  bob: {(SHA_512, 16384)}})
    assert (answer.error_code, answer.error_message) == (0, "")
    assert [r.error_message for r in answer.results] == ["", ""]


def test_describing_no_users_lists_every_scram_user(kafka, users):
    alice, bob = users
    with WireClient(kafka.bootstrap_servers) as client:
        alter(client, [upsertion(alice), upsertion(bob, SHA_512)])
        described(client, [alice, bob], {alice: {(SHA_256, 8192)}, bob: {(SHA_512, 8192)}})
        for listed in (None, []):
            every = view(describe(client, listed))
            assert (every[alice], every[bob]) == ({(SHA_256, 8192)}, {(SHA_512, 8192)})


def test_an_unknown_or_twice_named_user_gets_its_error_and_message(kafka, users):
    alice, bob = users
    with WireClient(kafka.bootstrap_servers) as client:
        alter(client, [upsertion(alice)])
        described(client, [alice], {alice: {(SHA_256, 8192)}})
        answer = describe(client, [alice, bob, alice])
    assert answer.error_code == 0
    assert {r.user: (error_name(r.error_code), r.error_message) for r in answer.results} == {
        alice: ("DUPLICATE_RESOURCE", "Cannot describe SCRAM credentials for the same user "
                f"twice in a single request: {alice}"),
        bob: (NOT_FOUND, f"Attempt to describe a user credential that does not exist: {bob}")}


def test_a_deleted_mechanism_is_gone_and_the_last_one_takes_the_user(kafka, users):
    alice, bob = users
    with WireClient(kafka.bootstrap_servers) as client:
        alter(client, [upsertion(alice, SHA_256)])
        alter(client, [upsertion(alice, SHA_512)])
        assert alter(client, deletions=[{"name": alice, "mechanism": SHA_256}]) == {
            alice: ("NONE", None)}
        described(client, [alice], {alice: {(SHA_512, 8192)}})
        assert alter(client, deletions=[{"name": alice, "mechanism": SHA_512}]) == {
            alice: ("NONE", None)}
        described(client, [alice], {alice: NOT_FOUND})
        assert alter(client, deletions=[{"name": bob, "mechanism": SHA_256}]) == {
            bob: (NOT_FOUND, "Attempt to delete a user credential that does not exist")}


def test_each_refused_user_gets_kafkas_error_and_the_rest_are_applied(kafka, users):
    alice, bob = users
    ok, few, many, mech, empty = (f"{alice}-{n}" for n in ("ok", "few", "many", "mech", "empty"))
    users.extend([ok, few, many, mech, empty])
    with WireClient(kafka.bootstrap_servers) as client:
        results = alter(client, [
            upsertion(ok), upsertion(few, iterations=4095), upsertion(many, iterations=16385),
            upsertion(mech) | {"mechanism": 3}, upsertion("") | {"name": ""},
            upsertion(empty) | {"salted_password": b""},
            upsertion(alice), upsertion(alice, SHA_512),
        ], deletions=[{"name": bob, "mechanism": 0}])
        assert results == {
            ok: ("NONE", None),
            few: ("UNACCEPTABLE_CREDENTIAL", "Too few iterations"),
            many: ("UNACCEPTABLE_CREDENTIAL", "Too many iterations"),
            mech: ("UNSUPPORTED_SASL_MECHANISM", "Unknown SCRAM mechanism"),
            "": ("UNACCEPTABLE_CREDENTIAL", "Username must not be empty"),
            empty: ("UNKNOWN_SERVER_ERROR", None),
            alice: TWICE,
            bob: ("UNSUPPORTED_SASL_MECHANISM", "Unknown SCRAM mechanism"),
        }
        described(client, [ok, few, alice, empty], {ok: {(SHA_256, 8192)}, few: NOT_FOUND,
                                                     alice: NOT_FOUND, empty: NOT_FOUND})


def test_a_user_deleted_and_upserted_in_one_request_is_named_twice(kafka, users):
    alice, _ = users
    with WireClient(kafka.bootstrap_servers) as client:
        alter(client, [upsertion(alice)])
        assert alter(client, [upsertion(alice, SHA_512)],
                     deletions=[{"name": alice, "mechanism": SHA_256}]) == {alice: TWICE}
        described(client, [alice], {alice: {(SHA_256, 8192)}})


def test_an_empty_salt_is_accepted(kafka, users):
    alice, _ = users
    with WireClient(kafka.bootstrap_servers) as client:
        assert alter(client, [upsertion(alice, salt=b"")]) == {alice: ("NONE", None)}
        described(client, [alice], {alice: {(SHA_256, 8192)}})


@pytest.mark.fake_only("reads the fake's users' store")
def test_the_store_keeps_the_clients_salt_and_keys_never_the_password(kafka, users):
    alice, _ = users
    salt = b"pinch-of-salt"
    with WireClient(kafka.bootstrap_servers) as client:
        alter(client, [upsertion(alice, SHA_512, 4096, "alice-secret", salt)])
    kept = kafka.call(lambda: kafka.cluster.state.credentials.scram("SCRAM-SHA-512", alice))
    assert kept == ScramCredential.from_password("SCRAM-SHA-512", "alice-secret", salt, 4096)



def scram_login(address: str, user: str, password: str) -> int:
    """A SCRAM-SHA-512 login on a new connection: SaslAuthenticate's last error code."""
    client = ScramClient("SCRAM-SHA-512", user, password)
    with WireClient(address) as sasl:
        assert sasl.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
        first = sasl.request("SaslAuthenticate", 2, {"auth_bytes": client.first()})
        if first.error_code:
            return first.error_code
        return sasl.request("SaslAuthenticate", 2, {
            "auth_bytes": client.final(first.auth_bytes)}).error_code


@pytest.mark.fake_kafka(listeners=("PLAINTEXT", "SASL_PLAINTEXT"))
def test_a_user_added_or_deleted_counts_from_the_next_login(fake_kafka):
    sasl = fake_kafka.listeners["SASL_PLAINTEXT"]
    failed = ErrorCode.SASL_AUTHENTICATION_FAILED
    with WireClient(fake_kafka.listeners["PLAINTEXT"]) as admin:
        assert scram_login(sasl, "carol", "carol-secret") == failed
        alter(admin, [upsertion("carol", SHA_512, 4096, "carol-secret")])
        assert scram_login(sasl, "carol", "carol-secret") == 0
        assert scram_login(sasl, "carol", "wrong") == failed
        alter(admin, deletions=[{"name": "carol", "mechanism": SHA_512}])
        assert scram_login(sasl, "carol", "carol-secret") == failed
