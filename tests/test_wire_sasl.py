"""SASL over real sockets, frame by frame (tests/wire.py): SASL_PLAINTEXT and SASL_SSL
listeners of a fake cluster answer SaslHandshake and SaslAuthenticate as Kafka 4.4 does,
close a connection where Kafka closes it (a request before authentication, a failed
exchange after its answer, an expired session), speak the unframed v0 exchange, and take a
scripted credential change or a fault rule on SaslAuthenticate mid-run.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from collections.abc import Callable, Iterator

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.sync import FakeKafka
from tests import sasl_tokens
from tests.sasl_tokens import ScramClient
from tests.wire import WireClient

pytestmark = pytest.mark.timeout(60)

HELLO = {"client_software_name": "wire", "client_software_version": "1"}  # ApiVersions v3
METADATA = {"topics": None, "allow_auto_topic_creation": False}
SASL = {"listeners": ("SASL_PLAINTEXT", "SASL_SSL"), "topics": {"orders": 1},
        "sasl_users": ("alice:alice-secret", "admin:admin-secret")}
REAUTH = {**SASL, "connections_max_reauth_ms": 1_500}


@pytest.fixture(params=["SASL_PLAINTEXT", "SASL_SSL"])
def connect(request: pytest.FixtureRequest, fake_kafka: FakeKafka
            ) -> Iterator[Callable[[], WireClient]]:
    """Makes a WireClient on the fixture's SASL listener (over TLS for SASL_SSL)."""
    listener = request.param
    context = None
    if listener == "SASL_SSL":
        context = ssl.create_default_context(cafile=fake_kafka.ssl["ca_file"])
    opened: list[WireClient] = []

    def open_client() -> WireClient:
        client = WireClient(fake_kafka.listeners[listener], ssl_context=context)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()


def closed(client: WireClient) -> bool:
    """The broker closed the connection (EOF or reset) without writing anything more."""
    try:
        return client.sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError):
        return True


def login_plain(client: WireClient, user: str = "alice", password: str = "alice-secret"):
    assert client.request("SaslHandshake", 1, {"mechanism": "PLAIN"}).error_code == 0
    return client.request("SaslAuthenticate", 2, {
        "auth_bytes": sasl_tokens.plain(user, password)})


def login_scram(client: WireClient, mechanism: str, user: str, password: str):
    scram = ScramClient(mechanism, user, password)
    assert client.request("SaslHandshake", 1, {"mechanism": mechanism}).error_code == 0
    first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
    assert first.error_code == 0, first
    final = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.final(first.auth_bytes)})
    assert final.error_code == 0 and scram.verify(bytes(final.auth_bytes)), final
    return final


@pytest.mark.fake_kafka(**SASL)
def test_a_client_authenticates_then_is_served(connect):
    with connect() as client:
        versions = client.request("ApiVersions", 3, HELLO)
        served = {entry.api_key: entry.max_version for entry in versions.api_keys}
        assert (served[17], served[36]) == (1, 2)
        handshake = client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"})
        assert list(handshake.mechanisms) == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
        login = login_scram_after_handshake(client, "SCRAM-SHA-512", "alice", "alice-secret")
        assert login.session_lifetime_ms == 0
        assert [t.name for t in client.request("Metadata", 12, METADATA).topics] == ["orders"]


def login_scram_after_handshake(client: WireClient, mechanism: str, user: str, password: str):
    scram = ScramClient(mechanism, user, password)
    first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
    final = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.final(first.auth_bytes)})
    assert final.error_code == 0 and scram.verify(bytes(final.auth_bytes))
    return final


@pytest.mark.fake_kafka(**SASL)
def test_a_request_before_authentication_closes_the_connection_unanswered(connect, fake_kafka):
    with connect() as client:
        client.send("Metadata", 12, METADATA)
        assert closed(client)
    [entry] = fake_kafka.journal(api="Metadata")
    assert entry.outcome.startswith("closed: unexpected request")


@pytest.mark.fake_kafka(**SASL)
def test_a_wrong_password_is_answered_then_the_connection_closes(connect):
    with connect() as client:
        answer = login_plain(client, password="wrong")
        assert (answer.error_code, answer.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            "Authentication failed: Invalid username or password")
        assert closed(client)
    with connect() as client:
        scram = ScramClient("SCRAM-SHA-512", "alice", "wrong")
        client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"})
        first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
        answer = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.final(
            first.auth_bytes)})
        assert answer.error_message == ("Authentication failed during authentication due to "
                                        "invalid credentials with SASL mechanism SCRAM-SHA-512")
        assert closed(client)


@pytest.mark.fake_kafka(**SASL)
def test_an_unknown_mechanism_is_answered_with_the_enabled_ones_then_closed(connect):
    with connect() as client:
        answer = client.request("SaslHandshake", 1, {"mechanism": "GSSAPI"})
        assert (answer.error_code, list(answer.mechanisms)) == (
            ErrorCode.UNSUPPORTED_SASL_MECHANISM, ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"])
        assert closed(client)


def send_raw(client: WireClient, token: bytes) -> None:
    client.sock.sendall(struct.pack(">i", len(token)) + token)


@pytest.mark.fake_kafka(**SASL)
def test_the_unframed_v0_exchange_of_old_clients(connect):
    with connect() as client:
        assert client.request("SaslHandshake", 0, {"mechanism": "SCRAM-SHA-256"}).error_code == 0
        scram = ScramClient("SCRAM-SHA-256", "admin", "admin-secret")
        send_raw(client, scram.first())
        send_raw(client, scram.final(client.receive_frame()))
        assert scram.verify(client.receive_frame())
        assert client.request("Metadata", 12, METADATA).topics
    with connect() as client:
        assert client.request("SaslHandshake", 0, {"mechanism": "PLAIN"}).error_code == 0
        send_raw(client, sasl_tokens.plain("admin", "wrong"))
        assert closed(client)  # no answer: Kafka closes a failed v0 exchange silently


def test_plaintext_listeners_answer_sasl_handshake_with_illegal_sasl_state():
    with FakeKafka(topics={"orders": 1}) as plain, WireClient(plain.bootstrap_servers) as client:
        answer = client.request("SaslHandshake", 1, {"mechanism": "PLAIN"})
        assert (answer.error_code, list(answer.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        assert client.request("Metadata", 12, METADATA).topics


@pytest.mark.fake_kafka(**REAUTH)
def test_a_session_that_is_not_renewed_is_closed_at_its_next_request(connect):
    with connect() as client:
        assert login_plain(client).session_lifetime_ms == 1_500
        assert client.request("Metadata", 12, METADATA).topics
        time.sleep(1.6)  # the session's lifetime passes (no synchronisation: time itself)
        client.send("Metadata", 12, METADATA)
        assert closed(client)


@pytest.mark.fake_kafka(**REAUTH)
def test_a_client_re_authenticates_on_its_connection_and_goes_on(connect):
    with connect() as client:
        login_scram(client, "SCRAM-SHA-512", "alice", "alice-secret")
        again = login_scram(client, "SCRAM-SHA-512", "alice", "alice-secret")
        assert again.session_lifetime_ms == 1_500
        assert client.request("Metadata", 12, METADATA).topics


@pytest.mark.fake_kafka(**REAUTH)
def test_a_removed_user_keeps_its_session_until_re_authentication_fails(connect, fake_kafka):
    with connect() as client:
        login_scram(client, "SCRAM-SHA-256", "alice", "alice-secret")
        fake_kafka.remove_sasl_user("alice")
        assert client.request("Metadata", 12, METADATA).topics
        client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})
        answer = client.request("SaslAuthenticate", 2, {
            "auth_bytes": ScramClient("SCRAM-SHA-256", "alice", "alice-secret").first()})
        assert answer.error_message == ("Authentication failed during re-authentication due "
                                        "to invalid credentials with SASL mechanism "
                                        "SCRAM-SHA-256")
        assert closed(client)


@pytest.mark.fake_kafka(**SASL)
def test_a_changed_password_refuses_the_old_one_from_the_next_login(connect, fake_kafka):
    with connect() as live:
        login_plain(live)
        fake_kafka.set_sasl_user("alice", "rotated")
        with connect() as client:
            assert login_plain(client).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        with connect() as client:
            assert login_plain(client, password="rotated").error_code == 0
        assert live.request("Metadata", 12, METADATA).topics  # never re-authenticates


@pytest.mark.fake_kafka(**SASL)
def test_a_fault_rule_fails_sasl_authenticate_through_the_ordinary_seam(connect, fake_kafka):
    rule = fake_kafka.faults.add(api="SaslAuthenticate", error="SASL_AUTHENTICATION_FAILED")
    with connect() as client:
        assert login_plain(client).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert closed(client)
    with connect() as client:
        assert login_plain(client).error_code == 0
    assert rule.hits == 1


def test_sasl_listeners_accept_no_client_before_the_handshake_even_a_raw_one():
    with FakeKafka(listeners=("SASL_PLAINTEXT",)) as kafka:
        host, port = kafka.listeners["SASL_PLAINTEXT"].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
            assert raw.recv(1) == b""
