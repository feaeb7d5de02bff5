"""Real clients meet the authorizer: confluent-kafka's and kafka-python's admin clients create,
describe and delete ACLs, and their consumers and producers get TOPIC_AUTHORIZATION_FAILED /
GROUP_AUTHORIZATION_FAILED for what the ACLs deny, on the fake and on Apache Kafka 4.4
(``--kafka=both``).

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

from tests.dual import MODES
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
    described = admin.describe_acls(mine).result(timeout=DEADLINE)
    assert sorted(described, key=str) == sorted(bindings, key=str)
    deleted = admin.delete_acls([mine])[mine].result(timeout=DEADLINE)
    assert sorted(deleted, key=str) == sorted(bindings, key=str)
    assert admin.describe_acls(mine).result(timeout=DEADLINE) == []


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
