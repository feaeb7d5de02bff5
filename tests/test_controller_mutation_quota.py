"""``controller_mutation_rate`` (KIP-599) holds a client's CreateTopics, CreatePartitions and
DeleteTopics as Apache Kafka 4.4 holds them (``--kafka=both``): a token bucket of the quota's
partitions a second, 11 seconds' worth when full; from CreateTopics v6, CreatePartitions v3
and DeleteTopics v5 a topic asked while the bucket is below zero is refused with
THROTTLING_QUOTA_EXCEEDED, the answer carrying the time until it is back at zero; older
versions are served and throttled instead. The Java Admin retries a refused topic after the
throttle time, so a user's creation is just slowed.

Every test holds its own client-id to 5 partitions a second (a bucket of 55) and mutates from
that client-id; the topics are made beforehand by another client, not held to the quota."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_name
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.clients.java import run_harness
from tests.quotas import EXACT, a_name, alter, described, quotas_removed

RATE = 5.0  # partitions a second: a full bucket holds 55
THROTTLED = ("THROTTLING_QUOTA_EXCEEDED", None)  # no message, as Kafka's controller answers
CREATED = ("NONE", None)
Results = tuple[int, dict[str, tuple[str, str | None]]]  # throttle_time_ms, per topic


def create_topics(client: WireClient, version: int, topics: dict[str, int],
                  validate_only: bool = False) -> Results:
    """CreateTopics: each topic with its partitions."""
    answer = client.request("CreateTopics", version, {"topics": [
        {"name": name, "num_partitions": partitions, "replication_factor": 1,
         "assignments": [], "configs": []} for name, partitions in topics.items()],
        "timeout_ms": 10000, "validate_only": validate_only})
    return answer.throttle_time_ms, {
        t.name: (error_name(t.error_code), t.error_message) for t in answer.topics}


def create_partitions(client: WireClient, version: int, topics: dict[str, int]) -> Results:
    """CreatePartitions: each topic (of one partition) grown by its partitions."""
    answer = client.request("CreatePartitions", version, {"topics": [
        {"name": name, "count": 1 + added, "assignments": None}
        for name, added in topics.items()], "timeout_ms": 10000, "validate_only": False})
    return answer.throttle_time_ms, {
        t.name: (error_name(t.error_code), t.error_message) for t in answer.results}


def delete_topics(client: WireClient, version: int, topics: dict[str, int]) -> Results:
    """DeleteTopics by name (the topics have the partitions given)."""
    body = ({"topics": [{"name": name, "topic_id": ZERO_UUID} for name in topics]}
            if version >= 6 else {"topic_names": list(topics)})
    answer = client.request("DeleteTopics", version, {**body, "timeout_ms": 10000})
    return answer.throttle_time_ms, {
        t.name: (error_name(t.error_code), getattr(t, "error_message", None))
        for t in answer.responses}


# API -> how it mutates, the first version whose quota is strict, the version before it.
MUTATIONS: dict[str, tuple[Callable[[WireClient, int, dict[str, int]], Results], int, int]] = {
    "CreateTopics": (create_topics, 6, 5),
    "CreatePartitions": (create_partitions, 3, 2),
    "DeleteTopics": (delete_topics, 5, 4),
}


def prepared(kafka: Any, api: str, *batches: dict[str, int]) -> None:
    """Make the topics the mutations need: a topic of one partition to grow, a topic of its
    partitions to delete."""
    for topics in batches:
        for name, partitions in topics.items():
            if api == "CreatePartitions":
                kafka.create_topic(name, partitions=1)
            elif api == "DeleteTopics":
                kafka.create_topic(name, partitions=partitions)


def topics_of(*partitions: int) -> dict[str, int]:
    return {f"mutated-{uuid.uuid4().hex[:8]}": count for count in partitions}


def metadata(client: WireClient) -> None:
    client.request("Metadata", 12, {"topics": [], "allow_auto_topic_creation": False,
                                    "include_topic_authorized_operations": False})


@pytest.fixture
def mutator(kafka: Any) -> Iterator[str]:
    """A client-id held to ``RATE`` partition mutations a second (no other quota set, none
    left after the test)."""
    name = a_name("mutator")
    with WireClient(kafka.bootstrap_servers) as admin:
        quotas_removed(admin)
        alter(admin, [((("client-id", name),), {"controller_mutation_rate": RATE})])
        described(admin, [("client-id", EXACT, name)],
                  {frozenset({("client-id", name)}): {"controller_mutation_rate": RATE}})
        try:
            yield name
        finally:
            quotas_removed(admin)


@pytest.mark.parametrize("api", MUTATIONS)
def test_a_strict_quota_lets_mutations_empty_the_bucket_then_refuses_each_topic(
        kafka: Any, mutator: str, api: str) -> None:
    """A full bucket (55) takes 30 + 35 partitions (the second mutation takes it to -10: one
    that finds tokens passes whole); then every topic is refused, the answer throttled ~2 s
    (10 tokens short at 5 a second) and the connection muted that long. Once the bucket is
    back above zero, a refused topic passes."""
    mutate, strict, _ = MUTATIONS[api]
    first, second = topics_of(30, 35), topics_of(1, 1)
    prepared(kafka, api, first, second)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=30) as client:
        assert mutate(client, strict, first) == (0, {name: CREATED for name in first})
        throttle, results = mutate(client, strict, second)
        assert results == {name: THROTTLED for name in second}
        assert 1000 <= throttle <= 2000, throttle
        started = time.monotonic()
        metadata(client)
        assert time.monotonic() - started >= throttle / 1000 * 0.8, "muted"
        time.sleep(0.2)  # the bucket back above zero
        again = dict(list(second.items())[:1])
        assert mutate(client, strict, again) == (0, {name: CREATED for name in again})


@pytest.mark.parametrize("api", MUTATIONS)
def test_an_older_version_is_served_and_throttled_by_the_overdraft(
        kafka: Any, mutator: str, api: str) -> None:
    """Before the strict versions, Kafka's quota is permissive: 30 + 30 partitions from a full
    bucket (55) are all applied, the answer throttled by the 5 missing (~1 s); after the mute
    5 + 5 more are applied too, throttled by their own overdraft (~2 s)."""
    mutate, _, permissive = MUTATIONS[api]
    first, second = topics_of(30, 30), topics_of(5, 5)
    prepared(kafka, api, first, second)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=30) as client:
        throttle, results = mutate(client, permissive, first)
        assert {name: error for name, (error, _) in results.items()} == dict.fromkeys(
            first, "NONE")
        assert 800 <= throttle <= 1000, throttle
        started = time.monotonic()
        throttle, results = mutate(client, permissive, second)
        assert time.monotonic() - started >= 0.8 * 0.8, "muted"
        assert {name: error for name, (error, _) in results.items()} == dict.fromkeys(
            second, "NONE")
        assert 1000 <= throttle <= 2200, throttle


def test_validate_only_is_charged_and_a_topic_refused_for_another_reason_is_not(
        kafka: Any, mutator: str) -> None:
    """Kafka's controller charges a validate-only CreateTopics like a creation (nothing is
    created); a topic it refuses on another check (one that exists) keeps that error, checked
    first, while the next topic meets the empty bucket."""
    checked, existing, refused = topics_of(65), topics_of(1), topics_of(1)
    (name,) = existing
    kafka.create_topic(name, partitions=1)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=30) as client:
        assert create_topics(client, 7, checked, validate_only=True) == (
            0, {name: CREATED for name in checked})
        throttle, results = create_topics(client, 7, existing | refused)
    assert results == {name: ("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists."),
                       **{name: THROTTLED for name in refused}}
    assert 1000 <= throttle <= 2000, throttle
    assert set(kafka.topics()).isdisjoint(checked | refused)


def test_topics_the_quota_refuses_write_no_records_toward_kafkas_bound(
        kafka: Any, mutator: str) -> None:
    """Kafka's controller refuses a CreateTopics whose topics would write more than 10,000
    metadata records (the topic and each partition one), counting only the topics it would
    create: 5,000 + 4,999 partitions are 10,001 records, but the first topic empties the
    bucket and the second is refused by the quota, so the first passes."""
    first, second = topics_of(5000), topics_of(4999)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=60) as client:
        _, results = create_topics(client, 7, first | second, validate_only=True)
    assert results == {**{name: CREATED for name in first},
                       **{name: THROTTLED for name in second}}


def test_topics_auto_created_for_metadata_are_charged_and_those_refused_not_made(
        kafka: Any, mutator: str) -> None:
    """Kafka's broker auto-creates the topics a Metadata request names with a CreateTopics of
    the client's own, at the newest version: the full bucket (55) makes 56 of 60 one-partition
    topics (the 56th finds it at zero) and the rest are refused, silently: the Metadata answer
    is the same for all (UNKNOWN_TOPIC_OR_PARTITION, made or not) and not throttled."""
    names = [f"auto-{uuid.uuid4().hex[:8]}-{i}" for i in range(60)]
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=30) as client:
        answer = client.request("Metadata", 12, {
            "topics": [{"name": name, "topic_id": ZERO_UUID} for name in names],
            "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
    assert answer.throttle_time_ms == 0
    assert {error_name(t.error_code) for t in answer.topics} == {"UNKNOWN_TOPIC_OR_PARTITION"}
    made = wait_for(lambda: made_among(kafka, names) >= 56 and made_among(kafka, names),
                    "the auto-created topics")
    assert made < 60, made  # more than 56 if the real controller took over 0.2 s to make them


def made_among(kafka: Any, names: list[str]) -> int:
    return len(set(kafka.topics()).intersection(names))


def test_java_admin_retries_a_refused_topic_after_the_throttle_time(
        kafka: Any, mutator: str) -> None:
    """The Java Admin (client.id held to the quota) creates 30 + 35 partitions at once; its
    next topic is refused with a ~2 s throttle time, which the Admin waits out before it asks
    again: the topic is created, later. With retryOnQuotaViolation(false) the refusal reaches
    the caller: ThrottlingQuotaExceededException and its throttle time (after 80 partitions
    more, which take the bucket 25 or more below zero: ~5 s)."""
    (a, b), (c,) = topics_of(30, 35), topics_of(1)
    slowed = run_harness("admin-create-topics", "--bootstrap", kafka.bootstrap_servers,
                         f"--call={a}:30,{b}:35", f"--call={c}:1", f"client.id={mutator}")
    assert [(line["created"], line["failed"]) for line in slowed] == [([a, b], {}), ([c], {})]
    assert slowed[1]["ms"] >= 1000, slowed
    (d,), (e,) = topics_of(80), topics_of(1)
    refused = run_harness("admin-create-topics", "--bootstrap", kafka.bootstrap_servers,
                          f"--call={d}:80", f"--call={e}:1", "--no-quota-retry",
                          f"client.id={mutator}")
    assert refused[0]["created"] == [d]
    failure = refused[1]["failed"][e]
    assert (failure["error"], failure["message"]) == (
        "ThrottlingQuotaExceededException", "The throttling quota has been exceeded.")
    assert failure["throttleTimeMs"] >= 4000, failure



def test_a_create_topics_refused_whole_by_the_records_bound_is_charged_all_the_same(
        kafka: Any, mutator: str) -> None:
    """Kafka's controller charges each topic's partitions as it checks it, before the bound of
    10,000 metadata records refuses the whole operation: 9,999 partitions and a config
    (10,001 records) are refused, POLICY_VIOLATION, the answer not throttled; the next topic
    finds the bucket 9,944 below zero (~1,989 s at 5 a second)."""
    big, small = topics_of(9999), topics_of(1)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=60) as client:
        answer = client.request("CreateTopics", 7, {"topics": [
            {"name": name, "num_partitions": count, "replication_factor": 1, "assignments": [],
             "configs": [{"name": "retention.ms", "value": "100000"}]}
            for name, count in big.items()], "timeout_ms": 10000, "validate_only": True})
    assert [(error_name(t.error_code), t.error_message) for t in answer.topics] == [
        ("POLICY_VIOLATION", "Unable to perform excessively large batch operation.")]
    assert answer.throttle_time_ms == 0
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=60) as client:
        throttle, results = create_topics(client, 7, small, validate_only=True)
    assert results == {name: THROTTLED for name in small}
    assert 1_980_000 <= throttle <= 1_988_800, throttle



def test_a_create_partitions_over_the_bound_is_not_charged(kafka: Any, mutator: str) -> None:
    """Unlike CreateTopics' records bound, CreatePartitions' bound (10,000 new partitions a
    request) refuses the request before any topic is charged: 10,001 more are refused,
    POLICY_VIOLATION, and the full bucket (55) then grows another topic by 59."""
    big, small = topics_of(1), topics_of(1)
    prepared(kafka, "CreatePartitions", big, small)
    with WireClient(kafka.bootstrap_servers, client_id=mutator, timeout=60) as client:
        assert create_partitions(client, 3, dict.fromkeys(big, 10_001)) == (0, dict.fromkeys(
            big, ("POLICY_VIOLATION",
                  "Excessively large number of additional partitions per request.")))
        assert create_partitions(client, 3, dict.fromkeys(small, 59)) == (
            0, dict.fromkeys(small, CREATED))
