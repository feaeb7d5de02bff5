"""Every method of the admin clients the tests drive, the Kafka APIs it reaches, and which test
calls it on both brokers: the facts behind docs/reference/admin-client.md.

Each fact is declared once:

* a method's APIs (and, for an API the fake does not serve yet, the issue that will serve
  it) in ``JAVA_ADMIN``, ``CONFLUENT_ADMIN`` and ``KAFKA_PYTHON_ADMIN``, whose keys are
  exactly the client's public methods (tests/test_admin_table.py reads the Java ``Admin``
  interface of kafka-clients 4.4.0 and the Python classes to check it);
* which test calls a method: the ``@calls(client, *methods)`` decorator on that test, in the
  modules of ``TEST_MODULES``. A test so marked takes the ``kafka`` fixture (both brokers
  under ``--kafka=both``), checks the methods it declares are the ones it called, and on the
  fake that the requests it sent include every API those methods declare (the journal).

``python -m tests.admin_methods`` rewrites docs/reference/admin-client.md from these;
tests/test_admin_table.py fails while the page differs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "admin-client.md"
TEST_MODULES = ("tests.test_admin_client_java", "tests.test_admin_client_python")

QUORUM_ADMIN = ("its answers (Kafka's refusals, and what it changes) are tested on the wire and "
                "through Kafka's tools on both brokers (tests/test_quorum_admin.py); not called "
                "through the Admin client: on the shared real broker, its success changes the "
                "broker's own registration or quorum")
STREAMS_TOOL = ("called by kafka-streams-groups (Kafka 4.4's tool, a Java Admin user), whose "
                "commands print the same on both brokers: tests/test_streams_group_tools.py")
SHARE_TOOL = ("called by kafka-share-groups (Kafka 4.4's tool, a Java Admin user), whose "
              "commands print the same on both brokers: tests/test_share_group_tools.py")


@dataclass(frozen=True)
class Method:
    """An admin client method: the APIs its requests use (none: it sends no request); while
    the fake does not serve them, the issue that will (``not_yet``); why no test calls it on
    both brokers, for a method that has none (``untested``)."""

    apis: tuple[str, ...] = ()
    not_yet: str | None = None
    note: str = ""
    untested: str | None = None


def _m(*apis: str, not_yet: str | None = None, note: str = "",
       untested: str | None = None) -> Method:
    return Method(apis, not_yet, note, untested)


NO_REQUEST = _m(note="no request: local to the client")
COORDINATOR = "FindCoordinator"

# org.apache.kafka.clients.admin.Admin (kafka-clients 4.4.0): every public method. Metadata
# (finding partition leaders) and ApiVersions (each connection's first request) are left out
# where another API does the work.
JAVA_ADMIN: dict[str, Method] = {
    "abortTransaction": _m("WriteTxnMarkers"),
    "addRaftVoter": _m("AddRaftVoter", untested=QUORUM_ADMIN),
    "alterClientQuotas": _m("AlterClientQuotas"),
    "alterConsumerGroupOffsets": _m(COORDINATOR, "OffsetCommit"),
    "alterPartitionReassignments": _m("AlterPartitionReassignments"),
    "alterReplicaLogDirs": _m("AlterReplicaLogDirs"),
    "alterShareGroupOffsets": _m(COORDINATOR, "AlterShareGroupOffsets", untested=SHARE_TOOL),
    "alterStreamsGroupOffsets": _m(COORDINATOR, "OffsetCommit", untested=STREAMS_TOOL,
                                   note="a streams group's offsets"),
    "alterUserScramCredentials": _m("AlterUserScramCredentials"),
    "clientInstanceId": _m(note="GetTelemetrySubscriptions, which Kafka 4.4 serves only with a "
                           "client-metrics plugin: neither broker here does"),
    "close": NO_REQUEST,
    "create": NO_REQUEST,
    "createAcls": _m("CreateAcls"),
    "createDelegationToken": _m("CreateDelegationToken"),
    "createPartitions": _m("CreatePartitions"),
    "createTopics": _m("CreateTopics"),
    "deleteAcls": _m("DeleteAcls"),
    "deleteConsumerGroupOffsets": _m(COORDINATOR, "OffsetDelete"),
    "deleteConsumerGroups": _m(COORDINATOR, "DeleteGroups"),
    "deleteRecords": _m("Metadata", "DeleteRecords"),
    "deleteShareGroupOffsets": _m(COORDINATOR, "DeleteShareGroupOffsets", untested=SHARE_TOOL),
    "deleteShareGroups": _m(COORDINATOR, "DeleteGroups", untested=SHARE_TOOL,
                            note="a share group"),
    "deleteStreamsGroupOffsets": _m(COORDINATOR, "OffsetDelete", untested=STREAMS_TOOL,
                                    note="a streams group's offsets"),
    "deleteStreamsGroups": _m(COORDINATOR, "DeleteGroups", untested=STREAMS_TOOL,
                              note="a streams group"),
    "deleteTopics": _m("DeleteTopics"),
    "describeAcls": _m("DescribeAcls"),
    "describeClassicGroups": _m(COORDINATOR, "DescribeGroups"),
    "describeClientQuotas": _m("DescribeClientQuotas"),
    "describeCluster": _m("DescribeCluster"),
    "describeConfigs": _m("DescribeConfigs"),
    "describeConsumerGroups": _m(COORDINATOR, "ConsumerGroupDescribe", "DescribeGroups",
                                 note="DescribeGroups for a classic group"),
    "describeDelegationToken": _m("DescribeDelegationToken"),
    "describeFeatures": _m("ApiVersions"),
    "describeLogDirs": _m("DescribeLogDirs"),
    "describeMetadataQuorum": _m("DescribeQuorum"),
    "describeProducers": _m("Metadata", "DescribeProducers"),
    "describeReplicaLogDirs": _m("DescribeLogDirs"),
    "describeShareGroups": _m(COORDINATOR, "ShareGroupDescribe", untested=SHARE_TOOL),
    "describeStreamsGroups": _m(COORDINATOR, "StreamsGroupDescribe", untested=STREAMS_TOOL),
    "describeTopics": _m("DescribeTopicPartitions", "Metadata",
                         note="Metadata for topic ids"),
    "describeTransactions": _m(COORDINATOR, "DescribeTransactions"),
    "describeUserScramCredentials": _m("DescribeUserScramCredentials"),
    "electLeaders": _m("ElectLeaders"),
    "expireDelegationToken": _m("ExpireDelegationToken"),
    "fenceProducers": _m(COORDINATOR, "InitProducerId"),
    "forceTerminateTransaction": _m(COORDINATOR, "InitProducerId"),
    "incrementalAlterConfigs": _m("IncrementalAlterConfigs"),
    "listClientMetricsResources": _m("ListConfigResources", note="deprecated"),
    "listConfigResources": _m("ListConfigResources"),
    "listConsumerGroupOffsets": _m(COORDINATOR, "OffsetFetch"),
    "listConsumerGroups": _m("ListGroups", note="deprecated"),
    "listGroups": _m("ListGroups"),
    "listOffsets": _m("Metadata", "ListOffsets"),
    "listPartitionReassignments": _m("ListPartitionReassignments"),
    "listShareGroupOffsets": _m(COORDINATOR, "DescribeShareGroupOffsets", untested=SHARE_TOOL),
    "listStreamsGroupOffsets": _m(COORDINATOR, "OffsetFetch", untested=STREAMS_TOOL,
                                  note="a streams group's offsets"),
    "listTopics": _m("Metadata"),
    "listTransactions": _m("ListTransactions"),
    "metrics": NO_REQUEST,
    "registerMetricForSubscription": NO_REQUEST,
    "removeMembersFromConsumerGroup": _m(COORDINATOR, "LeaveGroup"),
    "removeRaftVoter": _m("RemoveRaftVoter", untested=QUORUM_ADMIN),
    "renewDelegationToken": _m("RenewDelegationToken"),
    "unregisterBroker": _m("UnregisterBroker", untested=QUORUM_ADMIN),
    "unregisterController": _m("UnregisterController", untested=QUORUM_ADMIN),
    "unregisterMetricFromSubscription": NO_REQUEST,
    "updateFeatures": _m("UpdateFeatures"),
}

# confluent_kafka.admin.AdminClient (confluent-kafka 2.16.1, librdkafka 2.16): every public
# method.
CONFLUENT_ADMIN: dict[str, Method] = {
    "alter_configs": _m("AlterConfigs", note="deprecated"),
    "alter_consumer_group_offsets": _m(COORDINATOR, "OffsetCommit"),
    "alter_user_scram_credentials": _m("AlterUserScramCredentials"),
    "cluster_id": _m("Metadata"),
    "create_acls": _m("CreateAcls"),
    "create_partitions": _m("CreatePartitions"),
    "create_topics": _m("CreateTopics"),
    "delete_acls": _m("DeleteAcls"),
    "delete_consumer_groups": _m(COORDINATOR, "DeleteGroups"),
    "delete_records": _m("DeleteRecords"),
    "delete_topics": _m("DeleteTopics"),
    "describe_acls": _m("DescribeAcls"),
    "describe_cluster": _m("Metadata"),
    "describe_configs": _m("DescribeConfigs"),
    "describe_consumer_groups": _m(COORDINATOR, "ConsumerGroupDescribe", "DescribeGroups",
                                   note="DescribeGroups for a classic group"),
    "describe_topics": _m("Metadata"),
    "describe_user_scram_credentials": _m("DescribeUserScramCredentials"),
    "elect_leaders": _m("ElectLeaders"),
    "incremental_alter_configs": _m("IncrementalAlterConfigs"),
    "list_consumer_group_offsets": _m(COORDINATOR, "OffsetFetch"),
    "list_consumer_groups": _m("ListGroups"),
    "list_groups": _m("ListGroups", "DescribeGroups", note="deprecated"),
    "list_offsets": _m("ListOffsets"),
    "list_topics": _m("Metadata"),
    "poll": NO_REQUEST,
    "set_sasl_credentials": NO_REQUEST,
}

# kafka.admin.KafkaAdminClient (kafka-python 3.0.12): every public method.
KAFKA_PYTHON_ADMIN: dict[str, Method] = {
    "abort_transaction": _m("WriteTxnMarkers"),
    "alter_configs": _m("IncrementalAlterConfigs", note="AlterConfigs with incremental=False"),
    "alter_group_offsets": _m(COORDINATOR, "OffsetCommit"),
    "alter_partition_reassignments": _m("AlterPartitionReassignments"),
    "alter_replica_log_dirs": _m("AlterReplicaLogDirs"),
    "alter_user_scram_credentials": _m("AlterUserScramCredentials"),
    "api_versions": _m("ApiVersions", untested="on Kafka 4.4 it raises ValueError: Kafka "
                       "advertises API key 93 (StreamsGroupTopologyDescriptionUpdate), which "
                       "kafka-python 3.0.12 does not know"),
    "close": NO_REQUEST,
    "create_acls": _m("CreateAcls"),
    "create_partitions": _m("CreatePartitions"),
    "create_topics": _m("CreateTopics"),
    "delete_acls": _m("DeleteAcls"),
    "delete_group_offsets": _m(COORDINATOR, "OffsetDelete"),
    "delete_groups": _m(COORDINATOR, "DeleteGroups"),
    "delete_records": _m("DeleteRecords"),
    "delete_topics": _m("DeleteTopics"),
    "describe_acls": _m("DescribeAcls"),
    "describe_cluster": _m("DescribeCluster"),
    "describe_configs": _m("DescribeConfigs"),
    "describe_features": _m("ApiVersions"),
    "describe_groups": _m(COORDINATOR, "DescribeGroups"),
    "describe_log_dirs": _m("DescribeLogDirs"),
    "describe_metadata_quorum": _m("DescribeQuorum"),
    "describe_producers": _m("DescribeProducers"),
    "describe_topic_partitions": _m("DescribeTopicPartitions"),
    "describe_topics": _m("Metadata"),
    "describe_transactions": _m(COORDINATOR, "DescribeTransactions"),
    "describe_user_scram_credentials": _m("DescribeUserScramCredentials"),
    "elect_leaders": _m("ElectLeaders"),
    "find_hanging_transactions": _m("DescribeProducers", "ListTransactions",
                                    "DescribeTransactions"),
    "get_broker_version_data": _m("ApiVersions"),
    "list_config_resources": _m("ListConfigResources"),
    "list_group_offsets": _m(COORDINATOR, "OffsetFetch"),
    "list_groups": _m("ListGroups"),
    "list_partition_offsets": _m("ListOffsets"),
    "list_partition_reassignments": _m("ListPartitionReassignments"),
    "list_topics": _m("Metadata"),
    "list_transactions": _m("ListTransactions"),
    "remove_group_members": _m(COORDINATOR, "LeaveGroup"),
    "reset_configs": _m("IncrementalAlterConfigs"),
    "reset_group_offsets": _m("ListOffsets", "OffsetCommit"),
    "update_features": _m("UpdateFeatures"),
    "wait_for_topics": _m("Metadata"),
}

# client name -> (what the page calls it, its methods)
CLIENTS: dict[str, tuple[str, dict[str, Method]]] = {
    "java": ("Apache Kafka's Java `Admin` (kafka-clients 4.4.0)", JAVA_ADMIN),
    "confluent-kafka": ("confluent-kafka's `AdminClient` (2.16.1, librdkafka 2.16)",
                        CONFLUENT_ADMIN),
    "kafka-python": ("kafka-python's `KafkaAdminClient` (3.0.12)", KAFKA_PYTHON_ADMIN),
}

F = TypeVar("F", bound=Callable[..., Any])


def calls(client: str, *methods: str) -> Callable[[F], F]:
    """Declare that the decorated test calls these ``methods`` of ``client`` (a key of
    ``CLIENTS``) on both brokers; ``check_calls`` holds it to that."""
    declared = CLIENTS[client][1]
    unknown = [m for m in methods if m not in declared]
    assert not unknown, f"not methods of {client}'s admin client: {unknown}"

    def mark(test: F) -> F:
        test.admin_calls = (client, methods)  # type: ignore[attr-defined]
        return test
    return mark


def apis_of(client: str, methods: tuple[str, ...] | list[str]) -> set[str]:
    """The APIs ``methods`` of ``client`` declare."""
    return {api for m in methods for api in CLIENTS[client][1][m].apis}


def calls_by_test() -> dict[tuple[str, str], list[str]]:
    """(client, method) -> the names of the tests (``module::test``) that call it."""
    found: dict[tuple[str, str], list[str]] = {}
    for name in TEST_MODULES:
        module = importlib.import_module(name)
        for attribute, test in vars(module).items():
            client, methods = getattr(test, "admin_calls", (None, ()))
            for method in methods:
                found.setdefault((client, method), []).append(
                    f"tests/{name.rsplit('.', 1)[1]}.py::{attribute}")
    return found


def page() -> str:
    """docs/reference/admin-client.md, from the declarations above."""
    tested = calls_by_test()
    parts = [
        "# Admin clients\n\n"
        "Every method of three admin clients, the Kafka APIs its requests use, and the test "
        "that calls it through that client on both brokers (the fake and Apache Kafka 4.4, "
        "`--kafka=both`), asserting what a user reads: the returned descriptions and "
        "offsets, errors as the client's exception. A method whose APIs the fake does not "
        "serve yet says which issue will serve them; its test, where there is one, is a "
        "strict `xfail` on the fake. Metadata and ApiVersions are left out where another "
        "API does the work.\n\n"
        "Generated from the tests' declarations (`tests/admin_methods.py`; "
        "`python -m tests.admin_methods` rewrites this page, and a test fails while it "
        "differs). Kafka's command-line tools are in "
        "[what it serves](../explanation/behaviour.md#kafkas-own-command-line-tools).\n"]
    for client, (title, methods) in CLIENTS.items():
        rows = []
        for name, method in sorted(methods.items()):
            tests = tested.get((client, name), [])
            where = ", ".join(f"`{t.split('::')[1]}`" for t in tests)
            if method.not_yet:
                status = f"not yet ({method.not_yet})" + (f"; xfail: {where}" if where else "")
            elif not method.apis:
                status = "—"
            elif method.untested:
                status = f"not tested: {method.untested}"
            else:
                status = f"tested: {where}"
            apis = ", ".join(method.apis) or "—"
            note = f" ({method.note})" if method.note else ""
            rows.append(f"| `{name}` | {apis}{note} | {status} |")
        modules = sorted({test.split("::")[0] for (name, _), found in tested.items()
                          if name == client for test in found})
        parts.append(f"\n## {title}\n\nTests: {', '.join(f'`{m}`' for m in modules)}.\n\n"
                     "| method | APIs | on both brokers |\n|---|---|---|\n"
                     + "\n".join(rows) + "\n")
    return "".join(parts)


if __name__ == "__main__":
    PAGE.write_text(page())
    print(f"wrote {PAGE}")
