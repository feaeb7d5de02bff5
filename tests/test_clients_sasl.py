"""Real clients authenticate with SASL over real sockets, where the cross-client matrix
(tests/test_security_clients.py: SCRAM-SHA-512 and PLAIN, each client's named refusals) does
not reach: SCRAM-SHA-256 with confluent-kafka, kafka-python and aiokafka (on the secure preset,
so on Apache Kafka 4.4 too with ``--kafka=both``), OAUTHBEARER with an unsecured token
(confluent-kafka), and re-authentication on a live connection when the session ends
(confluent-kafka, the Java client 3.9 and 4.4 with SCRAM-SHA-512): each produces and consumes
every record.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import Counter
from typing import Any

import pytest

from tests.absent import needs
from tests.clients.java import java_available, run_harness, start_harness
from tests.security import PASSWORDS, SECURE

pytestmark = [pytest.mark.security, pytest.mark.timeout(120)]

COUNT = 10
SASL = {**SECURE, "topics": {"orders": 2}}
# Settings beyond the secure preset: the fake alone (their answers were compared with Kafka
# 4.4 configured alike: tests/test_sasl.py).
SESSIONS = {"listeners": ("SASL_PLAINTEXT", "SASL_SSL"), "topics": {"orders": 2},
            "sasl_users": SECURE["sasl_users"], "connections_max_reauth_ms": 2_000}
OAUTH = {"listeners": ("SASL_PLAINTEXT",), "topics": {"orders": 2},
         "sasl_mechanisms": ("OAUTHBEARER",)}
USER = "admin"  # a super user: on Kafka with its authorizer, it may write and read orders


def values(tag: str) -> list[bytes]:
    return [f"{tag}-{i}".encode() for i in range(COUNT)]


def confluent_config(kafka: Any, listener: str, mechanism: str) -> dict[str, Any]:
    config = {"bootstrap.servers": kafka.listeners[listener], "security.protocol": listener,
              "sasl.mechanism": mechanism}
    if mechanism == "OAUTHBEARER":
        config |= {"enable.sasl.oauthbearer.unsecure.jwt": True,
                   "sasl.oauthbearer.config": f"principal={USER}"}
    else:
        config |= {"sasl.username": USER, "sasl.password": PASSWORDS[USER]}
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


def re_authenticated_connections(kafka: Any) -> list[int]:
    """The connections that sent more than one SaslHandshake (re-authenticated on them);
    none of them was closed for an expired session."""
    handshakes = Counter(e.connection for e in kafka.journal(api="SaslHandshake"))
    assert not [e for e in kafka.journal() if "expired" in e.outcome]
    return [connection for connection, count in handshakes.items() if count > 1]


@pytest.mark.fake_kafka(**SASL)
def test_confluent_kafka_produces_and_consumes_after_scram_sha_256(kafka):
    config = confluent_config(kafka, "SASL_SSL", "SCRAM-SHA-256")
    assert confluent_round_trip(config, "ck-256") == sorted(values("ck-256"))


@pytest.mark.fake_kafka(**SASL)
def test_kafka_python_produces_and_consumes_after_scram_sha_256(kafka):
    from kafka import KafkaConsumer, KafkaProducer

    config = {"bootstrap_servers": kafka.listeners["SASL_PLAINTEXT"],
              "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256",
              "sasl_plain_username": USER, "sasl_plain_password": PASSWORDS[USER]}
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


@pytest.mark.fake_kafka(**SASL)
def test_aiokafka_produces_and_consumes_after_scram_sha_256(kafka):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    config: dict[str, Any] = {
        "bootstrap_servers": kafka.listeners["SASL_SSL"], "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": USER,
        "sasl_plain_password": PASSWORDS[USER],
        "ssl_context": ssl.create_default_context(cafile=kafka.ssl["ca_file"])}

    async def round_trip() -> list[bytes]:
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

    assert asyncio.run(round_trip()) == sorted(values("aio"))


@pytest.mark.fake_kafka(**OAUTH)
@pytest.mark.fake_only("OAUTHBEARER is not in the secure preset")
def test_confluent_kafka_authenticates_with_an_unsecured_oauthbearer_token(kafka):
    config = confluent_config(kafka, "SASL_PLAINTEXT", "OAUTHBEARER")
    assert confluent_round_trip(config, "ck-oauth") == sorted(values("ck-oauth"))
    authenticated = kafka.journal(api="SaslAuthenticate")
    assert authenticated and all(not e.errors for e in authenticated)
    assert {e.principal for e in kafka.journal(api="Produce")} == {f"User:{USER}"}


@pytest.mark.fake_kafka(**SESSIONS)
@pytest.mark.fake_only("connections_max_reauth_ms is not in the secure preset")
def test_confluent_kafka_re_authenticates_when_its_session_ends(kafka):
    config = confluent_config(kafka, "SASL_SSL", "SCRAM-SHA-512")
    assert confluent_round_trip(config, "ck-reauth", linger_s=5) == sorted(
        values("ck-reauth"))
    assert re_authenticated_connections(kafka)


def java_properties(kafka: Any) -> tuple[str, ...]:
    return ("security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{USER}" password="{PASSWORDS[USER]}";',
            "ssl.truststore.type=PEM", f"ssl.truststore.location={kafka.ssl['ca_file']}")


@needs(java_available(), "the Java client (bash .ci/install-clients)")
@pytest.mark.fake_kafka(**SESSIONS)
@pytest.mark.fake_only("connections_max_reauth_ms is not in the secure preset")
def test_the_java_client_re_authenticates_with_scram_sha_512_while_it_consumes(
        kafka, java_client):
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
