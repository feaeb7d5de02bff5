"""The release table (``protocol_specs/releases.json``): what each Kafka release's broker lists
in ApiVersions, imported from that release's own jar, and equal to what the real brokers this
suite runs (Apache Kafka 3.9.1 and 4.4.0) list."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fakebroker import FakeKafka
from fakebroker.control.ctl import call
from fakebroker.options import ClusterSettings, OptionError
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.importer import render
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
from fakebroker.wire_client import WireClient
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
