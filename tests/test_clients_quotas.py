"""Real clients set, find and feel client quotas, on the fake and on Apache Kafka
(``--kafka=both``): the Java Admin's ``alterClientQuotas`` / ``describeClientQuotas``, and a
confluent-kafka producer held to a small ``producer_byte_rate``, which reports the broker's
throttle times in its statistics and cannot send faster than its quota allows for long.

The real broker is shared by the session and applies a change a moment after the admin call
returns: each test names its own client-ids, waits for Describe to show its change, and
removes the quotas it set."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for
from tests.clients.java import run_harness
from tests.security import SECURE, confluent_config, login


def a_client_id() -> str:
    return f"app-{uuid.uuid4().hex[:8]}"


def java_describe(kafka: Any, *matches: str, strict: bool = False,
                  client_version: str | None = None) -> list[dict[str, Any]]:
    args = [f"--match={m}" for m in matches] + (["--strict"] if strict else [])
    (line,) = run_harness("admin-describe-client-quotas", "--bootstrap",
                          kafka.bootstrap_servers, *args, client_version=client_version)
    return line["entries"]


def java_alter(kafka: Any, *entity: str, sets: tuple[str, ...] = (),
               removes: tuple[str, ...] = (), client_version: str | None = None) -> None:
    run_harness("admin-alter-client-quotas", "--bootstrap", kafka.bootstrap_servers,
                *(f"--entity={e}" for e in entity), *(f"--set={s}" for s in sets),
                *(f"--remove={r}" for r in removes), client_version=client_version)


@pytest.fixture
def client_id(kafka: Any) -> Iterator[str]:
    """A client-id of the test's own; its quotas (alone, or with any user) removed after."""
    name = a_client_id()
    yield name
    for entry in java_describe(kafka, f"client-id={name}"):
        java_alter(kafka, *(f"{t}={'<default>' if n is None else n}"
                            for t, n in entry["entity"].items()),
                   removes=tuple(entry["values"]))


def test_java_admin_sets_finds_and_removes_client_quotas(
        kafka: Any, client_id: str, java_client: str) -> None:
    java_alter(kafka, f"client-id={client_id}", "user=<default>",
               sets=("producer_byte_rate=1024", "request_percentage=12.5"),
               client_version=java_client)
    java_alter(kafka, f"client-id={client_id}", sets=("consumer_byte_rate=2048",),
               client_version=java_client)
    both = {"entity": {"client-id": client_id, "user": None},
            "values": {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}
    alone = {"entity": {"client-id": client_id}, "values": {"consumer_byte_rate": 2048.0}}
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}",
                                   client_version=java_client) == sorted(
        [both, alone], key=str), "both quotas described")
    assert java_describe(kafka, f"client-id={client_id}", "user=<default>", strict=True,
                         client_version=java_client) == [both]
    assert java_describe(kafka, f"client-id={client_id}", "user", strict=True,
                         client_version=java_client) == [both]
    java_alter(kafka, f"client-id={client_id}", removes=("consumer_byte_rate",),
               client_version=java_client)
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}", strict=True,
                                   client_version=java_client) == [],
             "the client-id's own quota removed")


def test_java_admin_gets_kafkas_error_for_a_key_an_entity_does_not_take(
        kafka: Any, client_id: str) -> None:
    from tests.clients.java import HarnessError

    with pytest.raises(HarnessError) as refused:
        java_alter(kafka, f"client-id={client_id}", sets=("connection_creation_rate=5",))
    assert refused.value.error_obj["error"] == "InvalidRequestException"
    assert refused.value.error_obj["message"] == \
        "Invalid configuration key connection_creation_rate"


def produce_in_waves(config: dict[str, Any], topic: str, waves: int) -> tuple[float, int]:
    """Send 20 KB and wait for the acks, ``waves`` times, with confluent-kafka: the seconds it
    took and the longest throttle time the producer's statistics reported."""
    from confluent_kafka import Producer

    reports: list[int] = [0]  # each statistics report's longest throttle time

    def statistics(text: str) -> None:
        reports.append(max(b["throttle"]["max"] for b in json.loads(text)["brokers"].values()))

    producer = Producer({**config, "statistics.interval.ms": 100, "stats_cb": statistics,
                         "log_level": 3})
    producer.list_topics(topic, timeout=10)
    started = time.monotonic()
    for _ in range(waves):
        for _ in range(20):
            producer.produce(topic, b"x" * 1000)
        assert producer.flush(30) == 0
    took = time.monotonic() - started
    # Two reports more: the second was made after the last answer was read (one queued before
    # it may be all a poll serves, as under load).
    seen, deadline = len(reports), time.monotonic() + 10
    while len(reports) < seen + 2 and time.monotonic() < deadline:
        producer.poll(0.1)
    return took, max(reports)


def test_a_producer_over_its_byte_rate_is_throttled_and_slowed_to_it(
        kafka: Any, client_id: str) -> None:
    """A 20,000 B/s quota: Kafka lets 10 windows' worth (200 KB) through at once, then its
    answers carry throttle times and mute the connection that long. A producer sending 20 KB
    and waiting for its acks, 13 times, sees them in its statistics and waits ~3 s."""
    kafka.create_topic(client_id, partitions=1)
    java_alter(kafka, f"client-id={client_id}", sets=("producer_byte_rate=20000",))
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}") != [], "quota applied")
    took, throttle = produce_in_waves(
        {"bootstrap.servers": kafka.bootstrap_servers, "client.id": client_id}, client_id, 13)
    assert throttle >= 1000, "the broker's throttle times, as librdkafka saw them"
    assert took >= 2.0, f"260 KB at 20,000 B/s, 200 KB of it at once, sent in {took:.1f} s"


@pytest.mark.fake_kafka(**SECURE)
def test_a_users_quota_holds_its_authenticated_connections_only(
        kafka: Any, client_id: str) -> None:
    """The quota of user admin holds admin's SASL connections; the same client-id on the
    PLAINTEXT listener (user ANONYMOUS) is not held to it."""
    kafka.create_topic(client_id, partitions=1)
    java_alter(kafka, "user=admin", f"client-id={client_id}",
               sets=("producer_byte_rate=20000",))
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}") != [], "quota applied")
    admin = confluent_config(login(kafka, "sasl_plaintext-plain"))
    took, throttle = produce_in_waves({**admin, "client.id": client_id}, client_id, 13)
    assert throttle >= 1000 and took >= 2.0, (throttle, took)
    took, throttle = produce_in_waves(
        {"bootstrap.servers": kafka.bootstrap_servers, "client.id": client_id}, client_id, 13)
    assert throttle == 0, took


def consume_for(config: dict[str, Any], topic: str, seconds: float) -> tuple[int, list[int]]:
    """Read partition 0 of ``topic`` from the start for ``seconds`` with confluent-kafka (no
    group: Fetch requests only, once started): the records read, and the longest throttle
    time its statistics reported in each half-second window."""
    from confluent_kafka import Consumer, TopicPartition

    windows: list[int] = []

    def statistics(text: str) -> None:
        windows.append(max((b["throttle"]["max"] for b in json.loads(text)["brokers"].values()),
                           default=0))

    consumer = Consumer({**config, "group.id": "unused", "enable.auto.commit": False,
                         "statistics.interval.ms": 500, "stats_cb": statistics,
                         "log_level": 3})
    consumer.assign([TopicPartition(topic, 0, 0)])
    read = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            read += 1
    consumer.close()
    return read, windows


def test_a_consumer_over_its_request_quota_is_throttled_on_its_fetches(
        kafka: Any, client_id: str) -> None:
    """A request quota of 0.00001 percent (a microsecond of handler time in 10 s): once the
    consumer only fetches (its statistics' later windows), its Fetch answers carry the
    request quota's bound, a 1000 ms throttle, a fetch a second; and as each is over the
    quota, each is answered without records: the consumer reads nothing."""
    from confluent_kafka import Producer

    kafka.create_topic(client_id, partitions=1)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for _ in range(3):
        producer.produce(client_id, b"x")
    assert producer.flush(30) == 0
    del producer
    java_alter(kafka, f"client-id={client_id}", sets=("request_percentage=0.00001",))
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}") != [], "quota applied")
    read, windows = consume_for({"bootstrap.servers": kafka.bootstrap_servers,
                                 "client.id": client_id, "fetch.wait.max.ms": 100},
                                client_id, 5)
    assert (read, max(windows[4:])) == (0, 1000), windows


def test_a_long_polling_consumer_is_not_charged_for_its_waiting(
        kafka: Any, client_id: str) -> None:
    """A request quota of 2 percent (200 ms of handler time in 10 s) and Fetches that wait
    500 ms each on an idle partition: waiting is not work, the consumer is never throttled."""
    kafka.create_topic(client_id, partitions=1)
    java_alter(kafka, f"client-id={client_id}", sets=("request_percentage=2",))
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}") != [], "quota applied")
    read, windows = consume_for({"bootstrap.servers": kafka.bootstrap_servers,
                                 "client.id": client_id, "fetch.wait.max.ms": 500},
                                client_id, 4)
    assert (read, max(windows)) == (0, 0), windows


@pytest.mark.fake_kafka(**SECURE)
def test_the_sasl_exchange_is_not_charged_to_the_request_quota(
        kafka: Any, client_id: str) -> None:
    """Kafka's authenticator, not its request handlers, answers a SASL connection until it
    is authenticated: over a request quota of 0.00001 percent, the ApiVersions before the
    login is answered with no throttle time and the login goes on at once; the first
    request after it is charged (the quota's one-window 1000 ms)."""
    from fakebroker.wire_client import WireClient
    from tests.security import PASSWORDS, ScramClient

    java_alter(kafka, f"client-id={client_id}", sets=("request_percentage=0.00001",))
    wait_for(lambda: java_describe(kafka, f"client-id={client_id}") != [], "quota applied")
    with WireClient(kafka.listeners["SASL_PLAINTEXT"], client_id=client_id) as client:
        started = time.monotonic()
        versions = client.request("ApiVersions", 3, {"client_software_name": "wire",
                                                     "client_software_version": "1"})
        scram = ScramClient("SCRAM-SHA-512", "admin", PASSWORDS["admin"])
        assert client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"}
                              ).error_code == 0
        first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
        final = client.request("SaslAuthenticate", 2,
                               {"auth_bytes": scram.final(first.auth_bytes)})
        login_took = time.monotonic() - started
        metadata = client.request("Metadata", 12, {
            "topics": [], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False})
    assert (versions.error_code, versions.throttle_time_ms, final.error_code) == (0, 0, 0)
    assert login_took < 0.5, f"the login took {login_took:.2f} s"
    assert metadata.throttle_time_ms == 1000
