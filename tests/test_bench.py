"""Smoke tests of the benchmark suite's code (not timed tests: no figure is judged).

They run the quick start-up and latency workloads against fakebroker and the trio echo server,
the throughput workload's steps on a few thousand records, the scale workload at its quick
sizes (on fakebroker: the curves of Kafka beside it are a documented run), the report's table
and the Kafka peer (unavailable without its jars; started and stopped once where they are
installed), so the suite cannot rot without a test failing. tansu and nafka are never
downloaded here; kfake (a Go build of minutes) is built by .ci/install-clients, and its peer is
run where it is built.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from fakebroker.bench import latency, peers, scale, systems, throughput, user_suite
from fakebroker.bench.__main__ import main
from fakebroker.bench.peers import PeerUnavailable
from fakebroker.bench.report import Results, table
from fakebroker.real import launch as kafka
from fakebroker.wire_client import WireClient
from tests.absent import absent

# The bench extra's modules made missing, as in an install without the extra.
WITHOUT_EXTRA = ("import runpy, sys; "
                 "sys.modules['psutil'] = sys.modules['confluent_kafka'] = None; "
                 "sys.argv[0] = 'bench'; runpy.run_module('fakebroker.bench', run_name='__main__')")


def test_without_the_bench_extra_help_works_and_a_run_says_what_is_missing():
    helped = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, "--help"],
                            capture_output=True, text=True, timeout=30)
    assert helped.returncode == 0, helped.stderr
    assert "--workloads" in helped.stdout and "`" not in helped.stdout
    ran = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, "--workloads", "start"],
                         capture_output=True, text=True, timeout=30)
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        "python -m fakebroker.bench: confluent_kafka is missing: the benchmark needs "
        "fakebroker's bench extra (pip install \".[bench]\" in a checkout, or the wheel with "
        "[bench])"]


def test_quick_start_and_latency_workloads_run(capsys):
    results = main(["--quick", "--workloads", "start,latency",
                    "--systems", "fakebroker,trio-echo"])
    assert not results.errors
    for metric in ("start_inprocess_ms", "start_process_ms", "api_versions_p50_us",
                   "metadata_p99_us", "metadata_new_p50_us"):
        assert results.medians(metric)["fakebroker"] > 0
    assert results.medians("api_versions_p50_us")["trio-echo"] > 0
    assert results.medians("start_process_ms")["trio-echo"] > 0
    assert "| 4. ApiVersions v3 round trip p50 |" in capsys.readouterr().out


def test_throughput_steps_consume_every_record_both_ways():
    count = 3000
    with systems.launch("fakebroker") as system:
        figures = throughput.run(system, count)
    assert figures.produce_rps > 0
    for consumed in (figures.consume, figures.consume_default):
        assert consumed.records == count and consumed.rps > 0
    assert figures.consume.pauses == 0  # its queue limits are far above 3000 records


def _log(text: str) -> logging.LogRecord:
    return logging.LogRecord("rdkafka", logging.DEBUG, __file__, 0, text, None, None)


def test_the_pause_counter_counts_queue_full_back_offs_only():
    counter = throughput.PauseCounter()
    try:
        for text in (
            "BACKOFF [rdkafka#consumer-9] [thrd:127.0.0.1:37159/1]: 127.0.0.1:37159/1: "
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
            "FETCH [rdkafka#consumer-9] [thrd:127.0.0.1:37159/1]: 127.0.0.1:37159/1: "
            "Fetch backoff for 1000ms",  # the broker thread's own line for the same pause
            "BACKOFF [rdkafka#consumer-9]: t [0]: Fetch backoff for 500ms: Broker: "
            "Not leader for partition",  # an error back-off, not the queue's
        ):
            counter.logger.handle(_log(text))
        assert counter.pauses == 1
        assert counter.client_config()["debug"] == "fetch"
    finally:
        counter.detach()


def test_the_table_shows_counts_whole_and_cannot_judge_without_the_peer():
    results = Results()
    results.add("consume_default_pauses", "fakebroker", 3)
    results.add("consume_default_pauses", "kafka", 2)
    results.add("first_record_confluent_ms", "fakebroker", 120.0)
    shown = table(results, ["fakebroker", "kafka"])
    assert "| pauses | 3 | 2 | 1.50× |" in shown
    # first record is judged against kafka-nodelay, which this run did not measure
    assert "| ≤ 1.0× kafka-nodelay | — |" in shown
    results.add("first_record_confluent_ms", "kafka-nodelay", 100.0)
    assert "| ≤ 1.0× kafka-nodelay | **no** |" in table(results, ["fakebroker", "kafka-nodelay"])


def test_kafka_is_unavailable_with_the_reason_without_its_jars(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKEBROKER_CLIENTS_DIR", str(tmp_path))
    with pytest.raises(PeerUnavailable, match="fakebroker kafka install"):
        systems.prepare("kafka")
    results = main(["--quick", "--workloads", "latency", "--systems", "fakebroker,kafka"])
    assert "not installed" in results.errors["all"]["kafka"]
    assert "kafka" not in results.medians("api_versions_p50_us")
    assert "- all: kafka failed: Apache Kafka 4.4.0 is not installed" in capsys.readouterr().out


@pytest.mark.real_kafka
@pytest.mark.timeout(240)
def test_the_kafka_peer_starts_answers_and_stops_leaving_nothing():
    if not kafka.kafka_available():
        absent(f"Apache Kafka {kafka.KAFKA_VERSION} is not installed: {kafka.INSTALL_HINT}")
    system = systems.launch("kafka-nodelay")
    folder: Path = system.folder
    try:
        assert 0 < system.format_s < system.start_s
        assert "group.initial.rebalance.delay.ms=0" in (
            system.broker.tmp_dir / "server.properties").read_text().splitlines()
        figures = latency.run(system, 20, warmup=5)  # ApiVersions v3 and Metadata v8 served
        assert figures.metadata[0] > 0
        suite = user_suite.run(2, system)  # a user's suite through the plugin's real side
        assert len(suite.per_test_s) == 2 and suite.wall_s > max(suite.per_test_s)
    finally:
        assert system.stop() > 0
    assert system.process.poll() is not None
    assert not folder.exists()


def test_a_baseline_runs_another_revision_of_the_checkout(tmp_path, monkeypatch):
    """``--baseline REV``: the revision's own files, compiled ahead, first on the import path
    of the system ``fakebroker@<short rev>``; a revision git does not know is one line."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    monkeypatch.setattr(systems, "SOURCES", {})
    monkeypatch.setattr(systems, "COMMANDS", dict(systems.COMMANDS))
    package = tmp_path / "fakebroker"
    package.mkdir()
    (package / "__init__.py").write_text("BEFORE = True\n")
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "before")
    (package / "__init__.py").write_text("BEFORE = False\n")

    name = systems.add_baseline("HEAD", root=tmp_path)

    assert name == f"fakebroker@{git('rev-parse', '--short', 'HEAD')}"
    source = systems.SOURCES[name]
    assert (source / "fakebroker" / "__init__.py").read_text() == "BEFORE = True\n"
    assert list((source / "fakebroker" / "__pycache__").glob("__init__.*.pyc"))
    assert systems.child_env(name)["PYTHONPATH"].split(os.pathsep)[0] == str(source)
    with pytest.raises(ValueError, match="not a revision"):
        systems.add_baseline("no-such-revision", root=tmp_path)


def test_the_user_suite_workload_runs_a_users_tests_on_fakes_of_their_own():
    figures = user_suite.run(3, None)
    assert len(figures.per_test_s) == 3 and 0 < figures.p50_s <= figures.p95_s
    assert figures.wall_s > sum(figures.per_test_s)


def test_kfake_is_unavailable_with_the_reason_without_the_go_toolchain(monkeypatch, tmp_path,
                                                                      capsys):
    monkeypatch.setenv("FAKEBROKER_CLIENTS_DIR", str(tmp_path))  # nothing built there
    monkeypatch.setattr(peers, "GO_COMMANDS", ())
    results = main(["--quick", "--workloads", "latency", "--systems", "fakebroker,kfake"])
    assert "no Go toolchain" in results.errors["all"]["kfake"]
    assert "kfake" not in results.medians("api_versions_p50_us")
    assert "- all: kfake failed: no Go toolchain" in capsys.readouterr().out


@pytest.mark.timeout(120)
def test_the_kfake_peer_answers_and_runs_a_users_suite():
    if not peers.kfake_path().is_file():
        absent("the kfake peer is not built: .ci/install-clients builds it (peers.kfake_binary)")
    with systems.launch("kfake") as system:
        figures = latency.run(system, 20, warmup=5)  # ApiVersions v3 and Metadata v8 served
        assert figures.metadata[0] > 0
        suite = user_suite.run(2, system)  # through the plugin's real side, as on Kafka
        assert len(suite.per_test_s) == 2 and suite.wall_s > max(suite.per_test_s)
    assert system.process.poll() is not None


def test_fakebroker_starts_from_bytecode_as_an_installed_package_does(tmp_path, monkeypatch):
    """Preparing the ``fakebroker`` system compiles the package it runs from: a checkout used
    with PYTHONDONTWRITEBYTECODE would otherwise time Python's compiler at every start."""
    package = tmp_path / "fakebroker"
    (package / "state").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "state" / "log.py").write_text("SEGMENTS = []\n")
    monkeypatch.setattr(systems.fakebroker, "__file__", str(package / "__init__.py"))

    systems.prepare("fakebroker")

    assert list((package / "__pycache__").glob("__init__.*.pyc"))
    assert list((package / "state" / "__pycache__").glob("log.*.pyc"))


@pytest.mark.timeout(180)
def test_the_quick_scale_workload_draws_every_curve_with_its_growth(capsys):
    results = main(["--quick", "--workloads", "scale", "--systems", "fakebroker"])
    assert not results.errors and not results.notes
    curves = scale.curves(results.values)
    expected = {
        "partitions": ("metadata_us", "produce_rps", "consume_rps", "rss_per_unit"),
        "topics": ("metadata_us", "produce_rps", "consume_rps", "rss_per_unit"),
        "connections": ("metadata_us", "produce_rps", "consume_rps", "rss_per_unit"),
        "record_bytes": ("produce_rps", "consume_rps", "produce_mbps", "consume_mbps",
                         "rss_per_unit"),
        "groups": ("join_ms", "rss_per_unit"),
    }
    assert {(d, c) for d, c, _ in curves} == {(d, c) for d, cs in expected.items() for c in cs}
    sizes = {"partitions": scale.QUICK.points, "topics": scale.QUICK.points,
             "connections": scale.QUICK.connections, "record_bytes": scale.QUICK.record_bytes,
             "groups": scale.QUICK.groups}
    for (dimension, cost, _), curve in curves.items():
        assert tuple(curve) == sizes[dimension]
        if cost != "rss_per_unit":  # RSS grows by pages: a few units may add none
            assert all(value > 0 for value in curve.values())
    out = capsys.readouterr().out
    assert "scale: groups (N classic groups of 3 members each)" in out
    assert re.search(r"\| Metadata v12 round trip \(median\) \| µs \| fakebroker \| .* \| "
                     r"(falling|constant|sublinear|linear|worse than linear) \(-?\d+\.\d\d\) \|",
                     out)


@pytest.mark.parametrize(("curve", "inverse", "name"), [
    ({1: 5.0, 10: 50.0, 100: 500.0}, False, "linear"),
    ({1: 5.0, 1000: 5.2, 10_000: 5.1}, False, "constant"),
    ({10: 1.0, 100: 100.0}, False, "worse than linear"),
    ({10: 1.0, 100: 4.0}, False, "sublinear"),
    ({10: 100.0, 100: 10.0}, False, "falling"),
    ({10: 100.0, 100: 10.0}, True, "linear"),  # a throughput falling 10× over 10× the size
    ({10: 0.0, 100: 5.0}, False, "—"),  # one positive point: no slope
])
def test_a_curves_growth_is_named_from_its_last_slope(curve, inverse, name):
    assert scale.growth(curve, inverse)[0] == name


def test_the_scale_workload_keeps_each_request_within_kafkas_partitions_bound(monkeypatch):
    """Kafka refuses a CreateTopics or CreatePartitions request of more than 10,000
    partitions in all (its topics together): scaled down to 4 a request, three topics of 10
    are made one by one with 4 partitions, grown one by one by 4 more, then two by two by
    their last 2."""
    monkeypatch.setattr(scale, "PARTITIONS_PER_REQUEST", 4)
    requests: list[tuple[str, dict[str, int]]] = []

    class Recording(AdminClient):
        def create_topics(self, new_topics, **options):
            requests.append(("CreateTopics", {t.topic: t.num_partitions for t in new_topics}))
            return super().create_topics(new_topics, **options)

        def create_partitions(self, new_partitions, **options):
            requests.append(("CreatePartitions",
                             {p.topic: p.new_total_count for p in new_partitions}))
            return super().create_partitions(new_partitions, **options)

    monkeypatch.setattr(scale, "AdminClient", Recording)
    with systems.launch("fakebroker") as system:
        scale.create_topics(system, ["wide", "wider", "widest"], 10)
        with WireClient(system.bootstrap) as client:
            topics = client.request("Metadata", 12, {"topics": None,
                                                     "allow_auto_topic_creation": False}).topics
    assert sorted((t.name, len(t.partitions)) for t in topics) == [
        ("wide", 10), ("wider", 10), ("widest", 10)]
    assert requests == [
        ("CreateTopics", {"wide": 4}), ("CreateTopics", {"wider": 4}),
        ("CreateTopics", {"widest": 4}),
        ("CreatePartitions", {"wide": 8}), ("CreatePartitions", {"wider": 8}),
        ("CreatePartitions", {"widest": 8}),
        ("CreatePartitions", {"wide": 10, "wider": 10}), ("CreatePartitions", {"widest": 10})]
