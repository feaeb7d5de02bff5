"""The release table (``protocol_specs/releases.json``): what each Kafka release's broker lists
in ApiVersions, imported from that release's own jar, and equal to what the real brokers this
suite runs (Apache Kafka 3.9.1 and 4.4.0) list."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fakebroker import FakeKafka
from fakebroker.api import served_versions
from fakebroker.control.ctl import call
from fakebroker.options import ClusterSettings, OptionError
from fakebroker.protocol.errors import error_code, error_name
from fakebroker.protocol.importer import render
from fakebroker.protocol.records import encode_batch
from fakebroker.protocol.releases import (
    listed_apis,
    new_cluster_levels,
    release_line,
    release_lines,
    release_table,
    supported_features,
)
from fakebroker.protocol.releases_importer import build_table
from fakebroker.protocol.specs import specs_root
from fakebroker.real_cluster import GROUP_KEY, TRANSACTION_KEY, RealCluster, wait_for
from fakebroker.wire_client import WireClient
from tests.bodies import produce_body
from tests.clients.java import INSTALL_HINT, OLD_CLIENT, clients_dir, compile_java
from tests.conftest import start_served, stop_served


def api_versions(bootstrap: str, version: int = 4):
    """A broker's ApiVersions answer (v4; v0 for releases before 2.4, which know no v3)."""
    body = {"client_software_name": "wire", "client_software_version": "1.0"}
    with WireClient(bootstrap.split(",")[0]) as client:
        answer = client.request("ApiVersions", version, body if version >= 3 else {})
    assert answer.error_code == 0
    return answer


def listed_by(bootstrap: str, version: int = 4) -> dict[int, tuple[int, int]]:
    """API key -> (min, max), in the order a broker's ApiVersions answer lists them."""
    return {k.api_key: (k.min_version, k.max_version)
            for k in api_versions(bootstrap, version).api_keys}


def features_of(bootstrap: str) -> tuple[list[tuple[str, int, int]], dict[str, int]]:
    """The supported features (name, min, max) in the order a broker lists them, and the
    finalized levels by name (the listed order: see the tests)."""
    answer = api_versions(bootstrap)
    return ([(f.name, f.min_version, f.max_version) for f in answer.supported_features],
            {f.name: f.max_version_level for f in answer.finalized_features})


def supported_features_of(line: str) -> list[tuple[str, tuple[int, int]]]:
    """(name, (min, max)) of every feature release ``line`` supports."""
    return [(name, (low, high)) for name, low, high in supported_features(line)]


def release_features(line: str) -> tuple[list[tuple[str, int, int]], dict[str, int]]:
    return list(supported_features(line)), new_cluster_levels(line)


@pytest.mark.timeout(600)
def test_the_table_is_what_the_importer_reads_from_each_releases_jar():
    # The importer fetches the jars it lacks with Maven and compiles and runs Java: CI has
    # a JDK and Maven.
    missing = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
    if missing:
        message = f"the release importer needs {' and '.join(missing)}"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    stored = (specs_root() / "releases.json").read_text()
    assert stored == render(build_table()) + "\n", "protocol_specs/releases.json is stale"


def test_the_table_holds_every_release_line_from_0_10_0_to_4_4():
    lines = release_lines()
    assert lines[0] == "0.10.0" and lines[-1] == "4.4" and len(lines) == 30
    assert release_line("3.9.1") == "3.9" and release_line("0.10.2.2") == "0.10.2"
    assert listed_apis("0.10.0")[18] == (0, 0)  # ApiVersions itself came in 0.10.0
    assert listed_apis("3.9")[0] == (0, 11) and listed_apis("4.4")[0] == (0, 13)
    assert listed_apis("4.4")[1] == (4, 18)  # KIP-896: 4.0 dropped Fetch v0-3


def test_a_new_clusters_levels_are_its_releases_defaults_not_its_newest_levels():
    # kafka-storage format finalizes each feature's default level for the release's metadata
    # version, which can lag the newest level the release supports: Kafka 4.0 leaves eligible
    # leader replicas off, 4.1 share groups (KIP-932's preview there).
    assert dict(supported_features_of("4.0"))["eligible.leader.replicas.version"] == (0, 1)
    assert "eligible.leader.replicas.version" not in new_cluster_levels("4.0")
    assert dict(supported_features_of("4.1"))["share.version"] == (0, 1)
    assert "share.version" not in new_cluster_levels("4.1")
    assert new_cluster_levels("4.2")["share.version"] == 1


@pytest.mark.real_kafka
def test_apache_kafka_4_4_0_lists_exactly_the_4_4_row(real_kafka):
    assert list(listed_by(real_kafka.bootstrap_servers).items()) \
        == list(listed_apis("4.4").items())
    # Finalized levels compared by name: tests that take a level out and put it back change
    # the order a session's broker lists them in (Kafka's HashMap keeps insertion order
    # within a bucket).
    assert features_of(real_kafka.bootstrap_servers) == release_features("4.4")


@pytest.mark.real_kafka
def test_apache_kafka_3_9_1_lists_exactly_the_3_9_row(real_kafka_3_9):
    assert list(listed_by(real_kafka_3_9.bootstrap_servers).items()) \
        == list(listed_apis("3.9").items())
    assert features_of(real_kafka_3_9.bootstrap_servers) == release_features("3.9")
    assert [f.name for f in api_versions(real_kafka_3_9.bootstrap_servers).finalized_features] \
        == list(new_cluster_levels("3.9"))


# -- the fake answering as a release (--kafka-version) ---------------------------------------


@pytest.mark.fake_kafka(kafka_version="4.4")
def test_at_kafka_version_4_4_the_broker_lists_exactly_the_4_4_row(kafka):
    assert list(listed_by(kafka.bootstrap_servers).items()) == list(listed_apis("4.4").items())
    assert features_of(kafka.bootstrap_servers) == release_features("4.4")


def test_at_kafka_version_4_4_the_fake_lists_the_finalized_features_in_kafkas_order():
    with FakeKafka(kafka_version="4.4") as fake:
        answer = api_versions(fake.bootstrap_servers)
    assert [f.name for f in answer.finalized_features] == list(new_cluster_levels("4.4"))


@pytest.mark.real_kafka
def test_the_fake_at_kafka_version_3_9_lists_what_apache_kafka_3_9_1_lists(real_kafka_3_9):
    with FakeKafka(kafka_version="3.9") as fake:
        assert list(listed_by(fake.bootstrap_servers).items()) \
            == list(listed_by(real_kafka_3_9.bootstrap_servers).items())
        on_fake = api_versions(fake.bootstrap_servers)
    on_real = api_versions(real_kafka_3_9.bootstrap_servers)
    assert [(f.name, f.min_version, f.max_version) for f in on_fake.supported_features] \
        == [(f.name, f.min_version, f.max_version) for f in on_real.supported_features]
    assert [(f.name, f.max_version_level) for f in on_fake.finalized_features] \
        == [(f.name, f.max_version_level) for f in on_real.finalized_features]


def refused(bootstrap: str, api: str, version: int, body: dict) -> bool:
    """Whether the broker closes the connection on this request (how Kafka refuses a version
    or an API it does not serve)."""
    with WireClient(bootstrap.split(",")[0]) as client:
        try:
            client.request(api, version, body)
        except ConnectionError:
            return True
    return False


@pytest.mark.fake_kafka(kafka_version="4.4")
def test_at_kafka_version_4_4_describe_configs_v0_is_refused_as_kafka_4_4_refuses_it(kafka):
    # What the Java 0.11 client's admin round meets on Kafka 4.x ("The broker is too new to
    # support DESCRIBE_CONFIGS version 0"): KIP-896 dropped v0, the connection is closed.
    assert refused(kafka.bootstrap_servers, "DescribeConfigs", 0, {"resources": []})
    assert not refused(kafka.bootstrap_servers, "DescribeConfigs", 1, {"resources": []})


SHARE_HEARTBEAT = {"group_id": "g", "member_id": "m", "member_epoch": 0,
                   "subscribed_topic_names": ["orders"]}


@pytest.mark.real_kafka
def test_an_api_the_release_lacks_closes_the_connection_on_the_fake_as_on_kafka_3_9_1(
        real_kafka_3_9):
    # Kafka 3.9 has no share groups (KIP-932 came in 4.x): an unknown API key.
    assert "ShareGroupHeartbeat" not in {n for _, n, *_ in release_table()["3.9"]["apis"]}
    with FakeKafka(kafka_version="3.9") as fake:
        assert refused(fake.bootstrap_servers, "ShareGroupHeartbeat", 1, SHARE_HEARTBEAT)
    assert refused(real_kafka_3_9.bootstrap_servers, "ShareGroupHeartbeat", 1, SHARE_HEARTBEAT)


ZOOKEEPER_ERA = {"LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown"}
SHARE_STATE = {"InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
               "DeleteShareGroupState", "ReadShareGroupStateSummary"}


def test_the_apis_a_release_lists_and_the_fake_does_not_serve_are_inter_broker_ones():
    # Brokers list their inter-broker APIs to clients too: the ZooKeeper-era controller's (to
    # 3.2) and the share coordinator's state (4.1 on). No client sends them; the fake closes
    # the connection on one, as on an API the release lacks (Kafka would answer: 4.4 gives
    # NOT_COORDINATOR for a share group's state this broker does not keep).
    names = {line: {name for key, name, *_ in release_table()[line]["apis"]
                    if served_versions(key) is None} for line in release_lines()}
    assert names["0.10.0"] == names["2.6"] == ZOOKEEPER_ERA
    assert names["2.7"] == ZOOKEEPER_ERA | {"AlterIsr"}
    assert names["3.2"] == ZOOKEEPER_ERA | {"AlterPartition", "AllocateProducerIds"}
    assert names["3.3"] == names["4.0"] == set()
    assert names["4.1"] == names["4.4"] == SHARE_STATE
    with FakeKafka(kafka_version="4.4") as fake:
        assert refused(fake.bootstrap_servers, "ReadShareGroupState", 0,
                       {"group_id": "g", "topics": []})


def test_a_release_line_or_one_of_its_releases_is_taken_and_another_refused():
    assert ClusterSettings.from_kwargs({"kafka_version": "3.9.1"}).kafka_version == "3.9"
    assert ClusterSettings.from_kwargs({}).kafka_version is None
    with pytest.raises(OptionError, match="kafka_version: Kafka release '0.9' is not emulated"):
        ClusterSettings.from_kwargs({"kafka_version": "0.9"})


@pytest.mark.fake_kafka(kafka_version="4.4", topics={"orders": 1})
def test_at_kafka_version_4_4_produce_v0_to_v2_are_listed_and_refused(kafka):
    # KAFKA-18659: Kafka 4 lists Produce from v0 for librdkafka, yet refuses v0-2 (KIP-896).
    assert listed_by(kafka.bootstrap_servers)[0] == (0, 13)
    body = {"acks": 1, "timeout_ms": 1000, "topic_data": []}
    assert refused(kafka.bootstrap_servers, "Produce", 2, body)
    assert not refused(kafka.bootstrap_servers, "Produce", 3, body)


# -- a client generation a release refuses: the Java client 0.11.0.3 --------------------------

OLD_ADMIN = Path(__file__).resolve().parent / "java" / "OldAdmin.java"


def old_admin_round(bootstrap: str, topic: str) -> list[dict]:
    """tests/java/OldAdmin.java's lines: the Java client 0.11.0.3's admin round (skipped when
    that client is not installed, failed under CI, which installs it)."""
    folder = clients_dir() / f"java-{OLD_CLIENT}"
    jars = sorted(folder.glob("*.jar"))
    if not (folder / ".stamp").is_file() or shutil.which("javac") is None:
        message = f"the Java client {OLD_CLIENT} is not installed in {folder}: {INSTALL_HINT}"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    compiled = compile_java(OLD_ADMIN, jars, folder / "old-admin")
    classpath = os.pathsep.join(map(str, [compiled, *jars]))
    run = subprocess.run(["java", "-cp", classpath, "OldAdmin", bootstrap.split(",")[0], topic],
                         capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-3000:]
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


TOO_NEW = ("UnsupportedVersionException: The broker is too new to support DESCRIBE_CONFIGS "
           "version 0")


@pytest.mark.fake_kafka(kafka_version="4.4")
def test_at_kafka_version_4_4_the_java_0_11_client_cannot_describe_configs(kafka):
    assert old_admin_round(kafka.bootstrap_servers, "old-client") == [
        {"step": "create_topic", "ok": True},
        {"step": "describe_cluster", "ok": True},
        {"step": "describe_configs", "error": TOO_NEW},
    ]


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_the_java_0_11_client_runs_its_admin_round_as_on_3_9_1(
        real_kafka_3_9):
    with FakeKafka(kafka_version="3.9") as fake:
        on_fake = old_admin_round(fake.bootstrap_servers, "old-client")
    assert on_fake == old_admin_round(real_kafka_3_9.bootstrap_servers, "old-client") == [
        {"step": "create_topic", "ok": True},
        {"step": "describe_cluster", "ok": True},
        {"step": "describe_configs", "ok": True},
    ]


# -- behaviour tied to a release ---------------------------------------------------------------

CONSUMER_HEARTBEAT = {"group_id": "g", "member_id": "", "member_epoch": 0,
                      "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["orders"],
                      "topic_partitions": []}


def consumer_heartbeat_error(bootstrap: str) -> tuple[int, str | None]:
    with WireClient(bootstrap.split(",")[0]) as client:
        answer = client.request("ConsumerGroupHeartbeat", 0, CONSUMER_HEARTBEAT)
    return answer.error_code, answer.error_message


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_the_consumer_group_protocol_is_refused_as_on_3_9_1(
        real_kafka_3_9):
    # Kafka 3.9 lists ConsumerGroupHeartbeat v0 but finalizes no group.version (KIP-848 groups
    # came with 4.0): the heartbeat gets UNSUPPORTED_VERSION, on the fake as on 3.9.1.
    with FakeKafka(kafka_version="3.9", topics={"orders": 1}) as fake:
        assert consumer_heartbeat_error(fake.bootstrap_servers) \
            == consumer_heartbeat_error(real_kafka_3_9.bootstrap_servers) \
            == (error_code("UNSUPPORTED_VERSION"), None)


# -- how a release is chosen: flag, variable, scenario file, and the cluster view --------------


def test_serve_takes_fakebroker_kafka_version_and_the_cluster_view_names_the_release(tmp_path):
    process, details = start_served(tmp_path, "--control-port", "0",
                                    env={"FAKEBROKER_KAFKA_VERSION": "3.9.1"})
    try:
        assert call(details["control_url"], "GET", "/cluster")["kafka_version"] == "3.9"
        assert listed_by(details["bootstrap_servers"]) == listed_apis("3.9")
    finally:
        assert stop_served(process) == 0


def test_a_scenario_file_names_the_release_in_its_cluster_table(tmp_path):
    scenario = tmp_path / "old.toml"
    scenario.write_text('[cluster]\nkafka_version = "0.10.2"\n')
    process, details = start_served(tmp_path, "--scenario", str(scenario))
    try:
        assert listed_by(details["bootstrap_servers"].split(",")[0], version=0) \
            == listed_apis("0.10.2")
    finally:
        assert stop_served(process) == 0


@pytest.mark.parametrize("release,listed", [("2.3", []), ("2.4", [(18, 0, 3)])])
def test_a_too_new_api_versions_request_lists_its_range_from_2_4_on(release, listed):
    # KIP-511 (2.4): the UNSUPPORTED_VERSION answer names ApiVersions' own versions; before,
    # it listed nothing (ApiVersionsRequest.getErrorResponse of each release).
    with FakeKafka(kafka_version=release) as fake, \
            WireClient(fake.bootstrap_servers) as client:
        client.send("ApiVersions", 4, {"client_software_name": "wire",
                                       "client_software_version": "1.0"})
        _, answer = client.receive("ApiVersions", 0)  # answered at v0, as Kafka answers it
    assert answer.error_code == error_code("UNSUPPORTED_VERSION")
    assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == listed


UPGRADE, SAFE_DOWNGRADE = 1, 2  # UpdateFeatures' upgrade types


def feature_updates(bootstrap: str, wanted: list[tuple[str, int]], kind: int = UPGRADE
                    ) -> tuple[Any, ...]:
    """UpdateFeatures v1's answer to validate-only updates of upgrade type ``kind``: its
    top-level error and message, then (feature, error, message) per result."""
    with WireClient(bootstrap.split(",")[0]) as client:
        answer = client.request("UpdateFeatures", 1, {
            "timeout_ms": 60000, "validate_only": True, "feature_updates": [
                {"feature": name, "max_version_level": level, "upgrade_type": kind}
                for name, level in wanted]})
    return (answer.error_code, answer.error_message,
            *((r.feature, r.error_code, r.error_message) for r in answer.results))


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_features_the_release_lacks_cannot_be_finalized_as_on_3_9_1(
        real_kafka_3_9):
    # Kafka 3.9's controller supports kraft.version and metadata.version 1-21 only: finalizing
    # group.version (KIP-848 groups), transaction.version 2 (transactions v2) or share.version
    # there is refused, so a cluster answering as 3.9 cannot be switched into 4.x behaviour.
    # Before 4.0 each update is answered alone, in name order, the others still applied.
    # At level 0 a feature 3.9 lacks is allowed (its DISABLED range, 0-0), and kraft.version
    # may be downgraded there (validated only: nothing changes; 4.4 refuses that downgrade).
    wanted = [("transaction.version", 2), ("group.version", 1), ("share.version", 1),
              ("streams.version", 1), ("metadata.version", 30), ("kraft.version", 1),
              ("eligible.leader.replicas.version", 0)]
    with FakeKafka(kafka_version="3.9") as fake:
        on_fake = feature_updates(fake.bootstrap_servers, wanted)
        assert feature_updates(fake.bootstrap_servers, [("kraft.version", 0)], SAFE_DOWNGRADE) \
            == feature_updates(real_kafka_3_9.bootstrap_servers, [("kraft.version", 0)],
                               SAFE_DOWNGRADE) == (0, "", ("kraft.version", 0, None))
    invalid = "Invalid update version {} for feature {}. Local controller 1 "
    refused = error_code("INVALID_UPDATE_VERSION")
    assert on_fake == feature_updates(real_kafka_3_9.bootstrap_servers, wanted) == (
        0, "",
        ("eligible.leader.replicas.version", 0, None),
        ("group.version", refused, invalid.format(1, "group.version")
         + "does not support this feature."),
        ("kraft.version", 0, None),
        ("metadata.version", refused, invalid.format(30, "metadata.version")
         + "only supports versions 1-21"),
        *((name, refused, invalid.format(1 + (name == "transaction.version"), name)
           + "does not support this feature.")
          for name in ("share.version", "streams.version", "transaction.version")))


END_TXN = {"transactional_id": "t", "producer_id": 0, "producer_epoch": 0, "committed": True}


@pytest.mark.real_kafka
def test_transactions_v2_are_refused_before_4_0_on_the_fake_as_on_3_9_1(real_kafka_3_9):
    # KIP-890 part 2 came with 4.0: Kafka 3.9 finalizes no transaction.version and serves
    # EndTxn up to v4 only, so a 4.x client runs the older protocol against it.
    with FakeKafka(kafka_version="3.9") as fake:
        assert "transaction.version" not in features_of(fake.bootstrap_servers)[1]
        assert refused(fake.bootstrap_servers, "EndTxn", 5, END_TXN)
    assert "transaction.version" not in features_of(real_kafka_3_9.bootstrap_servers)[1]
    assert refused(real_kafka_3_9.bootstrap_servers, "EndTxn", 5, END_TXN)
    with FakeKafka(kafka_version="4.0") as fake:
        assert features_of(fake.bootstrap_servers)[1]["transaction.version"] == 2
        assert not refused(fake.bootstrap_servers, "EndTxn", 5, END_TXN)


# -- KIP-890 part 1: the leader verifies a transactional batch's partition (3.6 on) ------------

RETRIABLE = {error_code(e) for e in ("COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE",
                                     "NOT_COORDINATOR", "CONCURRENT_TRANSACTIONS")}


def real_topic(broker: Any, base: str) -> str:
    """A new one-partition topic on a real broker, served by its leader: its name."""
    real = RealCluster(broker.bootstrap_servers)
    try:
        topic = real.name(base)
        real.create_topic(topic)
    finally:
        real.close()
    return topic


def coordinator_of(bootstrap: str, key: str, key_type: int) -> WireClient:
    """A connection to the coordinator of a group or transactional id, found as clients find
    it (retried while a real broker's coordinator is not yet available)."""
    with WireClient(bootstrap.split(",")[0]) as client:
        found = wait_for(lambda: (found := client.request("FindCoordinator", 4, {
            "key_type": key_type, "coordinator_keys": [key]}).coordinators[0]
        ).error_code == 0 and found, "a coordinator")
    return WireClient(f"{found.host}:{found.port}")


@contextmanager
def transactional_producer(bootstrap: str) -> Iterator[tuple[WireClient, str, int, int]]:
    """A new transactional id's coordinator connection, the id, and the producer id and epoch
    InitProducerId gave it (retried while a real coordinator is still loading)."""
    txn_id = f"txn-{uuid.uuid4().hex[:8]}"
    with coordinator_of(bootstrap, txn_id, TRANSACTION_KEY) as coordinator:
        ids = wait_for(lambda: (ids := coordinator.request("InitProducerId", 3, {
            "transactional_id": txn_id, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1})).error_code not in RETRIABLE and ids, "a producer id")
        assert ids.error_code == 0
        yield coordinator, txn_id, ids.producer_id, ids.producer_epoch


def produce_transactional(broker: WireClient, txn_id: str, pid: int, epoch: int, topic: str,
                          partition: int, version: int) -> str:
    """The error of a Produce of one transactional batch (sequence 0) to ``partition``."""
    records = encode_batch([(b"k", b"v", [], 1_700_000_000_000)], producer_id=pid,
                           producer_epoch=epoch, base_sequence=0, transactional=True)
    body = dict(produce_body(topic, partition, records), transactional_id=txn_id)
    answer = broker.request("Produce", version, body)
    return error_name(answer.responses[0].partition_responses[0].error_code)


def not_added(bootstrap: str, topic: str, produce_versions: tuple[int, ...]) -> dict[str, str]:
    """What a broker answers about partition 0 of ``topic`` while it is not in the producer's
    ongoing transaction: the coordinator's verify-only verdict (AddPartitionsToTxn v4, what a
    leader asks) and the error of a transactional Produce at each of ``produce_versions``."""
    with transactional_producer(bootstrap) as (coordinator, txn_id, pid, epoch), \
            WireClient(bootstrap.split(",")[0]) as broker:
        verify = coordinator.request("AddPartitionsToTxn", 4, {"transactions": [{
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
            "verify_only": True, "topics": [{"name": topic, "partitions": [0]}]}]})
        (result,) = verify.results_by_transaction[0].topic_results[0].results_by_partition
        return {"verify only": error_name(result.partition_error_code)} | {
            f"produce v{v}": produce_transactional(broker, txn_id, pid, epoch, topic, 0, v)
            for v in produce_versions}


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_a_partition_not_added_is_refused_as_on_3_9_1(real_kafka_3_9):
    topic = real_topic(real_kafka_3_9, "not-added")
    with FakeKafka(kafka_version="3.9", topics={topic: 1}) as fake:
        on_fake = not_added(fake.bootstrap_servers, topic, (10, 11))
    assert on_fake == not_added(real_kafka_3_9.bootstrap_servers, topic, (10, 11)) == {
        "verify only": "TRANSACTION_ABORTABLE", "produce v10": "INVALID_TXN_STATE",
        "produce v11": "TRANSACTION_ABORTABLE"}


@pytest.mark.parametrize("release,answers", [
    # Kafka 3.6 and 3.7's coordinators answered INVALID_TXN_STATE (their
    # TransactionCoordinator.handleVerifyPartitionsInTransaction); 3.8 brought
    # TRANSACTION_ABORTABLE, which Produce v10 and older still get as INVALID_TXN_STATE.
    ("3.6", {"verify only": "INVALID_TXN_STATE", "produce v9": "INVALID_TXN_STATE"}),
    ("3.7", {"verify only": "INVALID_TXN_STATE", "produce v10": "INVALID_TXN_STATE"}),
    ("3.8", {"verify only": "TRANSACTION_ABORTABLE", "produce v10": "INVALID_TXN_STATE",
             "produce v11": "TRANSACTION_ABORTABLE"}),
])
def test_from_kafka_3_6_a_partition_not_added_is_refused_with_its_releases_error(release,
                                                                                answers):
    versions = tuple(int(step.removeprefix("produce v")) for step in answers
                     if step.startswith("produce v"))
    with FakeKafka(kafka_version=release, topics={"orders": 1}) as fake:
        assert not_added(fake.bootstrap_servers, "orders", versions) == answers
        assert fake.offsets("orders", 0)[1] == 0  # nothing appended


def last_stable_offset(broker: WireClient, topic: str, partition: int) -> int:
    return broker.request("ListOffsets", 5, {
        "replica_id": -1, "isolation_level": 1, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "timestamp": -1}]}]}).topics[0].partitions[0].offset


def test_before_kafka_3_6_a_batch_for_a_partition_not_added_is_appended_and_hangs():
    # Before KIP-890 part 1 a leader appended a transactional batch unverified: the
    # coordinator never wrote a marker to a partition it was not told of, so that partition's
    # last stable offset stays at the batch after the transaction commits (a hanging
    # transaction, KIP-890's motivation).
    with FakeKafka(kafka_version="3.5", topics={"orders": 2}) as fake, \
            transactional_producer(fake.bootstrap_servers) as (coordinator, txn_id, pid, epoch), \
            WireClient(fake.bootstrap_servers) as broker:
        assert produce_transactional(broker, txn_id, pid, epoch, "orders", 0, 9) == "NONE"
        added = coordinator.request("AddPartitionsToTxn", 3, {
            "v3_and_below_transactional_id": txn_id, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": "orders", "partitions": [1]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0] \
            .partition_error_code == 0
        assert produce_transactional(broker, txn_id, pid, epoch, "orders", 1, 9) == "NONE"
        assert coordinator.request("EndTxn", 3, {
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
            "committed": True}).error_code == 0
        assert last_stable_offset(broker, "orders", 1) == 2  # its batch and the commit marker
        assert last_stable_offset(broker, "orders", 0) == 0  # hung at the unverified batch


# -- what else a release's clients see --------------------------------------------------------


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_a_groups_operations_are_those_of_3_9_1(real_kafka_3_9):
    # Groups got configs (DESCRIBE_CONFIGS, ALTER_CONFIGS) in 4.0: a 3.9 broker lists READ,
    # DELETE and DESCRIBE as every operation on a group.
    def operations(bootstrap: str) -> int:
        """The authorized operations of a group made by an admin's offset commit."""
        commit = {"group_id": "admin", "generation_id_or_member_epoch": -1, "member_id": "",
                  "retention_time_ms": -1, "topics": [{"name": topic, "partitions": [
                      {"partition_index": 0, "committed_offset": 0}]}]}
        with coordinator_of(bootstrap, "admin", GROUP_KEY) as client:
            # A real coordinator answers NOT_COORDINATOR until its offsets partition is loaded.
            assert wait_for(lambda: (error := client.request("OffsetCommit", 2, commit).topics[0]
                                     .partitions[0].error_code) not in RETRIABLE and [error],
                            "the group coordinator") == [0]
            return client.request("DescribeGroups", 5, {
                "groups": ["admin"], "include_authorized_operations": True}
            ).groups[0].authorized_operations

    topic = real_topic(real_kafka_3_9, "group-ops")
    with FakeKafka(kafka_version="3.9", topics={topic: 1}) as fake:
        assert operations(fake.bootstrap_servers) \
            == operations(real_kafka_3_9.bootstrap_servers) == (1 << 3) + (1 << 6) + (1 << 8)
    with FakeKafka(kafka_version="4.0", topics={topic: 1}) as fake:
        assert operations(fake.bootstrap_servers) == 3400  # and DESCRIBE_/ALTER_CONFIGS


def cluster_defaults(bootstrap: str) -> dict[str, str]:
    """The cluster's dynamic default broker configs (DescribeConfigs of broker resource "")."""
    with WireClient(bootstrap.split(",")[0]) as client:
        answer = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 4, "resource_name": "", "configuration_keys": None}]})
    return {c.name: c.value for c in answer.results[0].configs}


@pytest.mark.real_kafka
def test_min_insync_replicas_is_a_cluster_default_only_where_eligible_leader_replicas_are_on(
        real_kafka_3_9):
    # KIP-966: a cluster formatted with eligible leader replicas (on by default from 4.1) has
    # min.insync.replicas as a dynamic cluster default, and refuses to remove it; 3.9 and 4.0
    # format none.
    with FakeKafka(kafka_version="3.9") as fake:
        assert cluster_defaults(fake.bootstrap_servers) \
            == cluster_defaults(real_kafka_3_9.bootstrap_servers) == {}
    for release, defaults in (("4.0", {}), ("4.1", {"min.insync.replicas": "1"})):
        with FakeKafka(kafka_version=release) as fake:
            assert cluster_defaults(fake.bootstrap_servers) == defaults


def share_heartbeat_error(bootstrap: str) -> str:
    with WireClient(bootstrap.split(",")[0]) as client:
        return error_name(client.request("ShareGroupHeartbeat", 1, SHARE_HEARTBEAT).error_code)


def test_at_kafka_version_4_1_share_groups_are_off_until_share_version_is_finalized():
    # Kafka 4.1 serves the share group APIs but formats share.version at 0 (KIP-932's preview):
    # a share group heartbeat is refused until an operator finalizes share.version 1.
    with FakeKafka(kafka_version="4.1", topics={"orders": 1}) as fake:
        assert share_heartbeat_error(fake.bootstrap_servers) == "UNSUPPORTED_VERSION"
        assert feature_updates(fake.bootstrap_servers, [("share.version", 1)])[0] == 0
        with WireClient(fake.bootstrap_servers) as client:
            assert client.request("UpdateFeatures", 1, {
                "timeout_ms": 60000, "validate_only": False, "feature_updates": [
                    {"feature": "share.version", "max_version_level": 1,
                     "upgrade_type": UPGRADE}]}).error_code == 0
        assert share_heartbeat_error(fake.bootstrap_servers) == "NONE"
    with FakeKafka(kafka_version="4.2", topics={"orders": 1}) as fake:
        assert share_heartbeat_error(fake.bootstrap_servers) == "NONE"


def v0_offsets(bootstrap: str, topic: str) -> list[Any]:
    """The partition errors of an OffsetCommit v0 then an OffsetFetch v0 (offsets kept in
    ZooKeeper by the brokers that had it) for partition 0 of ``topic``, and the offset
    fetched."""
    with WireClient(bootstrap.split(",")[0]) as client:
        committed = client.request("OffsetCommit", 0, {"group_id": "old", "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                            "committed_metadata": "m"}]}]})
        fetched = client.request("OffsetFetch", 0, {"group_id": "old", "topics": [
            {"name": topic, "partition_indexes": [0]}]})
    (partition,) = fetched.topics[0].partitions
    return [error_name(committed.topics[0].partitions[0].error_code),
            error_name(partition.error_code), partition.committed_offset]


@pytest.mark.real_kafka
def test_at_kafka_version_3_9_offsets_of_version_0_are_refused_as_on_3_9_1(real_kafka_3_9):
    # Version 0 kept a group's offsets in ZooKeeper: a KRaft broker before 4.0 (which no longer
    # lists v0) refuses both on every partition.
    topic = real_topic(real_kafka_3_9, "v0-offsets")
    with FakeKafka(kafka_version="3.9", topics={topic: 1}) as fake:
        assert v0_offsets(fake.bootstrap_servers, topic) \
            == v0_offsets(real_kafka_3_9.bootstrap_servers, topic) \
            == ["UNSUPPORTED_VERSION", "UNSUPPORTED_VERSION", -1]
