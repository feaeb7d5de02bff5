"""The authorizer on the fake and on Apache Kafka 4.4 (``--kafka=both``): the answers of the
ACL APIs and of APIs refusing what the ACLs deny, on the wire; and real clients —
confluent-kafka's and kafka-python's admin clients create, describe and delete ACLs, their
consumers and producers get TOPIC_AUTHORIZATION_FAILED / GROUP_AUTHORIZATION_FAILED.

Both brokers run an authorizer that allows a resource no ACL names
(``allow_everyone_if_no_acl_found``, Kafka's allow.everyone.if.no.acl.found): every PLAINTEXT
client is ``User:ANONYMOUS``, which may then create ACLs, and an ACL naming ``User:alice`` on
a topic or group takes that resource away from ANONYMOUS (a resource with ACLs, none of them
matching, is denied). Names are unique per test, so the session's real broker needs no reset.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.pytest_plugin import MODES
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body
from tests.real_kafka import require_real_kafka, start_real_kafka

# Apache Kafka configured as the fake below.
AUTHORIZING = {"authorizer.class.name":
               "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
               "allow.everyone.if.no.acl.found": "true"}
DEADLINE = 30.0  # seconds a client gets to show what the broker answered


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "broker" in metafunc.fixturenames:
        metafunc.parametrize("broker", [
            pytest.param(b, marks=pytest.mark.real_kafka) if b == "real" else b
            for b in MODES[metafunc.config.getoption("kafka")]], indirect=True)


@pytest.fixture(scope="module")
def authorizing_real_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Kafka 4.4 with StandardAuthorizer, for this module's tests."""
    require_real_kafka()
    with start_real_kafka(tmp_path_factory.mktemp("kafka-acls"),
                          overrides=AUTHORIZING) as kafka:
        yield kafka.bootstrap_servers


@pytest.fixture
def broker(request: pytest.FixtureRequest) -> Iterator[str]:
    """The bootstrap servers of an authorizing broker: the fake or Apache Kafka."""
    if request.param == "real":
        yield request.getfixturevalue("authorizing_real_kafka")
        return
    from fakebroker import FakeKafka

    with FakeKafka(authorizer=True, allow_everyone_if_no_acl_found=True) as kafka:
        yield kafka.bootstrap_servers


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def until(found: Callable[[], Any], what: str) -> Any:
    """``found()`` once it is truthy, within DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
    raise AssertionError(f"no {what} within {DEADLINE} s")


def confluent_admin(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, name: str) -> None:
    from confluent_kafka.admin import NewTopic

    admin = confluent_admin(bootstrap)
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=DEADLINE)
    until(lambda: admin.list_topics(name, timeout=5).topics[name].error is None,
          f"metadata of {name}")


def deny_anonymous(bootstrap: str, resource_type: Any, name: str) -> None:
    """An ACL for alice on the resource: ANONYMOUS no longer may use it. Returns once the
    broker refuses it (Kafka's broker applies an ACL when its controller's record reaches
    it, a moment after CreateAcls answered)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    binding = AclBinding(resource_type, name, ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    admin = confluent_admin(bootstrap)  # kept alive until its answer came
    admin.create_acls([binding])[binding].result(timeout=DEADLINE)

    def refused() -> bool:
        if resource_type == ResourceType.TOPIC:
            error = admin.list_topics(name, timeout=5).topics[name].error
            return error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        try:
            admin.describe_consumer_groups([name])[name].result(timeout=5)
        except KafkaException as exc:
            return exc.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
        return False

    until(refused, f"refusal of {name}")


# -- admin clients ------------------------------------------------------------------------------

def test_confluent_admin_creates_describes_and_deletes_acls(broker):
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    topic = unique("acl-topic")
    admin = confluent_admin(broker)
    bindings = [
        AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.PREFIXED, "User:bob", "*",
                   AclOperation.WRITE, AclPermissionType.DENY)]
    for future in admin.create_acls(bindings).values():
        assert future.result(timeout=DEADLINE) is None
    mine = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.MATCH, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)
    # Kafka's broker answers DescribeAcls from its authorizer, which learns a change the
    # controller committed from the metadata log a moment later: described once it has.
    until(lambda: sorted(admin.describe_acls(mine).result(timeout=DEADLINE), key=str)
          == sorted(bindings, key=str), "the two bindings described")
    deleted = admin.delete_acls([mine])[mine].result(timeout=DEADLINE)
    assert sorted(deleted, key=str) == sorted(bindings, key=str)
    until(lambda: admin.describe_acls(mine).result(timeout=DEADLINE) == [],
          "the bindings gone from DescribeAcls")


def test_kafka_python_admin_creates_describes_and_deletes_acls(broker):
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    group = unique("acl-group")
    admin = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000)
    try:
        acl = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                  ResourcePattern(ResourceType.GROUP, group, ACLResourcePatternType.LITERAL))
        created = admin.create_acls([acl])
        assert created["succeeded"] == [acl] and created["failed"] == []
        mine = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                         ResourcePatternFilter(ResourceType.GROUP, group,
                                               ACLResourcePatternType.ANY))
        described, error = admin.describe_acls(mine)
        assert described == [acl] and error.errno == 0
        [(selecting, removed, error)] = admin.delete_acls([mine])
        assert selecting == mine and removed == [acl] and error.errno == 0
    finally:
        admin.close()


# -- consumers and producers --------------------------------------------------------------------

def test_confluent_producer_to_a_denied_topic_gets_topic_authorization_failed(broker):
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import ResourceType

    topic = unique("denied")
    create_topic(broker, topic)
    deny_anonymous(broker, ResourceType.TOPIC, topic)
    reports: list[Any] = []
    producer = Producer({"bootstrap.servers": broker, "message.timeout.ms": 20000})
    producer.produce(topic, b"refused", on_delivery=lambda err, msg: reports.append(err))
    until(lambda: producer.flush(1) == 0 and reports, "delivery report")
    assert reports[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_confluent_consumer_of_a_denied_group_gets_group_authorization_failed(broker):
    from confluent_kafka import Consumer, KafkaError
    from confluent_kafka.admin import ResourceType

    topic, group = unique("open"), unique("denied-group")
    create_topic(broker, topic)
    deny_anonymous(broker, ResourceType.GROUP, group)
    consumer = Consumer({"bootstrap.servers": broker, "group.id": group,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])

        def error() -> Any:
            message = consumer.poll(0.5)
            return message.error() if message is not None and message.error() else None

        assert until(error, "consumer error").code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()


def test_kafka_python_producer_to_a_denied_topic_gets_topic_authorization_failed(broker):
    """(kafka-python 3.0.12's subscribing consumer only logs the refusal its metadata
    listener raises, on both brokers: the producer is where it reaches the caller.)"""
    from confluent_kafka.admin import ResourceType
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    topic = unique("denied")
    create_topic(broker, topic)
    deny_anonymous(broker, ResourceType.TOPIC, topic)
    producer = KafkaProducer(bootstrap_servers=broker, max_block_ms=20000)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(topic, b"refused").get(timeout=DEADLINE)
    finally:
        producer.close(timeout=5)


def test_kafka_python_consumer_of_a_denied_group_gets_group_authorization_failed(broker):
    from confluent_kafka.admin import ResourceType
    from kafka import KafkaConsumer
    from kafka.errors import GroupAuthorizationFailedError

    topic, group = unique("open"), unique("denied-group")
    create_topic(broker, topic)
    deny_anonymous(broker, ResourceType.GROUP, group)
    consumer = KafkaConsumer(topic, bootstrap_servers=broker, group_id=group,
                             auto_offset_reset="earliest", request_timeout_ms=20000)
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            until(lambda: consumer.poll(timeout_ms=500), "a refusal")
    finally:
        consumer.close()


# -- on the wire --------------------------------------------------------------------------------

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5


def alice_only(resource_type: int, name: str, operation: int = 2) -> dict:
    """A CreateAcls creation: alice may (ALL by default) use the resource."""
    return {"resource_type": resource_type, "resource_name": name,
            "resource_pattern_type": 3, "principal": "User:alice", "host": "*",
            "operation": operation, "permission_type": 3}


def wire_topics(client: WireClient, *names: str) -> None:
    client.request("CreateTopics", 7, {"topics": [
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [],
         "configs": []} for n in names], "timeout_ms": 10000, "validate_only": False})
    until(lambda: all(t.error_code == 0 and t.partitions and t.partitions[0].leader_id >= 0
                      for t in client.request("Metadata", 12, {
                          "topics": [{"name": n} for n in names],
                          "allow_auto_topic_creation": False}).topics), "the topics")


def metadata_error(client: WireClient, topic: str) -> int:
    return client.request("Metadata", 12, {"topics": [{"name": topic}],
                                           "allow_auto_topic_creation": False}
                          ).topics[0].error_code


def test_create_acls_answers_each_creation_as_kafka(broker):
    topic = unique("checked")
    with WireClient(broker) as client:
        checked = client.request("CreateAcls", 3, {"creations": [
            alice_only(CLUSTER, "my-cluster"), alice_only(TOPIC, ""),
            dict(alice_only(TOPIC, topic), principal="alice"), alice_only(TOPIC, topic)]})
        unbuildable = client.request("CreateAcls", 3, {"creations": [
            alice_only(TOPIC, topic), dict(alice_only(TOPIC, topic), resource_pattern_type=1)]})
        client.request("DeleteAcls", 3, {"filters": [{
            "resource_type_filter": TOPIC, "resource_name_filter": topic,
            "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
            "operation": 1, "permission_type": 1}]})
    assert [(r.error_code, r.error_message) for r in checked.results] == [
        (ErrorCode.INVALID_REQUEST,
         "The only valid name for the CLUSTER resource is kafka-cluster"),
        (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        (ErrorCode.INVALID_REQUEST, "Could not parse principal from `alice` (no colon is "
                                    "present separating the principal type from the principal "
                                    "name)"),
        (0, "")]
    assert [(r.error_code, r.error_message) for r in unbuildable.results] == [
        (ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2


def test_a_denied_topic_is_hidden_refused_and_not_written(broker):
    denied, open_ = unique("denied"), unique("open")
    with WireClient(broker) as client:
        wire_topics(client, denied, open_)
        client.request("CreateAcls", 3, {"creations": [alice_only(TOPIC, denied)]})
        until(lambda: metadata_error(client, denied) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              "the refusal")
        every = client.request("Metadata", 12, {"topics": None,
                                                "allow_auto_topic_creation": False})
        named = client.request("Metadata", 12, {"topics": [{"name": denied}, {"name": open_}],
                                                "allow_auto_topic_creation": False})
        produced = client.request("Produce", 11, {
            "acks": -1, "timeout_ms": 5000, "transactional_id": None, "topic_data": [
                {"name": name, "partition_data": [{"index": 0, "records": batch([b"v"])}]}
                for name in (denied, open_)]})
    names = [t.name for t in every.topics]
    assert open_ in names and denied not in names
    assert [(t.name, t.error_code, t.topic_id.int) for t in named.topics] == [
        (open_, 0, named.topics[0].topic_id.int),
        (denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0)]  # refused last, no id
    assert {t.name: [(p.error_code, p.base_offset) for p in t.partition_responses]
            for t in produced.responses} == {
        denied: [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)], open_: [(0, 0)]}


def test_a_denied_group_is_refused_where_each_api_answers_it(broker):
    topic, group = unique("open"), unique("denied-group")
    with WireClient(broker) as client:
        wire_topics(client, topic)
        client.request("CreateAcls", 3, {"creations": [alice_only(GROUP, group)]})

        def coordinators() -> list:
            return client.request("FindCoordinator", 4, {
                "key_type": 0, "coordinator_keys": [group]}).coordinators

        until(lambda: coordinators()[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED,
              "the refusal")
        old = client.request("FindCoordinator", 3, {"key": group, "key_type": 0})
        committed = client.request("OffsetCommit", 9, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "retention_time_ms": -1, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                "committed_leader_epoch": -1,
                                                "committed_metadata": ""}]}]})
        joined = client.request("JoinGroup", 9, {
            "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
            "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None})
        fetched = client.request("OffsetFetch", 7, {"group_id": group, "require_stable": False,
                                                    "topics": None})
    assert (old.error_code, old.error_message, old.node_id) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", -1)
    assert [[p.error_code for p in t.partitions] for t in committed.topics] == [
        [ErrorCode.GROUP_AUTHORIZATION_FAILED]]
    assert (joined.error_code, joined.generation_id, joined.member_id) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED, -1, "")
    assert (fetched.error_code, list(fetched.topics)) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED, [])


def test_a_denied_transactional_id_and_topic_configs(broker):
    txn, denied = unique("denied-tx"), unique("denied")
    with WireClient(broker) as client:
        wire_topics(client, denied)
        client.request("CreateAcls", 3, {"creations": [alice_only(TRANSACTIONAL_ID, txn),
                                                       alice_only(TOPIC, denied)]})
        until(lambda: metadata_error(client, denied) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              "the refusal")
        until(lambda: client.request("FindCoordinator", 4, {
            "key_type": 1, "coordinator_keys": [txn]}).coordinators[0].error_code ==
            ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "the refusal")
        producer = client.request("InitProducerId", 5, {
            "transactional_id": txn, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1})
        configs = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 2, "resource_name": denied,
             "configuration_keys": ["cleanup.policy"]}],
            "include_synonyms": False, "include_documentation": False})
    assert (producer.error_code, producer.producer_id) == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert [(r.error_code, r.error_message, list(r.configs)) for r in configs.results] == [
        (ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.", [])]


def test_create_topics_needs_create_and_answers_configs_only_to_who_may_describe_them(broker):
    """CREATE is taken from ANONYMOUS on the cluster (the cluster gets ACLs: ANONYMOUS keeps
    what the broker and these tests need) and on alice's topics, and given on one topic
    prefix; the configs of a created topic are answered only with DESCRIBE_CONFIGS on it
    (CREATE does not imply it); the cluster's ACLs are removed after."""
    prefix, theirs = unique("mine"), unique("theirs")
    own, other, hidden = f"{prefix}-own", f"{theirs}-other", f"{prefix}-hidden"
    cluster_acls = [alice_only(CLUSTER, "kafka-cluster", operation=5)] + [
        dict(alice_only(CLUSTER, "kafka-cluster", operation=op), principal="User:ANONYMOUS")
        for op in (7, 8, 9, 12)]  # ALTER, DESCRIBE, CLUSTER_ACTION, IDEMPOTENT_WRITE
    topic_acls = [dict(alice_only(TOPIC, prefix, operation=5), resource_pattern_type=4,
                       principal="User:ANONYMOUS"),
                  dict(alice_only(TOPIC, own, operation=10), principal="User:ANONYMOUS"),
                  dict(alice_only(TOPIC, theirs), resource_pattern_type=4)]

    def create(client: WireClient, *names: str) -> Any:
        return client.request("CreateTopics", 7, {"topics": [
            {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": []} for n in names], "timeout_ms": 10000, "validate_only": False})

    with WireClient(broker) as client:
        client.request("CreateAcls", 3, {"creations": cluster_acls + topic_acls})
        try:
            until(lambda: create(client, unique(theirs)).topics[0].error_code ==
                  ErrorCode.TOPIC_AUTHORIZATION_FAILED, "the refusal")
            answer = create(client, other, own, hidden)
        finally:
            client.request("DeleteAcls", 3, {"filters": [{
                "resource_type_filter": CLUSTER, "resource_name_filter": None,
                "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                "operation": 1, "permission_type": 1}]})
    assert [(t.name, t.error_code, t.error_message, t.topic_config_error_code,
             t.num_partitions, bool(t.configs)) for t in answer.topics] == [
        (own, 0, None, 0, 1, True),
        (hidden, 0, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, False),
        (other, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.", 0, -1, False)]


def test_every_topic_api_refuses_a_denied_topic_unless_the_cluster_permits(broker):
    denied = unique("denied")
    with WireClient(broker) as client:
        wire_topics(client, denied)
        client.request("CreateAcls", 3, {"creations": [alice_only(TOPIC, denied)]})
        until(lambda: metadata_error(client, denied) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              "the refusal")
        partitions = [{"partition_index": 0}]
        answers = {
            "Fetch": client.request("Fetch", 12, fetch_body(denied, 0, 0)
                                    ).responses[0].partitions[0].error_code,
            "ListOffsets": client.request("ListOffsets", 7, {
                "replica_id": -1, "isolation_level": 0, "topics": [{"name": denied,
                "partitions": [dict(partitions[0], current_leader_epoch=-1, timestamp=-1)]}]}
            ).topics[0].partitions[0].error_code,
            "OffsetForLeaderEpoch": client.request("OffsetForLeaderEpoch", 4, {
                "replica_id": -1, "topics": [{"topic": denied, "partitions": [
                    {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}
            ).topics[0].partitions[0].error_code,
            "DeleteRecords": client.request("DeleteRecords", 2, {
                "timeout_ms": 5000, "topics": [{"name": denied, "partitions": [
                    {"partition_index": 0, "offset": 0}]}]}
            ).topics[0].partitions[0].error_code,
            "DescribeProducers": client.request("DescribeProducers", 0, {
                "topics": [{"name": denied, "partition_indexes": [0]}]}
            ).topics[0].partitions[0].error_code,
            "CreatePartitions": client.request("CreatePartitions", 3, {
                "topics": [{"name": denied, "count": 2, "assignments": None}],
                "timeout_ms": 5000, "validate_only": False}).results[0].error_code,
            "DeleteTopics": client.request("DeleteTopics", 6, {
                "topics": [{"name": denied, "topic_id": ZERO_UUID}], "timeout_ms": 5000}
            ).responses[0].error_code,
        }
    # DELETE and CLUSTER_ACTION on the cluster (no ACL names it) let OffsetForLeaderEpoch and
    # DeleteTopics through, as Kafka's checks allow; every other API refuses the topic.
    assert answers == dict(dict.fromkeys(answers, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                           OffsetForLeaderEpoch=0, DeleteTopics=0)


def test_every_group_api_refuses_a_denied_group_where_it_answers_it(broker):
    topic, denied, allowed = unique("open"), unique("denied-group"), unique("open-group")
    with WireClient(broker) as client:
        wire_topics(client, topic)
        client.request("CreateAcls", 3, {"creations": [alice_only(GROUP, denied)]})

        def found(group: str) -> int:
            return client.request("FindCoordinator", 4, {
                "key_type": 0, "coordinator_keys": [group]}).coordinators[0].error_code

        until(lambda: found(denied) == ErrorCode.GROUP_AUTHORIZATION_FAILED, "the refusal")
        until(lambda: found(allowed) == 0, "the coordinator")

        def describe() -> Any:
            return client.request("DescribeGroups", 5, {
                "groups": [denied, allowed], "include_authorized_operations": True}).groups

        described = until(lambda: (groups := describe())[1].error_code == 0 and groups,
                          "the coordinator loaded")
        deleted = client.request("DeleteGroups", 2, {"groups_names": [denied]}).results
        offsets_deleted = client.request("OffsetDelete", 0, {
            "group_id": denied, "topics": [{"name": topic, "partitions": [
                {"partition_index": 0}]}]})
        heartbeat = client.request("Heartbeat", 4, {"group_id": denied, "generation_id": 1,
                                                    "member_id": "m",
                                                    "group_instance_id": None})
        sync = client.request("SyncGroup", 5, {
            "group_id": denied, "generation_id": 1, "member_id": "m",
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": []})
        left = client.request("LeaveGroup", 5, {"group_id": denied, "members": [
            {"member_id": "m", "group_instance_id": None, "reason": None}]})
    assert [(g.group_id, g.error_code) for g in described] == [
        (denied, ErrorCode.GROUP_AUTHORIZATION_FAILED), (allowed, 0)]
    assert described[1].authorized_operations == sum(1 << op for op in (3, 6, 8, 10, 11))
    assert [(r.group_id, r.error_code) for r in deleted] == [
        (denied, ErrorCode.GROUP_AUTHORIZATION_FAILED)]
    assert offsets_deleted.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert heartbeat.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert sync.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert left.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_transactional_apis_refuse_where_kafka_answers(broker):
    topic, denied_topic = unique("open"), unique("denied")
    txn, denied_txn, denied_group = unique("tx"), unique("denied-tx"), unique("denied-group")
    with WireClient(broker) as client:
        wire_topics(client, topic, denied_topic)
        client.request("CreateAcls", 3, {"creations": [
            alice_only(TOPIC, denied_topic), alice_only(GROUP, denied_group),
            alice_only(TRANSACTIONAL_ID, denied_txn)]})
        until(lambda: metadata_error(client, denied_topic) ==
              ErrorCode.TOPIC_AUTHORIZATION_FAILED, "the refusal")
        until(lambda: client.request("FindCoordinator", 4, {
            "key_type": 0, "coordinator_keys": [denied_group]}).coordinators[0].error_code ==
            ErrorCode.GROUP_AUTHORIZATION_FAILED, "the refusal")
        until(lambda: client.request("FindCoordinator", 4, {  # makes Kafka's txn topic
            "key_type": 1, "coordinator_keys": [txn]}).coordinators[0].error_code == 0,
            "the transaction coordinator")
        producer = until(lambda: (p := client.request("InitProducerId", 5, {
            "transactional_id": txn, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1})).error_code == 0 and p, "a producer id")
        ids = {"producer_id": producer.producer_id, "producer_epoch": producer.producer_epoch}
        added = client.request("AddPartitionsToTxn", 3, {
            "v3_and_below_transactional_id": txn,
            "v3_and_below_producer_id": producer.producer_id,
            "v3_and_below_producer_epoch": producer.producer_epoch,
            "v3_and_below_topics": [{"name": topic, "partitions": [0]},
                                    {"name": denied_topic, "partitions": [0]}]})
        offsets_added = client.request("AddOffsetsToTxn", 4, {
            "transactional_id": txn, "group_id": denied_group, **ids})
        committed = client.request("TxnOffsetCommit", 3, {
            "transactional_id": txn, "group_id": denied_group, "generation_id": -1,
            "member_id": "", "group_instance_id": None, **ids, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                "committed_leader_epoch": -1,
                                                "committed_metadata": ""}]}]})
        ended = client.request("EndTxn", 4, {"transactional_id": denied_txn,
                                             "committed": False, **ids})
    assert {t.name: [p.partition_error_code for p in t.results_by_partition]
            for t in added.results_by_topic_v3_and_below} == {
        topic: [ErrorCode.OPERATION_NOT_ATTEMPTED],
        denied_topic: [ErrorCode.TOPIC_AUTHORIZATION_FAILED]}
    assert offsets_added.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert [[p.error_code for p in t.partitions] for t in committed.topics] == [
        [ErrorCode.GROUP_AUTHORIZATION_FAILED]]
    assert ended.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_offset_fetch_hides_or_refuses_a_denied_topic(broker):
    topic, denied, group = unique("open"), unique("denied"), unique("group")
    with WireClient(broker) as client:
        wire_topics(client, topic, denied)
        until(lambda: client.request("FindCoordinator", 4, {
            "key_type": 0, "coordinator_keys": [group]}).coordinators[0].error_code == 0,
            "the coordinator")
        until(lambda: all(p.error_code == 0 for t in client.request("OffsetCommit", 9, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "retention_time_ms": -1, "topics": [
                {"name": name, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                               "committed_leader_epoch": -1,
                                               "committed_metadata": ""}]}
                for name in (topic, denied)]}).topics for p in t.partitions), "the commit")
        client.request("CreateAcls", 3, {"creations": [alice_only(TOPIC, denied)]})
        until(lambda: metadata_error(client, denied) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              "the refusal")
        named = client.request("OffsetFetch", 9, {"require_stable": False, "groups": [
            {"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
                {"name": name, "partition_indexes": [0]} for name in (topic, denied)]}]})
        every = client.request("OffsetFetch", 7, {"group_id": group, "require_stable": False,
                                                  "topics": None})
    assert {t.name: [(p.error_code, p.committed_offset) for p in t.partitions]
            for t in named.groups[0].topics} == {
        topic: [(0, 5)], denied: [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)]}
    assert [(t.name, [p.committed_offset for p in t.partitions]) for t in every.topics] == [
        (topic, [5])]


def test_altering_a_denied_topics_configs_is_refused_and_the_others_altered(broker):
    denied, allowed = unique("denied"), unique("allowed")
    with WireClient(broker) as client:
        wire_topics(client, denied, allowed)
        client.request("CreateAcls", 3, {"creations": [alice_only(TOPIC, denied)]})
        until(lambda: metadata_error(client, denied) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              "the refusal")
        answers = {}
        for api, version, configs in (
                ("IncrementalAlterConfigs", 1, [{"name": "retention.ms", "config_operation": 0,
                                                 "value": "1000"}]),
                ("AlterConfigs", 2, [{"name": "retention.ms", "value": "1000"}])):
            answers[api] = [(r.resource_name, r.error_code, r.error_message)
                            for r in client.request(api, version, {"resources": [
                                {"resource_type": 2, "resource_name": name,
                                 "configs": configs} for name in (denied, allowed)],
                                "validate_only": False}).responses]
    refused = (denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
    assert answers == {api: [refused, (allowed, 0, None)]
                       for api in ("IncrementalAlterConfigs", "AlterConfigs")}


def test_a_brokers_loggers_need_describe_and_alter_configs_on_the_cluster(broker):
    """DESCRIBE_CONFIGS and ALTER_CONFIGS on the cluster are given to alice only (ANONYMOUS
    keeps what the broker and these tests need): ANONYMOUS may neither list the broker's
    loggers nor set a level, though a malformed change is refused for that first; the
    cluster's ACLs are removed after."""
    cluster_acls = [alice_only(CLUSTER, "kafka-cluster", operation=op) for op in (10, 11)] + [
        dict(alice_only(CLUSTER, "kafka-cluster", operation=op), principal="User:ANONYMOUS")
        for op in (7, 8, 9, 12)]  # ALTER, DESCRIBE, CLUSTER_ACTION, IDEMPOTENT_WRITE

    def loggers(client: WireClient) -> Any:
        return client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 8, "resource_name": "1", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}).results[0]

    def set_root(client: WireClient, *ops: tuple[int, str | None]) -> tuple[int, str | None]:
        answer = client.request("IncrementalAlterConfigs", 1, {"validate_only": True,
            "resources": [{"resource_type": 8, "resource_name": "1", "configs": [
                {"name": "root", "config_operation": op, "value": value}
                for op, value in ops]}]}).responses[0]
        return answer.error_code, answer.error_message

    with WireClient(broker) as client:
        assert set_root(client, (0, "INFO")) == (0, None)
        client.request("CreateAcls", 3, {"creations": cluster_acls})
        try:
            described = until(lambda: (answer := loggers(client)).error_code and answer,
                              "the refusal")
            refused = set_root(client, (0, "INFO"))
            malformed = set_root(client, (0, "INFO"), (1, None))
        finally:
            client.request("DeleteAcls", 3, {"filters": [{
                "resource_type_filter": CLUSTER, "resource_name_filter": None,
                "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                "operation": 1, "permission_type": 1}]})
    assert (described.error_code, described.error_message, list(described.configs)) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", [])
    assert refused == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    assert malformed == (ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")


def test_create_partitions_counts_no_denied_topic_toward_its_bound(broker):
    """Kafka's broker answers a topic the principal may not ALTER before its controller sums
    what the request adds (at most 10,000): 6,000 more partitions to a denied topic beside
    6,000 to an allowed one are not over the bound."""
    from confluent_kafka.admin import ResourceType

    allowed, denied = unique("grown"), unique("denied")
    for name in (allowed, denied):
        create_topic(broker, name)
    deny_anonymous(broker, ResourceType.TOPIC, denied)
    with WireClient(broker, timeout=60) as client:
        answer = client.request("CreatePartitions", 3, {"topics": [
            {"name": name, "count": 6001, "assignments": None} for name in (allowed, denied)],
            "timeout_ms": 30000, "validate_only": True})
    assert {r.name: (r.error_code, r.error_message) for r in answer.results} == {
        allowed: (0, None), denied: (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)}
