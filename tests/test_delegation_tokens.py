"""Delegation tokens as Apache Kafka 4.4 makes, renews, expires and describes them.

The token store (``fakebroker.state.delegation_tokens``) is driven with explicit times; the
four APIs through the request pipeline on a connection of a SASL listener (a ``Peer`` with its
listener and principal set, as the SASL exchange leaves it); the refusal of a PLAINTEXT
connection over a real socket on both brokers (``--kafka=both``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import pytest
import trio

from fakebroker.faults.rules import FaultRegistry
from fakebroker.journal import Journal
from fakebroker.options import ClusterSettings
from fakebroker.pipeline import Peer, Pipeline
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.protocol.framing import decode_response, encode_request
from fakebroker.state.cluster import Cluster
from fakebroker.state.credentials import ScramCredential
from fakebroker.state.delegation_tokens import DelegationTokens
from fakebroker.wire_client import WireClient, api_key
from tests.sasl_tokens import ScramClient

SECRET = "token-signing-key"
DAY, WEEK = 24 * 3600 * 1000, 7 * 24 * 3600 * 1000
T0 = 1_700_000_000_000  # an epoch time in ms
ALICE, BOB, CAROL = "User:alice", "User:bob", "User:carol"
ANONYMOUS = "User:ANONYMOUS"


def refused(error: str, call: Any, *args: Any) -> bool:
    with pytest.raises(ClusterError) as raised:
        call(*args)
    return raised.value.error == error


# -- the store ------------------------------------------------------------------------------

def test_a_token_is_signed_with_hmac_sha512_of_its_id_and_lives_by_kafkas_defaults():
    tokens = DelegationTokens(SECRET, WEEK, DAY)
    token = tokens.create(ALICE, ALICE, [], -1, T0)
    assert token.hmac == hmac.digest(SECRET.encode(), token.token_id.encode(), hashlib.sha512)
    assert len(token.token_id) == 22 and not token.token_id.startswith("-")  # a Kafka Uuid
    assert (token.issue_ms, token.expiry_ms, token.max_ms) == (T0, T0 + DAY, T0 + WEEK)
    assert (token.owner, token.requester, token.renewers) == (ALICE, ALICE, ())


def test_a_shorter_lifetime_asked_caps_both_times_and_a_longer_one_is_cut_to_the_setting():
    tokens = DelegationTokens(SECRET, WEEK, DAY)
    short = tokens.create(ALICE, ALICE, [], 3600_000, T0)
    assert (short.expiry_ms, short.max_ms) == (T0 + 3600_000, T0 + 3600_000)
    long = tokens.create(ALICE, ALICE, [], 10 * WEEK, T0)
    assert (long.expiry_ms, long.max_ms) == (T0 + DAY, T0 + WEEK)


def test_owner_and_renewers_renew_up_to_the_max_and_anyone_else_is_refused():
    tokens = DelegationTokens(SECRET, 3 * DAY, DAY)
    token = tokens.create(ALICE, CAROL, [BOB], -1, T0)
    assert tokens.renew(token.hmac, BOB, -1, T0 + 1000) == T0 + 1000 + DAY
    assert tokens.renew(token.hmac, ALICE, 60_000, T0 + 2000) == T0 + 2000 + 60_000
    assert tokens.renew(token.hmac, ALICE, 10 * DAY, T0 + 60_000) == T0 + 60_000 + DAY
    assert tokens.renew(token.hmac, ALICE, -1, T0 + DAY + 30_000) == T0 + 2 * DAY + 30_000
    assert tokens.renew(token.hmac, ALICE, -1, T0 + 2 * DAY + 20_000) == T0 + 3 * DAY  # max
    assert refused("DELEGATION_TOKEN_OWNER_MISMATCH", tokens.renew, token.hmac, CAROL, -1, T0)
    assert refused("DELEGATION_TOKEN_NOT_FOUND", tokens.renew, b"nope", ALICE, -1, T0)


def test_expire_moves_the_expiry_or_with_a_negative_period_removes_the_token_at_once():
    tokens = DelegationTokens(SECRET, WEEK, DAY)
    token = tokens.create(ALICE, ALICE, [BOB], -1, T0)
    assert tokens.expire(token.hmac, BOB, 5000, T0 + 1) == T0 + 5001
    assert tokens.tokens(T0 + 5001) == [token]
    assert tokens.expire(token.hmac, ALICE, -1, T0 + 2) == T0 + 2
    assert tokens.tokens(T0 + 2) == []
    assert refused("DELEGATION_TOKEN_NOT_FOUND", tokens.expire, token.hmac, ALICE, -1, T0 + 3)


def test_a_token_past_its_expiry_is_gone_for_describe_renew_and_login():
    tokens = DelegationTokens(SECRET, WEEK, DAY)
    token = tokens.create(ALICE, ALICE, [], -1, T0)
    assert tokens.scram("SCRAM-SHA-512", token.token_id, T0 + DAY) is not None
    assert tokens.scram("SCRAM-SHA-512", token.token_id, T0 + DAY + 1) is None
    assert refused("DELEGATION_TOKEN_NOT_FOUND", tokens.renew, token.hmac, ALICE, -1,
                   T0 + DAY + 1)
    assert tokens.tokens(T0 + DAY + 1) == []


def test_a_token_is_a_scram_user_named_by_its_id_with_the_base64_hmac_as_password():
    tokens = DelegationTokens(SECRET, WEEK, DAY)
    token = tokens.create(ALICE, ALICE, [], -1, T0)
    password = base64.b64encode(token.hmac).decode()
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        kept = tokens.scram(mechanism, token.token_id, T0)
        assert kept is not None and kept.iterations == 4096
        assert kept == ScramCredential.from_password(mechanism, password, kept.salt, 4096)
    assert tokens.scram("SCRAM-SHA-512", "no-such-token", T0) is None


def test_without_a_secret_key_no_token_is_made_and_a_group_renewer_is_refused_first():
    tokens = DelegationTokens(None, WEEK, DAY)
    assert not tokens.enabled
    assert refused("DELEGATION_TOKEN_AUTH_DISABLED", tokens.create, ALICE, ALICE, [], -1, T0)
    assert refused("DELEGATION_TOKEN_AUTH_DISABLED", tokens.renew, b"x", ALICE, -1, T0)
    assert refused("INVALID_PRINCIPAL_TYPE", tokens.create, ALICE, ALICE, ["Group:ops"], -1, T0)


# -- the APIs, on an authenticated connection -------------------------------------------------

USERS = ("alice:alice-secret", "bob:bob-secret", "carol:carol-secret")


def a_pipeline(**settings: Any) -> Pipeline:
    """A one-broker cluster with users alice, bob and carol, listening on every listener."""
    cluster = Cluster(settings=ClusterSettings.from_kwargs({"sasl_users": USERS, **settings}))
    broker = cluster.add_broker("127.0.0.1", 9092, endpoints={
        "PLAINTEXT": 9092, "SSL": 9093, "SASL_PLAINTEXT": 9094, "SASL_SSL": 9095})
    return Pipeline(cluster, broker, FaultRegistry(seed=1), Journal(), trio.sleep)


class Connection:
    """One connection's requests to a pipeline; a SASL one logs in first (``login``)."""

    def __init__(self, pipeline: Pipeline, listener: str, principal: str = ANONYMOUS) -> None:
        self.pipeline = pipeline
        self.peer = Peer(1, "/127.0.0.1", listener, principal)

    def send(self, api: str, version: int, body: dict[str, Any]) -> Any:
        frame = encode_request(api_key(api), version, 1, "tester", body)[4:]
        return self.pipeline.answer_now(frame, self.peer)

    def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        answer = self.send(api, version, body)
        assert isinstance(answer, bytes | bytearray), answer
        return decode_response(api_key(api), version, bytes(answer[4:]))[1]

    def login(self, user: str, password: str | None = None, token: bool = False,
              mechanism: str = "SCRAM-SHA-512") -> Any:
        """A SCRAM exchange (``token``: with ``tokenauth=true``); returns the last answer
        (the connection stays open only when it succeeds)."""
        client = ScramClient(mechanism, user, password or f"{user}-secret",
                             ",tokenauth=true" if token else "")
        assert self.request("SaslHandshake", 1, {"mechanism": mechanism}).error_code == 0
        first = self.authenticate(client.first())
        if first.error_code:
            return first
        return self.authenticate(client.final(first.auth_bytes))

    def authenticate(self, token: bytes) -> Any:
        """The answer to a SaslAuthenticate, also the last one before the connection closes."""
        outcome = self.send("SaslAuthenticate", 2, {"auth_bytes": token})
        frame = outcome if isinstance(outcome, bytes | bytearray) else outcome.last
        return decode_response(api_key("SaslAuthenticate"), 2, bytes(frame[4:]))[1]


def sasl(pipeline: Pipeline, user: str, listener: str = "SASL_SSL") -> Connection:
    """A connection of ``user`` logged in by SCRAM."""
    connection = Connection(pipeline, listener)
    assert connection.login(user).error_code == 0
    return connection


def create_body(owner: str | None = None, renewers: tuple[str, ...] = (),
                max_lifetime_ms: int = -1) -> dict[str, Any]:
    kind, _, name = (owner or ":").partition(":")
    return {"owner_principal_type": kind or None, "owner_principal_name": name or None,
            "renewers": [dict(zip(("principal_type", "principal_name"), r.split(":", 1),
                                  strict=True)) for r in renewers],
            "max_lifetime_ms": max_lifetime_ms}


def principal(entry: Any, prefix: str = "") -> str:
    return f"{entry[prefix + 'principal_type']}:{entry[prefix + 'principal_name']}"


def test_create_answers_the_token_with_its_owner_and_from_v3_its_requester():
    alice = sasl(a_pipeline(delegation_token_secret_key=SECRET), "alice")
    for version in (1, 2):
        answer = alice.request("CreateDelegationToken", version, create_body())
        assert answer.error_code == 0 and principal(answer) == ALICE
        assert answer.hmac == hmac.digest(SECRET.encode(), answer.token_id.encode(),
                                          hashlib.sha512)
        assert answer.expiry_timestamp_ms - answer.issue_timestamp_ms == DAY
        assert answer.max_timestamp_ms - answer.issue_timestamp_ms == WEEK
    answer = alice.request("CreateDelegationToken", 3, create_body(owner=BOB))
    assert (principal(answer), principal(answer, "token_requester_")) == (BOB, ALICE)


def test_describe_lists_every_token_or_those_of_the_owners_named():
    pipeline = a_pipeline(delegation_token_secret_key=SECRET)
    alice = sasl(pipeline, "alice")
    mine = alice.request("CreateDelegationToken", 3, create_body(renewers=(BOB,)))
    bobs = alice.request("CreateDelegationToken", 3, create_body(owner=BOB))
    every = alice.request("DescribeDelegationToken", 3, {"owners": None})
    assert every.error_code == 0
    assert [(t.token_id, principal(t), principal(t, "token_requester_"), t.hmac,
             [principal(r) for r in t.renewers], t.expiry_timestamp - t.issue_timestamp)
            for t in every.tokens] == [
        (mine.token_id, ALICE, ALICE, mine.hmac, [BOB], DAY),
        (bobs.token_id, BOB, ALICE, bobs.hmac, [], DAY)]
    carol = {"principal_type": "User", "principal_name": "carol"}
    bob = {"principal_type": "User", "principal_name": "bob"}
    assert alice.request("DescribeDelegationToken", 2, {"owners": [carol]}).tokens == []
    assert alice.request("DescribeDelegationToken", 1, {"owners": []}).tokens == []
    assert {t.token_id for t in alice.request("DescribeDelegationToken", 2,
                                              {"owners": [bob]}).tokens} == {
        mine.token_id, bobs.token_id}  # bob renews alice's token: it is his too


def test_renew_and_expire_over_the_wire_by_the_tokens_hmac():
    pipeline = a_pipeline(delegation_token_secret_key=SECRET,
                          delegation_token_expiry_time_ms=60_000)
    alice = sasl(pipeline, "alice")
    carol = sasl(pipeline, "carol")
    token = alice.request("CreateDelegationToken", 2, create_body(renewers=(BOB,)))
    renewed = alice.request("RenewDelegationToken", 2, {"hmac": token.hmac,
                                                        "renew_period_ms": 10_000})
    assert renewed.error_code == 0
    assert token.issue_timestamp_ms + 10_000 <= renewed.expiry_timestamp_ms \
        < token.expiry_timestamp_ms
    assert (carol.request("RenewDelegationToken", 1, {"hmac": token.hmac,
                                                      "renew_period_ms": -1}).error_code
            == error_code("DELEGATION_TOKEN_OWNER_MISMATCH"))
    gone = alice.request("ExpireDelegationToken", 2, {"hmac": token.hmac,
                                                      "expiry_time_period_ms": -1})
    assert gone.error_code == 0 and gone.expiry_timestamp_ms >= token.issue_timestamp_ms
    for api, body in (("RenewDelegationToken", {"renew_period_ms": -1}),
                      ("ExpireDelegationToken", {"expiry_time_period_ms": -1})):
        answer = alice.request(api, 1, {"hmac": token.hmac, **body})
        assert (answer.error_code, answer.expiry_timestamp_ms) == (
            error_code("DELEGATION_TOKEN_NOT_FOUND"), 0)
    assert alice.request("DescribeDelegationToken", 1, {"owners": None}).tokens == []


def test_without_a_secret_key_every_token_api_is_auth_disabled():
    alice = sasl(a_pipeline(), "alice")
    disabled = error_code("DELEGATION_TOKEN_AUTH_DISABLED")
    create = alice.request("CreateDelegationToken", 3, create_body())
    assert (create.error_code, principal(create), principal(create, "token_requester_"),
            create.issue_timestamp_ms, create.max_timestamp_ms, create.token_id,
            create.hmac) == (disabled, ALICE, ALICE, 0, 0, "", b"")
    for api, body in (("RenewDelegationToken", {"hmac": b"x", "renew_period_ms": -1}),
                      ("ExpireDelegationToken", {"hmac": b"x", "expiry_time_period_ms": -1}),
                      ("DescribeDelegationToken", {"owners": None})):
        assert alice.request(api, 2, body).error_code == disabled


def test_a_renewer_that_is_not_a_user_is_an_invalid_principal_type():
    alice = sasl(a_pipeline(delegation_token_secret_key=SECRET), "alice")
    answer = alice.request("CreateDelegationToken", 3, create_body(renewers=("Group:ops",)))
    assert (answer.error_code, answer.issue_timestamp_ms, answer.token_id) == (
        error_code("INVALID_PRINCIPAL_TYPE"), -1, "")


@pytest.mark.parametrize("listener,who,allowed", [
    ("SASL_PLAINTEXT", "alice", True),
    ("SASL_SSL", "alice", True),
    ("SSL", "User:CN=fakebroker-client", True),  # a client certificate's principal
    ("SSL", ANONYMOUS, False),  # one-way TLS
    ("PLAINTEXT", ANONYMOUS, False),
])
def test_only_a_connection_that_proved_who_it_is_may_ask_for_tokens(listener, who, allowed):
    pipeline = a_pipeline(delegation_token_secret_key=SECRET)
    connection = sasl(pipeline, who, listener) if listener.startswith("SASL") \
        else Connection(pipeline, listener, who)
    answer = connection.request("CreateDelegationToken", 3, create_body())
    expected = 0 if allowed else error_code("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
    assert answer.error_code == expected
    assert principal(answer) == principal(answer, "token_requester_") == connection.peer.principal
    if not allowed:
        assert (answer.issue_timestamp_ms, answer.expiry_timestamp_ms,
                answer.max_timestamp_ms, answer.token_id, answer.hmac) == (-1, -1, -1, "", b"")


# -- logging in with a token ------------------------------------------------------------------

def a_token(pipeline: Pipeline, owner: str | None = None) -> Any:
    """A token alice asks for (for ``owner``, default herself)."""
    answer = sasl(pipeline, "alice").request("CreateDelegationToken", 3,
                                             create_body(owner=owner))
    assert answer.error_code == 0
    return answer


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_scram_login_with_a_token_is_its_owner_and_may_not_ask_for_tokens(mechanism):
    pipeline = a_pipeline(delegation_token_secret_key=SECRET,
                          delegation_token_expiry_time_ms=60_000)
    token = a_token(pipeline, owner=BOB)
    session = Connection(pipeline, "SASL_PLAINTEXT")
    answer = session.login(token.token_id, base64.b64encode(token.hmac).decode(), token=True,
                           mechanism=mechanism)
    assert answer.error_code == 0 and session.peer.principal == BOB
    assert 50_000 < answer.session_lifetime_ms <= 60_000  # the session ends with the token
    metadata = session.request("Metadata", 12, {"topics": None,
                                                "allow_auto_topic_creation": False})
    assert metadata.cluster_id == pipeline.cluster.cluster_id
    not_allowed = error_code("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
    assert session.request("CreateDelegationToken", 3, create_body()).error_code == not_allowed
    assert session.request("DescribeDelegationToken", 3, {"owners": None}).error_code == \
        not_allowed
    assert session.request("RenewDelegationToken", 2, {
        "hmac": token.hmac, "renew_period_ms": -1}).error_code == not_allowed


def scram_failure(mechanism: str) -> str:
    return ("Authentication failed during authentication due to invalid credentials with "
            f"SASL mechanism {mechanism}")


def test_a_token_login_with_a_wrong_hmac_or_an_expired_token_fails():
    pipeline = a_pipeline(delegation_token_secret_key=SECRET)
    token = a_token(pipeline)
    password = base64.b64encode(token.hmac).decode()
    wrong = Connection(pipeline, "SASL_SSL").login(token.token_id, password[::-1], token=True)
    assert (wrong.error_code, wrong.error_message) == (
        error_code("SASL_AUTHENTICATION_FAILED"), scram_failure("SCRAM-SHA-512"))
    as_user = Connection(pipeline, "SASL_SSL").login(token.token_id, password)  # no tokenauth
    assert as_user.error_code == error_code("SASL_AUTHENTICATION_FAILED")
    gone = sasl(pipeline, "alice").request("ExpireDelegationToken", 2, {
        "hmac": token.hmac, "expiry_time_period_ms": -1})
    assert gone.error_code == 0
    expired = Connection(pipeline, "SASL_SSL").login(token.token_id, password, token=True)
    assert expired.error_code == error_code("SASL_AUTHENTICATION_FAILED")


# -- over a real socket, on both brokers --------------------------------------------------------

def test_on_plaintext_every_token_api_is_refused_as_not_allowed(kafka):
    """Apache Kafka 4.4 on PLAINTEXT without a token secret: the connection is refused
    first (4.4 serves versions 1 and up)."""
    not_allowed = error_code("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
    with WireClient(kafka.bootstrap_servers) as client:
        for version in (1, 2, 3):
            create = client.request("CreateDelegationToken", version, create_body())
            assert (create.error_code, principal(create), create.issue_timestamp_ms,
                    create.expiry_timestamp_ms, create.max_timestamp_ms, create.token_id,
                    create.hmac) == (not_allowed, "User:ANONYMOUS", -1, -1, -1, "", b"")
            if version == 3:
                assert principal(create, "token_requester_") == "User:ANONYMOUS"
            describe = client.request("DescribeDelegationToken", version, {"owners": None})
            assert (describe.error_code, describe.tokens) == (not_allowed, [])
        for version in (1, 2):
            for api, body in (("RenewDelegationToken", {"renew_period_ms": -1}),
                              ("ExpireDelegationToken", {"expiry_time_period_ms": -1})):
                answer = client.request(api, version, {"hmac": b"x", **body})
                assert (answer.error_code, answer.expiry_timestamp_ms) == (not_allowed, -1)
