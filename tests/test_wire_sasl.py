"""SASL over real sockets, frame by frame (fakebroker/wire_client.py): SASL_PLAINTEXT and
SASL_SSL listeners answer SaslHandshake and SaslAuthenticate as Kafka 4.4 does, close a connection
where Kafka closes it (a request before authentication, a failed exchange after its answer, an
expired session), speak the unframed v0 exchange, and take a scripted credential change or a
fault rule on SaslAuthenticate mid-run.

The tests on the secure preset (tests/security.py) run on Apache Kafka 4.4 too
(``--kafka=both``); those needing a session lifetime (``connections_max_reauth_ms``, not in
the preset), the fake's operations or its fault rules are fake_only (their answers were
compared with Kafka 4.4's configured alike: tests/test_sasl.py's module doc).
"""

from __future__ import annotations

import socket
import ssl
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.sync import FakeKafka
from fakebroker.wire_client import WireClient
from tests import sasl_tokens
from tests.conftest import start_served, stop_served
from tests.sasl_tokens import ScramClient
from tests.security import SECURE

pytestmark = [pytest.mark.security, pytest.mark.timeout(60)]

HELLO = {"client_software_name": "wire", "client_software_version": "1"}  # ApiVersions v3
METADATA = {"topics": None, "allow_auto_topic_creation": False}
SASL = {**SECURE, "topics": {"orders": 1}}  # users admin and alice; admin a super user
REAUTH = {"listeners": ("SASL_PLAINTEXT", "SASL_SSL"), "topics": {"orders": 1},
          "sasl_users": SECURE["sasl_users"], "connections_max_reauth_ms": 1_500}
FAKE_ONLY_SETTING = "connections_max_reauth_ms is not in the secure preset"


@pytest.fixture(params=["SASL_PLAINTEXT", "SASL_SSL"])
def connect(request: pytest.FixtureRequest, kafka: FakeKafka
            ) -> Iterator[Callable[[], WireClient]]:
    """Makes a WireClient on the fixture's SASL listener (over TLS for SASL_SSL)."""
    listener = request.param
    context = None
    if listener == "SASL_SSL":
        context = ssl.create_default_context(cafile=kafka.ssl["ca_file"])
    opened: list[WireClient] = []

    def open_client() -> WireClient:
        client = WireClient(kafka.listeners[listener], ssl_context=context)
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
        login = login_scram_after_handshake(client, "SCRAM-SHA-512", "admin", "admin-secret")
        assert login.session_lifetime_ms == 0
        topics = client.request("Metadata", 12, METADATA).topics
        assert "orders" in [t.name for t in topics]  # Kafka lists __consumer_offsets too


def login_scram_after_handshake(client: WireClient, mechanism: str, user: str, password: str):
    scram = ScramClient(mechanism, user, password)
    first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
    final = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.final(first.auth_bytes)})
    assert final.error_code == 0 and scram.verify(bytes(final.auth_bytes))
    return final


@pytest.mark.fake_kafka(**SASL)
def test_a_request_before_authentication_closes_the_connection_unanswered(connect):
    with connect() as client:
        client.send("Metadata", 12, METADATA)
        assert closed(client)


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


@pytest.mark.fake_kafka(**SASL)
def test_plaintext_listeners_answer_sasl_handshake_with_illegal_sasl_state(kafka):
    with WireClient(kafka.listeners["PLAINTEXT"]) as client:
        answer = client.request("SaslHandshake", 1, {"mechanism": "PLAIN"})
        assert (answer.error_code, list(answer.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        assert client.request("Metadata", 12, METADATA).topics


@pytest.mark.fake_kafka(**REAUTH)
@pytest.mark.fake_only(FAKE_ONLY_SETTING)
def test_a_session_that_is_not_renewed_is_closed_at_its_next_request(connect):
    with connect() as client:
        assert login_plain(client).session_lifetime_ms == 1_500
        assert client.request("Metadata", 12, METADATA).topics
        time.sleep(1.6)  # the session's lifetime passes (no synchronisation: time itself)
        client.send("Metadata", 12, METADATA)
        assert closed(client)


@pytest.mark.fake_kafka(**REAUTH)
@pytest.mark.fake_only(FAKE_ONLY_SETTING)
def test_a_client_re_authenticates_on_its_connection_and_goes_on(connect):
    with connect() as client:
        login_scram(client, "SCRAM-SHA-512", "alice", "alice-secret")
        again = login_scram(client, "SCRAM-SHA-512", "alice", "alice-secret")
        assert again.session_lifetime_ms == 1_500
        assert client.request("Metadata", 12, METADATA).topics


@pytest.mark.fake_kafka(**REAUTH)
@pytest.mark.fake_only("the fake's remove_sasl_user operation")
def test_a_removed_user_keeps_its_session_until_re_authentication_fails(connect, kafka):
    with connect() as client:
        login_scram(client, "SCRAM-SHA-256", "alice", "alice-secret")
        kafka.remove_sasl_user("alice")
        assert client.request("Metadata", 12, METADATA).topics
        client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})
        answer = client.request("SaslAuthenticate", 2, {
            "auth_bytes": ScramClient("SCRAM-SHA-256", "alice", "alice-secret").first()})
        assert answer.error_message == ("Authentication failed during re-authentication due "
                                        "to invalid credentials with SASL mechanism "
                                        "SCRAM-SHA-256")
        assert closed(client)


@pytest.mark.fake_kafka(**SASL)
@pytest.mark.fake_only("the fake's set_sasl_user operation")
def test_a_changed_password_refuses_the_old_one_from_the_next_login(connect, kafka):
    with connect() as live:
        login_plain(live)
        kafka.set_sasl_user("alice", "rotated")
        with connect() as client:
            assert login_plain(client).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        with connect() as client:
            assert login_plain(client, password="rotated").error_code == 0
        assert live.request("Metadata", 12, METADATA).brokers  # never re-authenticates


@pytest.mark.fake_kafka(**SASL)
@pytest.mark.fake_only("fault rules")
def test_a_fault_rule_fails_sasl_authenticate_through_the_ordinary_seam(connect, kafka):
    rule = kafka.faults.add(api="SaslAuthenticate", error="SASL_AUTHENTICATION_FAILED")
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


def test_serve_takes_sasl_users_and_ctl_changes_a_password_mid_run(tmp_path):
    process, details = start_served(tmp_path, "--listener", "SASL_PLAINTEXT", "--sasl-user",
                                    "alice:alice-secret", "--control-port", "0")
    try:
        address = details["listeners"]["SASL_PLAINTEXT"]
        with WireClient(address) as client:
            assert login_plain(client).error_code == 0
        changed = subprocess.run(
            [sys.executable, "-m", "fakebroker", "ctl", "--ready-file",
             str(tmp_path / "ready.json"), "action", "set-sasl-user", "--user", "alice",
             "--password", "rotated"], capture_output=True, text=True, timeout=30)
        assert changed.returncode == 0, changed.stderr
        with WireClient(address) as client:
            assert login_plain(client).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        with WireClient(address) as client:
            assert login_plain(client, password="rotated").error_code == 0
    finally:
        assert stop_served(process) == 0
