"""Standalone control: the HTTP API, ``fakebroker ctl`` and scenario files, against a running
``fakebroker serve``."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from fakebroker.control.access import token_for
from fakebroker.control.ctl import ControlCallError, call
from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.conftest import OUTSIDE, start_served, stop_served
from tests.test_wire_groups import coordinator
from tests.test_wire_streams_groups import Member, new_app
from tests.test_wire_versions import batch, produce_body


@pytest.fixture
def served(tmp_path: Path):
    """A ``fakebroker serve --brokers 2 --topic orders:2 --control-port 0 --journal F``."""
    journal = tmp_path / "journal.jsonl"
    process, details = start_served(tmp_path, "--brokers", "2", "--topic", "orders:2",
                                    "--control-port", "0", "--journal", str(journal))
    details["journal"] = journal
    details["ready_file"] = tmp_path / "ready.json"
    yield details
    stop_served(process)


def ctl(details: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fakebroker", "ctl", "--ready-file", str(details["ready_file"]),
         *args], capture_output=True, text=True, timeout=30, cwd=OUTSIDE)


def produce_to_leader(details: dict, topic: str, partition: int, value: bytes) -> int:
    url = details["control_url"]
    leader = call(url, "GET", "/cluster")["topics"][topic]["partitions"][partition]["leader"]
    broker = next(b for b in details["brokers"] if b["id"] == leader)
    with WireClient(f"{broker['host']}:{broker['port']}", client_id="ci-job") as client:
        response = client.request("Produce", 9, produce_body(topic, partition, batch([value])))
    return response.responses[0].partition_responses[0].error_code


def test_health_and_cluster_describe_the_running_cluster(served):
    url = served["control_url"]
    assert url.startswith("http://127.0.0.1:")
    assert call(url, "GET", "/health") == {"status": "ok"}
    cluster = call(url, "GET", "/cluster")
    assert cluster["bootstrap_servers"] == served["bootstrap_servers"]
    assert [b["id"] for b in cluster["brokers"]] == [1, 2]
    assert [p["partition"] for p in cluster["topics"]["orders"]["partitions"]] == [0, 1]


def test_topics_are_created_and_a_refused_one_changes_nothing(served):
    url = served["control_url"]
    created = call(url, "POST", "/topics", {"name": "payments", "partitions": 3})
    assert created["partitions"] == 3
    with pytest.raises(ControlCallError) as refused:
        call(url, "POST", "/topics", {"name": "payments", "partitions": 5})
    assert refused.value.status == 400
    assert refused.value.answer["error"] == "TOPIC_ALREADY_EXISTS"
    assert len(call(url, "GET", "/cluster")["topics"]["payments"]["partitions"]) == 3


def test_faults_are_added_applied_counted_and_removed(served):
    url = served["control_url"]
    rule = call(url, "POST", "/faults", {"api": "Produce", "topic": "orders", "partition": 0,
                                         "error": "NOT_ENOUGH_REPLICAS"})
    assert rule["active"] and rule["hits"] == 0
    assert produce_to_leader(served, "orders", 0, b"x") == ErrorCode.NOT_ENOUGH_REPLICAS
    assert produce_to_leader(served, "orders", 0, b"y") == 0
    assert call(url, "GET", f"/faults/{rule['id']}")["hits"] == 1
    assert [r["id"] for r in call(url, "GET", "/faults")] == [rule["id"]]
    call(url, "DELETE", f"/faults/{rule['id']}")
    with pytest.raises(ControlCallError) as gone:
        call(url, "GET", f"/faults/{rule['id']}")
    assert gone.value.status == 404
    journal = call(url, "GET", "/journal?api=Produce&error=NOT_ENOUGH_REPLICAS")
    assert [(e["client_id"], e["targets"]) for e in journal] == [("ci-job", ["orders/0"])]
    coverage = call(url, "GET", "/coverage")
    assert coverage["errors"] == {"NOT_ENOUGH_REPLICAS": 1}


@pytest.mark.parametrize("method, path, body, message", [
    ("POST", "/faults", {"api": "Nope", "error": "NOT_LEADER_OR_FOLLOWER"}, "unknown Kafka API"),
    ("POST", "/faults", {"topic": "orders"}, "needs an action"),
    ("POST", "/faults", ["not", "an", "object"], "object of fields"),
    ("POST", "/actions/truncate", {"topic": "orders", "partition": 0}, "offset is required"),
    ("POST", "/actions/move-leader", {"topic": "orders", "partition": "zero"},
     "partition must be int"),
    ("POST", "/actions/broker-down", {"broker": 9}, "no broker 9"),
    ("POST", "/actions/launch", {}, "unknown action"),
])
def test_bad_control_input_is_a_400_that_changes_nothing(served, method, path, body,
                                                          message):
    url = served["control_url"]
    before = call(url, "GET", "/cluster")
    with pytest.raises(ControlCallError) as refused:
        call(url, method, path, body)
    assert refused.value.status == 400 and message in refused.value.answer["message"]
    assert call(url, "GET", "/faults") == []
    assert call(url, "GET", "/cluster") == before


def test_actions_change_the_cluster(served):
    url = served["control_url"]
    old = call(url, "GET", "/cluster")["topics"]["orders"]["partitions"][0]
    moved = call(url, "POST", "/actions/move-leader", {"topic": "orders", "partition": 0})
    now = call(url, "GET", "/cluster")["topics"]["orders"]["partitions"][0]
    assert moved["leader"] == now["leader"] != old["leader"]
    assert now["leader_epoch"] == old["leader_epoch"] + 1
    call(url, "POST", "/actions/broker-down", {"broker": 2})
    assert [b["up"] for b in call(url, "GET", "/cluster")["brokers"]] == [True, False]
    call(url, "POST", "/actions/broker-up", {"broker": 2})
    call(url, "POST", "/actions/set-latency", {"broker": 1, "ms": 5})
    assert call(url, "GET", "/cluster")["brokers"][0]["latency_ms"] == 5


def test_a_streams_member_is_shown_and_kicked_over_http_and_ctl(served):
    cluster = SimpleNamespace(bootstrap_servers=served["bootstrap_servers"])
    app = new_app(cluster)
    with WireClient(coordinator(cluster, app)) as client:
        member = Member(client, app, source="orders")
        member.join()
        member.until(lambda m: m.active == {"0": {0, 1}, "1": {0, 1}}, "every task")
        [shown] = call(served["control_url"], "GET", "/cluster")["groups"][app]["members"]
        assert shown == {"member_id": member.member_id, "instance_id": None,
                         "client_id": "wire", "member_epoch": member.epoch,
                         "assignment": {"0": [0, 1], "1": [0, 1]}, "standby": {},
                         "warmup": {}, "process_id": member.member_id}
        kicked = ctl(served, "action", "kick-member", "--group", app,
                     "--member-id", member.member_id)
        assert kicked.returncode == 0, kicked.stderr
        assert member.send().error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert call(served["control_url"], "GET", "/cluster")["groups"][app]["members"] == []


def test_ctl_adds_a_rule_that_ignores_a_share_fetchs_acknowledgements(served):
    added = ctl(served, "fault", "add", "--api", "ShareFetch", "--group", "jobs",
                "--ignore", "acknowledgement_batches")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["ignore"] == ["acknowledgement_batches"]
    refused = ctl(served, "fault", "add", "--api", "ShareFetch", "--ignore", "acks")
    assert refused.returncode == 1 and "ShareFetch requests have no array 'acks'" in \
        refused.stderr


def test_ctl_wraps_each_call_for_shell_scripts(served):
    added = ctl(served, "fault", "add", "--api", "Produce", "--partition", "1",
                "--error", "NOT_LEADER_OR_FOLLOWER", "--forever")
    assert added.returncode == 0, added.stderr
    fault_id = json.loads(added.stdout)["id"]
    assert produce_to_leader(served, "orders", 1, b"z") == ErrorCode.NOT_LEADER_OR_FOLLOWER
    waited = ctl(served, "fault", "wait", str(fault_id), "--hits", "1", "--timeout", "5")
    assert waited.returncode == 0 and json.loads(waited.stdout)["hits"] == 1
    journal = ctl(served, "journal", "--api", "Produce", "--faulted")
    assert [json.loads(line)["errors"] for line in journal.stdout.splitlines()] == [
        ["NOT_LEADER_OR_FOLLOWER"]]
    assert ctl(served, "fault", "remove", str(fault_id)).returncode == 0
    moved = ctl(served, "action", "move-leader", "--topic", "orders", "--partition", "1")
    assert moved.returncode == 0 and "leader" in json.loads(moved.stdout)
    refused = ctl(served, "action", "truncate", "--topic", "orders", "--partition", "0")
    assert refused.returncode == 1 and "offset is required" in refused.stderr
    assert json.loads(ctl(served, "health").stdout) == {"status": "ok"}


def test_client_quotas_are_set_by_ctl_and_http_and_listed_by_describe(served):
    assert ctl(served, "action", "set-client-quota", "--key", "producer_byte_rate",
               "--value", "1024", "--client-id", "app").returncode == 0
    call(served["control_url"], "POST", "/actions/set-client-quota",
         {"key": "consumer_byte_rate", "value": 2048, "user": "<default>"})
    refused = ctl(served, "action", "set-client-quota", "--key", "bogus", "--value", "1",
                  "--user", "alice")
    assert refused.returncode == 1 and "Invalid configuration key bogus" in refused.stderr
    broker = served["brokers"][0]
    with WireClient(f"{broker['host']}:{broker['port']}") as client:
        answer = client.request("DescribeClientQuotas", 1, {"components": [], "strict": False})
    assert {(tuple((e.entity_type, e.entity_name) for e in entry.entity),
             tuple((v.key, v.value) for v in entry.values)) for entry in answer.entries} == {
        ((("client-id", "app"),), (("producer_byte_rate", 1024.0),)),
        ((("user", None),), (("consumer_byte_rate", 2048.0),))}


def test_ctl_fault_wait_that_times_out_says_so_not_that_the_broker_is_unreachable(served):
    fault_id = json.loads(ctl(served, "fault", "add", "--api", "Produce", "--error",
                              "NOT_LEADER_OR_FOLLOWER").stdout)["id"]
    waited = ctl(served, "fault", "wait", str(fault_id), "--timeout", "0.2")
    assert waited.returncode == 1
    assert waited.stderr.splitlines() == [
        f"fakebroker ctl: fault {fault_id} was hit 0 time(s), not 1, within 0.2 s"]


def test_faults_and_the_journal_name_the_listener_and_principal_over_http_and_ctl(served):
    url = served["control_url"]
    elsewhere = call(url, "POST", "/faults", {"api": "Produce", "listener": "SASL_SSL",
                                              "error": "NOT_ENOUGH_REPLICAS"})
    added = ctl(served, "fault", "add", "--api", "Produce", "--listener", "PLAINTEXT",
                "--principal", "User:ANONYMOUS", "--error", "NOT_LEADER_OR_FOLLOWER")
    assert added.returncode == 0, added.stderr
    rule = json.loads(added.stdout)
    assert (rule["listener"], rule["principal"]) == ("PLAINTEXT", "User:ANONYMOUS")
    assert produce_to_leader(served, "orders", 0, b"x") == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert call(url, "GET", f"/faults/{elsewhere['id']}")["hits"] == 0
    [entry] = call(url, "GET", "/journal?api=Produce&listener=PLAINTEXT"
                               "&principal=User:ANONYMOUS")
    assert (entry["listener"], entry["principal"], entry["errors"]) == (
        "PLAINTEXT", "User:ANONYMOUS", ["NOT_LEADER_OR_FOLLOWER"])
    assert call(url, "GET", "/journal?principal=User:alice") == []
    by_ctl = ctl(served, "journal", "--api", "Produce", "--listener", "PLAINTEXT")
    assert [json.loads(line)["seq"] for line in by_ctl.stdout.splitlines()] == [entry["seq"]]
    assert ctl(served, "journal", "--listener", "SSL").stdout == ""
    refused = ctl(served, "fault", "add", "--listener", "plaintext", "--error", "6")
    assert refused.returncode == 1 and "is not a listener name" in refused.stderr


def test_a_held_produce_is_released_over_http_and_with_ctl(served):
    url = served["control_url"]
    added = ctl(served, "fault", "add", "--api", "Produce", "--hold", "--count", "2")
    assert added.returncode == 0, added.stderr
    rule = json.loads(added.stdout)
    assert (rule["hold"], rule["held"]) == (True, 0)
    fault_id = str(rule["id"])
    with concurrent.futures.ThreadPoolExecutor() as pool:
        first = pool.submit(produce_to_leader, served, "orders", 0, b"first")
        waited = ctl(served, "fault", "wait", fault_id, "--hits", "1", "--timeout", "10")
        assert json.loads(waited.stdout)["held"] == 1
        released = call(url, "POST", f"/faults/{fault_id}/release")
        assert (released["released"], released["held"]) == (1, 0)
        assert first.result(timeout=10) == 0
        second = pool.submit(produce_to_leader, served, "orders", 0, b"second")
        assert ctl(served, "fault", "wait", fault_id, "--hits", "2").returncode == 0
        out = ctl(served, "fault", "release", fault_id, "--count", "1")
        assert out.returncode == 0 and json.loads(out.stdout)["released"] == 1
        assert second.result(timeout=10) == 0
    with pytest.raises(ControlCallError) as unknown:
        call(url, "POST", "/faults/99/release")
    assert unknown.value.status == 404
    journal = call(url, "GET", "/journal?api=Produce")
    assert [(e["fault"], e["outcome"]) for e in journal] == [("#1 hold", "answered")] * 2


def test_the_journal_file_gets_a_json_line_per_request(served):
    produce_to_leader(served, "orders", 0, b"logged")
    deadline = time.monotonic() + 5
    while "Produce" not in served["journal"].read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    entries = [json.loads(line) for line in served["journal"].read_text().splitlines()]
    assert [e["api"] for e in entries if e["client_id"] == "ci-job"] == ["Produce"]


def test_a_scenario_declares_brokers_topics_faults_and_a_timeline(tmp_path):
    scenario = tmp_path / "leader-moves.toml"
    scenario.write_text("""
[cluster]
brokers = 2
seed = 3

[topics]
orders = 2

[[faults]]
api = "Fetch"
topic = "orders"
partition = 0
error = "NOT_LEADER_OR_FOLLOWER"
count = 2

[[timeline]]
at_ms = 300
action = "move-leader"
topic = "orders"
partition = 1
""")
    process, details = start_served(tmp_path, "--scenario", str(scenario),
                                    "--control-port", "0")
    try:
        url = details["control_url"]
        assert len(details["brokers"]) == 2
        [fault] = call(url, "GET", "/faults")
        assert (fault["api"], fault["error"], fault["count"]) == (
            "Fetch", "NOT_LEADER_OR_FOLLOWER", 2)
        deadline = time.monotonic() + 10
        while call(url, "GET", "/cluster")["topics"]["orders"]["partitions"][1][
                "leader_epoch"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        stop_served(process)


def test_a_scenario_holds_produces_until_its_timeline_releases_them(tmp_path):
    scenario = tmp_path / "held.toml"
    scenario.write_text("""
[topics]
orders = 1

[[faults]]
api = "Produce"
hold = true

[[faults]]
api = "Metadata"
respond = { cluster_id = "from-the-scenario", topics = [] }

[[timeline]]
at_ms = 3000
action = "release-fault"
fault = 1
""")
    process, details = start_served(tmp_path, "--scenario", str(scenario),
                                    "--control-port", "0")
    try:
        url = details["control_url"]
        with WireClient(details["bootstrap_servers"], timeout=30) as client:
            produced = client.request("Produce", 9, produce_body("orders", 0, batch([b"h"])))
            metadata = client.request("Metadata", 12, {"topics": None})
        assert produced.responses[0].partition_responses[0].error_code == 0
        assert metadata.cluster_id == "from-the-scenario"
        assert [(f["hits"], f.get("held")) for f in call(url, "GET", "/faults")] == [
            (1, 0), (1, None)]
        assert [(e["api"], e["fault"]) for e in call(url, "GET", "/journal?faulted=true")] == [
            ("Produce", "#1 hold"), ("Metadata", "#2 respond")]
    finally:
        stop_served(process)


@pytest.mark.parametrize("text, message", [
    ("[clutser]\nbrokers = 2\n", "unknown table(s) clutser"),
    ("[[faults]]\napi = 'Fetch'\n", "[[faults]] #1: a fault needs an action"),
    ("[[timeline]]\nat_ms = 5\naction = 'explode'\n", "action must be one of"),
    ("[[timeline]]\nat_ms = 5\naction = 'truncate'\ntopic = 'a'\npartition = 0\n",
     "offset is required"),
    ("[topics]\norders = { partitons = 3 }\n", "unknown field(s) partitons"),
    ("[[faults]]\napi = 'Metadata'\nrespond = { brokers = 'x' }\n",
     "[[faults]] #1: respond: not a Metadata v0 answer"),
    ("[[faults]]\nprincipal = 'alice'\nerror = 6\n",
     "[[faults]] #1: principal: 'alice' is not a principal"),
    ("[[faults]]\napi = 'Produce'\nerror = 6\n[[timeline]]\nat_ms = 5\n"
     "action = 'release-fault'\nfault = 1\n",
     "[[timeline]] #1: release-fault: rule 1 is not a hold rule added before it"),
])
def test_a_bad_scenario_is_refused_before_anything_starts(tmp_path, text, message):
    scenario = tmp_path / "bad.toml"
    scenario.write_text(text)
    result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--scenario",
                             str(scenario)], capture_output=True, text=True, timeout=30,
                            cwd=OUTSIDE)
    assert result.returncode == 2
    assert message in result.stderr and "bad.toml" in result.stderr


def test_ctl_names_what_is_missing_when_the_broker_serves_no_control_api(tmp_path):
    process, details = start_served(tmp_path)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "fakebroker", "ctl", "--ready-file",
             str(tmp_path / "ready.json"), "cluster"],
            capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    finally:
        stop_served(process)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"fakebroker ctl: {tmp_path / 'ready.json'}: the broker was started without "
        "--control-port, so it serves no control API"]


def listening_addresses(pid: int, port: int) -> set[str]:
    """The addresses process ``pid`` listens on at ``port``, as the kernel reports them."""
    process = psutil.Process(pid)
    connections = getattr(process, "net_connections", process.connections)(kind="inet")
    return {c.laddr.ip for c in connections
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port}


def raw_get(url: str, path: str, authorization: str | None = None
            ) -> tuple[int, http.client.HTTPMessage, Any]:
    """One GET over a fresh connection: status, headers (any case) and JSON answer."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        headers = {} if authorization is None else {"Authorization": authorization}
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.headers, json.loads(answer.read())
    finally:
        connection.close()


def test_the_control_api_listens_on_loopback_whatever_host_the_brokers_bind(tmp_path):
    process, details = start_served(tmp_path, "--host", "0.0.0.0", "--advertised-host",
                                    "127.0.0.2", "--control-port", "0")
    try:
        url = details["control_url"]
        port = urllib.parse.urlsplit(url).port
        assert url == f"http://127.0.0.1:{port}" and "control_token" not in details
        assert listening_addresses(process.pid, port) == {"127.0.0.1"}
        assert listening_addresses(process.pid, details["brokers"][0]["port"]) == {"0.0.0.0"}
        assert call(url, "GET", "/health") == {"status": "ok"}
        with pytest.raises(ConnectionRefusedError):  # another local address: nobody there
            raw_get(f"http://127.0.0.2:{port}", "/health")
    finally:
        assert stop_served(process) == 0


def test_a_generated_token_is_never_read_as_an_option_by_ctl():
    """``fakebroker ctl --token TOKEN``: a token beginning with "-" (one URL-safe base64 token
    in 64 did) is read by argparse as an option, and ctl stops ("expected one argument")."""
    tokens = {token_for("0.0.0.0", None) for _ in range(500)}
    assert len(tokens) == 500
    assert all(len(t) == 64 and set(t) <= set("0123456789abcdef") for t in tokens)
    assert token_for("0.0.0.0", "-given") == "-given" and token_for("127.0.0.1", None) is None


def test_a_control_api_on_another_address_answers_only_its_generated_token(tmp_path):
    process, details = start_served(tmp_path, "--host", "0.0.0.0", "--advertised-host",
                                    "127.0.0.2", "--control-port", "0", "--control-host",
                                    "0.0.0.0")
    details["ready_file"] = tmp_path / "ready.json"
    try:
        url, token = details["control_url"], details["control_token"]
        port = urllib.parse.urlsplit(url).port
        assert url == f"http://127.0.0.2:{port}"  # the advertised host, bound to a wildcard
        assert listening_addresses(process.pid, port) == {"0.0.0.0"}
        assert len(token) >= 32
        assert (tmp_path / "ready.json").stat().st_mode & 0o777 == 0o600
        for authorization in (None, "Bearer", "Bearer wrong", f"Basic {token}",
                              f"Bearer {token}x"):
            status, headers, answer = raw_get(url, "/health", authorization)
            assert (status, answer["error"]) == (401, "UNAUTHORIZED"), authorization
            assert headers["WWW-Authenticate"].startswith("Bearer")
        with pytest.raises(ControlCallError) as refused:
            call(url, "POST", "/faults", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"})
        assert refused.value.status == 401
        assert raw_get(url, "/faults", f"Bearer {token}")[:3:2] == (200, [])  # none added
        assert call(url, "GET", "/health", token=token) == {"status": "ok"}
        by_itself = ctl(details, "health")  # the ready file's token
        assert by_itself.returncode == 0 and json.loads(by_itself.stdout) == {"status": "ok"}
        without = subprocess.run(
            [sys.executable, "-m", "fakebroker", "ctl", "--url", url, "health"],
            capture_output=True, text=True, timeout=30, cwd=OUTSIDE,
            env={k: v for k, v in os.environ.items() if k != "FAKEBROKER_CONTROL_TOKEN"})
        assert without.returncode == 1 and json.loads(without.stderr)["error"] == "UNAUTHORIZED"
        for how, env in ((["--token", token], {}), ([], {"FAKEBROKER_CONTROL_TOKEN": token})):
            with_token = subprocess.run(
                [sys.executable, "-m", "fakebroker", "ctl", "--url", url, *how, "health"],
                capture_output=True, text=True, timeout=30, cwd=OUTSIDE,
                env={**os.environ, **env})
            assert with_token.returncode == 0, with_token.stderr
            assert json.loads(with_token.stdout) == {"status": "ok"}
    finally:
        assert stop_served(process) == 0
    output = process.stdout.read() + process.stderr.read()
    assert f"control_url={url}" in output and token not in output


def test_a_given_token_is_required_on_loopback_too(tmp_path):
    process, details = start_served(tmp_path, "--control-port", "0",
                                    env={"FAKEBROKER_CONTROL_TOKEN": "ci-secret"})
    details["ready_file"] = tmp_path / "ready.json"
    try:
        url = details["control_url"]
        assert url.startswith("http://127.0.0.1:") and details["control_token"] == "ci-secret"
        assert raw_get(url, "/cluster")[0] == 401
        assert raw_get(url, "/cluster", "bearer ci-secret")[0] == 200  # the scheme: any case
        added = ctl(details, "fault", "add", "--api", "Fetch", "--delay-ms", "5")
        assert added.returncode == 0 and json.loads(added.stdout)["id"] == 1
    finally:
        assert stop_served(process) == 0


def test_every_cluster_operation_is_a_fakekafka_method_an_action_and_a_ctl_command(
        fake_kafka):
    from fakebroker.control.actions import ACTIONS
    from fakebroker.operations import OPERATIONS

    assert len(OPERATIONS) >= 9
    for name, declared in OPERATIONS.items():
        method = getattr(fake_kafka, declared.method)
        assert callable(method) and method.__doc__, name
        assert name in ACTIONS
    result = subprocess.run([sys.executable, "-m", "fakebroker", "ctl", "action", "--help"],
                            capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    for name in OPERATIONS:
        assert name in result.stdout


def test_a_transaction_is_shown_and_aborted_from_the_control_api_and_ctl(served):
    from confluent_kafka import KafkaError, KafkaException, Producer

    url = served["control_url"]
    producer = Producer({"bootstrap.servers": served["bootstrap_servers"],
                         "transactional.id": "ci-tx"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("orders", b"pending", partition=0)
    producer.flush(30)
    cluster = call(url, "GET", "/cluster")
    shown = cluster["transactions"]["ci-tx"]
    assert (shown["state"], shown["partitions"]) == ("Ongoing", [["orders", 0]])
    assert cluster["topics"]["orders"]["partitions"][0]["last_stable_offset"] == 0
    assert call(url, "POST", "/actions/abort-transaction", {"transactional_id": "ci-tx"}) == {
        "action": "abort-transaction"}
    assert call(url, "GET", "/cluster")["transactions"]["ci-tx"]["state"] == "CompleteAbort"
    refused = ctl(served, "action", "abort-transaction", "--transactional-id", "ci-tx")
    assert refused.returncode == 1 and "INVALID_TXN_STATE" in refused.stdout + refused.stderr
    with pytest.raises(KafkaException) as fenced:
        producer.commit_transaction(30)
    assert fenced.value.args[0].code() == KafkaError._FENCED
