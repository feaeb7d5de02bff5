"""The authorizer as alice meets it on the secure preset, on both brokers (run with
``--kafka=both``): alice logs in by SCRAM-SHA-512 on SASL_PLAINTEXT and holds only the ACLs a
test grants her (over the PLAINTEXT listener, where ANONYMOUS is a super user). Refusals sit
where Kafka 4.4 puts them and nothing refused is applied. tests/test_acls.py keeps what needs
the fake's inspection (hosts, faults, the store) or an option the preset does not set.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakebroker.protocol.errors import ErrorCode
from tests.bodies import batch, fetch_body, join_body, produce_body
from tests.security import SECURE, allow, logged_in
from tests.wire import WireClient

pytestmark = [pytest.mark.security,
              pytest.mark.fake_kafka(**SECURE, topics={"orders": 1, "secret": 1})]

TOPIC, GROUP = 2, 3
ALL, READ, WRITE, DESCRIBE = 2, 3, 4, 8
PREFIXED, DENY = 4, 2


@pytest.fixture
def alice(kafka) -> Iterator[WireClient]:
    with logged_in(kafka, "alice") as client:
        yield client


def test_produce_is_refused_per_partition_of_a_topic_without_write(kafka, alice):
    allow(kafka, TOPIC, "orders", WRITE)
    body = produce_body("orders", 0, batch([b"kept"]))
    body["topic_data"].append({"name": "secret", "partition_data": [
        {"index": 0, "records": batch([b"refused"])}]})
    answer = alice.request("Produce", 11, body)
    assert [(t.name, [p.error_code for p in t.partition_responses])
            for t in answer.responses] == [
        ("orders", [0]), ("secret", [ErrorCode.TOPIC_AUTHORIZATION_FAILED])]
    assert [r.value for r in kafka.records("orders")] == [b"kept"]
    assert kafka.records("secret") == []


def test_deny_wins_over_allow_and_read_implies_describe(kafka, alice):
    allow(kafka, TOPIC, "*", READ, principal="User:*")
    allow(kafka, TOPIC, "sec", ALL, pattern=PREFIXED, permission=DENY)
    fetched = alice.request("Fetch", 12, fetch_body("orders", 0, 0))
    refused = alice.request("Fetch", 12, fetch_body("secret", 0, 0))
    listed = alice.request("ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "orders", "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    assert fetched.responses[0].partitions[0].error_code == 0
    assert refused.responses[0].partitions[0].error_code == \
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert listed.topics[0].partitions[0].error_code == 0  # DESCRIBE, implied by READ


def test_metadata_lists_only_the_topics_the_principal_may_describe(kafka, alice):
    allow(kafka, TOPIC, "orders", DESCRIBE)
    every = alice.request("Metadata", 12, {"topics": None, "allow_auto_topic_creation": False})
    named = alice.request("Metadata", 12, {"topics": [
        {"name": "secret"}, {"name": "orders"}, {"name": "missing"}],
        "allow_auto_topic_creation": True})
    assert [t.name for t in every.topics] == ["orders"]
    # Refused topics come last; a missing one she may not describe is refused the same.
    assert [(t.name, t.error_code) for t in named.topics] == [
        ("orders", 0), ("secret", ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        ("missing", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]


@pytest.mark.parametrize("version", [5, 9])
def test_join_group_without_read_on_the_group_is_refused(kafka, alice, version):
    answer = alice.request("JoinGroup", version, join_body(member_id="m-1", group="refused"))
    assert (answer.error_code, answer.generation_id, answer.leader, list(answer.members)) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED, -1, "", [])
    # Kafka's getErrorResponse: no member id, no protocol name (null from v7).
    assert (answer.member_id, answer.protocol_name) == ("", None if version >= 7 else "")
    assert kafka.group("refused") is None
