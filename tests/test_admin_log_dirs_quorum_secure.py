"""DescribeLogDirs, AlterReplicaLogDirs, DescribeTopicPartitions, ListConfigResources and
DescribeQuorum under the authorizer, as alice meets it on the secure preset, on both brokers
(``--kafka=both``; tests/test_acls_secure.py tells how alice logs in and is granted ACLs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.security import SECURE, allow, logged_in

pytestmark = [pytest.mark.security,
              pytest.mark.fake_kafka(**SECURE, topics={"orders": 2, "secret": 1})]

TOPIC, CLUSTER = 2, 4
ALTER, DESCRIBE, DESCRIBE_CONFIGS = 7, 8, 10
CLUSTER_REFUSED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
QUORUM = {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}


@pytest.fixture
def alice(kafka) -> Iterator[WireClient]:
    with logged_in(kafka, "alice") as client:
        yield client


def test_cluster_apis_are_refused_without_their_cluster_operation(kafka, alice):
    log_dirs = alice.request("DescribeLogDirs", 4, {"topics": None})
    assert (log_dirs.error_code, log_dirs.results) == (CLUSTER_REFUSED, [])
    moved = alice.request("AlterReplicaLogDirs", 2, {"dirs": [
        {"path": "/nowhere", "topics": [{"name": "orders", "partitions": [0, 1]}]}]})
    assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in moved.results] == [("orders", [(0, CLUSTER_REFUSED), (1, CLUSTER_REFUSED)])]
    resources = alice.request("ListConfigResources", 1, {"resource_types": []})
    assert (resources.error_code, resources.config_resources) == (CLUSTER_REFUSED, [])
    quorum = alice.request("DescribeQuorum", 2, QUORUM)
    assert (quorum.error_code, quorum.topics) == (CLUSTER_REFUSED, [])


def test_cluster_apis_answer_with_their_cluster_operation(kafka, alice):
    allow(kafka, CLUSTER, "kafka-cluster", DESCRIBE)
    allow(kafka, CLUSTER, "kafka-cluster", ALTER)
    allow(kafka, CLUSTER, "kafka-cluster", DESCRIBE_CONFIGS)
    (log_dir,) = alice.request("DescribeLogDirs", 4, {"topics": None}).results
    assert log_dir.error_code == 0
    moved = alice.request("AlterReplicaLogDirs", 2, {"dirs": [
        {"path": log_dir.log_dir, "topics": [{"name": "orders", "partitions": [0]}]}]})
    assert moved.results[0].partitions[0].error_code == 0
    assert alice.request("ListConfigResources", 1, {"resource_types": [2]}).error_code == 0
    assert alice.request("DescribeQuorum", 2, QUORUM).topics[0].partitions[0].error_code == 0


def test_describe_topic_partitions_shows_only_topics_the_principal_may_describe(kafka, alice):
    allow(kafka, TOPIC, "orders", DESCRIBE)
    named = alice.request("DescribeTopicPartitions", 0, {
        "topics": [{"name": "secret"}, {"name": "orders"}], "response_partition_limit": 10,
        "cursor": None})
    assert [(t.name, t.error_code, len(t.partitions)) for t in named.topics] == [
        ("orders", 0, 2), ("secret", ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0)]
    assert named.topics[0].topic_authorized_operations == 1 << DESCRIBE
    assert named.topics[1].topic_authorized_operations == -2147483648
    every = alice.request("DescribeTopicPartitions", 0, {
        "topics": [], "response_partition_limit": 10, "cursor": None})
    assert [t.name for t in every.topics] == ["orders"]
