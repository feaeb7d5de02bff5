"""The admin clients of confluent-kafka and kafka-python, method by method, on both brokers
(``--kafka=both``): each test calls the methods its ``@calls`` declares (the table of
docs/reference/admin-client.md is made from these, tests/admin_methods.py) and reads what a
user reads — the returned descriptions and offsets, errors as the client raises them
(confluent-kafka: a ``KafkaException`` whose ``KafkaError`` has Kafka's error name;
kafka-python: the error's class).

Lists of topics and partitions leave out the internal topics (__consumer_offsets,
__transaction_state): a broker makes them when a coordinator is first used, so whether they
are listed depends on the tests that ran before. Apache Kafka answers a describe from the
broker's copy of the metadata, a moment after a change: ``eventually`` asks again until the
change shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import confluent_kafka as ck
import confluent_kafka.admin as cka
import kafka.errors as errors
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    AbortTransactionSpec,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    MemberToRemove,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    ScramMechanism,
    UpdateFeatureType,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kafka.structs import OffsetAndMetadata

from fakebroker import FakeKafka
from tests.admin_methods import apis_of, calls
from tests.security import SECURE

pytestmark = [pytest.mark.fake_kafka(topics={"events": 1}), pytest.mark.timeout(120)]

EVENTS_0 = TopicPartition("events", 0)
T = TypeVar("T")


class Recording:
    """An admin client that notes which of its methods are called."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.called: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._client, name)
        if callable(found):
            self.called.add(name)
        return found


@contextmanager
def admin(request: pytest.FixtureRequest, kafka: Any, make: Callable[[], Any]
          ) -> Iterator[Any]:
    """The client ``make()`` returns, recording; afterwards, checks that the test called
    exactly the methods it declares (``@calls``) and, on the fake, that the requests sent
    include every API those methods declare."""
    since = kafka.journal()[-1].seq if isinstance(kafka, FakeKafka) and kafka.journal() else 0
    client = Recording(make())
    try:
        yield client
    finally:
        if isinstance(client._client, KafkaAdminClient):
            client._client.close()  # its connections, even when the test failed
    library, methods = request.function.admin_calls
    assert client.called - {"close"} == set(methods) - {"close"}
    if isinstance(kafka, FakeKafka):
        sent = {entry.api for entry in kafka.journal(since=since)}
        assert apis_of(library, methods) - sent == set(), "declared APIs not requested"


def eventually(ask: Callable[[], T], shows: Callable[[T], bool], timeout: float = 15) -> T:
    """``ask()`` again (every 0.1 s) until ``shows`` its answer, or ``timeout`` passes; the
    last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = ask()
        if shows(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def produce(kafka: Any, count: int = 3) -> None:
    """``count`` records to events-0, with timestamps 1000, 2000..."""
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    for i in range(count):
        producer.send("events", value=b"v%d" % i, partition=0,
                      timestamp_ms=1000 * (i + 1)).get(10)
    producer.close()


def user_topics(names: Any) -> list[str]:
    return sorted(n for n in names if not n.startswith("__"))


# ---------------------------------------------------------------------------- kafka-python


def kafka_python(kafka: Any) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)


def described(topic: dict[str, Any]) -> list[tuple[int, int, list[int], list[int]]]:
    """(partition, leader, replicas, isr) of a kafka-python topic description."""
    return [(p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
            for p in topic["partitions"]]


@calls("kafka-python", "create_topics", "wait_for_topics", "list_topics", "describe_topics",
       "describe_topic_partitions", "create_partitions", "delete_topics", "close")
def test_kafka_python_creates_describes_grows_and_deletes_a_topic(kafka: Any, request) -> None:
    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        [created] = client.create_topics([NewTopic("orders", 2, 1, topic_configs={
            "retention.ms": "100000"})])["topics"]
        assert (created["name"], created["error_code"], created["num_partitions"],
                created["configs"]["retention.ms"]["value"]) == ("orders", 0, 2, "100000")
        with pytest.raises(errors.TopicAlreadyExistsError):
            client.create_topics([NewTopic("orders", 2, 1)])
        assert client.wait_for_topics(["orders"]) is None
        assert user_topics(client.list_topics()) == ["events", "orders"]
        [orders] = client.describe_topics(["orders"])
        assert described(orders) == [(0, 1, [1], [1]), (1, 1, [1], [1])]
        [orders] = client.describe_topic_partitions(["orders"])["topics"]
        assert described(orders) == [(0, 1, [1], [1]), (1, 1, [1], [1])]
        client.create_partitions({"orders": NewPartitions(3)})
        with pytest.raises(errors.InvalidPartitionsError):
            client.create_partitions({"orders": NewPartitions(2)})
        grown = eventually(lambda: client.describe_topics(["orders"])[0],
                           lambda t: len(t["partitions"]) == 3)
        assert described(grown)[2] == (2, 1, [1], [1])
        [deleted] = client.delete_topics(["orders"])["topics"]
        assert (deleted["name"], deleted["error_code"]) == ("orders", 0)
        with pytest.raises(errors.UnknownTopicOrPartitionError):
            client.delete_topics(["orders"])
        client.close()


@calls("kafka-python", "describe_configs", "alter_configs", "reset_configs",
       "list_config_resources")
def test_kafka_python_alters_resets_and_lists_configs(kafka: Any, request) -> None:
    def events(**configs: Any) -> ConfigResource:
        return ConfigResource(ConfigResourceType.TOPIC, "events", configs=configs or None)

    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        assert client.describe_configs([events()]) == {"topic": {"events": {}}}  # modified
        assert client.alter_configs([events(**{"retention.ms": "100000"})]) == {
            "topic": {"events": "OK"}}
        changed = eventually(lambda: client.describe_configs([events()]),
                             lambda c: c["topic"]["events"] != {})
        retention = changed["topic"]["events"]["retention.ms"]
        assert (retention["value"], retention["config_source"]) == (
            "100000", "DYNAMIC_TOPIC_CONFIG")
        assert client.reset_configs([events(**{"retention.ms": None})]) == {
            "topic": {"events": "OK"}}
        assert eventually(lambda: client.describe_configs([events()]),
                          lambda c: c["topic"]["events"] == {}) == {"topic": {"events": {}}}
        resources = client.list_config_resources()
        assert {kind: user_topics(names) if kind == "topic" else names
                for kind, names in resources.items()} == {
            "broker_logger": ["1"], "broker": ["1"], "topic": ["events"]}


@calls("kafka-python", "describe_cluster", "describe_features", "describe_metadata_quorum",
       "describe_log_dirs", "alter_replica_log_dirs", "get_broker_version_data")
def test_kafka_python_describes_the_cluster_features_quorum_and_log_directories(
        kafka: Any, request) -> None:
    produce(kafka)
    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        cluster = client.describe_cluster()
        assert (cluster["controller_id"], [b["broker_id"] for b in cluster["brokers"]],
                len(cluster["cluster_id"])) == (1, [1], 22)
        features = client.describe_features()
        assert {name: f["finalized"] for name, f in features.items()} == {
            "eligible.leader.replicas.version": (1, 1), "group.version": (1, 1),
            "kraft.version": (1, 1), "metadata.version": (33, 33), "share.version": (2, 2),
            "streams.version": (1, 1), "transaction.version": (2, 2)}
        [quorum] = client.describe_metadata_quorum()["topics"][0]["partitions"]
        assert (quorum["leader_id"], [v["replica_id"] for v in quorum["current_voters"]],
                quorum["observers"]) == (1, [1], [])
        [broker] = client.describe_log_dirs()
        [directory] = broker["log_dirs"]
        assert [(t["name"], [p["partition_index"] for p in t["partitions"]])
                for t in directory["topics"] if not t["name"].startswith("__")] == [
            ("events", [0])]
        assert client.alter_replica_log_dirs({("events", 0, 1): directory["log_dir"]}) == {
            ("events", 0, 1): errors.NoError}
        # the newest release kafka-python 3.0.12 tells from the APIs a broker serves
        assert client.get_broker_version_data(1).broker_version == (4, 3)


@calls("kafka-python", "list_partition_offsets", "delete_records", "elect_leaders",
       "alter_partition_reassignments", "list_partition_reassignments")
def test_kafka_python_lists_offsets_deletes_records_elects_and_reassigns(
        kafka: Any, request) -> None:
    produce(kafka)

    def offset(spec: Any) -> tuple[int, int]:
        found = client.list_partition_offsets({EVENTS_0: spec})[EVENTS_0]
        return found.offset, found.timestamp

    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        assert [offset(s) for s in (OffsetSpec.EARLIEST, OffsetSpec.LATEST,
                                    OffsetSpec.MAX_TIMESTAMP)] == [(0, -1), (3, -1), (2, 3000)]
        assert client.delete_records({EVENTS_0: 2})[EVENTS_0]["low_watermark"] == 2
        with pytest.raises(errors.OffsetOutOfRangeError):
            client.delete_records({EVENTS_0: 9})
        assert offset(OffsetSpec.EARLIEST) == (2, -1)
        [elected] = client.elect_leaders(0, {"events": [0]}).replica_election_results
        assert [(p.partition_id, p.error_code, p.error_message)
                for p in elected.partition_result] == [
            (0, errors.ElectionNotNeededError.errno,
             "Leader election not needed for topic partition.")]
        assert client.alter_partition_reassignments({EVENTS_0: [1]}) == {EVENTS_0: None}
        assert client.alter_partition_reassignments({EVENTS_0: [7]}) == {
            EVENTS_0: errors.InvalidReplicationAssignmentError}
        assert client.list_partition_reassignments() == {}


@calls("kafka-python", "list_groups", "describe_groups", "remove_group_members",
       "list_group_offsets", "alter_group_offsets", "reset_group_offsets",
       "delete_group_offsets", "delete_groups")
def test_kafka_python_lists_describes_empties_and_deletes_groups_and_their_offsets(
        kafka: Any, request) -> None:
    produce(kafka)
    consumer = KafkaConsumer("events", bootstrap_servers=kafka.bootstrap_servers,
                             group_id="members", group_instance_id="i1", client_id="c1",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.partitions_for_topic("events")  # see tests/clients/consumers.py
    read = 0
    deadline = time.monotonic() + 30
    while read < 3 and time.monotonic() < deadline:
        read += sum(len(records) for records in consumer.poll(200).values())
    assert read == 3
    consumer.commit({EVENTS_0: OffsetAndMetadata(3, "", 0)})
    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        assert client.list_groups() == [{"group_id": "members", "protocol_type": "consumer",
                                         "group_state": "Stable", "group_type": "classic"}]
        group = client.describe_groups(["members"])["members"]
        [member] = group["members"]
        assert (group["group_state"], group["protocol_data"], member["group_instance_id"],
                member["client_id"], member["member_assignment"]["assigned_partitions"]) == (
            "Stable", "range", "i1", "c1", [{"topic": "events", "partitions": [0]}])
        removed = client.remove_group_members("members", [MemberToRemove(group_instance_id="i1")])
        assert list(removed.values()) == [errors.NoError]
        consumer.close(autocommit=False)
        assert client.list_group_offsets({"members": None}) == {
            "members": {EVENTS_0: OffsetAndMetadata(3, "", 0)}}
        assert client.alter_group_offsets("offsets", {
            EVENTS_0: OffsetAndMetadata(2, "note", -1)}) == {EVENTS_0: errors.NoError}
        assert client.list_group_offsets({"offsets": None}) == {
            "offsets": {EVENTS_0: OffsetAndMetadata(2, "note", -1)}}
        assert client.reset_group_offsets("offsets", {EVENTS_0: OffsetSpec.EARLIEST}) == {
            EVENTS_0: {"error": errors.NoError, "offset": 0}}
        assert client.delete_group_offsets("offsets", [EVENTS_0]) == {
            EVENTS_0: errors.NoError}
        assert client.list_group_offsets({"offsets": None}) == {"offsets": {}}
        assert client.delete_groups(["members", "offsets"]) == {"members": "OK",
                                                                 "offsets": "OK"}
        assert client.delete_groups(["members"]) == {"members": "GroupIdNotFoundError"}


@calls("kafka-python", "list_transactions", "describe_transactions", "describe_producers",
       "abort_transaction", "find_hanging_transactions")
def test_kafka_python_lists_describes_and_aborts_an_open_transaction(
        kafka: Any, request) -> None:
    producer = ck.Producer({"bootstrap.servers": kafka.bootstrap_servers,
                                  "transactional.id": "kafka-python-admin-tx", "log_level": 3})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("events", b"v", partition=0)
    producer.flush(30)
    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        [listed] = [t for per_broker in client.list_transactions().values() for t in per_broker
                    if t.transactional_id == "kafka-python-admin-tx"]  # others: earlier tests'
        assert listed.state.value == "Ongoing"
        described = client.describe_transactions(["kafka-python-admin-tx"])[
            "kafka-python-admin-tx"]
        assert (described.coordinator_id, described.state.value, described.producer_id,
                described.transaction_timeout_ms, described.topic_partitions) == (
            1, "Ongoing", listed.producer_id, 60000, {EVENTS_0})
        [state] = client.describe_producers([EVENTS_0])[EVENTS_0].active_producers
        assert (state.producer_id, state.producer_epoch, state.last_sequence,
                state.current_transaction_start_offset) == (
            listed.producer_id, described.producer_epoch, 0, 0)
        assert client.find_hanging_transactions() == []
        client.abort_transaction(AbortTransactionSpec(EVENTS_0, state.producer_id,
                                                      state.producer_epoch))
        [state] = client.describe_producers([EVENTS_0])[EVENTS_0].active_producers
        assert state.current_transaction_start_offset == -1  # none open


@calls("kafka-python", "alter_user_scram_credentials", "describe_user_scram_credentials")
def test_kafka_python_adds_describes_and_deletes_scram_credentials(
        kafka: Any, request) -> None:
    def mechanisms() -> Any:
        found = client.describe_user_scram_credentials(["erin"])["erin"]
        return found["error"] or sorted((str(i["mechanism"]), i["iterations"])
                                        for i in found["credential_infos"])

    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        assert client.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "erin", ScramMechanism.SCRAM_SHA_256, "secret", iterations=8192)]) == {"erin": None}
        assert eventually(mechanisms, lambda m: isinstance(m, list)) == [
            (str(ScramMechanism.SCRAM_SHA_256), 8192)]
        assert client.alter_user_scram_credentials([UserScramCredentialDeletion(
            "erin", ScramMechanism.SCRAM_SHA_256)]) == {"erin": None}
        assert isinstance(eventually(mechanisms, lambda m: isinstance(m, str)), str)


# ---------------------------------------------------------------------------- confluent-kafka


def confluent(kafka: Any, **config: Any) -> cka.AdminClient:
    return cka.AdminClient({"bootstrap.servers": kafka.bootstrap_servers, "log_level": 3,
                        **config})


def outcome(future: Any) -> Any:
    """A confluent-kafka future's result, or the name of the Kafka error it failed with."""
    try:
        return future.result(30)
    except ck.KafkaException as e:
        return e.args[0].name()


def partitions_of(description: Any) -> list[tuple[int, int, list[int], list[int]]]:
    """(partition, leader, replicas, isr) of a confluent-kafka TopicDescription."""
    return [(p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr])
            for p in description.partitions]


@calls("confluent-kafka", "create_topics", "list_topics", "describe_topics",
       "create_partitions", "delete_topics", "cluster_id", "describe_cluster", "poll")
def test_confluent_kafka_creates_describes_grows_and_deletes_a_topic(
        kafka: Any, request) -> None:
    with admin(request, kafka, lambda: confluent(kafka)) as client:
        orders = cka.NewTopic("orders", 2, 1, config={"retention.ms": "100000"})
        assert outcome(client.create_topics([orders])["orders"]) is None
        assert outcome(client.create_topics([orders])["orders"]) == "TOPIC_ALREADY_EXISTS"
        assert user_topics(client.list_topics(timeout=10).topics) == ["events", "orders"]
        [described] = client.describe_topics(ck.TopicCollection(["orders"])).values()
        assert partitions_of(outcome(described)) == [(0, 1, [1], [1]), (1, 1, [1], [1])]
        [missing] = client.describe_topics(ck.TopicCollection(["missing"])).values()
        assert outcome(missing) == "UNKNOWN_TOPIC_OR_PART"
        assert outcome(client.create_partitions([cka.NewPartitions("orders", 3)])["orders"]) is None
        assert outcome(client.create_partitions([cka.NewPartitions("orders", 2)])["orders"]) == \
            "INVALID_PARTITIONS"
        grown = eventually(lambda: outcome(client.describe_topics(
            ck.TopicCollection(["orders"]))["orders"]), lambda d: len(d.partitions) == 3)
        assert partitions_of(grown)[2] == (2, 1, [1], [1])
        assert outcome(client.delete_topics(["orders"])["orders"]) is None
        assert outcome(client.delete_topics(["orders"])["orders"]) == "UNKNOWN_TOPIC_OR_PART"
        cluster = outcome(client.describe_cluster())
        assert ([n.id for n in cluster.nodes], cluster.controller.id) == ([1], 1)
        assert client.cluster_id(10) == cluster.cluster_id and len(cluster.cluster_id) == 22
        assert client.poll(0) == 0  # no callbacks waiting


@calls("confluent-kafka", "describe_configs", "incremental_alter_configs", "alter_configs")
def test_confluent_kafka_describes_and_alters_a_topics_config(kafka: Any, request) -> None:
    events = cka.ConfigResource(cka.ResourceType.TOPIC, "events")

    def retention() -> tuple[str, str]:
        entry = outcome(client.describe_configs([events])[events])["retention.ms"]
        return entry.value, cka.ConfigSource(entry.source).name

    with admin(request, kafka, lambda: confluent(kafka)) as client:
        assert retention() == ("604800000", "DEFAULT_CONFIG")
        altered = cka.ConfigResource(cka.ResourceType.TOPIC, "events", incremental_configs=[
            cka.ConfigEntry("retention.ms", "100000",
                        incremental_operation=cka.AlterConfigOpType.SET)])
        assert outcome(client.incremental_alter_configs([altered])[altered]) is None
        assert eventually(retention, lambda r: r[0] == "100000") == (
            "100000", "DYNAMIC_TOPIC_CONFIG")
        unknown = cka.ConfigResource(cka.ResourceType.TOPIC, "events", incremental_configs=[
            cka.ConfigEntry("no.such.config", "1",
                            incremental_operation=cka.AlterConfigOpType.SET)])
        assert outcome(client.incremental_alter_configs([unknown])[unknown]) == \
            "INVALID_CONFIG"
        replaced = cka.ConfigResource(cka.ResourceType.TOPIC, "events",
                                  set_config={"retention.ms": "200000"})
        assert outcome(client.alter_configs([replaced])[replaced]) is None
        assert eventually(retention, lambda r: r[0] == "200000") == (
            "200000", "DYNAMIC_TOPIC_CONFIG")


@calls("confluent-kafka", "list_offsets", "delete_records", "elect_leaders")
def test_confluent_kafka_lists_offsets_deletes_records_and_elects_leaders(
        kafka: Any, request) -> None:
    produce(kafka)
    partition = ck.TopicPartition("events", 0)

    def offset(spec: Any) -> tuple[int, int]:
        found = outcome(client.list_offsets({partition: spec})[partition])
        return found.offset, found.timestamp

    with admin(request, kafka, lambda: confluent(kafka)) as client:
        assert [offset(s) for s in (cka.OffsetSpec.earliest(), cka.OffsetSpec.latest(),
                                    cka.OffsetSpec.max_timestamp(),
                                    cka.OffsetSpec.for_timestamp(1500))] == [
            (0, -1), (3, -1), (2, 3000), (1, 2000)]
        [deleted] = client.delete_records([ck.TopicPartition("events", 0, 2)]).values()
        assert outcome(deleted).low_watermark == 2
        [past] = client.delete_records([ck.TopicPartition("events", 0, 9)]).values()
        assert outcome(past) == "OFFSET_OUT_OF_RANGE"
        assert offset(cka.OffsetSpec.earliest()) == (2, -1)
        elected = outcome(client.elect_leaders(ck.ElectionType.PREFERRED, [partition]))
        assert {(tp.topic, tp.partition): e.name() for tp, e in elected.items()} == {
            ("events", 0): "ELECTION_NOT_NEEDED"}


@calls("confluent-kafka", "list_consumer_groups", "list_groups", "describe_consumer_groups",
       "list_consumer_group_offsets", "alter_consumer_group_offsets",
       "delete_consumer_groups")
def test_confluent_kafka_lists_describes_and_deletes_groups_and_alters_their_offsets(
        kafka: Any, request) -> None:
    produce(kafka)
    consumer = KafkaConsumer("events", bootstrap_servers=kafka.bootstrap_servers,
                             group_id="members", client_id="c1", auto_offset_reset="earliest",
                             enable_auto_commit=False)
    consumer.partitions_for_topic("events")  # see tests/clients/consumers.py
    read = 0
    deadline = time.monotonic() + 30
    while read < 3 and time.monotonic() < deadline:
        read += sum(len(records) for records in consumer.poll(200).values())
    assert read == 3
    consumer.commit({EVENTS_0: OffsetAndMetadata(3, "", 0)})
    with admin(request, kafka, lambda: confluent(kafka)) as client:
        listed = outcome(client.list_consumer_groups())
        assert [(g.group_id, g.state.name, g.type.name, g.is_simple_consumer_group)
                for g in listed.valid] == [("members", "STABLE", "CLASSIC", False)]
        [legacy] = client.list_groups(timeout=10)
        assert (legacy.id, legacy.state, legacy.protocol_type, legacy.protocol,
                [m.client_id for m in legacy.members]) == (
            "members", "Stable", "consumer", "range", ["c1"])
        group = outcome(client.describe_consumer_groups(["members"])["members"])
        [member] = group.members
        assert (group.state.name, group.type.name, group.partition_assignor,
                group.coordinator.id, member.client_id,
                [(tp.topic, tp.partition) for tp in member.assignment.topic_partitions]) == (
            "STABLE", "CLASSIC", "range", 1, "c1", [("events", 0)])
        consumer.close(autocommit=False)  # leaves: the group is empty

        def committed(group_id: str) -> list[tuple[str, int, int]]:
            [found] = client.list_consumer_group_offsets(
                [ck.ConsumerGroupTopicPartitions(group_id)]).values()
            return [(tp.topic, tp.partition, tp.offset)
                    for tp in outcome(found).topic_partitions]

        assert committed("members") == [("events", 0, 3)]
        [altered] = client.alter_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(
            "offsets", [ck.TopicPartition("events", 0, 2)])]).values()
        assert outcome(altered).group_id == "offsets"
        assert committed("offsets") == [("events", 0, 2)]
        deleted = client.delete_consumer_groups(["members", "offsets"])
        assert {name: outcome(f) for name, f in deleted.items()} == {"members": None,
                                                                     "offsets": None}
        [again] = client.delete_consumer_groups(["members"]).values()
        assert outcome(again) == "GROUP_ID_NOT_FOUND"


@calls("confluent-kafka", "alter_user_scram_credentials", "describe_user_scram_credentials",
       "set_sasl_credentials")
def test_confluent_kafka_adds_describes_and_deletes_scram_credentials(
        kafka: Any, request) -> None:
    def mechanisms() -> Any:
        [found] = client.describe_user_scram_credentials(["frank"]).values()
        described = outcome(found)
        return described if isinstance(described, str) else sorted(
            (i.mechanism.name, i.iterations) for i in described.scram_credential_infos)

    with admin(request, kafka, lambda: confluent(kafka)) as client:
        client.set_sasl_credentials("frank", "secret")  # for a later login: no request
        [added] = client.alter_user_scram_credentials([cka.UserScramCredentialUpsertion(
            "frank", cka.ScramCredentialInfo(cka.ScramMechanism.SCRAM_SHA_256, 8192),
            b"secret")]).values()
        assert outcome(added) is None
        assert eventually(mechanisms, lambda m: isinstance(m, list)) == [
            ("SCRAM_SHA_256", 8192)]
        [deleted] = client.alter_user_scram_credentials([cka.UserScramCredentialDeletion(
            "frank", cka.ScramMechanism.SCRAM_SHA_256)]).values()
        assert outcome(deleted) is None
        assert eventually(mechanisms, lambda m: isinstance(m, str)) == "RESOURCE_NOT_FOUND"


# ---------------------------------------------------------------------------- ACLs, both


@pytest.mark.security
@pytest.mark.fake_kafka(**SECURE, topics={"events": 1})
@calls("confluent-kafka", "create_acls", "describe_acls", "delete_acls")
def test_confluent_kafka_creates_describes_and_deletes_acls(kafka: Any, request) -> None:
    # over the PLAINTEXT listener, whose User:ANONYMOUS is a super user of the secure preset
    def binding(principal: str, pattern: Any) -> Any:
        return cka.AclBinding(cka.ResourceType.TOPIC, "events", pattern, principal, "*",
                              cka.AclOperation.READ, cka.AclPermissionType.ALLOW)

    alice = binding("User:alice", cka.ResourcePatternType.LITERAL)
    bob = binding("User:bob", cka.ResourcePatternType.PREFIXED)
    events = cka.AclBindingFilter(cka.ResourceType.TOPIC, "events",
                                  cka.ResourcePatternType.MATCH, None, None,
                                  cka.AclOperation.ANY, cka.AclPermissionType.ANY)
    with admin(request, kafka, lambda: cka.AdminClient({
            "bootstrap.servers": kafka.listeners["PLAINTEXT"], "log_level": 3})) as client:
        assert [outcome(f) for f in client.create_acls([alice, bob]).values()] == [None, None]
        assert sorted(eventually(lambda: outcome(client.describe_acls(events)),
                                 lambda found: len(found) == 2), key=str) == sorted(
            [alice, bob], key=str)
        alices = cka.AclBindingFilter(cka.ResourceType.TOPIC, "events",
                                      cka.ResourcePatternType.LITERAL, "User:alice", None,
                                      cka.AclOperation.ANY, cka.AclPermissionType.ANY)
        assert outcome(client.delete_acls([alices])[alices]) == [alice]
        assert eventually(lambda: outcome(client.describe_acls(events)),
                          lambda found: len(found) == 1) == [bob]


@pytest.mark.security
@pytest.mark.fake_kafka(**SECURE, topics={"events": 1})
@calls("kafka-python", "create_acls", "describe_acls", "delete_acls")
def test_kafka_python_creates_describes_and_deletes_acls(kafka: Any, request) -> None:
    group = ResourcePattern(ResourceType.GROUP, "g", ACLResourcePatternType.LITERAL)
    alice = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, group)
    everything_on_g = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                ResourcePatternFilter(ResourceType.GROUP, "g",
                                                      ACLResourcePatternType.ANY))
    with admin(request, kafka, lambda: KafkaAdminClient(
            bootstrap_servers=kafka.listeners["PLAINTEXT"])) as client:
        assert client.create_acls([alice]) == {"succeeded": [alice], "failed": []}
        described, error = eventually(lambda: client.describe_acls(everything_on_g),
                                      lambda answer: answer[0] != [])
        assert (described, error.errno) == ([alice], 0)
        [(selecting, removed, error)] = client.delete_acls([everything_on_g])
        assert (selecting, removed, error.errno) == (everything_on_g, [alice], 0)
        described, error = eventually(lambda: client.describe_acls(everything_on_g),
                                      lambda answer: answer[0] == [])
        assert (described, error.errno) == ([], 0)


# ---------------------------------------------------------------------------------- features


@calls("kafka-python", "describe_features", "update_features")
def test_kafka_python_validates_features_at_their_finalized_levels(
        kafka: Any, request: pytest.FixtureRequest) -> None:
    with admin(request, kafka, lambda: kafka_python(kafka)) as client:
        levels = {name: f["finalized"][1] for name, f in client.describe_features().items()}
        answer = client.update_features({name: (UpdateFeatureType.UPGRADE, level)
                                         for name, level in levels.items()},
                                        validate_only=True)
        assert answer == {name: "OK" for name in levels}
