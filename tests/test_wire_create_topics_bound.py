"""How large a CreateTopics request may be, measured on Apache Kafka 4.4 (``--kafka=both``).

Kafka's controller writes a created topic as metadata records (one for the topic, one per
partition, one per config name the request sets, however often it is given) into a list
bounded at 10,000 for one operation (a topic it refuses, the mutation quota's included,
writes none); a request that would write more is refused whole: every topic it names is answered
POLICY_VIOLATION "Unable to perform excessively large batch operation.", validate_only too,
and nothing is created. Before that, a request asking more than 10,000 partitions in all is
refused whole as well: "Excessively large number of partitions per request.". A topic of more
partitions is made by growing it (CreatePartitions).
"""

from __future__ import annotations

from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient

pytestmark = pytest.mark.fake_kafka(topics={})

TOO_LARGE = "Unable to perform excessively large batch operation."
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."


def create(kafka, topics: dict[str, int], validate_only: bool = False,
           configs: int = 0, given: int = 1) -> list[Any]:
    """CreateTopics v7 of ``topics`` (name -> partitions), each setting ``configs`` configs,
    each of them ``given`` times over; each topic's answer, in order."""
    names = ("cleanup.policy", "retention.ms", "segment.ms")[:configs] * given
    values = {"cleanup.policy": "delete", "retention.ms": "86400000", "segment.ms": "3600000"}
    with WireClient(kafka.bootstrap_servers, timeout=120) as client:
        return list(client.request("CreateTopics", 7, {
            "topics": [{"name": n, "num_partitions": p, "replication_factor": 1,
                        "assignments": [], "configs": [{"name": c, "value": values[c]}
                                                       for c in names]}
                       for n, p in topics.items()],
            "timeout_ms": 60000, "validate_only": validate_only}).topics)


def listed(kafka, name: str) -> int:
    """The error Metadata answers for topic ``name`` (0: it exists)."""
    with WireClient(kafka.bootstrap_servers) as client:
        (topic,) = client.request("Metadata", 12, {"topics": [{"name": name, "topic_id": None}],
                                                   "allow_auto_topic_creation": False}).topics
    return topic.error_code


def refused(answer: Any) -> tuple[Any, ...]:
    return (answer.error_code, answer.error_message, answer.num_partitions,
            answer.replication_factor, tuple(answer.configs))


def test_a_topic_of_up_to_ten_thousand_records_passes_validation(kafka):
    (answer,) = create(kafka, {"wide": 9999}, validate_only=True)  # the topic and 9,999
    assert (answer.error_code, answer.num_partitions) == (0, 9999)
    (answer,) = create(kafka, {"wide": 9997}, validate_only=True, configs=2)
    assert (answer.error_code, answer.num_partitions) == (0, 9997)


def test_a_config_given_twice_is_one_record(kafka):
    (answer,) = create(kafka, {"wide": 9998}, validate_only=True, configs=1, given=2)
    assert (answer.error_code, answer.num_partitions) == (0, 9998)


@pytest.mark.parametrize(("partitions", "configs"), [(10_000, 0), (9998, 2)])
def test_one_record_more_is_a_policy_violation_even_to_validate(kafka, partitions, configs):
    (answer,) = create(kafka, {"wide": partitions}, validate_only=True, configs=configs)
    assert refused(answer) == (ErrorCode.POLICY_VIOLATION, TOO_LARGE, -1, -1, ())


@pytest.mark.parametrize(("topics", "message"), [
    ({"half": 5000, "other-half": 5000, "small": 1}, TOO_MANY_PARTITIONS),  # 10,001 partitions
    ({"half": 5000, "other-half": 4999}, TOO_LARGE),  # 9,999 partitions: 10,001 records
])
def test_a_request_over_a_bound_is_refused_whole_and_creates_nothing(kafka, topics, message):
    answers = create(kafka, topics)
    assert [a.name for a in answers] == list(topics)
    assert {refused(a) for a in answers} == {(ErrorCode.POLICY_VIOLATION, message, -1, -1, ())}
    for name in topics:
        assert listed(kafka, name) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
