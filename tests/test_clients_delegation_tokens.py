"""A real client logs in with a delegation token, as Spark's Kafka connector makes its
executors do: the Java client's ``ScramLoginModule`` with ``tokenauth="true"``, user name the
token id and password the token's HMAC in base64, over SCRAM-SHA-512 and SCRAM-SHA-256.

The token is made by the Java AdminClient logged in as a user (Spark's flow), or over the wire
(confluent-kafka and kafka-python have no delegation-token API, and neither librdkafka nor
kafka-python sends the ``tokenauth`` extension, so the Java client is the one that logs in
with a token). That the session is the token's owner is shown frame by frame in
tests/test_delegation_tokens.py.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from fakebroker.sync import FakeKafka
from fakebroker.wire_client import WireClient
from tests.clients.java import HarnessError, run_harness
from tests.sasl_tokens import ScramClient

pytestmark = pytest.mark.timeout(120)

SECURE = {"listeners": ("PLAINTEXT", "SASL_PLAINTEXT"), "topics": {"orders": 1},
          "sasl_users": ("alice:alice-secret",), "delegation_token_secret_key": "signing-key"}


def a_token(kafka: FakeKafka, owner: str) -> Any:
    """A token for ``owner`` that alice asks for over SASL_PLAINTEXT (SCRAM-SHA-512)."""
    scram = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
    with WireClient(kafka.listeners["SASL_PLAINTEXT"]) as client:
        assert client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
        first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
        final = client.request("SaslAuthenticate", 2,
                               {"auth_bytes": scram.final(first.auth_bytes)})
        assert final.error_code == 0
        token = client.request("CreateDelegationToken", 3, {
            "owner_principal_type": "User", "owner_principal_name": owner, "renewers": [],
            "max_lifetime_ms": -1})
    assert token.error_code == 0
    return token


def token_login(mechanism: str, token_id: str, password: str) -> list[str]:
    """Java client properties of a delegation-token login (Kafka's documented JAAS form)."""
    return ["security.protocol=SASL_PLAINTEXT", f"sasl.mechanism={mechanism}",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{token_id}" password="{password}" tokenauth="true";']


@pytest.mark.fake_kafka(**SECURE)
@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256"])
def test_the_java_client_produces_with_a_delegation_token(fake_kafka, java_client, mechanism):
    token = a_token(fake_kafka, "bob")
    password = base64.b64encode(token.hmac).decode()
    lines = run_harness("produce", "--bootstrap", fake_kafka.listeners["SASL_PLAINTEXT"],
                        "--topic", "orders", "--count", "3",
                        *token_login(mechanism, token.token_id, password),
                        client_version=java_client)
    assert lines[-1] == {"done": 3}
    assert [r.value for r in fake_kafka.records("orders")] == [b"v0", b"v1", b"v2"]


@pytest.mark.fake_kafka(**SECURE)
def test_the_java_client_is_refused_with_a_wrong_hmac(fake_kafka, java_client):
    token = a_token(fake_kafka, "alice")
    wrong = base64.b64encode(bytes(64)).decode()
    with pytest.raises(HarnessError) as raised:
        run_harness("admin-describe-cluster", "--bootstrap",
                    fake_kafka.listeners["SASL_PLAINTEXT"], "--timeout-ms", "10000",
                    *token_login("SCRAM-SHA-512", token.token_id, wrong),
                    client_version=java_client)
    assert "SaslAuthenticationException" in str(raised.value)
    assert "Authentication failed during authentication due to invalid credentials with " \
           "SASL mechanism SCRAM-SHA-512" in str(raised.value)


ALICE_LOGIN = ["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512",
               "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
               'required username="alice" password="alice-secret";']


@pytest.mark.fake_kafka(**SECURE)
def test_sparks_token_flow_with_the_java_admin_client(fake_kafka, java_client):
    """As Spark's KafkaTokenUtil: the driver's AdminClient, logged in as a user, asks
    createDelegationToken with default options; executors log in with the token's id and
    base64 HMAC (``tokenauth=true``, SCRAM-SHA-512, Spark's default token mechanism)."""
    sasl_plaintext = fake_kafka.listeners["SASL_PLAINTEXT"]
    [token] = run_harness("admin-create-delegation-token", "--bootstrap", sasl_plaintext,
                          *ALICE_LOGIN, client_version=java_client)
    assert (token["owner"], token["tokenRequester"], token["renewers"]) == (
        "User:alice", "User:alice", [])
    assert token["expiryTimestamp"] - token["issueTimestamp"] == 24 * 3600 * 1000
    assert token["maxTimestamp"] - token["issueTimestamp"] == 7 * 24 * 3600 * 1000
    lines = run_harness("produce", "--bootstrap", sasl_plaintext, "--topic", "orders",
                        "--count", "2",
                        *token_login("SCRAM-SHA-512", token["tokenId"], token["hmac"]),
                        client_version=java_client)
    assert lines[-1] == {"done": 2}
    described = run_harness("admin-describe-delegation-tokens", "--bootstrap", sasl_plaintext,
                            *ALICE_LOGIN, client_version=java_client)
    assert described == [{k: v for k, v in token.items() if k != "hmac"}, {"done": 1}]


def test_the_java_admin_client_is_refused_tokens_on_plaintext(kafka):
    """On both brokers (``--kafka=both``): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, which the
    Java client raises as UnsupportedByAuthenticationException."""
    with pytest.raises(HarnessError) as raised:
        run_harness("admin-create-delegation-token", "--bootstrap", kafka.bootstrap_servers,
                    "--timeout-ms", "10000")
    assert "UnsupportedByAuthenticationException" in str(raised.value)
