"""Apache Kafka 4.4's Java ``Admin`` client, method by method, on both brokers
(``--kafka=both``): each test runs one scenario of tests/java/AdminCalls.java (one JVM) and
reads what a user reads of each call, in call order — the returned descriptions and offsets,
or the exception's class. ``@calls`` declares the methods each test calls (the table of
docs/reference/admin-client.md is made from these, tests/admin_methods.py).

A method whose APIs the fake does not serve yet has no test here: the table names the issue
that will serve them.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakebroker import FakeKafka
from tests.absent import needs
from tests.admin_methods import apis_of, calls
from tests.clients.admin import admin_available, admin_calls
from tests.security import SECURE, java_props, login

pytestmark = [
    needs(admin_available(), "kafka-clients 4.4.0 (bash .ci/install-clients)"),
    pytest.mark.java,
    pytest.mark.fake_kafka(topics={"events": 1}),
    pytest.mark.timeout(180),
]


def ok(method: str, result: Any = None) -> dict[str, Any]:
    """The line of a call that returned ``result``."""
    return {"call": method, "result": result}


def failed(method: str, exception: str) -> dict[str, Any]:
    """The line of a call that threw ``exception`` (its simple class name)."""
    return {"call": method, "error": exception}


def run(request: pytest.FixtureRequest, kafka: Any, scenario: str, *props: str,
        bootstrap: str | None = None) -> list[dict[str, Any]]:
    """The lines of AdminCalls ``scenario`` against ``kafka``, once it is checked that they
    call exactly the methods the test declares (``@calls``) and, on the fake, that the
    requests sent include every API those methods declare."""
    since = kafka.journal()[-1].seq if isinstance(kafka, FakeKafka) and kafka.journal() else 0
    lines = admin_calls(scenario, bootstrap or kafka.bootstrap_servers, *props)
    client, methods = request.function.admin_calls
    assert {line["call"] for line in lines if "call" in line} == set(methods)
    if isinstance(kafka, FakeKafka):
        sent = {entry.api for entry in kafka.journal(since=since)}
        assert apis_of(client, methods) - sent == set(), "declared APIs not requested"
    return lines


def partitions(count: int) -> list[dict[str, int]]:
    return [{"partition": p, "leader": 1, "replicas": 1, "isr": 1} for p in range(count)]


@calls("java", "createTopics", "listTopics", "describeTopics", "createPartitions",
       "deleteTopics")
def test_topics_are_created_described_grown_and_deleted(kafka: Any, request) -> None:
    orders = {"name": "orders", "internal": False}
    assert run(request, kafka, "topics") == [
        ok("createTopics", {"partitions": 2, "replicationFactor": 1, "retention.ms": "100000"}),
        failed("createTopics", "TopicExistsException"),
        ok("listTopics", ["events", "orders"]),
        ok("describeTopics", {**orders, "partitions": partitions(2)}),  # by name
        ok("describeTopics", {**orders, "partitions": partitions(2)}),  # by topic id
        failed("describeTopics", "UnknownTopicOrPartitionException"),
        ok("createPartitions"),  # to 3
        failed("createPartitions", "InvalidPartitionsException"),  # to 2: fewer
        ok("describeTopics", {**orders, "partitions": partitions(3)}),
        ok("deleteTopics"),  # by topic id
        failed("deleteTopics", "UnknownTopicOrPartitionException"),  # by name, gone
        ok("listTopics", ["events"]),
    ]


@calls("java", "describeConfigs", "incrementalAlterConfigs", "listConfigResources",
       "listClientMetricsResources")
def test_a_topics_config_is_described_altered_and_listed(kafka: Any, request) -> None:
    retention = {"name": "retention.ms", "readOnly": False, "sensitive": False}
    assert run(request, kafka, "configs") == [
        ok("describeConfigs", {**retention, "value": "604800000", "source": "DEFAULT_CONFIG"}),
        ok("incrementalAlterConfigs"),
        ok("describeConfigs", {**retention, "value": "100000",
                               "source": "DYNAMIC_TOPIC_CONFIG"}),
        failed("incrementalAlterConfigs", "InvalidConfigurationException"),  # no.such.config
        ok("listConfigResources", ["TOPIC:events"]),
        ok("listClientMetricsResources", 0),
    ]


@calls("java", "describeConfigs", "incrementalAlterConfigs")
def test_a_brokers_log_levels_are_described_set_and_deleted(kafka: Any, request) -> None:
    levels = {"org.apache.kafka.server.logger.LoggingController":
              "ERROR DYNAMIC_BROKER_LOGGER_CONFIG", "root": "ERROR DYNAMIC_BROKER_LOGGER_CONFIG"}
    debug = "DEBUG DYNAMIC_BROKER_LOGGER_CONFIG"
    assert run(request, kafka, "loggers") == [
        ok("describeConfigs", levels),
        ok("incrementalAlterConfigs"),  # the logging controller's logger to DEBUG
        ok("describeConfigs", {**levels, "org.apache.kafka.server.logger.LoggingController":
                               debug}),
        ok("incrementalAlterConfigs"),  # deleted: root's level again
        ok("describeConfigs", levels),
        failed("incrementalAlterConfigs", "InvalidConfigurationException"),  # not listed
        failed("incrementalAlterConfigs", "InvalidRequestException"),  # APPEND
    ]


@calls("java", "describeCluster", "describeFeatures", "describeMetadataQuorum",
       "describeLogDirs", "describeReplicaLogDirs", "alterReplicaLogDirs")
def test_the_cluster_its_features_quorum_and_log_directories_are_described(
        kafka: Any, request) -> None:
    assert run(request, kafka, "cluster") == [
        ok("describeCluster", {"nodes": [1], "controller": 1, "clusterIdLength": 22}),
        ok("describeFeatures", ["eligible.leader.replicas.version", "group.version",
                                "kraft.version", "metadata.version", "share.version",
                                "streams.version", "transaction.version"]),
        ok("describeMetadataQuorum", {"leader": 1, "voters": [1]}),
        ok("describeLogDirs", {"dirs": 1, "error": None, "replicas": ["events-0"]}),
        ok("describeReplicaLogDirs", {"current": True, "future": None}),
        ok("alterReplicaLogDirs"),  # to the directory it is in
        failed("alterReplicaLogDirs", "LogDirNotFoundException"),
    ]


@calls("java", "listOffsets", "deleteRecords", "electLeaders", "alterPartitionReassignments",
       "listPartitionReassignments")
def test_offsets_are_listed_records_deleted_leaders_elected_and_replicas_reassigned(
        kafka: Any, request) -> None:
    # three records, timestamps 1000, 2000, 3000: [offset, timestamp] per OffsetSpec
    assert run(request, kafka, "records") == [
        ok("listOffsets", {"earliest": [0, -1], "latest": [3, -1], "maxTimestamp": [2, 3000],
                           "forTimestamp(1500)": [1, 2000]}),
        ok("deleteRecords", 2),  # the new low watermark
        failed("deleteRecords", "OffsetOutOfRangeException"),  # before 9: past the end
        ok("listOffsets", {"earliest": [2, -1], "latest": [3, -1], "maxTimestamp": [2, 3000],
                           "forTimestamp(1500)": [2, 3000]}),
        ok("electLeaders", {"events-0": "ElectionNotNeededException"}),
        ok("alterPartitionReassignments"),  # to [1], where it is
        failed("alterPartitionReassignments", "InvalidReplicaAssignmentException"),  # to [7]
        ok("listPartitionReassignments", 0),
    ]


@calls("java", "listGroups", "listConsumerGroups", "describeConsumerGroups",
       "describeClassicGroups", "removeMembersFromConsumerGroup", "alterConsumerGroupOffsets",
       "listConsumerGroupOffsets", "deleteConsumerGroupOffsets", "deleteConsumerGroups")
def test_groups_are_listed_described_emptied_their_offsets_altered_and_deleted(
        kafka: Any, request) -> None:
    # "members": a static member (group.instance.id i1, client.id c1) read 3 records and
    # committed; "offsets": a group that only has offsets, set by the Admin
    assert run(request, kafka, "groups") == [
        ok("listGroups", [{"group": "members", "type": "Classic", "protocol": "consumer",
                           "state": "Stable"}]),
        ok("describeConsumerGroups", {
            "state": "Stable", "type": "Classic", "assignor": "range", "simple": False,
            "coordinator": 1,
            "members": [{"instance": "i1", "client": "c1", "assignment": "[events-0]"}]}),
        ok("describeClassicGroups", {"state": "Stable", "protocol": "consumer",
                                     "protocolData": "range",
                                     "members": [{"instance": "i1", "client": "c1"}]}),
        ok("removeMembersFromConsumerGroup"),  # i1
        failed("removeMembersFromConsumerGroup", "UnknownMemberIdException"),  # i2
        ok("listConsumerGroupOffsets", {"events-0": [3, ""]}),
        ok("listConsumerGroups", [{"group": "members", "state": "Empty", "simple": False}]),
        ok("alterConsumerGroupOffsets"),
        ok("listConsumerGroupOffsets", {"events-0": [2, "note"]}),
        failed("alterConsumerGroupOffsets", "UnknownTopicOrPartitionException"),
        ok("deleteConsumerGroupOffsets"),
        ok("listConsumerGroupOffsets", {}),
        ok("deleteConsumerGroups"),  # both
        failed("deleteConsumerGroups", "GroupIdNotFoundException"),
        failed("describeConsumerGroups", "GroupIdNotFoundException"),
    ]


@calls("java", "listTransactions", "describeTransactions", "describeProducers",
       "abortTransaction", "fenceProducers", "forceTerminateTransaction")
def test_an_open_transaction_is_listed_described_aborted_and_its_producer_fenced(
        kafka: Any, request) -> None:
    # a transactional producer "java-admin-tx" sent one record to events-0, its transaction open
    producer = {"ours": True, "epoch": 0, "lastSequence": 0}
    assert run(request, kafka, "transactions") == [
        ok("listTransactions", [{"id": "java-admin-tx", "state": "Ongoing"}]),  # java-admin-.*
        ok("listTransactions", []),  # java-admin-.* in PrepareCommit
        ok("describeTransactions", {"coordinator": 1, "state": "Ongoing", "epoch": 0,
                                    "timeoutMs": 60000, "started": True,
                                    "partitions": "[events-0]"}),
        failed("describeTransactions", "TransactionalIdNotFoundException"),
        ok("describeProducers", {"producers": [{**producer, "txnStartOffset": 0}]}),
        ok("abortTransaction"),  # an abort marker on events-0, as for a hanging one
        ok("describeProducers", {"producers": [{**producer, "txnStartOffset": None}]}),
        ok("fenceProducers"),
        {"commitTransaction": "ProducerFencedException"},  # what the fenced producer gets
        ok("forceTerminateTransaction"),
        ok("describeTransactions", {"state": "Empty", "epochBumped": True}),
    ]


@calls("java", "alterUserScramCredentials", "describeUserScramCredentials")
def test_a_users_scram_credentials_are_added_described_and_deleted(
        kafka: Any, request) -> None:
    assert run(request, kafka, "scram") == [
        ok("alterUserScramCredentials"),  # carol, SCRAM-SHA-256, 8192 iterations
        ok("alterUserScramCredentials"),  # carol, SCRAM-SHA-512, 4096 iterations
        ok("describeUserScramCredentials", ["SCRAM_SHA_256:8192", "SCRAM_SHA_512:4096"]),
        ok("alterUserScramCredentials"),  # delete SCRAM-SHA-256
        ok("describeUserScramCredentials", ["SCRAM_SHA_512:4096"]),
        failed("alterUserScramCredentials", "ResourceNotFoundException"),  # again
        ok("alterUserScramCredentials"),  # delete SCRAM-SHA-512
        failed("describeUserScramCredentials", "ResourceNotFoundException"),
    ]


@pytest.mark.security
@pytest.mark.fake_kafka(**SECURE, topics={"events": 1})
@calls("java", "createAcls", "describeAcls", "deleteAcls")
def test_acls_are_created_described_and_deleted(kafka: Any, request) -> None:
    # over the PLAINTEXT listener, whose User:ANONYMOUS is a super user of the secure preset
    read_events = "TOPIC:LITERAL:events User:alice READ ALLOW"
    read_groups = "GROUP:PREFIXED:g User:alice READ ALLOW"
    assert run(request, kafka, "acls", bootstrap=kafka.listeners["PLAINTEXT"]) == [
        ok("createAcls"),
        ok("describeAcls", [read_groups, read_events]),
        ok("deleteAcls", [read_events]),
        ok("describeAcls", [read_groups]),
        ok("deleteAcls", [read_groups]),
    ]


@pytest.mark.security
@pytest.mark.fake_kafka(**SECURE, topics={"events": 1})
@calls("java", "createDelegationToken", "describeDelegationToken", "renewDelegationToken",
       "expireDelegationToken")
def test_a_delegation_token_is_created_described_renewed_and_expired(
        kafka: Any, request) -> None:
    who = login(kafka, "sasl_plaintext-plain", "alice")
    assert run(request, kafka, "tokens", *java_props(who), bootstrap=who.bootstrap) == [
        ok("createDelegationToken", {"owner": "User:alice", "renewers": 0}),
        ok("describeDelegationToken", ["User:alice"]),
        ok("renewDelegationToken", True),
        failed("renewDelegationToken", "DelegationTokenNotFoundException"),  # a forged HMAC
        ok("expireDelegationToken", True),  # at once: the default expiry period is -1
        ok("describeDelegationToken", 0),
    ]


@calls("java", "alterClientQuotas", "describeClientQuotas")
def test_a_clients_quota_is_set_described_and_removed(kafka: Any, request) -> None:
    assert run(request, kafka, "quotas") == [
        ok("alterClientQuotas"),  # client-id c1: producer_byte_rate 1024
        ok("describeClientQuotas", {"{client-id=c1}": {"producer_byte_rate": 1024.0}}),
        ok("alterClientQuotas"),  # removed
        ok("describeClientQuotas", 0),
    ]


@calls("java", "updateFeatures")
def test_features_are_validated_at_their_finalized_levels(kafka: Any, request) -> None:
    assert run(request, kafka, "features") == [ok("updateFeatures")]
