"""``fakebroker serve``: ready line and file, consecutive ports, clean stop on SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from fakebroker.cli import unknown_variables
from fakebroker.options import ENV_PREFIX
from tests.absent import absent
from tests.conftest import OUTSIDE, ROOT, start_served, stop_served
from tests.processes import free_port_run


def test_serve_announces_its_brokers_and_stops_cleanly_on_sigterm(tmp_path):
    process, details = start_served(tmp_path, "--brokers", "3", "--topic", "orders:3")
    assert [b["id"] for b in details["brokers"]] == [1, 2, 3]
    assert details["bootstrap_servers"] == ",".join(
        f"{b['host']}:{b['port']}" for b in details["brokers"])
    producer = KafkaProducer(bootstrap_servers=details["bootstrap_servers"])
    producer.send("orders", key=b"k", value=b"v", partition=2).get(timeout=10)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=details["bootstrap_servers"])
    consumer.assign([TopicPartition("orders", 2)])
    assert consumer.end_offsets([TopicPartition("orders", 2)]) == {TopicPartition("orders", 2): 1}
    consumer.close()
    assert stop_served(process) == 0
    assert process.stdout.read().strip() == f"bootstrap.servers={details['bootstrap_servers']}"
    assert not (tmp_path / "ready.json").exists()


def test_serve_uses_consecutive_ports_from_port(tmp_path):
    base = free_port_run(2)
    process, details = start_served(tmp_path, "--port", str(base), "--brokers", "2")
    assert [b["port"] for b in details["brokers"]] == [base, base + 1]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 0


def test_python_dash_m_fakebroker_has_the_same_commands():
    result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--help"],
                            capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    assert result.returncode == 0 and "--ready-file" in result.stdout


def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--port", str(port)],
                                capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"fakebroker: [Errno 98] cannot listen on 127.0.0.1:{port}: Address already in use"]


def serve_refuses(*args: str, env: dict[str, str] | None = None) -> str:
    """Run ``fakebroker serve ARGS``, which must refuse to start: exit status 2 and one line
    on stderr, which is returned."""
    result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", *args],
                            capture_output=True, text=True, timeout=30, cwd=OUTSIDE,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 2, result
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr, result
    return result.stderr.strip()


@pytest.mark.parametrize("args,says", [
    (["--brokers", "0"], "--brokers: expected a whole number >= 1, got 0"),
    (["--brokers", "two"], "--brokers: expected a whole number, got 'two'"),
    (["--topic", "a:x"], "--topic: expected NAME or NAME:PARTITIONS, got 'a:x'"),
    (["--topic", "a:0"], "--topic: expected NAME or NAME:PARTITIONS (partitions >= 1)"),
    (["--topic", ":3"], "--topic: expected NAME or NAME:PARTITIONS, got ':3': no topic name"),
    (["--topic", "t:"], "--topic: expected NAME or NAME:PARTITIONS, got 't:': no partition "
                        "count after ':'"),
    (["--topic", "a:3", "--topic", "a:1"],
     "fakebroker: --topic: topic 'a' given twice, with 3 and 1 partitions"),
    (["--port", "70000"], "--port: expected a port from 0 to 65535, got 70000"),
    (["--auto-create-topics", "maybe"], "expected true or false, got 'maybe'"),
    (["--host", "0.0.0.0"], "fakebroker: --host: binding '0.0.0.0' needs --advertised-host, "
                            "the name or address clients use to reach the brokers"),
    (["--advertised-host", "0.0.0.0"], "cannot advertise the non-routable meta-address"),
    (["--scenario", "/nonexistent/scenario.toml"], "No such file or directory"),
    (["--log-level", "chatty"], "--log-level: unknown level 'chatty' (DEBUG, INFO, WARNING"),
    (["--control-host", " "], "--control-host: expected a host name or address"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
])
def test_a_bad_flag_ends_serve_with_one_line_and_exit_status_2(args, says):
    assert says in serve_refuses(*args)


@pytest.mark.parametrize("variable,value,says", [
    ("FAKEBROKER_BROKERS", "0", "FAKEBROKER_BROKERS: brokers: expected a whole number >= 1"),
    ("FAKEBROKER_TOPICS", "orders:3,audit:x", "FAKEBROKER_TOPICS: expected NAME or NAME:PART"),
    ("FAKEBROKER_AUTO_CREATE_TOPICS", "perhaps", "FAKEBROKER_AUTO_CREATE_TOPICS: auto_create"),
    ("FAKEBROKER_CONTROL_PORT", "http", "FAKEBROKER_CONTROL_PORT: control_port: expected"),
    ("FAKEBROKER_SEED", "1.5", "FAKEBROKER_SEED: seed: expected a whole number, got '1.5'"),
    ("FAKEBROKER_LOG_LEVEL", "LOUD", "FAKEBROKER_LOG_LEVEL: log_level: unknown level 'LOUD'"),
    ("FAKEBROKER_TOPICS", "a:3,,b:1",
     "FAKEBROKER_TOPICS: expected NAME[:PARTITIONS],... got an empty entry in 'a:3,,b:1'"),
    ("FAKEBROKER_TOPICS", "a:3,b:1,a:1",
     "FAKEBROKER_TOPICS: topic 'a' given twice, with 3 and 1 partitions"),
])
def test_a_bad_environment_value_ends_serve_with_one_line_naming_the_variable(variable, value,
                                                                               says):
    assert says in serve_refuses(env={variable: value})


def test_an_unknown_fakebroker_variable_is_a_warning_naming_the_closest_one(tmp_path):
    typo = ENV_PREFIX + "BROKER"  # built, not written: the repository scan below skips it
    process, details = start_served(tmp_path, env={typo: "3"})
    assert len(details["brokers"]) == 1  # serve runs on, without the variable
    assert stop_served(process) == 0
    assert process.stderr.read().splitlines() == [
        f"fakebroker: warning: {typo} is not a fakebroker variable; did you mean "
        "FAKEBROKER_BROKERS?"]


def test_every_fakebroker_variable_the_project_reads_is_known_to_serve():
    """No false warning: each ``FAKEBROKER_*`` name written in the project (package, tests,
    CI scripts, README, docs) is one serve or another part of fakebroker reads."""
    written = set()
    for path in (ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob(".ci/*"),
                 *ROOT.glob("fakebroker/**/*.py"),
                 *ROOT.glob("tests/**/*.*"), *ROOT.glob("examples/*")):
        if path.is_file():
            written |= set(re.findall(ENV_PREFIX + "[A-Z_]+", path.read_text(errors="ignore")))
    assert written and unknown_variables(dict.fromkeys(written, "")) == []


@pytest.mark.parametrize("args,env", [
    (["--control-token", "two words"], {}),
    ([], {"FAKEBROKER_CONTROL_TOKEN": "two words"}),
])
def test_a_bad_control_token_is_refused_without_repeating_it(args, env):
    said = serve_refuses("--control-port", "0", *args, env=env)
    assert "token: expected a non-empty token of printable ASCII" in said
    assert "two words" not in said


def test_an_unreadable_scenario_file_is_one_line(tmp_path):
    scenario = tmp_path / "scenario.toml"
    scenario.write_text("[cluster]\nbrokers = 2\n")
    scenario.chmod(0)
    if os.access(scenario, os.R_OK):  # root reads any file: make it unreadable another way
        scenario.unlink()
        scenario.mkdir()
    assert str(scenario) in serve_refuses("--scenario", str(scenario))


def test_a_ready_file_that_cannot_be_written_is_one_line_naming_the_flag(tmp_path):
    (tmp_path / "DIR").mkdir()
    assert serve_refuses("--ready-file", str(tmp_path / "DIR")) == (
        f"fakebroker: --ready-file: {tmp_path / 'DIR'} is a directory")
    assert serve_refuses("--ready-file", str(tmp_path / "missing" / "r.json")) == (
        f"fakebroker: --ready-file: cannot write {tmp_path / 'missing' / 'r.json'}: "
        f"no directory {tmp_path / 'missing'}")
    assert [p.name for p in tmp_path.iterdir()] == ["DIR"]  # nothing left behind


def test_a_ready_file_write_that_fails_leaves_no_temporary_file(tmp_path):
    from fakebroker import FakeKafka
    from fakebroker.cli import write_ready_file

    target = tmp_path / "DIR"
    target.mkdir()  # made after serve's own check: only the write can tell
    with FakeKafka() as kafka, pytest.raises(
            OSError, match=f"--ready-file: cannot write {target}: Is a directory"):
        kafka.call(write_ready_file, target, kafka.cluster, None)
    assert [p.name for p in tmp_path.iterdir()] == ["DIR"]


def test_a_scenario_is_checked_whole_with_the_flags_beside_it_before_serve_starts(tmp_path):
    scenario = tmp_path / "scenario.toml"
    scenario.write_text('[cluster]\nbrokers = 3\n[topics]\norders = 3\n'
                        '[[timeline]]\nat_ms = 60000\naction = "broker-down"\nbroker = 3\n')
    assert serve_refuses("--scenario", str(scenario), "--brokers", "2") == (
        f"fakebroker: {scenario}: [[timeline]] #1: broker-down: no broker 3 (the cluster has "
        "brokers 1 to 2) (BROKER_NOT_AVAILABLE)")
    scenario.write_text("[topics]\norders = 0\n")
    assert f"{scenario}: [topics] topic 'orders': " in serve_refuses("--scenario", str(scenario))


def test_every_serve_flag_is_read_from_the_environment_and_a_flag_wins(tmp_path):
    process, details = start_served(tmp_path, "--cluster-id", "from-flag", env={
        "FAKEBROKER_BROKERS": "2", "FAKEBROKER_TOPICS": "orders:3,audit:1",
        "FAKEBROKER_CLUSTER_ID": "from-environment", "FAKEBROKER_CONTROL_PORT": "0",
        "FAKEBROKER_AUTO_CREATE_TOPICS": "false"})
    try:
        assert details["cluster_id"] == "from-flag"
        assert [b["id"] for b in details["brokers"]] == [1, 2]
        assert details["control_url"].startswith("http://127.0.0.1:")
        consumer = KafkaConsumer(bootstrap_servers=details["bootstrap_servers"])
        assert not consumer.partitions_for_topic("not-created")  # asked for, not created
        consumer.close()
        admin = KafkaAdminClient(bootstrap_servers=details["bootstrap_servers"])
        try:
            assert sorted(admin.list_topics()) == ["audit", "orders"]
            assert len(admin.describe_topics(["orders"])[0]["partitions"]) == 3
        finally:
            admin.close()
    finally:
        assert stop_served(process) == 0


def test_serve_help_lists_every_flag_with_its_environment_variable():
    result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--help"],
                            capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    for variable in ("FAKEBROKER_BROKERS", "FAKEBROKER_HOST", "FAKEBROKER_ADVERTISED_HOST",
                     "FAKEBROKER_PORT", "FAKEBROKER_TOPICS", "FAKEBROKER_CONTROL_PORT",
                     "FAKEBROKER_JOURNAL", "FAKEBROKER_SCENARIO", "FAKEBROKER_READY_FILE",
                     "FAKEBROKER_LOG_LEVEL", "FAKEBROKER_SEED", "FAKEBROKER_CONTROL_HOST",
                     "FAKEBROKER_CONTROL_TOKEN"):
        assert variable in " ".join(result.stdout.split()), variable


def test_fakebroker_version_names_the_installed_release():
    result = subprocess.run([sys.executable, "-m", "fakebroker", "--version"],
                            capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
    assert result.stdout.strip() == f"fakebroker {version('fakebroker')}"


def test_brokers_bound_to_every_interface_are_reached_at_the_advertised_address(tmp_path):
    """Bind 0.0.0.0, advertise 127.0.0.2: a client bootstraps there and reaches every
    broker at the advertised address (as in a CI service container or for Spark
    executors on other machines)."""
    process, details = start_served(tmp_path, "--host", "0.0.0.0", "--advertised-host",
                                    "127.0.0.2", "--brokers", "3", "--topic", "orders:3")
    try:
        assert details["listen_host"] == "0.0.0.0"
        assert {b["host"] for b in details["brokers"]} == {"127.0.0.2"}
        producer = Producer({"bootstrap.servers": details["bootstrap_servers"]})
        for i in range(30):
            producer.produce("orders", str(i).encode(), partition=i % 3)
        assert producer.flush(15) == 0
        consumer = Consumer({"bootstrap.servers": details["bootstrap_servers"],
                             "group.id": "advertised", "auto.offset.reset": "earliest"})
        consumer.subscribe(["orders"])
        values: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(values) < 30 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.close()
        assert sorted(values, key=int) == [str(i).encode() for i in range(30)]
        leaders = {int(line.split()[1]) for line in _served_leaders(details)}
        assert leaders == {1, 2, 3}
    finally:
        assert stop_served(process) == 0


def _served_leaders(details: dict) -> list[str]:
    """``partition LEADER`` of every partition of orders, as Metadata gives them."""
    admin = AdminClient({"bootstrap.servers": details["bootstrap_servers"]})
    topic = admin.list_topics(timeout=10).topics["orders"]
    return [f"{p} {topic.partitions[p].leader}" for p in sorted(topic.partitions)]


def test_a_repeatable_setting_takes_its_flag_again_or_a_comma_separated_variable():
    from fakebroker import cli

    args = cli.resolve(cli.parser().parse_args(
        ["serve", "--listener", "SSL", "--listener", "SASL_SSL", "--super-user", "User:admin"]),
        {"FAKEBROKER_LISTENERS": "PLAINTEXT", "FAKEBROKER_SASL_USERS": "alice:a,bob:b"})
    options = cli.cluster_options(args, None)
    assert options["listeners"] == ("SSL", "SASL_SSL")  # the flags win over the variable
    assert options["sasl_users"] == ("alice:a", "bob:b")
    assert options["super_users"] == ("User:admin",)
    with pytest.raises(cli.OptionError, match="listeners: expected distinct items"):
        cli.resolve(cli.parser().parse_args(["serve", "--listener", "SSL", "--listener", "SSL"]),
                    {})


# -- help -------------------------------------------------------------------------------------

def test_fakebroker_help_describes_it_in_whole_sentences_without_markup():
    command = Path(sys.executable).with_name("fakebroker")  # the console script itself
    result = subprocess.run([str(command), "--help"], capture_output=True, text=True,
                            timeout=30, cwd=OUTSIDE)
    assert result.returncode == 0, result.stderr
    assert ("A fake Kafka broker for tests, speaking Kafka's wire protocol. 'serve' runs a fake "
            "cluster until SIGINT or SIGTERM; 'ctl' controls a running one; 'kafka' installs and "
            "runs Apache Kafka itself.") in " ".join(result.stdout.split())
    assert "`" not in result.stdout


def test_every_option_of_every_command_has_help():
    from fakebroker.cli import parser

    unexplained = []
    pending = [("fakebroker", parser())]
    while pending:
        name, command = pending.pop()
        command.format_help()  # ctl adds its arguments on first use
        assert "`" not in (command.description or ""), name
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending += [(f"{name} {verb}", sub) for verb, sub in action.choices.items()]
            elif not action.help:
                unexplained.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert unexplained == []


def test_ctl_fault_add_and_action_explain_each_option():
    for verb in (["fault", "add"], ["action"]):
        result = subprocess.run([sys.executable, "-m", "fakebroker", "ctl", *verb, "--help"],
                                capture_output=True, text=True, timeout=30, cwd=OUTSIDE)
        assert result.returncode == 0, result.stderr
        text = " ".join(result.stdout.split())
        assert {"fault": "--error ERROR a Kafka error (name or code), placed where Kafka",
                "action": "--member-id MEMBER_ID a member id of the group (kick-member)"}[
                    verb[0]] in text
    assert "kick-member --group --member-id" in result.stdout  # each action's options


def test_the_example_pipelines_help_is_whole():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        absent("needs pyspark (the spark extra)")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "event_totals.py"),
                             "--help"], capture_output=True, text=True, timeout=60, cwd=OUTSIDE)
    assert result.returncode == 0, result.stderr
    assert ("read events, total them per user, publish the totals to a topic. options:"
            in " ".join(result.stdout.split()))
    assert "--max-offsets-per-trigger N read at most N events per micro-batch" in " ".join(
        result.stdout.split())
