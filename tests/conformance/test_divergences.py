"""The divergences the conformance run found, fixed: each test states Kafka 4.4's answer (as
the real broker gave it in tests/conformance/test_conformance.py) and checks fakebroker gives
it, without a real Kafka."""

from __future__ import annotations

import uuid

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, join_body, produce_body

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})


@pytest.fixture
def client(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as wire:
        yield wire


def test_metadata_auto_creation_answers_unknown_topic_then_the_topic(client):
    """A KRaft broker asks its controller to create the topic: not there yet for this one."""
    first = client.request("Metadata", 12, {"topics": [{"name": "fresh"}]}).topics[0]
    assert (first.error_code, first.topic_id, first.partitions) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, [])
    again = client.request("Metadata", 12, {"topics": [{"name": "fresh"}]}).topics[0]
    assert again.error_code == 0 and [p.partition_index for p in again.partitions] == [0]


def test_fetch_errors_carry_kafkas_fields(client, fake_kafka):
    client.request("Produce", 9, produce_body("orders", 0, batch([b"a"])))
    past = client.request("Fetch", 12, fetch_body("orders", 0, 5)).responses[0].partitions[0]
    assert (past.error_code, past.high_watermark, past.last_stable_offset,
            past.log_start_offset) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1, -1)
    unknown = client.request("Fetch", 12, fetch_body("orders", 9, 0)).responses[0].partitions[0]
    assert (unknown.error_code, unknown.aborted_transactions) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    topic_id = fake_kafka.call(lambda: fake_kafka.cluster.state.topics["orders"].id)
    body = fetch_body("orders", 0, 0, topic_id)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = 5
    future = client.request("Fetch", 16, body)
    partition = future.responses[0].partitions[0]
    assert partition.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert partition.current_leader.leader_id == -1 and future.node_endpoints == []


def test_produce_refusals_carry_no_message(client):
    corrupt = bytearray(batch([b"x"]))
    corrupt[-1] ^= 0xFF
    for records, error in ((bytes(corrupt), ErrorCode.CORRUPT_MESSAGE),
                           (batch([b"x"], magic=1), ErrorCode.INVALID_RECORD)):
        answer = client.request("Produce", 9, produce_body("orders", 0, records))
        partition = answer.responses[0].partition_responses[0]
        assert (partition.error_code, partition.error_message) == (error, None)


def test_create_topics_answers_as_kafkas_controller(client):
    def create(*topics, version=7):
        return client.request("CreateTopics", version, {"topics": list(topics),
                                                        "timeout_ms": 1000}).topics

    (created,) = create({"name": "made", "num_partitions": 1, "replication_factor": 1})
    assert (created.error_code, created.error_message) == (0, None)
    (bad,) = create({"name": "bad/name", "num_partitions": 1, "replication_factor": 1})
    assert bad.error_message == ("Topic name is invalid: 'bad/name' contains one or more "
                                 "characters other than ASCII alphanumerics, '.', '_' and '-'")
    assert bad.configs == []
    # Configs are checked before partitions; a bad value names its type.
    (conf,) = create({"name": "c", "num_partitions": 0, "replication_factor": 1,
                      "configs": [{"name": "retention.ms", "value": "soon"}]})
    assert (conf.error_code, conf.error_message) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value soon for configuration retention.ms: Not a number of type LONG")
    (zero,) = create({"name": "z", "num_partitions": 0, "replication_factor": 1})
    assert zero.error_message == "Number of partitions was set to an invalid non-positive value."
    (manual,) = create({"name": "m", "num_partitions": 2, "replication_factor": -1,
                        "assignments": [{"partition_index": 0, "broker_ids": [1]}]})
    assert (manual.error_code, manual.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "A manual partition assignment was specified, but numPartitions was not set to -1.")
    twice = create({"name": "t", "num_partitions": 1, "replication_factor": 1},
                   {"name": "once", "num_partitions": 1, "replication_factor": 1},
                   {"name": "t", "num_partitions": 1, "replication_factor": 1})
    assert [(t.name, t.error_code, t.error_message) for t in twice] == [
        ("once", 0, None), ("t", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]


def test_create_partitions_and_delete_topics_messages(client):
    grow = client.request("CreatePartitions", 3, {"topics": [
        {"name": "orders", "count": 2, "assignments": None},
        {"name": "ghost", "count": 2, "assignments": None}], "timeout_ms": 1000}).results
    assert [(r.error_code, r.error_message) for r in grow] == [
        (ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s)."),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
    deleted = client.request("DeleteTopics", 6, {"topics": [
        {"name": "ghost", "topic_id": ZERO_UUID}, {"name": None, "topic_id": uuid.UUID(int=7)},
        {"name": None, "topic_id": ZERO_UUID}], "timeout_ms": 1000}).responses
    assert [(r.error_code, r.error_message) for r in deleted] == [
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
         "This server does not host this topic-partition."),
        (ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID."),
        (ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.")]


def test_describe_configs_sources_and_synonyms_of_a_kafka_4_4_cluster(client, fake_kafka):
    fake_kafka.create_topic("stamped", configs={"message.timestamp.type": "LogAppendTime"})
    answer = client.request("DescribeConfigs", 4, {"resources": [
        {"resource_type": 2, "resource_name": "stamped", "configuration_keys": [
            "message.timestamp.type", "min.insync.replicas", "retention.ms"]},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": [
            "group.initial.rebalance.delay.ms", "message.max.bytes"]},
        {"resource_type": 4, "resource_name": "", "configuration_keys": None}],
        "include_synonyms": True}).results
    assert [r.error_message for r in answer] == ["", "", ""]
    topic = {c.name: c for c in answer[0].configs}
    assert [(s.name, s.value, s.source) for s in topic["message.timestamp.type"].synonyms] == [
        ("message.timestamp.type", "LogAppendTime", 1),
        ("log.message.timestamp.type", "CreateTime", 5)]
    assert topic["min.insync.replicas"].config_source == 3  # the cluster's dynamic default
    assert topic["retention.ms"].synonyms == []  # log.retention.ms has no default
    broker = {c.name: c for c in answer[1].configs}
    delay = broker["group.initial.rebalance.delay.ms"]  # 0 here, Kafka's default is 3000
    assert (delay.value, delay.config_source, delay.read_only) == ("0", 4, True)
    assert [(s.value, s.source) for s in delay.synonyms] == [("0", 4), ("3000", 5)]
    assert (broker["message.max.bytes"].config_source,
            broker["message.max.bytes"].read_only) == (5, False)
    assert [(c.name, c.value, c.config_source) for c in answer[2].configs] == [
        ("min.insync.replicas", "1", 3)]


def test_group_answers_as_kafkas_coordinator(client):
    found = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0})
    assert found.error_message == "NONE"
    batched = client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["g"]})
    assert batched.coordinators[0].error_message == ""
    joined = client.request("JoinGroup", 3, join_body())
    rebalancing = client.request("DescribeGroups", 5, {"groups": ["g"],
                                                       "include_authorized_operations": True})
    (group,) = rebalancing.groups
    assert (group.group_state, group.protocol_data) == ("CompletingRebalance", "")
    assert group.members[0].member_metadata == b"" and group.authorized_operations == 3400
    no_protocol = client.request("SyncGroup", 5, {
        "group_id": "g", "generation_id": joined.generation_id, "member_id": joined.member_id,
        "assignments": []})
    assert no_protocol.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    cluster = client.request("DescribeCluster", 0, {"include_cluster_authorized_operations": True})
    assert cluster.cluster_authorized_operations == 8096
    pruned = client.request("OffsetDelete", 0, {"group_id": "g", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 9}]}]})
    assert pruned.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_consumer_group_answers_as_kafkas_coordinator(client):
    client.request("ConsumerGroupHeartbeat", 1, {
        "group_id": "g848", "member_id": "m1", "member_epoch": 0, "rebalance_timeout_ms": 1000,
        "subscribed_topic_names": ["orders"], "topic_partitions": []})
    unknown = client.request("ConsumerGroupHeartbeat", 1, {
        "group_id": "g848", "member_id": "m2", "member_epoch": 3})
    assert (unknown.error_code, unknown.error_message, unknown.member_id,
            unknown.member_epoch) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                      "Member m2 is not a member of group g848.", None, 0)
    ahead = client.request("ConsumerGroupHeartbeat", 1, {
        "group_id": "g848", "member_id": "m1", "member_epoch": 9})
    assert ahead.error_message.startswith(
        "The consumer group member has a greater member epoch (9) than the one known")
    described = client.request("ConsumerGroupDescribe", 1, {"group_ids": ["g848", "none"]})
    member = described.groups[0].members[0]
    assert (member.member_type, member.subscribed_topic_regex) == (1, "")
    assert (described.groups[1].error_code, described.groups[1].group_state) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "")


def test_idempotent_refusals_and_retries_carry_kafkas_fields(client):
    init = client.request("InitProducerId", 4, {"transactional_id": None,
                                                "transaction_timeout_ms": 1000,
                                                "producer_id": -1, "producer_epoch": -1})

    def produce(value: bytes, sequence: int):
        records = encode_batch([(None, value, [], 1_700_000_000_000)],
                               producer_id=init.producer_id, producer_epoch=0,
                               base_sequence=sequence)
        answer = client.request("Produce", 9, produce_body("orders", 0, records))
        return answer.responses[0].partition_responses[0]

    produce(b"a", 0)
    retried = produce(b"a", 0)  # the stored batch's timestamp as its append time
    assert (retried.error_code, retried.base_offset, retried.log_append_time_ms) == (
        0, 0, 1_700_000_000_000)
    gap = produce(b"c", 5)
    assert (gap.error_code, gap.error_message, gap.log_start_offset) == (
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, None, 0)


def test_metadata_authorized_operations_when_asked(client):
    answer = client.request("Metadata", 10, {
        "topics": [{"name": "orders"}], "include_topic_authorized_operations": True,
        "include_cluster_authorized_operations": True})
    assert answer.topics[0].topic_authorized_operations == 3576
    assert answer.cluster_authorized_operations == 8096
    plain = client.request("Metadata", 10, {"topics": [{"name": "orders"}]})
    assert plain.topics[0].topic_authorized_operations == -(2**31)


def test_api_versions_v5_refuses_a_client_that_reached_another_cluster_or_node(client,
                                                                              fake_kafka):
    cluster_id = fake_kafka.call(lambda: fake_kafka.cluster.state.cluster_id)

    def ask(cluster: str | None, node: int):
        return client.request("ApiVersions", 5, {
            "client_software_name": "wire", "client_software_version": "1.0",
            "cluster_id": cluster, "node_id": node})

    assert ask(cluster_id, 1).error_code == 0 and ask(None, -1).api_keys
    for answer in (ask(cluster_id, 7), ask("AAAAAAAAAAAAAAAAAAAAAA", 1)):
        assert (answer.error_code, answer.api_keys) == (ErrorCode.REBOOTSTRAP_REQUIRED, [])
    refused = client.request("ApiVersions", 3, {"client_software_name": "no spaces",
                                                "client_software_version": "1.0"})
    assert (refused.error_code, refused.api_keys) == (ErrorCode.INVALID_REQUEST, [])
