"""DescribeLogDirs, AlterReplicaLogDirs, DescribeTopicPartitions, ListConfigResources and
DescribeQuorum, on both brokers (``--kafka=both``): on the wire at every version each serves,
and through the real Java AdminClient (4.4.0: ``describeLogDirs``, ``describeMetadataQuorum``,
``describeTopics`` over DescribeTopicPartitions), confluent-kafka's and kafka-python's admin
clients.

The real broker is one combined KRaft node (id 1) whose group coordinator may have made
``__consumer_offsets``: answers are read for this test's own topics.
"""

from __future__ import annotations

import uuid

import pytest

from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.clients.java import run_harness

pytestmark = pytest.mark.fake_kafka(topics={"orders": 3, "audit": 1})
TOPICS = ("audit", "orders")
NO_ERROR, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION = 0, 3, 17
INVALID_REQUEST, UNSUPPORTED_VERSION, LOG_DIR_NOT_FOUND = 42, 35, 57
# READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
ALL_TOPIC_OPERATIONS = 3576


def client(kafka) -> WireClient:
    return WireClient(kafka.bootstrap_servers.split(",")[0])


def log_dirs(c: WireClient, version: int, topics=None):
    (result,) = c.request("DescribeLogDirs", version, {"topics": topics}).results
    return result


def sizes(result) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.partition_size
            for t in result.topics if t.name in TOPICS for p in t.partitions}


def test_describe_log_dirs_lists_one_directory_with_each_partition_s_stored_bytes(kafka):
    records = batch([b"one", b"two"])
    with client(kafka) as c:
        assert c.request("Produce", 9, produce_body("orders", 1, records)) \
            .responses[0].partition_responses[0].error_code == NO_ERROR
        for version in (1, 2, 3, 4):
            result = log_dirs(c, version)
            assert (result.error_code, result.log_dir.startswith("/")) == (NO_ERROR, True)
            assert sizes(result) == {("audit", 0): 0, ("orders", 0): 0,
                                     ("orders", 1): len(records), ("orders", 2): 0}
            assert all((p.offset_lag, p.is_future_key) == (0, False)
                       for t in result.topics for p in t.partitions)
        result = log_dirs(c, 4)
        assert 0 < result.usable_bytes <= result.total_bytes
        assert log_dirs(c, 5).is_cordoned is False
        asked = log_dirs(c, 4, [{"topic": "orders", "partitions": [1, 7]},
                                {"topic": "nope", "partitions": [0]}])
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in asked.topics] \
            == [("orders", [1])]


def test_alter_replica_log_dirs_answers_per_partition_as_a_one_directory_broker(kafka):
    with client(kafka) as c:
        here = log_dirs(c, 4).log_dir
        answer = c.request("AlterReplicaLogDirs", 2, {"dirs": [
            {"path": "/nowhere", "topics": [{"name": "orders", "partitions": [0]}]},
            {"path": here, "topics": [{"name": "orders", "partitions": [1, 9]},
                                      {"name": "nope", "partitions": [0]},
                                      {"name": "x" * 249, "partitions": [0]}]}]})
    errors = {(t.topic_name[:5], p.partition_index): p.error_code
              for t in answer.results for p in t.partitions}
    assert errors == {("order", 0): LOG_DIR_NOT_FOUND, ("order", 1): NO_ERROR,
                      ("order", 9): UNKNOWN_TOPIC_OR_PARTITION,
                      ("nope", 0): UNKNOWN_TOPIC_OR_PARTITION,
                      ("xxxxx", 0): INVALID_TOPIC_EXCEPTION}


def describe(c: WireClient, names=(), limit=2000, cursor=None):
    return c.request("DescribeTopicPartitions", 0, {
        "topics": [{"name": n} for n in names], "response_partition_limit": limit,
        "cursor": cursor})


def listed(answer) -> list[tuple[str, list[int]]]:
    return [(t.name, [p.partition_index for p in t.partitions]) for t in answer.topics]


def test_describe_topic_partitions_pages_named_topics_with_its_cursor(kafka):
    with client(kafka) as c:
        first = describe(c, ["orders", "nope", "audit"], limit=2)
        assert listed(first) == [("audit", [0]), ("nope", []), ("orders", [0])]
        assert [t.error_code for t in first.topics] == [0, UNKNOWN_TOPIC_OR_PARTITION, 0]
        assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("orders", 1)
        second = describe(c, ["orders", "nope", "audit"], limit=2,
                          cursor={"topic_name": "orders", "partition_index": 1})
        assert listed(second) == [("orders", [1, 2])]
        assert second.next_cursor is None
    orders = first.topics[2]
    assert (orders.is_internal, orders.topic_authorized_operations) == \
        (False, ALL_TOPIC_OPERATIONS)
    (partition,) = orders.partitions
    assert partition.eligible_leader_replicas == partition.last_known_elr == []
    assert partition.leader_id in partition.replica_nodes == partition.isr_nodes
    assert partition.offline_replicas == []


def test_describe_topic_partitions_ends_a_full_page_at_the_next_topic_s_start(kafka):
    with client(kafka) as c:
        page = describe(c, ["audit", "orders"], limit=1)
    assert listed(page) == [("audit", [0])]
    assert (page.next_cursor.topic_name, page.next_cursor.partition_index) == ("orders", 0)


def test_describe_topic_partitions_lists_every_topic_when_none_is_named(kafka):
    with client(kafka) as c:
        answer = describe(c, cursor={"topic_name": "audit", "partition_index": 0})
    assert [(n, p) for n, p in listed(answer) if n in TOPICS] == \
        [("audit", [0]), ("orders", [0, 1, 2])]
    assert answer.next_cursor is None


def test_describe_topic_partitions_refuses_a_cursor_outside_the_named_topics(kafka):
    with client(kafka) as c:
        outside = describe(c, ["orders"], cursor={"topic_name": "audit", "partition_index": 0})
        negative = describe(c, ["orders"], cursor={"topic_name": "orders", "partition_index": -1})
    for answer in (outside, negative):
        assert [(t.name, t.error_code, t.topic_id, t.partitions) for t in answer.topics] == \
            [("orders", INVALID_REQUEST, uuid.UUID(int=0), [])]


def test_describe_topic_partitions_names_an_illegal_topic_invalid(kafka):
    with client(kafka) as c:
        answer = describe(c, ["bad!"])
    assert [(t.name, t.error_code) for t in answer.topics] == [("bad!", INVALID_TOPIC_EXCEPTION)]


def test_list_config_resources_lists_brokers_and_topics_from_v1(kafka):
    broker = str(kafka.brokers[0].id)
    with client(kafka) as c:
        assert c.request("ListConfigResources", 0, {}).config_resources == []
        for asked in ([], [2, 4, 8, 16, 32]):
            answer = c.request("ListConfigResources", 1, {"resource_types": asked})
            found = [(r.resource_type, r.resource_name) for r in answer.config_resources
                     if r.resource_type != 2 or r.resource_name in TOPICS]
            assert answer.error_code == NO_ERROR
            assert found[:2] == [(8, broker), (4, broker)]
            assert sorted(found[2:]) == [(2, "audit"), (2, "orders")]
        only_topics = c.request("ListConfigResources", 1, {"resource_types": [2]})
        assert {r.resource_type for r in only_topics.config_resources} == {2}
        unknown = c.request("ListConfigResources", 1, {"resource_types": [3]})
        assert (unknown.error_code, unknown.config_resources) == (UNSUPPORTED_VERSION, [])


METADATA_PARTITION = {"topics": [{"topic_name": "__cluster_metadata",
                                  "partitions": [{"partition_index": 0}]}]}


def test_describe_quorum_has_the_controller_lead_its_voters(kafka):
    with client(kafka) as c:
        for version in (0, 1, 2):
            answer = c.request("DescribeQuorum", version, METADATA_PARTITION)
            (topic,) = answer.topics
            (partition,) = topic.partitions
            assert (answer.error_code, topic.topic_name, partition.error_code) == \
                (NO_ERROR, "__cluster_metadata", NO_ERROR)
            assert partition.leader_id in [v.replica_id for v in partition.current_voters]
            assert partition.leader_epoch >= 1 and partition.observers == []
            assert all(v.log_end_offset == partition.high_watermark
                       for v in partition.current_voters)
        assert all(v.last_caught_up_timestamp > 0 and v.replica_directory_id != uuid.UUID(int=0)
                   for v in partition.current_voters)
        (node,) = answer.nodes
        assert node.node_id == partition.leader_id
        assert [listener.name for listener in node.listeners] == ["CONTROLLER"]


def test_describe_quorum_answers_another_partition_unknown(kafka):
    with client(kafka) as c:
        answer = c.request("DescribeQuorum", 2, {"topics": [
            {"topic_name": "orders", "partitions": [{"partition_index": 0}]}]})
        assert c.request("DescribeQuorum", 2, {"topics": []}).topics == []
    (partition,) = answer.topics[0].partitions
    assert (partition.error_code, partition.error_message) == (
        UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
    assert answer.nodes == [] and partition.current_voters == []


@pytest.mark.fake_only("several brokers")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})
def test_every_fake_broker_is_a_voter_and_the_controller_leads(kafka):
    with client(kafka) as c:
        (partition,) = c.request("DescribeQuorum", 2, METADATA_PARTITION).topics[0].partitions
        cluster = c.request("DescribeCluster", 0, {"include_cluster_authorized_operations": False})
    assert sorted(v.replica_id for v in partition.current_voters) == [1, 2, 3]
    assert partition.leader_id == cluster.controller_id == 1
    kafka.broker_down(1)
    with WireClient(f"{kafka.brokers[1].host}:{kafka.brokers[1].port}") as c:
        (partition,) = c.request("DescribeQuorum", 2, METADATA_PARTITION).topics[0].partitions
    assert partition.leader_id == 2
    assert [(v.replica_id, v.log_end_offset) for v in partition.current_voters] == [
        (1, -1), (2, partition.high_watermark), (3, partition.high_watermark)]


def java_admin(kafka, *args: str) -> list[dict]:
    return run_harness(*args, "--bootstrap", kafka.bootstrap_servers, client_version="4.4.0")


def test_java_admin_describes_log_dirs_and_the_metadata_quorum(kafka):
    broker = kafka.brokers[0].id
    with client(kafka) as c:
        c.request("Produce", 9, produce_body("audit", 0, batch([b"x"])))
    (described,) = java_admin(kafka, "admin-describe-log-dirs", "--broker", str(broker))
    assert (described["broker"], described["error"]) == (broker, None)
    assert described["usableBytes"] > 0
    assert described["replicas"]["audit-0"] == len(batch([b"x"]))
    (quorum,) = java_admin(kafka, "admin-describe-quorum")
    assert (quorum["voters"], quorum["observers"], quorum["nodes"]) == ([broker], [], [broker])
    assert quorum["leader"] == broker


def test_java_admin_describes_a_topic_page_by_page(kafka):
    (described,) = java_admin(kafka, "admin-describe-topic", "--topic", "orders",
                              "--partition-limit", "1")
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    assert described["internal"] is False


def test_confluent_kafka_describes_the_topics_and_the_cluster(kafka):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    described = admin.describe_topics(TopicCollection(["orders"]))["orders"].result(timeout=30)
    assert [p.id for p in described.partitions] == [0, 1, 2]
    cluster = admin.describe_cluster().result(timeout=30)
    assert sorted(n.id for n in cluster.nodes) == sorted(b.id for b in kafka.brokers)


@pytest.mark.fake_only("a fault rule")
def test_a_fault_on_alter_replica_log_dirs_lands_on_every_partition(kafka):
    kafka.faults.add(api="AlterReplicaLogDirs", error="KAFKA_STORAGE_ERROR")
    with client(kafka) as c:
        answer = c.request("AlterReplicaLogDirs", 2, {"dirs": [
            {"path": "/tmp/kafka-logs", "topics": [{"name": "orders", "partitions": [0, 1]}]}]})
    assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in answer.results] == [("orders", [(0, 56), (1, 56)])]


@pytest.mark.fake_only("several brokers")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 1})
def test_list_config_resources_lists_every_broker(kafka):
    with client(kafka) as c:
        answer = c.request("ListConfigResources", 1, {"resource_types": [4, 8]})
    assert [(r.resource_type, r.resource_name) for r in answer.config_resources] == [
        (8, "1"), (8, "2"), (8, "3"), (4, "1"), (4, "2"), (4, "3")]


@pytest.mark.fake_only("several brokers")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})
def test_each_broker_lists_the_partitions_it_holds_a_replica_of(kafka):
    held = {}
    for broker in kafka.brokers:
        with WireClient(f"{broker.host}:{broker.port}") as c:
            held[broker.id] = sorted(sizes(log_dirs(c, 4)))
    with client(kafka) as c:
        topics = c.request("Metadata", 12, {"topics": [{"name": "orders"}],
                                            "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    replicas = {p.partition_index: p.replica_nodes for p in topics.topics[0].partitions}
    assert held == {broker.id: [("orders", index) for index, nodes in sorted(replicas.items())
                                if broker.id in nodes] for broker in kafka.brokers}


def test_kafka_python_describes_the_log_dirs_of_a_partition(kafka):
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=10000)
    try:
        (broker,) = admin.describe_log_dirs({"orders": [0]})
    finally:
        admin.close()
    (log_dir,) = broker["log_dirs"]
    assert (broker["broker"], log_dir["error_code"]) == (kafka.brokers[0].id, 0)
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]])
            for t in log_dir["topics"]] == [("orders", [0])]


def test_records_deleted_keep_their_segment_s_bytes_until_retention_deletes_it(kafka):
    """DeleteRecords moves the log start; the bytes below it stay in their segment until a
    retention check deletes it, and one holding the log start (here the only, active one)
    never is: DescribeLogDirs reports the segment's bytes all along, as Kafka's
    ``UnifiedLog.size`` counts them."""
    first, second = batch([b"one"]), batch([b"two", b"three"])
    with client(kafka) as c:
        for records in (first, second):
            assert c.request("Produce", 9, produce_body("audit", 0, records)) \
                .responses[0].partition_responses[0].error_code == NO_ERROR
        (deleted,) = c.request("DeleteRecords", 2, {"topics": [{"name": "audit", "partitions": [
            {"partition_index": 0, "offset": 3}]}], "timeout_ms": 5000}).topics
        assert [(p.low_watermark, p.error_code) for p in deleted.partitions] == [(3, NO_ERROR)]
        assert sizes(log_dirs(c, 4))[("audit", 0)] == len(first) + len(second)
