"""How many partitions one CreatePartitions request may add, measured on Apache Kafka 4.4
(``--kafka=both``).

Kafka's controller adds at most 10,000 partitions in one request, summed over the topics it
grows: past that, every topic the request names (each once) is answered POLICY_VIOLATION
"Excessively large number of additional partitions per request.", validate_only too, and
nothing grows. An unknown topic and a count that is no increase add nothing to the sum; a
topic whose assignments are wrong still counts what it asks. A name given twice is answered
once, INVALID_REQUEST, and counts nothing.
"""

from __future__ import annotations

import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient

pytestmark = [pytest.mark.fake_kafka(topics={}), pytest.mark.timeout(180)]

TOO_MANY = (ErrorCode.POLICY_VIOLATION,
            "Excessively large number of additional partitions per request.")
# Each topic this module makes starts with one partition, but "three" with three.
START = {"three": 3}


def grow(kafka, asked: list[tuple[str, int]], validate_only: bool = True, wrong: str = ""
         ) -> dict[str, tuple[int, str | None]]:
    """Make the topics ``asked`` names (but "unknown"), one partition each ("three": 3), then
    one CreatePartitions v3 asking each its count (``wrong``: that topic with one assignment,
    whatever it adds); each name's answer (error, message)."""
    prefix = f"cp-{uuid.uuid4().hex[:8]}-"
    made = sorted({name for name, _ in asked if name != "unknown"})
    with WireClient(kafka.bootstrap_servers, timeout=120) as client:
        created = client.request("CreateTopics", 7, {
            "topics": [{"name": prefix + n, "num_partitions": START.get(n, 1),
                        "replication_factor": 1, "assignments": [], "configs": []}
                       for n in made], "timeout_ms": 60000, "validate_only": False}).topics
        assert [t.error_code for t in created] == [0] * len(made)
        answer = client.request("CreatePartitions", 3, {
            "topics": [{"name": prefix + name, "count": count,
                        "assignments": [{"broker_ids": [1]}] if name == wrong else None}
                       for name, count in asked],
            "timeout_ms": 60000, "validate_only": validate_only})
    results = {r.name.removeprefix(prefix): (r.error_code, r.error_message)
               for r in answer.results}
    assert len(results) == len(answer.results)
    return results


def partitions(kafka, name_end: str) -> list[int]:
    """The partition counts of the topics whose names end with ``name_end``."""
    with WireClient(kafka.bootstrap_servers) as client:
        topics = client.request("Metadata", 12, {"topics": None,
                                                 "allow_auto_topic_creation": False}).topics
    return [len(t.partitions) for t in topics if t.name.endswith(name_end)]


@pytest.mark.parametrize("asked", [[("a", 10_001)], [("a", 5001), ("b", 5001)]],
                         ids=["one-topic", "two-topics"])
def test_ten_thousand_more_in_one_request_pass(kafka, asked):
    assert grow(kafka, asked) == {name: (0, None) for name, _ in asked}


@pytest.mark.parametrize("asked", [
    [("a", 6001), ("b", 6001)],
    [("a", 4001), ("b", 4001), ("c", 4001)],
    [("a", 6001), ("b", 6001), ("unknown", 5)],  # the unknown topic is answered so too
    [("a", 6001), ("b", 6001), ("three", 1)],  # so is the one that would shrink
    [("a", 10_001), ("b", 2), ("three", 1)],  # its -2 does not offset the 10,001
], ids=["two", "three", "with-unknown", "with-shrinking", "shrinking-not-subtracted"])
def test_more_than_ten_thousand_summed_over_the_topics_refuses_each(kafka, asked):
    assert grow(kafka, asked) == {name: TOO_MANY for name, _ in asked}


def test_wrong_assignments_still_count_what_they_ask(kafka):
    assert grow(kafka, [("a", 6001), ("b", 6001)], wrong="b") == {"a": TOO_MANY, "b": TOO_MANY}


def test_unknown_topics_and_no_increase_count_nothing(kafka):
    assert grow(kafka, [("a", 6001), ("unknown", 6001)]) == {
        "a": (0, None), "unknown": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)}
    assert grow(kafka, [("a", 6001), ("b", 1)]) == {
        "a": (0, None), "b": (ErrorCode.INVALID_PARTITIONS, "Topic already has 1 partition(s).")}


def test_a_name_given_twice_is_answered_once_and_counts_nothing(kafka):
    assert grow(kafka, [("a", 6001), ("b", 6001), ("b", 6001)]) == {
        "b": (ErrorCode.INVALID_REQUEST, "Duplicate topic name."), "a": (0, None)}


def test_a_refused_request_grows_nothing(kafka):
    suffix = f"-{uuid.uuid4().hex[:6]}"
    asked = [("a" + suffix, 6001), ("b" + suffix, 6001)]
    assert grow(kafka, asked, validate_only=False) == {name: TOO_MANY for name, _ in asked}
    # Kafka's broker lists a topic once it has applied the controller's records: wait for it.
    assert wait_for(lambda: len(partitions(kafka, suffix)) == 2 and partitions(kafka, suffix),
                    "the two topics listed") == [1, 1]
