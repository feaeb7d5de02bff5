"""Real clients authenticate with SASL over real sockets: confluent-kafka (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512, OAUTHBEARER with an unsecured token, re-authentication), kafka-python and
aiokafka (PLAIN, SCRAM) and the Java client (SCRAM-SHA-512, re-authentication with a short
``connections.max.reauth.ms``) produce and consume on SASL_PLAINTEXT and SASL_SSL listeners;
a wrong password and a mechanism the broker does not enable give each client its named error.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest

from fakebroker.sync import FakeKafka
from tests.clients.java import HarnessError, java_available, run_harness, start_harness

pytestmark = pytest.mark.timeout(120)

COUNT = 10
USERS = ("alice:alice-secret", "admin:admin-secret")
SASL = {"listeners": ("SASL_PLAINTEXT", "SASL_SSL"), "topics": {"orders": 2},
        "sasl_users": USERS}
WRONG = "Authentication failed: Invalid username or password"


def values(tag: str) -> list[bytes]:
    return [f"{tag}-{i}".encode() for i in range(COUNT)]


def confluent_config(kafka: FakeKafka, listener: str, mechanism: str,
                     password: str = "alice-secret") -> dict[str, Any]:
    config = {"bootstrap.servers": kafka.listeners[listener], "security.protocol": listener,
              "sasl.mechanism": mechanism}
    if mechanism == "OAUTHBEARER":
        config |= {"enable.sasl.oauthbearer.unsecure.jwt": True,
                   "sasl.oauthbearer.config": "principal=alice"}
    else:
        config |= {"sasl.username": "alice", "sasl.password": password}
    if listener == "SASL_SSL":
        config["ssl.ca.location"] = kafka.ssl["ca_file"]
    return config


def confluent_round_trip(config: dict[str, Any], tag: str, linger_s: float = 0) -> list[bytes]:
    """Produce ``values(tag)``, then read them back in a group, polling for ``linger_s`` more
    seconds at least (long enough to outlive a session, if asked)."""
    from confluent_kafka import Consumer, Producer

    producer = Producer(config)
    for i, value in enumerate(values(tag)):
        producer.produce("orders", value=value, partition=i % 2)
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": f"g-{tag}", "auto.offset.reset": "earliest"})
    consumer.subscribe(["orders"])
    seen: list[bytes] = []
    linger_until = time.monotonic() + linger_s
    deadline = time.monotonic() + 30 + linger_s
    while len(seen) < COUNT or time.monotonic() < linger_until:
        assert time.monotonic() < deadline, "confluent-kafka did not read every record"
        message = consumer.poll(0.2)
        if message is not None:
            assert message.error() is None, message.error()
            seen.append(message.value())
    consumer.close()
    return sorted(seen)


def confluent_refusal(config: dict[str, Any]) -> Any:
    """The first error confluent-kafka reports (error_cb) when it cannot authenticate."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer({**config, "error_cb": errors.append})
    deadline = time.monotonic() + 20
    while not errors:
        assert time.monotonic() < deadline, "confluent-kafka reported no error"
        producer.poll(0.1)
    return errors[0]


def stored(kafka: FakeKafka) -> list[bytes]:
    return sorted(r.value for p in range(2) for r in kafka.records("orders", p))


@pytest.mark.parametrize("listener,mechanism", [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"), ("SASL_SSL", "SCRAM-SHA-512"),
])
def test_confluent_kafka_produces_and_consumes_after_sasl(listener, mechanism):
    with FakeKafka(**SASL) as kafka:
        tag = f"ck-{mechanism}"
        assert confluent_round_trip(confluent_config(kafka, listener, mechanism), tag) \
            == sorted(values(tag))
        assert stored(kafka) == sorted(values(tag))


def test_confluent_kafka_authenticates_with_an_unsecured_oauthbearer_token():
    with FakeKafka(**SASL, sasl_mechanisms=("OAUTHBEARER",)) as kafka:
        config = confluent_config(kafka, "SASL_PLAINTEXT", "OAUTHBEARER")
        assert confluent_round_trip(config, "ck-oauth") == sorted(values("ck-oauth"))
        authenticated = kafka.journal(api="SaslAuthenticate")
        assert authenticated and all(not e.errors for e in authenticated)


def test_confluent_kafka_re_authenticates_when_its_session_ends():
    with FakeKafka(**SASL, connections_max_reauth_ms=2_000) as kafka:
        config = confluent_config(kafka, "SASL_SSL", "SCRAM-SHA-512")
        assert confluent_round_trip(config, "ck-reauth", linger_s=5) == sorted(
            values("ck-reauth"))
        assert re_authenticated_connections(kafka)


def re_authenticated_connections(kafka: FakeKafka) -> list[int]:
    """The connections that sent more than one SaslHandshake (re-authenticated on them);
    none of them was closed for an expired session."""
    handshakes = Counter(e.connection for e in kafka.journal(api="SaslHandshake"))
    assert not [e for e in kafka.journal() if "expired" in e.outcome]
    return [connection for connection, count in handshakes.items() if count > 1]


def test_confluent_kafka_names_a_wrong_password_and_an_unknown_mechanism():
    from confluent_kafka import KafkaError

    with FakeKafka(**SASL) as kafka:
        error = confluent_refusal(confluent_config(kafka, "SASL_PLAINTEXT", "PLAIN", "wrong"))
        assert error.code() == KafkaError._AUTHENTICATION and WRONG in error.str()
        error = confluent_refusal(confluent_config(kafka, "SASL_SSL", "SCRAM-SHA-512", "wrong"))
        assert error.code() == KafkaError._AUTHENTICATION
        assert ("Authentication failed during authentication due to invalid credentials with "
                "SASL mechanism SCRAM-SHA-512") in error.str()
    with FakeKafka(**SASL, sasl_mechanisms=("PLAIN",)) as kafka:
        error = confluent_refusal(confluent_config(kafka, "SASL_PLAINTEXT", "SCRAM-SHA-256"))
        assert error.code() == KafkaError._AUTHENTICATION and "PLAIN" in error.str()


def kafka_python_config(kafka: FakeKafka, listener: str, mechanism: str,
                        password: str = "alice-secret") -> dict[str, Any]:
    config = {"bootstrap_servers": kafka.listeners[listener], "security_protocol": listener,
              "sasl_mechanism": mechanism, "sasl_plain_username": "alice",
              "sasl_plain_password": password}
    if listener == "SASL_SSL":
        config["ssl_cafile"] = kafka.ssl["ca_file"]
    return config


@pytest.mark.parametrize("listener,mechanism", [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512"),
])
def test_kafka_python_produces_and_consumes_after_sasl(listener, mechanism):
    from kafka import KafkaConsumer, KafkaProducer

    with FakeKafka(**SASL) as kafka:
        config = kafka_python_config(kafka, listener, mechanism)
        producer = KafkaProducer(**config)
        acks = [producer.send("orders", value=v, partition=i % 2)
                for i, v in enumerate(values("kp"))]
        producer.flush(timeout=30)
        assert all(ack.get(timeout=1) for ack in acks)
        producer.close()
        consumer = KafkaConsumer(group_id="g-kp", auto_offset_reset="earliest",
                                 consumer_timeout_ms=30_000, **config)
        consumer.subscribe(["orders"])
        consumer.partitions_for_topic("orders")
        seen = []
        for record in consumer:
            seen.append(record.value)
            if len(seen) == COUNT:
                break
        consumer.close()
        assert sorted(seen) == sorted(values("kp"))


def test_kafka_python_names_a_wrong_password_and_an_unknown_mechanism(caplog):
    # kafka-python 3.0.12 retries a refused bootstrap until max_block_ms, then raises
    # KafkaTimeoutError; each refusal is logged under the error's name.
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    with FakeKafka(**SASL, sasl_mechanisms=("SCRAM-SHA-512",)) as kafka:
        for mechanism, password, named in (
                ("SCRAM-SHA-512", "wrong", "[Error 58] SaslAuthenticationFailedError: "
                 "SaslAuthenticationFailedError: Authentication failed during authentication "
                 "due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
                ("PLAIN", "alice-secret", "[Error 33] UnsupportedSaslMechanismError")):
            caplog.clear()
            with pytest.raises(KafkaTimeoutError):
                KafkaProducer(**kafka_python_config(kafka, "SASL_PLAINTEXT", mechanism,
                                                    password), max_block_ms=10_000)
            assert any(named in record.getMessage() for record in caplog.records)


def aiokafka_config(kafka: FakeKafka, listener: str, mechanism: str,
                    password: str = "alice-secret") -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap_servers": kafka.listeners[listener], "security_protocol": listener,
        "sasl_mechanism": mechanism, "sasl_plain_username": "alice",
        "sasl_plain_password": password}
    if listener == "SASL_SSL":
        import ssl

        config["ssl_context"] = ssl.create_default_context(cafile=kafka.ssl["ca_file"])
    return config


@pytest.mark.parametrize("listener,mechanism", [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"),
])
def test_aiokafka_produces_and_consumes_after_sasl(listener, mechanism):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def round_trip(config: dict[str, Any]) -> list[bytes]:
        producer = AIOKafkaProducer(**config)
        await producer.start()
        try:
            for i, value in enumerate(values("aio")):
                await producer.send_and_wait("orders", value=value, partition=i % 2)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("orders", group_id="g-aio", auto_offset_reset="earliest",
                                    **config)
        await consumer.start()
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        try:
            while len(seen) < COUNT:
                assert time.monotonic() < deadline, "aiokafka did not read every record"
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    seen += [record.value for record in records]
        finally:
            await consumer.stop()
        return sorted(seen)

    with FakeKafka(**SASL) as kafka:
        assert asyncio.run(round_trip(aiokafka_config(kafka, listener, mechanism))) == sorted(
            values("aio"))


def test_aiokafka_names_a_wrong_password_and_an_unknown_mechanism(caplog):
    # aiokafka 0.14 raises KafkaConnectionError ("Unable to bootstrap") from start() and
    # logs the broker's refusal by name.
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError

    async def start(config: dict[str, Any]) -> None:
        producer = AIOKafkaProducer(**config)
        try:
            await producer.start()
        finally:
            await producer.stop()

    with FakeKafka(**SASL, sasl_mechanisms=("SCRAM-SHA-512",)) as kafka:
        for mechanism, password, named in (
                ("SCRAM-SHA-512", "wrong", "[Error 58] SaslAuthenticationFailed: Authentication "
                 "failed during authentication due to invalid credentials with SASL mechanism "
                 "SCRAM-SHA-512"),
                ("PLAIN", "alice-secret", "[Error 33] UnsupportedSaslMechanismError")):
            caplog.clear()
            with pytest.raises(KafkaConnectionError):
                asyncio.run(start(aiokafka_config(kafka, "SASL_PLAINTEXT", mechanism, password)))
            assert any(named in record.getMessage() for record in caplog.records)


def java_properties(kafka: FakeKafka, password: str = "alice-secret",
                    mechanism: str = "SCRAM-SHA-512") -> tuple[str, ...]:
    return ("security.protocol=SASL_SSL", f"sasl.mechanism={mechanism}",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="alice" password="{password}";',
            "ssl.truststore.type=PEM", f"ssl.truststore.location={kafka.ssl['ca_file']}")


@pytest.mark.skipif(not java_available(), reason="Java client not installed")
def test_the_java_client_re_authenticates_with_scram_sha_512_while_it_consumes(java_client):
    with FakeKafka(**SASL, connections_max_reauth_ms=2_000) as kafka:
        address = kafka.listeners["SASL_SSL"]

        def produce() -> None:
            produced = run_harness("produce", "--bootstrap", address, "--topic", "orders",
                                   "--count", str(COUNT), *java_properties(kafka),
                                   client_version=java_client)
            assert produced[-1] == {"done": COUNT}

        produce()
        with start_harness("group-consume", "--bootstrap", address, "--topic", "orders",
                           "--group", "g-java", "--max-records", str(2 * COUNT),
                           "--idle-exit-ms", "60000", *java_properties(kafka),
                           client_version=java_client) as member:
            member.wait_for(lambda _: len(member.records()) >= COUNT)
            deadline = time.monotonic() + 30
            while not re_authenticated_connections(kafka):  # ~1.7 s: 85-95 % of 2 s
                assert time.monotonic() < deadline, "the Java client never re-authenticated"
                time.sleep(0.2)
            produce()  # read on the re-authenticated connections
            assert member.wait(60)[-1] == {"done": 2 * COUNT}


@pytest.mark.skipif(not java_available(), reason="Java client not installed")
def test_the_java_client_names_a_wrong_password(java_client):
    with FakeKafka(**SASL) as kafka:
        with pytest.raises(HarnessError) as refused:
            run_harness("produce", "--bootstrap", kafka.listeners["SASL_SSL"], "--topic",
                        "orders", "--count", "1", "--timeout-ms", "10000",
                        *java_properties(kafka, "wrong"), client_version=java_client)
        assert refused.value.error_obj["error"].endswith("SaslAuthenticationException")
        assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in \
            refused.value.error_obj["message"]
