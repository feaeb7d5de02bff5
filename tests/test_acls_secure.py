"""The authorizer as alice meets it on the secure preset, on both brokers (run with
``--kafka=both``): alice logs in by SCRAM-SHA-512 on SASL_PLAINTEXT and holds only the ACLs a
test grants her (over the PLAINTEXT listener, where ANONYMOUS is a super user). Refusals sit
where Kafka 4.4 puts them and nothing refused is applied. tests/test_acls.py keeps what needs
the fake's inspection (hosts, faults, the store) or an option the preset does not set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, join_body, produce_body
from tests.security import SECURE, allow, logged_in

pytestmark = [pytest.mark.security,
              pytest.mark.fake_kafka(**SECURE, topics={"orders": 1, "secret": 1})]

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
DESCRIBE_CONFIGS, ALTER_CONFIGS = 10, 11
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


def test_group_apis_are_refused_at_the_group(kafka, alice):
    allow(kafka, TOPIC, "orders", READ)
    allow(kafka, GROUP, "allowed", READ)
    commit = {"group_id": "refused", "generation_id_or_member_epoch": -1, "member_id": "",
              "group_instance_id": None, "retention_time_ms": -1, "topics": [
                  {"name": name, "partitions": [
                      {"partition_index": 0, "committed_offset": 1,
                       "committed_leader_epoch": -1, "committed_metadata": ""}]}
                  for name in ("orders", "secret")]}
    found = alice.request("FindCoordinator", 4, {"key_type": 0,
                                                 "coordinator_keys": ["refused", "allowed"]})
    old = alice.request("FindCoordinator", 3, {"key": "refused", "key_type": 0})
    group_refused = alice.request("OffsetCommit", 9, commit)
    topic_refused = alice.request("OffsetCommit", 9, dict(commit, group_id="allowed"))
    heartbeat = alice.request("Heartbeat", 4, {"group_id": "refused", "generation_id": 1,
                                               "member_id": "m", "group_instance_id": None})
    assert [(c.key, c.error_code) for c in found.coordinators] == [
        ("refused", ErrorCode.GROUP_AUTHORIZATION_FAILED), ("allowed", 0)]
    assert (old.error_code, old.node_id) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, -1)
    # The group first (every partition refused), then each topic: a refused topic comes
    # before the committed ones (Kafka's OffsetCommitResponse.Builder).
    assert [[p.error_code for p in t.partitions] for t in group_refused.topics] == [
        [ErrorCode.GROUP_AUTHORIZATION_FAILED]] * 2
    assert [(t.name, [p.error_code for p in t.partitions]) for t in topic_refused.topics] == [
        ("secret", [ErrorCode.TOPIC_AUTHORIZATION_FAILED]), ("orders", [0])]
    assert kafka.committed("allowed", "orders", 0) == 1
    assert kafka.committed("refused", "orders", 0) is None
    assert heartbeat.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_offset_fetch_refuses_per_group_from_v8(kafka, alice):
    allow(kafka, GROUP, "allowed", DESCRIBE)
    allow(kafka, TOPIC, "orders", DESCRIBE)
    topics = [{"name": "orders", "partition_indexes": [0]},
              {"name": "secret", "partition_indexes": [0]}]
    answer = alice.request("OffsetFetch", 9, {"require_stable": False, "groups": [
        {"group_id": "refused", "member_id": None, "member_epoch": -1, "topics": topics},
        {"group_id": "allowed", "member_id": None, "member_epoch": -1, "topics": topics}]})
    assert [(g.group_id, g.error_code, [(t.name, [p.error_code for p in t.partitions])
                                        for t in g.topics]) for g in answer.groups] == [
        ("refused", ErrorCode.GROUP_AUTHORIZATION_FAILED, []),
        ("allowed", 0, [("orders", [0]), ("secret", [ErrorCode.TOPIC_AUTHORIZATION_FAILED])])]


def test_init_producer_id_needs_idempotent_write_or_write_on_some_topic(kafka, alice):
    body = {"transactional_id": None, "transaction_timeout_ms": -1, "producer_id": -1,
            "producer_epoch": -1}
    refused = alice.request("InitProducerId", 5, body)
    allow(kafka, TOPIC, "orders", WRITE)
    allowed = alice.request("InitProducerId", 5, body)
    transactional = alice.request("InitProducerId", 5, dict(
        body, transactional_id="tx", transaction_timeout_ms=60000))
    assert (refused.error_code, refused.producer_id) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1)
    assert allowed.error_code == 0 and allowed.producer_id >= 0
    assert transactional.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_describe_configs_refuses_per_resource_after_the_rest(kafka, alice):
    allow(kafka, TOPIC, "orders", ALTER_CONFIGS)  # implies DESCRIBE_CONFIGS
    broker = str(kafka.brokers[0].id)
    answer = alice.request("DescribeConfigs", 4, {"resources": [
        {"resource_type": 4, "resource_name": broker, "configuration_keys": None},
        {"resource_type": 2, "resource_name": "secret", "configuration_keys": None},
        {"resource_type": 2, "resource_name": "orders", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    assert [(r.resource_name, r.error_code, r.error_message) for r in answer.results] == [
        ("orders", 0, ""),
        (broker, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."),
        ("secret", ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")]


def ready(answer: Any) -> Any:
    """``answer`` once it has no error, else None (ask again)."""
    return None if answer.error_code else answer


def test_add_partitions_to_txn_refuses_the_rest_as_not_attempted(kafka, alice):
    allow(kafka, TRANSACTIONAL_ID, "tx", WRITE)
    allow(kafka, TOPIC, "orders", WRITE)
    # As a producer does: FindCoordinator first (Kafka makes __transaction_state then).
    wait_for(lambda: ready(alice.request("FindCoordinator", 4, {
        "key_type": 1, "coordinator_keys": ["tx"]}).coordinators[0]), "the coordinator")
    producer = wait_for(lambda: ready(alice.request("InitProducerId", 5, {
        "transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1,
        "producer_epoch": -1})), "a producer id")
    added = alice.request("AddPartitionsToTxn", 3, {
        "v3_and_below_transactional_id": "tx",
        "v3_and_below_producer_id": producer.producer_id,
        "v3_and_below_producer_epoch": producer.producer_epoch,
        "v3_and_below_topics": [{"name": "orders", "partitions": [0]},
                                {"name": "secret", "partitions": [0]}]})
    assert [(t.name, [p.partition_error_code for p in t.results_by_partition])
            for t in added.results_by_topic_v3_and_below] == [
        ("orders", [ErrorCode.OPERATION_NOT_ATTEMPTED]),
        ("secret", [ErrorCode.TOPIC_AUTHORIZATION_FAILED])]
    assert kafka.transactions()["tx"].partitions == ()


def test_metadata_auto_creates_a_topic_only_with_create(kafka, alice):
    allow(kafka, TOPIC, "new-", DESCRIBE, pattern=PREFIXED)
    allow(kafka, TOPIC, "new-ok", CREATE)
    answer = alice.request("Metadata", 12, {"topics": [
        {"name": "new-ok"}, {"name": "new-no"}], "allow_auto_topic_creation": True})
    assert [(t.name, t.error_code) for t in answer.topics] == [
        ("new-ok", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),  # created, for the next request
        ("new-no", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    wait_for(lambda: "new-ok" in kafka.topics(), "the topic created")
    assert "new-no" not in kafka.topics()


def test_create_topics_needs_create_on_the_cluster_or_the_topic(kafka, alice):
    allow(kafka, TOPIC, "mine-", CREATE, pattern=PREFIXED)
    allow(kafka, TOPIC, "mine-b", DESCRIBE_CONFIGS)
    topics = [{"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
               "configs": []} for name in ("theirs", "mine-a", "mine-b")]
    answer = alice.request("CreateTopics", 7, {"topics": topics, "timeout_ms": 5000,
                                               "validate_only": False})
    # Refused last, with Kafka's message; configs only where DESCRIBE_CONFIGS is allowed.
    assert [(t.name, t.error_code, t.error_message, t.topic_config_error_code,
             t.num_partitions, bool(t.configs)) for t in answer.topics] == [
        ("mine-a", 0, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, False),
        ("mine-b", 0, None, 0, 1, True),
        ("theirs", ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.", 0, -1, False)]
    wait_for(lambda: {"mine-a", "mine-b"} <= set(kafka.topics()), "the topics created")
    assert "theirs" not in kafka.topics()


def test_describe_groups_answers_the_operations_the_principal_may_do(kafka, alice):
    allow(kafka, GROUP, "g", READ)
    allow(kafka, GROUP, "g", DELETE, permission=DENY)
    answer = alice.request("DescribeGroups", 5, {"groups": ["g", "other"],
                                                 "include_authorized_operations": True})
    # The refused groups first, then the coordinator's answers (Kafka's KafkaApis).
    assert [(g.group_id, g.error_code) for g in answer.groups] == [
        ("other", ErrorCode.GROUP_AUTHORIZATION_FAILED), ("g", 0)]
    assert answer.groups[1].authorized_operations == (1 << READ) | (1 << DESCRIBE)


def test_cluster_operations_are_those_the_principal_may_do(kafka, alice):
    request = {"include_cluster_authorized_operations": True, "endpoint_type": 1}
    before = alice.request("DescribeCluster", 1, request)
    allow(kafka, CLUSTER, "kafka-cluster", ALTER)
    after = alice.request("DescribeCluster", 1, request)
    assert before.cluster_authorized_operations == 0  # no DESCRIBE on the cluster
    assert after.cluster_authorized_operations == (1 << ALTER) | (1 << DESCRIBE)  # implied
