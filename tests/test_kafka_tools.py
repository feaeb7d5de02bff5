"""Kafka's own command-line tools (kafka-tools 4.4.0, tests/clients/tools.py), typed as a user
types them, print the same on the fake as on Apache Kafka 4.4 once host:ports, ids and
log directories are normalised (``normalised``).

Every test takes the ``kafka`` fixture (``--kafka=both`` runs it on both brokers). Where the
fake answers differently for a reason of its own (a feature it does not serve yet), the test
is marked ``xfail(strict=True)`` on the fake only, naming the missing piece: it fails once the
piece lands, to be unmarked. Each tool call starts a JVM (about 1.5 s): the tests group the
calls a user would make in one session.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from fakebroker import FakeKafka
from fakebroker.real_cluster import INTERNAL_TOPICS, wait_for
from fakebroker.wire_client import WireClient
from tests.absent import needs
from tests.bodies import fetch_body
from tests.clients.tools import ToolResult, run_tool, tools_available

pytestmark = [
    needs(tools_available(), "kafka-tools 4.4.0 (bash .ci/install-kafka)"),
    pytest.mark.fake_kafka(topics={"events": 1}),
]

# What `kafka-broker-api-versions` shows Kafka 4.4's tools can use of Kafka 4.4.0 (the newer
# of the two ends' versions): the usable version per API, None for UNSUPPORTED.
KAFKA_USABLE_VERSIONS: dict[str, int | None] = {
    "Produce": 13, "Fetch": 18, "ListOffsets": 11, "Metadata": 13, "OffsetCommit": 10,
    "OffsetFetch": 10, "FindCoordinator": 6, "JoinGroup": 9, "Heartbeat": 4, "LeaveGroup": 5,
    "SyncGroup": 5, "DescribeGroups": 6, "ListGroups": 5, "SaslHandshake": 1, "ApiVersions": 5,
    "CreateTopics": 7, "DeleteTopics": 6, "DeleteRecords": 2, "InitProducerId": 5,
    "OffsetForLeaderEpoch": 4, "AddPartitionsToTxn": 5, "AddOffsetsToTxn": 4, "EndTxn": 5,
    "WriteTxnMarkers": 2, "TxnOffsetCommit": 6, "DescribeAcls": 3, "CreateAcls": 3,
    "DeleteAcls": 3, "DescribeConfigs": 4, "AlterConfigs": 2, "AlterReplicaLogDirs": 2,
    "DescribeLogDirs": 5, "SaslAuthenticate": 2, "CreatePartitions": 3,
    "CreateDelegationToken": 3, "RenewDelegationToken": 2, "ExpireDelegationToken": 2,
    "DescribeDelegationToken": 3, "DeleteGroups": 3, "ElectLeaders": 2,
    "IncrementalAlterConfigs": 1, "AlterPartitionReassignments": 1,
    "ListPartitionReassignments": 0, "OffsetDelete": 0, "DescribeClientQuotas": 1,
    "AlterClientQuotas": 1, "DescribeUserScramCredentials": 0, "AlterUserScramCredentials": 0,
    "DescribeQuorum": 2, "UpdateFeatures": 2, "DescribeCluster": 2, "DescribeProducers": 0,
    "UnregisterBroker": 0, "DescribeTransactions": 0, "ListTransactions": 2,
    "ConsumerGroupHeartbeat": 1, "ConsumerGroupDescribe": 1, "GetTelemetrySubscriptions": None,
    "PushTelemetry": None, "ListConfigResources": 1, "DescribeTopicPartitions": 0,
    "ShareGroupHeartbeat": 1, "ShareGroupDescribe": 1, "ShareFetch": 2, "ShareAcknowledge": 2,
    "AddRaftVoter": 1, "RemoveRaftVoter": 0, "InitializeShareGroupState": 0,
    "ReadShareGroupState": 0, "WriteShareGroupState": 1, "DeleteShareGroupState": 0,
    "ReadShareGroupStateSummary": 1, "StreamsGroupHeartbeat": 1, "StreamsGroupDescribe": 1,
    "DescribeShareGroupOffsets": 1, "AlterShareGroupOffsets": 0, "DeleteShareGroupOffsets": 0,
    "StreamsGroupTopologyDescriptionUpdate": 0, "UnregisterController": 0,
}


def on_fake_xfail(kafka: Any, request: pytest.FixtureRequest, reason: str) -> None:
    """Expect this test to fail on the fake only, strictly, for ``reason``."""
    if isinstance(kafka, FakeKafka):
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def normalised(text: str, kafka: Any) -> str:
    """``text`` with the broker's host:port, topic and cluster ids and log directory
    replaced (the cluster id's format has its own test)."""
    text = text.replace(kafka.bootstrap_servers, "HOST:PORT")
    text = re.sub(r'"logDir":"[^"]*"', '"logDir":"LOGDIR"', text)
    text = re.sub(r'"log_dirs":\["/[^"]*"\]', '"log_dirs":["LOGDIR"]', text)
    text = re.sub(r"(ClusterId: +)\S+", r"\1ID", text)
    return re.sub(r"(TopicId: )[A-Za-z0-9_-]{22}\b", r"\1ID", text)


def tool(kafka: Any, name: str, *args: str, stdin: str | None = None,
         command: tuple[str, ...] = ()) -> ToolResult:
    """Run Kafka's ``name`` tool (its ``command`` first, if it has them) against ``kafka``;
    it must exit 0."""
    result = run_tool(name, *command, "--bootstrap-server", kafka.bootstrap_servers, *args,
                      stdin=stdin)
    assert result.status == 0, f"{name} {' '.join(args)} exited {result.status}:\n" \
                               f"{result.stdout}\n{result.stderr}"
    return result


def out(kafka: Any, name: str, *args: str, stdin: str | None = None) -> str:
    """What ``name`` prints on stdout, normalised."""
    return normalised(tool(kafka, name, *args, stdin=stdin).stdout, kafka)


def test_kafka_topics_creates_lists_describes_alters_and_deletes_a_topic(kafka: Any) -> None:
    created = out(kafka, "kafka-topics", "--create", "--topic", "orders", "--partitions", "2",
                  "--replication-factor", "1")
    assert created == "Created topic orders.\n"
    assert out(kafka, "kafka-topics", "--list", "--exclude-internal") == "events\norders\n"
    out(kafka, "kafka-topics", "--alter", "--topic", "orders", "--partitions", "3")
    assert out(kafka, "kafka-topics", "--describe", "--topic", "orders") == (
        "Topic: orders\tTopicId: ID\tPartitionCount: 3\tReplicationFactor: 1\t"
        "Configs: min.insync.replicas=1\n"
        + "".join(f"\tTopic: orders\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \t"
                  "LastKnownElr: \n" for p in range(3)))
    assert out(kafka, "kafka-topics", "--delete", "--topic", "orders") == ""
    assert out(kafka, "kafka-topics", "--list", "--exclude-internal") == "events\n"


def test_kafka_topics_lists_the_offsets_topic_once_a_group_committed(kafka: Any) -> None:
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "listed",
                         "log_level": 3})
    try:
        consumer.commit(offsets=[TopicPartition("events", 0, 0)], asynchronous=False)
    finally:
        consumer.close()
    listed = out(kafka, "kafka-topics", "--list").splitlines()
    # Kafka's other internal topics too where their coordinators were used: on the session's
    # real broker, after whichever transaction or share group tests ran on it before this one.
    others = INTERNAL_TOPICS - {"__consumer_offsets"}
    assert [t for t in listed if t not in others] == ["__consumer_offsets", "events"]
    assert out(kafka, "kafka-topics", "--list", "--exclude-internal") == "events\n"


def test_kafka_configs_describes_and_alters_a_topic_and_describes_a_broker(kafka: Any) -> None:
    topic = ("--entity-type", "topics", "--entity-name", "events")
    assert out(kafka, "kafka-configs", "--describe", *topic) == \
        "Dynamic configs for topic events are:\n"
    assert out(kafka, "kafka-configs", "--alter", *topic, "--add-config",
               "retention.ms=100000") == "Completed updating config for topic events.\n"
    assert out(kafka, "kafka-configs", "--describe", *topic) == (
        "Dynamic configs for topic events are:\n"
        "  retention.ms=100000 sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=100000}\n")
    assert out(kafka, "kafka-configs", "--describe", "--entity-type", "brokers",
               "--entity-name", "1") == "Dynamic configs for broker 1 are:\n"


def test_kafka_configs_describes_and_alters_a_brokers_loggers(kafka: Any) -> None:
    """The loggers both brokers list (tests/test_broker_loggers.py); the level set is
    deleted again."""
    controller = "org.apache.kafka.server.logger.LoggingController"
    loggers = ("--entity-type", "broker-loggers", "--entity-name", "1")

    def described(level: str) -> str:
        return ("Dynamic configs for broker-logger 1 are:\n"
                f"  {controller}={level} sensitive=false synonyms={{}}\n"
                "  root=ERROR sensitive=false synonyms={}\n")

    done = "Completed updating config for broker-logger 1.\n"
    assert out(kafka, "kafka-configs", "--describe", *loggers) == described("ERROR")
    assert out(kafka, "kafka-configs", "--alter", *loggers, "--add-config",
               f"{controller}=DEBUG") == done
    assert out(kafka, "kafka-configs", "--describe", *loggers) == described("DEBUG")
    assert out(kafka, "kafka-configs", "--alter", *loggers, "--delete-config",
               controller) == done
    assert out(kafka, "kafka-configs", "--describe", *loggers) == described("ERROR")
    # a logger the broker does not list: the tool refuses it itself, from the describe
    refused = run_tool("kafka-configs", "--bootstrap-server", kafka.bootstrap_servers,
                       "--alter", *loggers, "--add-config", "kafka.server.ReplicaManager=DEBUG")
    assert (refused.status, refused.stdout, refused.stderr) == (
        1, "", "Invalid broker logger(s): kafka.server.ReplicaManager\n")


def test_console_producer_and_consumer_round_trip_keys_and_values(kafka: Any) -> None:
    assert out(kafka, "kafka-console-producer", "--topic", "events", "--reader-property",
               "parse.key=true", "--reader-property", "key.separator=:",
               stdin="k1:a\nk2:b\n") == ""
    consumed = tool(kafka, "kafka-console-consumer", "--topic", "events", "--from-beginning",
                    "--max-messages", "2", "--timeout-ms", "20000",
                    "--formatter-property", "print.key=true")
    assert consumed.stdout == "k1\ta\nk2\tb\n"
    assert "Processed a total of 2 messages" in consumed.stderr


def test_kafka_consumer_groups_lists_describes_resets_and_deletes_a_group(
        kafka: Any) -> None:
    out(kafka, "kafka-console-producer", "--topic", "events", stdin="a\nb\nc\n")
    consumed = out(kafka, "kafka-console-consumer", "--topic", "events", "--from-beginning",
                   "--max-messages", "3", "--group", "g1", "--timeout-ms", "20000")
    assert consumed == "a\nb\nc\n"
    group = ("--group", "g1")
    assert out(kafka, "kafka-consumer-groups", "--list") == "g1\n"
    assert out(kafka, "kafka-consumer-groups", "--describe", *group, "--members") == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n")
    assert out(kafka, "kafka-consumer-groups", "--describe", *group, "--offsets") == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"
        "             CONSUMER-ID     HOST            CLIENT-ID\n"
        "g1              events          0          3               3               0"
        "               -               -               -\n")
    assert out(kafka, "kafka-consumer-groups", "--describe", *group, "--state") == (
        "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE"
        "                #MEMBERS\n"
        "g1              HOST:PORT  (1)      -                    Empty                0\n")
    assert out(kafka, "kafka-consumer-groups", "--reset-offsets", *group, "--topic", "events",
               "--to-earliest", "--execute") == (
        "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
        "g1              events          0          0\n")
    assert out(kafka, "kafka-consumer-groups", "--delete", *group) == \
        "Deletion of requested consumer groups ('g1') was successful.\n"
    assert out(kafka, "kafka-consumer-groups", "--list") == ""


def test_kafka_get_offsets_and_kafka_delete_records_move_the_log_start(
        kafka: Any, tmp_path: Path) -> None:
    out(kafka, "kafka-console-producer", "--topic", "events", stdin="a\nb\nc\n")
    assert out(kafka, "kafka-get-offsets", "--topic", "events") == "events:0:3\n"
    offsets = tmp_path / "delete.json"
    offsets.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "events", "partition": 0, "offset": 2}]}))
    assert out(kafka, "kafka-delete-records", "--offset-json-file", str(offsets)) == (
        "Executing records delete operation\n"
        "Records delete operation completed:\n"
        "partition: events-0\tlow_watermark: 2\n")
    assert out(kafka, "kafka-get-offsets", "--topic", "events", "--time", "-2") == \
        "events:0:2\n"


def test_kafka_log_dirs_describes_the_one_log_directory(kafka: Any) -> None:
    """The partition's size is its stored batch's bytes: 85 when the console producer
    stamps its three records within 64 ms, a byte more for each stamped later (its timestamp
    delta's varint takes two bytes; seen on a loaded machine), so the size is read from the
    log."""
    out(kafka, "kafka-console-producer", "--topic", "events", stdin="a\nb\nc\n")
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        stored = client.request("Fetch", 12, fetch_body("events", 0, 0)).responses[0] \
            .partitions[0].records
    assert 85 <= len(stored) <= 90
    described = out(kafka, "kafka-log-dirs", "--describe", "--topic-list", "events")
    assert described == (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers 1\n"
        '{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"events-0",'
        f'"size":{len(stored)},"offsetLag":0,"isFuture":false}}],"error":null,'
        '"logDir":"LOGDIR"}]}],"version":1}\n')


def test_kafka_leader_election_and_kafka_reassign_partitions(
        kafka: Any, tmp_path: Path) -> None:
    assert out(kafka, "kafka-leader-election", "--election-type", "PREFERRED",
               "--all-topic-partitions") == ""
    plan = tmp_path / "reassign.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "events", "partition": 0, "replicas": [1]}]}))
    assert out(kafka, "kafka-reassign-partitions", "--execute", "--reassignment-json-file",
               str(plan)) == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"events","partition":0,"replicas":[1],'
        '"log_dirs":["LOGDIR"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Successfully started partition reassignment for events-0\n")
    assert out(kafka, "kafka-reassign-partitions", "--verify", "--reassignment-json-file",
               str(plan)) == (
        "Status of partition reassignment:\n"
        "Reassignment of partition events-0 is completed.\n\n"
        "Clearing broker-level throttles on broker 1\n"
        "Clearing topic-level throttles on topic events\n")


def test_kafka_transactions_lists_an_ongoing_transaction(kafka: Any) -> None:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "transactional.id": "tx-1", "log_level": 3})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("events", b"v")
    producer.flush(30)
    try:
        listed = out(kafka, "kafka-transactions", "list")
    finally:
        producer.abort_transaction(30)
    header, *rows, end = listed.split("\n")
    assert header.split() == ["TransactionalId", "Coordinator", "ProducerId",
                              "TransactionState"]
    [row] = [r for r in rows if r.split()[0] == "tx-1"]  # others: a session's earlier tests'
    assert row.split()[0:2] == ["tx-1", "1"] and row.split()[3] == "Ongoing"
    assert end == ""


def test_kafka_cluster_prints_a_uuid_cluster_id(kafka: Any) -> None:
    printed = tool(kafka, "kafka-cluster", command=("cluster-id",)).stdout
    assert re.fullmatch(r"Cluster ID: [A-Za-z0-9_-]{22}\n", printed), printed


def test_kafka_metadata_quorum_describes_a_one_node_quorum(kafka: Any) -> None:
    # The leader epoch the broker answers now: a fresh Kafka's is 1, the session's real broker
    # may have elected its controller again before this test (seen at 5 under pytest -n 2).
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as wire:
        quorum = wire.request("DescribeQuorum", 2, {"topics": [{
            "topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]})
    epoch = quorum.topics[0].partitions[0].leader_epoch
    status = out(kafka, "kafka-metadata-quorum", "describe", "--status")
    status = re.sub(r"HighWatermark: +\d+", "HighWatermark: N", status)
    status = re.sub(r'"directoryId": "[^"]*", "endpoints": \["CONTROLLER://[^"]+"\]',
                    '"directoryId": "ID", "endpoints": ["CONTROLLER://HOST:PORT"]', status)
    assert status == (
        "ClusterId:              ID\n"
        "LeaderId:               1\n"
        f"LeaderEpoch:            {epoch}\n"
        "HighWatermark: N\n"
        "MaxFollowerLag:         0\n"
        "MaxFollowerLagTimeMs:   0\n"
        'CurrentVoters:          [{"id": 1, "directoryId": "ID", '
        '"endpoints": ["CONTROLLER://HOST:PORT"]}]\n'
        "CurrentObservers:       []\n")


def test_kafka_features_lists_the_seven_finalized_features(kafka: Any) -> None:
    described = re.sub(r"Epoch: \d+", "Epoch: N", out(kafka, "kafka-features", "describe"))
    features = [line.split()[1] for line in described.splitlines()]
    assert features == ["eligible.leader.replicas.version", "group.version", "kraft.version",
                        "metadata.version", "share.version", "streams.version",
                        "transaction.version"]


def api_versions(kafka: Any) -> dict[str, int | None]:
    """What `kafka-broker-api-versions` prints: the usable version per API name."""
    lines = out(kafka, "kafka-broker-api-versions").splitlines()
    assert lines[0] == "HOST:PORT (id: 1 rack: null isFenced: false) -> ("
    assert lines[-1] == ")"
    usable: dict[str, int | None] = {}
    for line in lines[1:-1]:
        found = re.fullmatch(r"\t(\w+)\(\d+\): (?:UNSUPPORTED|.*\[usable: (\d+)\]),?", line)
        assert found, line
        usable[found[1]] = None if found[2] is None else int(found[2])
    return usable


def test_kafka_broker_api_versions_shows_kafkas_newest_versions_usable(kafka: Any) -> None:
    usable = api_versions(kafka)
    assert set(usable) == set(KAFKA_USABLE_VERSIONS)
    served = {api: v for api, v in usable.items() if v is not None}
    assert served == {api: KAFKA_USABLE_VERSIONS[api] for api in served}


def test_kafka_broker_api_versions_shows_every_api_kafka_serves(
        kafka: Any, request: pytest.FixtureRequest) -> None:
    on_fake_xfail(kafka, request, "the fake does not serve the share coordinator's state "
                                  "APIs, which brokers ask each other (tests/test_api_coverage.py"
                                  " NOT_SERVED); the streams group APIs are served")
    assert api_versions(kafka) == KAFKA_USABLE_VERSIONS


def test_kafka_consumer_groups_resets_offsets_in_each_mode_and_deletes_offsets(
        kafka: Any) -> None:
    out(kafka, "kafka-console-producer", "--topic", "events", stdin="a\nb\nc\nd\n")
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "g2",
                         "log_level": 3})
    try:
        consumer.commit(offsets=[TopicPartition("events", 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    reset = ("--reset-offsets", "--group", "g2", "--topic", "events", "--execute")
    header = "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
    for mode, new_offset in ((("--to-latest",), 4), (("--shift-by", "-3"), 1),
                             (("--to-offset", "3"), 3), (("--to-current",), 3)):
        assert out(kafka, "kafka-consumer-groups", *reset, *mode) == (
            f"{header}g2              events          0          {new_offset}\n"), mode
    deleted = out(kafka, "kafka-consumer-groups", "--delete-offsets", "--group", "g2",
               "--topic", "events")
    assert deleted == (
        "Request succeeded for deleting offsets from group g2.\n\n"
        "TOPIC           PARTITION  STATUS         \n"
        "events          0          Successful     \n")


def test_kafka_leader_election_names_a_partition_whose_preferred_leader_leads(
        kafka: Any) -> None:
    elected = tool(kafka, "kafka-leader-election", "--election-type", "PREFERRED",
                   "--topic", "events", "--partition", "0")
    assert elected.stdout == "Valid replica already elected for partitions events-0\n"


def test_kafka_configs_alters_and_describes_a_users_scram_credential(kafka: Any) -> None:
    user = ("--entity-type", "users", "--entity-name", "alice")
    assert out(kafka, "kafka-configs", "--alter", *user, "--add-config",
               "SCRAM-SHA-256=[iterations=8192,password=secret]") == \
        "Completed updating config for user alice.\n"
    assert out(kafka, "kafka-configs", "--describe", *user) == \
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"


def test_kafka_configs_alters_and_describes_a_client_quota(kafka: Any) -> None:
    client = ("--entity-type", "clients", "--entity-name", "c1")
    assert out(kafka, "kafka-configs", "--alter", *client, "--add-config",
               "producer_byte_rate=1024") == "Completed updating config for client c1.\n"
    assert out(kafka, "kafka-configs", "--describe", *client) == \
        "Quota configs for client-id 'c1' are producer_byte_rate=1024.0\n"


@pytest.mark.parametrize(("kind", "key", "value", "described"), [
    ("clients", "controller_mutation_rate", "2.5", "client-id '{}'"),
    ("users", "controller_mutation_rate", "3", "user-principal '{}'"),
    ("ips", "connection_creation_rate", "5", "ip '{}'"),
])
def test_kafka_configs_sets_the_controller_mutation_and_connection_creation_quotas(
        kafka: Any, kind: str, key: str, value: str, described: str) -> None:
    """The quotas Kafka enforces on topic mutations (users, clients) and on new connections
    (ips): set, described (the real broker shows a change a moment later), removed."""
    name = (f"127.{random.randrange(1, 255)}.{random.randrange(256)}.{random.randrange(1, 255)}"
            if kind == "ips" else f"q-{uuid.uuid4().hex[:8]}")
    entity = ("--entity-type", kind, "--entity-name", name)
    assert out(kafka, "kafka-configs", "--alter", *entity, "--add-config", f"{key}={value}") \
        == f"Completed updating config for {kind[:-1]} {name}.\n"
    expected = f"Quota configs for {described.format(name)} are {key}={float(value)}\n"
    wait_for(lambda: out(kafka, "kafka-configs", "--describe", *entity) == expected,
             f"the {kind} quota described")
    out(kafka, "kafka-configs", "--alter", *entity, "--delete-config", key)


def table(printed: str) -> list[dict[str, str]]:
    """A kafka-transactions table (tab-separated, padded) as one dict per row."""
    header, *rows = [[cell.strip() for cell in line.split("\t")[:-1]]
                     for line in printed.splitlines()]
    return [dict(zip(header, row, strict=True)) for row in rows]


def test_kafka_transactions_describes_a_transaction_its_producers_and_no_hanging_one(
        kafka: Any) -> None:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "transactional.id": "tx-2", "log_level": 3})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("events", b"v")
    producer.flush(30)
    try:
        [described] = table(out(kafka, "kafka-transactions", "describe",
                                "--transactional-id", "tx-2"))
        [writer] = table(out(kafka, "kafka-transactions", "describe-producers",
                             "--topic", "events", "--partition", "0"))
        hanging = table(out(kafka, "kafka-transactions", "find-hanging", "--broker-id", "1"))
    finally:
        producer.abort_transaction(30)
    assert {k: described[k] for k in ("CoordinatorId", "TransactionalId", "ProducerEpoch",
                                      "TransactionState", "TransactionTimeoutMs",
                                      "TopicPartitions")} == {
        "CoordinatorId": "1", "TransactionalId": "tx-2", "ProducerEpoch": "0",
        "TransactionState": "Ongoing", "TransactionTimeoutMs": "60000",
        "TopicPartitions": "events-0"}
    assert writer["ProducerId"] == described["ProducerId"]
    assert {k: writer[k] for k in ("ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                                   "CurrentTransactionStartOffset")} == {
        "ProducerEpoch": "0", "LatestCoordinatorEpoch": "-1", "LastSequence": "0",
        "CurrentTransactionStartOffset": "0"}
    assert hanging == []


def test_kafka_reassign_partitions_generates_a_plan_for_the_one_broker(
        kafka: Any, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": "events"}]}))
    plan = ('{"version":1,"partitions":[{"topic":"events","partition":0,"replicas":[1],'
            '"log_dirs":["%s"]}]}')
    assert out(kafka, "kafka-reassign-partitions", "--generate", "--topics-to-move-json-file",
               str(topics), "--broker-list", "1") == (
        f"Current partition replica assignment\n{plan % 'LOGDIR'}\n\n"
        f"Proposed partition reassignment configuration\n{plan % 'any'}\n")


def test_the_perf_tests_produce_and_consume_every_record(kafka: Any) -> None:
    produced = run_tool("kafka-producer-perf-test", "--topic", "events", "--num-records", "500",
                        "--record-size", "100", "--throughput", "-1", "--command-property",
                        f"bootstrap.servers={kafka.bootstrap_servers}")
    assert produced.status == 0, produced.stderr
    assert re.search(r"^500 records sent, ", produced.stdout, re.M), produced.stdout
    consumed = tool(kafka, "kafka-consumer-perf-test", "--topic", "events",
                    "--num-records", "500", "--timeout", "30000")
    [header, row] = consumed.stdout.splitlines()
    report = dict(zip(header.split(", "), row.split(", "), strict=True))
    assert report["data.consumed.in.nMsg"] == "500", consumed.stdout


def test_kafka_consumer_groups_resets_offsets_by_time_from_a_file_and_as_a_dry_run(
        kafka: Any, tmp_path: Path) -> None:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "log_level": 3})
    new_year_2020 = 1577836800000
    for day in range(4):  # records of 2020-01-01, -02, -03 and -04, 00:00 UTC
        producer.produce("events", b"v%d" % day, partition=0,
                         timestamp=new_year_2020 + day * 86_400_000)
    producer.flush(30)
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "g3",
                         "log_level": 3})
    try:
        consumer.commit(offsets=[TopicPartition("events", 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    reset = ("--reset-offsets", "--group", "g3")
    header = "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
    fallback = "\nWarn: Partition 0 from topic events is empty. Falling back to latest known " \
               "offset.\n"

    def new_offset(offset: int) -> str:
        return f"{header}g3              events          0          {offset}\n"

    noon_jan_2 = ("--to-datetime", "2020-01-02T12:00:00.000")
    assert out(kafka, "kafka-consumer-groups", *reset, "--topic", "events", *noon_jan_2,
               "--dry-run") == new_offset(2)
    assert out(kafka, "kafka-consumer-groups", *reset, "--topic", "events", "--to-datetime",
               "2030-01-01T00:00:00.000", "--dry-run") == fallback + new_offset(4)
    assert out(kafka, "kafka-consumer-groups", *reset, "--topic", "events", "--shift-by", "-9",
               "--dry-run") == new_offset(0)  # clamped to the log start
    assert out(kafka, "kafka-consumer-groups", *reset, "--topic", "events:0", "--by-duration",
               "P1D", "--execute") == fallback + new_offset(4)  # no record in the last day
    assert out(kafka, "kafka-consumer-groups", *reset, "--all-topics", "--to-earliest",
               "--execute") == new_offset(0)
    offsets = tmp_path / "offsets.csv"
    offsets.write_text("events,0,3\n")
    assert out(kafka, "kafka-consumer-groups", *reset, "--from-file", str(offsets),
               "--execute") == new_offset(3)
    assert out(kafka, "kafka-consumer-groups", "--describe", "--group", "g3",
               "--offsets") == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"
        "             CONSUMER-ID     HOST            CLIENT-ID\n"
        "g3              events          0          3               4               1"
        "               -               -               -\n")


def test_kafka_transactions_aborts_an_open_transaction_by_its_start_offset(
        kafka: Any) -> None:
    plain = Producer({"bootstrap.servers": kafka.bootstrap_servers, "log_level": 3})
    plain.produce("events", b"plain", partition=0)  # offset 0
    plain.flush(30)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "transactional.id": "tx-abort", "log_level": 3})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("events", b"v", partition=0)  # offset 1, its transaction left open
    producer.flush(30)
    at_1 = ("--topic", "events", "--partition", "0", "--start-offset", "1")
    assert out(kafka, "kafka-transactions", "abort", *at_1) == ""
    [writer] = table(out(kafka, "kafka-transactions", "describe-producers", "--topic", "events",
                         "--partition", "0"))
    assert {k: writer[k] for k in ("ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                                   "CurrentTransactionStartOffset")} == {
        "ProducerEpoch": "0", "LatestCoordinatorEpoch": "0", "LastSequence": "0",
        "CurrentTransactionStartOffset": "None"}
    again = run_tool("kafka-transactions", "--bootstrap-server", kafka.bootstrap_servers,
                     "abort", *at_1)
    assert (again.status, again.stdout, again.stderr) == (
        1, "", "Could not find any open transactions starting at offset 1 on partition "
               "events-0\n")
    assert table(out(kafka, "kafka-transactions", "find-hanging", "--topic", "events")) == []


def test_the_perf_tests_print_kafkas_reports_once_measures_are_normalised(
        kafka: Any) -> None:
    def measures_out(text: str) -> str:
        return re.sub(r"\d+(\.\d+)?", "N", text)

    produced = run_tool("kafka-producer-perf-test", "--topic", "events", "--num-records",
                        "500", "--record-size", "100", "--throughput", "-1",
                        "--command-property", f"bootstrap.servers={kafka.bootstrap_servers}")
    assert (produced.status, measures_out(produced.stdout)) == (0, (
        "N records sent, N records/sec (N MB/sec), N ms avg latency, N ms max latency, "
        "N ms Nth, N ms Nth, N ms Nth, N ms Nth.\n"))
    consumed = tool(kafka, "kafka-consumer-perf-test", "--topic", "events", "--num-records",
                    "500", "--timeout", "30000").stdout
    header, row = consumed.splitlines()
    assert header == ("start.time, end.time, data.consumed.in.MB, MB.sec, "
                      "data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, "
                      "fetch.MB.sec, fetch.nMsg.sec")
    report = dict(zip(header.split(", "), row.split(", "), strict=True))
    assert (report["data.consumed.in.MB"], report["data.consumed.in.nMsg"]) == ("0.0477", "500")
    assert measures_out(row) == "N-N-N N:N:N:N, N-N-N N:N:N:N, N, N, N, N, N, N, N, N"
