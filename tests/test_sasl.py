"""SASL as Kafka's broker speaks it, through the request path without sockets: a connection of
a SASL listener (``Peer(listener="SASL_PLAINTEXT")``) frame by frame.

Kafka's answers (SaslServerAuthenticator, PlainSaslServer, ScramSaslServer,
OAuthBearerSaslServer of Kafka 4.4): what is refused before authentication, the failures and
their messages, the unframed v0 exchange, session lifetimes and re-authentication (KIP-368).
Each answer here was compared, frame by frame over a SASL_PLAINTEXT listener, with what Apache
Kafka 4.4 answers (its SASL listener configured alike, OAUTHBEARER with its default unsecured
validator): the same error codes, messages, mechanism lists, lifetimes, and the same closings.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
import trio

from fakebroker.faults.rules import FaultRegistry
from fakebroker.journal import Journal
from fakebroker.options import ClusterSettings, OptionError
from fakebroker.pipeline import Close, Peer, Pipeline
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.framing import decode_response, encode_request
from fakebroker.security.sasl.connection import java_hash_set_order
from fakebroker.state.cluster import Cluster
from fakebroker.wire_client import api_key
from tests import sasl_tokens
from tests.sasl_tokens import ScramClient

USERS = ("alice:alice-secret", "admin:admin-secret")
METADATA = {"topics": None, "allow_auto_topic_creation": False}
SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def a_pipeline(**settings: Any) -> Pipeline:
    cluster = Cluster(settings=ClusterSettings.from_kwargs({"sasl_users": USERS, **settings}))
    broker = cluster.add_broker("127.0.0.1", 9092, endpoints={
        "PLAINTEXT": 9092, "SASL_PLAINTEXT": 9093, "SASL_SSL": 9094})
    return Pipeline(cluster, broker, FaultRegistry(seed=1), Journal(), trio.sleep)


def sasl_peer(listener: str = "SASL_PLAINTEXT") -> Peer:
    return Peer(1, "/127.0.0.1", listener)


class Conversation:
    """One connection's requests through a pipeline, answered at once (``answer_now``)."""

    def __init__(self, pipeline: Pipeline, peer: Peer | None = None) -> None:
        self.pipeline = pipeline
        self.peer = peer or sasl_peer()
        self.correlation = 0

    def send(self, api: str, version: int, body: Any) -> Any:
        """The outcome of one request (bytes, or Close)."""
        self.correlation += 1
        frame = encode_request(api_key(api), version, self.correlation, "tester", body)[4:]
        return self.pipeline.answer_now(frame, self.peer)

    def request(self, api: str, version: int, body: Any) -> Any:
        """The decoded answer to one request (the connection must stay open)."""
        outcome = self.send(api, version, body)
        assert isinstance(outcome, bytes | bytearray), outcome
        return decode_response(api_key(api), version, bytes(outcome[4:]))[1]

    def closing_answer(self, api: str, version: int, body: Any) -> Any:
        """The decoded answer written before the connection closes."""
        outcome = self.send(api, version, body)
        assert isinstance(outcome, Close) and outcome.last is not None, outcome
        return decode_response(api_key(api), version, bytes(outcome.last[4:]))[1]

    def raw(self, token: bytes) -> Any:
        """The outcome of an unframed token (after SaslHandshake v0)."""
        return self.pipeline.answer_now(token, self.peer)

    def handshake(self, mechanism: str, version: int = 1) -> Any:
        return self.request("SaslHandshake", version, {"mechanism": mechanism})

    def authenticate(self, token: bytes, version: int = 2) -> Any:
        return self.request("SaslAuthenticate", version, {"auth_bytes": token})

    def login_scram(self, mechanism: str, user: str, password: str, version: int = 2) -> Any:
        """A whole SCRAM exchange that succeeds: the last SaslAuthenticate answer."""
        client = ScramClient(mechanism, user, password)
        assert self.handshake(mechanism).error_code == 0
        first = self.authenticate(client.first(), version)
        final = self.authenticate(client.final(first.auth_bytes), version)
        assert final.error_code == 0 and client.verify(final.auth_bytes)
        return final


def raw_answer(outcome: Any) -> bytes:
    """The token of a raw size-prefixed answer."""
    assert isinstance(outcome, bytes | bytearray), outcome
    (size,) = struct.unpack_from(">i", outcome)
    assert size == len(outcome) - 4
    return bytes(outcome[4:])


# -- before authentication ----------------------------------------------------------------

def test_a_sasl_listener_without_mechanisms_is_refused_as_kafka_refuses_to_start():
    with pytest.raises(OptionError, match="No SASL mechanisms are enabled"):
        ClusterSettings.from_kwargs({"listeners": ("SASL_SSL",), "sasl_mechanisms": ()})
    assert ClusterSettings.from_kwargs({"listeners": ("SSL",), "sasl_mechanisms": ()})


def test_api_versions_and_handshake_are_served_before_authentication():
    talk = Conversation(a_pipeline())
    assert talk.request("ApiVersions", 3, {"client_software_name": "t",
                                           "client_software_version": "1"}).error_code == 0
    answer = talk.handshake("SCRAM-SHA-512")
    assert answer.error_code == 0
    assert list(answer.mechanisms) == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
    assert talk.peer.principal == "User:ANONYMOUS"


def test_the_enabled_mechanisms_are_listed_in_kafkas_hash_set_order():
    # Kafka lists them as new ArrayList<>(new HashSet<>(sasl.enabled.mechanisms)) (checked
    # with jshell: [PLAIN, SCRAM-SHA-512, SCRAM-SHA-256, OAUTHBEARER]).
    assert java_hash_set_order(["OAUTHBEARER", "SCRAM-SHA-256", "PLAIN", "SCRAM-SHA-512"]) == [
        "PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256", "OAUTHBEARER"]


@pytest.mark.parametrize("api,version,body", [
    ("Metadata", 12, METADATA),
    ("SaslAuthenticate", 2, {"auth_bytes": b"\0alice\0alice-secret"}),
    ("DescribeCluster", 0, {}),
])
def test_any_other_request_before_the_handshake_closes_the_connection_unanswered(
        api, version, body):
    pipeline = a_pipeline()
    talk = Conversation(pipeline)
    outcome = talk.send(api, version, body)
    assert isinstance(outcome, Close) and outcome.last is None
    assert "during SASL handshake" in outcome.reason
    [entry] = pipeline.journal.query()
    assert (entry.api, entry.outcome.startswith("closed: unexpected request")) == (api, True)


def test_a_second_api_versions_before_the_handshake_closes_the_connection():
    talk = Conversation(a_pipeline())
    talk.request("ApiVersions", 0, {})
    outcome = talk.send("ApiVersions", 0, {})
    assert isinstance(outcome, Close) and outcome.last is None


def test_an_unsupported_mechanism_is_answered_with_the_enabled_ones_then_closed():
    talk = Conversation(a_pipeline(sasl_mechanisms=("SCRAM-SHA-512",)))
    answer = talk.closing_answer("SaslHandshake", 1, {"mechanism": "PLAIN"})
    assert (answer.error_code, list(answer.mechanisms)) == (
        ErrorCode.UNSUPPORTED_SASL_MECHANISM, ["SCRAM-SHA-512"])


def test_oauthbearer_is_refused_unless_enabled():
    talk = Conversation(a_pipeline())
    answer = talk.closing_answer("SaslHandshake", 1, {"mechanism": "OAUTHBEARER"})
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM


def test_after_the_handshake_another_request_gets_illegal_sasl_state_then_closes():
    talk = Conversation(a_pipeline())
    talk.handshake("PLAIN")
    answer = talk.closing_answer("ApiVersions", 3, {"client_software_name": "t",
                                                    "client_software_version": "1"})
    assert answer.error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_non_sasl_listeners_answer_the_sasl_apis_with_illegal_sasl_state():
    talk = Conversation(a_pipeline(), Peer(1, "/127.0.0.1", "PLAINTEXT"))
    answer = talk.handshake("PLAIN")
    assert (answer.error_code, list(answer.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])
    answer = talk.authenticate(sasl_tokens.plain("alice", "alice-secret"))
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.ILLEGAL_SASL_STATE,
        "SaslAuthenticate request received after successful authentication")
    assert talk.request("Metadata", 12, METADATA).brokers  # served as always


# -- the mechanisms ---------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2])
def test_plain_authenticates_the_connection_as_its_user(version):
    talk = Conversation(a_pipeline())
    talk.handshake("PLAIN")
    answer = talk.authenticate(sasl_tokens.plain("alice", "alice-secret"), version)
    assert (answer.error_code, answer.error_message, bytes(answer.auth_bytes)) == (0, "", b"")
    assert talk.peer.principal == "User:alice"
    assert talk.request("Metadata", 12, METADATA).brokers


@pytest.mark.parametrize("token,message", [
    (sasl_tokens.plain("alice", "wrong"), "Authentication failed: Invalid username or password"),
    (sasl_tokens.plain("mallory", "x"), "Authentication failed: Invalid username or password"),
    (sasl_tokens.plain("", "x"), "Authentication failed: username not specified"),
    (sasl_tokens.plain("alice", ""), "Authentication failed: password not specified"),
    (sasl_tokens.plain("alice", "alice-secret", authzid="admin"),
     "Authentication failed: Client requested an authorization id that is different from "
     "username"),
    (b"alice\0alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
])
def test_plain_failures_are_told_in_kafkas_words_then_the_connection_closes(token, message):
    talk = Conversation(a_pipeline())
    talk.handshake("PLAIN")
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": token})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED, message)
    assert talk.peer.principal == "User:ANONYMOUS"


@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_authenticates_and_proves_the_server_knows_the_credential(mechanism):
    talk = Conversation(a_pipeline())
    final = talk.login_scram(mechanism, "admin", "admin-secret")
    assert final.session_lifetime_ms == 0
    assert talk.peer.principal == "User:admin" and not talk.peer.gated


def scram_failure(mechanism: str) -> str:
    return ("Authentication failed during authentication due to invalid credentials with "
            f"SASL mechanism {mechanism}")


@pytest.mark.parametrize("mechanism", SCRAM)
def test_a_wrong_scram_password_fails_at_the_final_message(mechanism):
    talk = Conversation(a_pipeline())
    client = ScramClient(mechanism, "alice", "wrong")
    talk.handshake(mechanism)
    first = talk.authenticate(client.first())
    assert first.error_code == 0
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": client.final(
        first.auth_bytes)})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED, scram_failure(mechanism))


def test_an_unknown_scram_user_fails_at_the_first_message_telling_nothing_more():
    talk = Conversation(a_pipeline())
    talk.handshake("SCRAM-SHA-256")
    answer = talk.closing_answer("SaslAuthenticate", 2, {
        "auth_bytes": ScramClient("SCRAM-SHA-256", "mallory", "x").first()})
    assert answer.error_message == scram_failure("SCRAM-SHA-256")


@pytest.mark.parametrize("first,final", [
    (b"n,,n=alice", None),  # no nonce
    (b"p=tls-unique,,n=alice,r=abc", None),  # channel binding asked
    (None, "bad-nonce"),  # the final nonce is not the server's
])
def test_malformed_scram_messages_and_a_bad_nonce_fail_as_invalid_credentials(first, final):
    talk = Conversation(a_pipeline())
    talk.handshake("SCRAM-SHA-512")
    client = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
    if first is None:
        server_first = talk.authenticate(client.first()).auth_bytes
        token = client.final(server_first, nonce=final)
    else:
        token = first
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": token})
    assert answer.error_message == scram_failure("SCRAM-SHA-512")


def test_scram_with_an_authorization_id_of_another_user_is_told_why():
    talk = Conversation(a_pipeline())
    talk.handshake("SCRAM-SHA-512")
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": b"n,a=admin,n=alice,r=x"})
    assert answer.error_message == ("Authentication failed: Client requested an "
                                    "authorization id that is different from username")


def test_a_delegation_token_login_without_a_matching_token_is_refused():
    talk = Conversation(a_pipeline())
    talk.handshake("SCRAM-SHA-256")
    client = ScramClient("SCRAM-SHA-256", "alice", "alice-secret", ",tokenauth=true")
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": client.first()})
    assert answer.error_message == scram_failure("SCRAM-SHA-256")


def test_oauthbearer_takes_the_unsecured_tokens_subject_and_its_expiry():
    pipeline = a_pipeline(sasl_mechanisms=("OAUTHBEARER",))
    talk = Conversation(pipeline)
    talk.handshake("OAUTHBEARER")
    token = sasl_tokens.unsecured_jws(sasl_tokens.jwt_claims("carol", lifetime_s=60))
    answer = talk.authenticate(sasl_tokens.oauthbearer(token, traceId="t1"))
    assert (answer.error_code, bytes(answer.auth_bytes)) == (0, b"")
    assert 55_000 < answer.session_lifetime_ms <= 60_000  # the token's expiry
    assert talk.peer.principal == "User:carol" and talk.peer.gated


@pytest.mark.parametrize("claims,header", [
    ({"sub": "carol"}, None),  # no exp
    (sasl_tokens.jwt_claims(lifetime_s=-10), None),  # expired
    (sasl_tokens.jwt_claims(sub=" "), None),  # blank subject
    (sasl_tokens.jwt_claims(exp="soon"), None),  # exp not a number
    (sasl_tokens.jwt_claims(), {"alg": "HS256"}),  # signed
])
def test_an_invalid_token_gets_kafkas_json_error_then_fails_at_the_clients_reply(
        claims, header):
    talk = Conversation(a_pipeline(sasl_mechanisms=("OAUTHBEARER",)))
    talk.handshake("OAUTHBEARER")
    token = sasl_tokens.unsecured_jws(claims, header)
    answer = talk.authenticate(sasl_tokens.oauthbearer(token))
    assert (answer.error_code, bytes(answer.auth_bytes)) == (0, b'{"status":"invalid_token"}')
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": b"\x01"})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED, '{"status":"invalid_token"}')


@pytest.mark.parametrize("message", [
    sasl_tokens.oauthbearer(sasl_tokens.unsecured_jws(sasl_tokens.jwt_claims(),
                                                      header={"typ": "JWT"})),  # no alg
    b"n,,\x01auth=Basic YWxpY2U=\x01\x01",  # another scheme: Kafka's own message throws
])
def test_what_kafkas_oauthbearer_server_throws_on_closes_the_connection_unanswered(message):
    talk = Conversation(a_pipeline(sasl_mechanisms=("OAUTHBEARER",)))
    talk.handshake("OAUTHBEARER")
    outcome = talk.send("SaslAuthenticate", 2, {"auth_bytes": message})
    assert isinstance(outcome, Close) and outcome.last is None


def test_oauthbearer_tells_a_mismatched_authorization_id_and_nothing_of_a_bad_message():
    token = sasl_tokens.unsecured_jws(sasl_tokens.jwt_claims("carol"))
    for message, told in (
            (sasl_tokens.oauthbearer(token, authzid="dave"),
             "Authentication failed: Client requested an authorization id (dave) that is "
             "different from the token's principal name (carol)"),
            (b"n,,\x01auth=Bearer\x01\x01", "Authentication failed during authentication due "
             "to invalid credentials with SASL mechanism OAUTHBEARER")):
        talk = Conversation(a_pipeline(sasl_mechanisms=("OAUTHBEARER",)))
        talk.handshake("OAUTHBEARER")
        answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": message})
        assert (answer.error_code, answer.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED, told)


# -- the unframed v0 exchange -------------------------------------------------------------

def test_after_handshake_v0_plain_tokens_come_unframed():
    pipeline = a_pipeline()
    talk = Conversation(pipeline)
    talk.handshake("PLAIN", version=0)
    assert raw_answer(talk.raw(sasl_tokens.plain("alice", "alice-secret"))) == b""
    assert talk.peer.principal == "User:alice"
    assert talk.request("Metadata", 12, METADATA).brokers
    assert [e.api for e in pipeline.journal.query()] == ["SaslHandshake", "Metadata"]


@pytest.mark.parametrize("mechanism", SCRAM)
def test_after_handshake_v0_scram_messages_come_unframed(mechanism):
    talk = Conversation(a_pipeline())
    talk.handshake(mechanism, version=0)
    client = ScramClient(mechanism, "alice", "alice-secret")
    server_first = raw_answer(talk.raw(client.first()))
    assert client.verify(raw_answer(talk.raw(client.final(server_first))))
    assert talk.peer.principal == "User:alice"


def test_an_unframed_failure_closes_the_connection_unanswered():
    talk = Conversation(a_pipeline())
    talk.handshake("PLAIN", version=0)
    outcome = talk.raw(sasl_tokens.plain("alice", "wrong"))
    assert isinstance(outcome, Close) and outcome.last is None
    assert "Invalid username or password" in outcome.reason


# -- sessions and re-authentication (KIP-368) ---------------------------------------------

def test_session_lifetime_is_connections_max_reauth_ms():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    assert talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret").session_lifetime_ms \
        == 60_000


def test_a_v0_client_is_not_told_its_session_lifetime_but_its_session_ends_all_the_same():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    talk.handshake("PLAIN")
    outcome = talk.send("SaslAuthenticate", 0, {"auth_bytes": sasl_tokens.plain(
        "alice", "alice-secret")})
    assert len(outcome) == 4 + 4 + 2 + 2 + 4  # size, correlation id, error, "" message, bytes
    assert talk.peer.sasl is not None and talk.peer.sasl.expires_ms is not None


def test_a_request_after_the_session_ends_closes_the_connection_unanswered(monkeypatch):
    talk = Conversation(a_pipeline(connections_max_reauth_ms=1_000))
    talk.login_scram("SCRAM-SHA-256", "alice", "alice-secret")
    assert talk.request("Metadata", 12, METADATA).brokers
    sasl = talk.peer.sasl
    assert sasl is not None and sasl.expires_ms is not None
    monkeypatch.setattr(sasl, "expires_ms", sasl.expires_ms - 1_001)  # the session ended
    outcome = talk.send("Metadata", 12, METADATA)
    assert isinstance(outcome, Close) and outcome.last is None
    assert "expired" in outcome.reason


def test_a_client_re_authenticates_on_its_connection_and_its_session_renews():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    again = talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    assert again.session_lifetime_ms == 60_000 and talk.peer.principal == "User:alice"
    assert talk.request("Metadata", 12, METADATA).brokers


def test_a_second_re_authentication_within_a_second_gets_illegal_sasl_state():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    assert talk.handshake("SCRAM-SHA-512").error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert talk.request("Metadata", 12, METADATA).brokers  # still authenticated


def test_without_a_session_lifetime_a_handshake_gets_illegal_sasl_state():
    talk = Conversation(a_pipeline())
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    assert talk.handshake("SCRAM-SHA-512").error_code == ErrorCode.ILLEGAL_SASL_STATE
    answer = talk.authenticate(b"n,,n=alice,r=x")
    assert answer.error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_re_authenticating_as_another_user_fails_and_closes():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    client = ScramClient("SCRAM-SHA-512", "admin", "admin-secret")
    talk.handshake("SCRAM-SHA-512")
    first = talk.authenticate(client.first())
    answer = talk.closing_answer("SaslAuthenticate", 2, {"auth_bytes": client.final(
        first.auth_bytes)})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        "Cannot change principals during re-authentication from User.alice: User.admin")


def test_re_authenticating_with_another_mechanism_closes_at_its_first_token():
    talk = Conversation(a_pipeline(connections_max_reauth_ms=60_000))
    talk.login_scram("SCRAM-SHA-512", "alice", "alice-secret")
    assert talk.handshake("PLAIN").error_code == 0
    outcome = talk.send("SaslAuthenticate", 2, {"auth_bytes": sasl_tokens.plain(
        "alice", "alice-secret")})
    assert isinstance(outcome, Close) and outcome.last is None
    assert "not supported for re-authentication of mechanism 'SCRAM-SHA-512'" in outcome.reason


def test_a_removed_users_session_works_until_it_must_re_authenticate_which_fails():
    pipeline = a_pipeline(connections_max_reauth_ms=60_000)
    talk = Conversation(pipeline)
    talk.login_scram("SCRAM-SHA-256", "alice", "alice-secret")
    assert pipeline.cluster.credentials.remove_user("alice")
    assert talk.request("Metadata", 12, METADATA).brokers  # the live session is kept
    talk.handshake("SCRAM-SHA-256")
    answer = talk.closing_answer("SaslAuthenticate", 2, {
        "auth_bytes": ScramClient("SCRAM-SHA-256", "alice", "alice-secret").first()})
    assert answer.error_message == ("Authentication failed during re-authentication due to "
                                    "invalid credentials with SASL mechanism SCRAM-SHA-256")
    fresh = Conversation(pipeline, Peer(2, "/127.0.0.1", "SASL_PLAINTEXT"))
    fresh.handshake("PLAIN")
    answer = fresh.closing_answer("SaslAuthenticate", 2, {
        "auth_bytes": sasl_tokens.plain("alice", "alice-secret")})
    assert answer.error_message == "Authentication failed: Invalid username or password"


@pytest.mark.parametrize("mechanism", ["PLAIN", *SCRAM])
def test_a_changed_password_counts_from_the_next_authentication(mechanism):
    pipeline = a_pipeline()
    pipeline.cluster.credentials.set_user("alice", "new-secret")
    for password, error in (("alice-secret", ErrorCode.SASL_AUTHENTICATION_FAILED),
                            ("new-secret", 0)):
        talk = Conversation(pipeline, Peer(2, "/127.0.0.1", "SASL_SSL"))
        talk.handshake(mechanism)
        if mechanism == "PLAIN":
            outcome = talk.send("SaslAuthenticate", 2, {
                "auth_bytes": sasl_tokens.plain("alice", password)})
        else:
            client = ScramClient(mechanism, "alice", password)
            first = talk.authenticate(client.first())
            outcome = talk.send("SaslAuthenticate", 2, {
                "auth_bytes": client.final(first.auth_bytes)})
        frame = outcome.last if isinstance(outcome, Close) else outcome
        _, answer = decode_response(api_key("SaslAuthenticate"), 2, bytes(frame[4:]))
        assert answer.error_code == error


# -- faults -------------------------------------------------------------------------------

def test_a_fault_failing_sasl_authenticate_is_answered_then_closes_the_connection():
    pipeline = a_pipeline()
    talk = Conversation(pipeline)
    talk.handshake("PLAIN")
    pipeline.faults.add(api="SaslAuthenticate", error="SASL_AUTHENTICATION_FAILED")
    frame = encode_request(api_key("SaslAuthenticate"), 2, 9, "tester",
                           {"auth_bytes": sasl_tokens.plain("alice", "alice-secret")})[4:]
    outcome = trio.run(pipeline.answer, frame, talk.peer)
    assert isinstance(outcome, Close) and outcome.last is not None
    _, answer = decode_response(api_key("SaslAuthenticate"), 2, bytes(outcome.last[4:]))
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert talk.peer.principal == "User:ANONYMOUS"
    [entry] = [e for e in pipeline.journal.query() if e.api == "SaslAuthenticate"]
    assert entry.fault is not None and entry.outcome.startswith("answered, then closed")
