"""The pytest plugin and the facades: what a test author writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import trio

import fakebroker
from fakebroker.sync import ClusterStopped
from fakebroker.wire_client import WireClient

pytest_plugins = ["pytester"]


def test_the_fixture_is_a_fresh_single_broker_cluster(fake_kafka):
    assert len(fake_kafka.brokers) == 1
    assert fake_kafka.topics() == {}
    assert fake_kafka.bootstrap_servers.startswith("127.0.0.1:")


AUDIT = {"partitions": 2, "configs": {"retention.ms": "1"}}


@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3, "audit": AUDIT})
def test_the_marker_shapes_the_cluster(fake_kafka):
    assert [b.id for b in fake_kafka.brokers] == [1, 2, 3]
    assert fake_kafka.topics() == {"orders": 3, "audit": 2}


def test_the_factory_gives_independent_clusters(fake_kafka_factory):
    first = fake_kafka_factory(topics={"a": 1})
    second = fake_kafka_factory(brokers=2)
    assert first.bootstrap_servers != second.bootstrap_servers
    assert "a" not in second.topics()


def test_the_plugin_is_registered_for_any_project(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.fake_kafka(topics={"t": 2})
        def test_it(fake_kafka):
            assert fake_kafka.topics() == {"t": 2}
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_under_pytest_xdist_each_worker_runs_its_own_clusters_on_its_own_ports(pytester):
    """Eight tests on two xdist workers, each producing to its own fixture's cluster: every
    test sees only its own record, and no two clusters alive at the same moment share a port
    (a port freed by a finished test may be handed out again by the OS)."""
    seen = pytester.path / "seen.txt"
    pytester.makepyfile(f"""
        import os
        import time
        import pytest
        from kafka import KafkaProducer

        @pytest.mark.parametrize("n", range(8))
        @pytest.mark.fake_kafka(topics={{"t": 1}})
        def test_it(fake_kafka, n):
            began = time.time()
            producer = KafkaProducer(bootstrap_servers=fake_kafka.bootstrap_servers)
            producer.send("t", str(n).encode()).get(10)
            producer.close()
            assert [r.value for r in fake_kafka.records("t")] == [str(n).encode()]
            with open({str(seen)!r}, "a") as out:
                out.write(f"{{os.environ['PYTEST_XDIST_WORKER']}} "
                          f"{{fake_kafka.bootstrap_servers}} {{began}} {{time.time()}}\\n")
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=8)
    lines = [line.split() for line in seen.read_text().splitlines()]
    assert {worker for worker, *_ in lines} == {"gw0", "gw1"}
    alive = [(address, float(began), float(ended)) for _, address, began, ended in lines]
    for i, (address, began, ended) in enumerate(alive):
        for other, other_began, other_ended in alive[i + 1:]:
            if began < other_ended and other_began < ended:  # both clusters up at once
                assert address != other


def test_fake_kafka_answers_once_started_and_stops_cleanly():
    """Started, it answers at once; stopped, its port is closed. How fast it starts is a
    benchmark figure (BENCHMARKS.md), not asserted here."""
    with fakebroker.FakeKafka(topics={"orders": 1}) as kafka:
        address = kafka.bootstrap_servers
        with WireClient(address) as client:
            assert client.request("Metadata", 12, {"topics": None}).topics
    with pytest.raises(OSError):
        WireClient(address, timeout=1)


def test_open_cluster_runs_inside_a_trio_program():
    async def main():
        async with fakebroker.open_cluster(brokers=2, topics={"orders": 2}) as cluster:
            assert len(cluster.brokers) == 2
            stream = await trio.open_tcp_stream(*cluster.brokers[0].host_port())
            await stream.aclose()
            return cluster.bootstrap_servers

    assert trio.run(main).count(",") == 1


def test_sync_facade_reads_records_and_offsets(fake_kafka):
    from kafka import KafkaProducer

    fake_kafka.create_topic("orders", partitions=1)
    producer = KafkaProducer(bootstrap_servers=fake_kafka.bootstrap_servers)
    producer.send("orders", key=b"k", value=b"v", headers=[("h", b"1")]).get(timeout=10)
    producer.close()
    (record,) = fake_kafka.records("orders", 0)
    assert (record.offset, record.key, record.value, record.headers) == (0, b"k", b"v",
                                                                         (("h", b"1"),))
    assert fake_kafka.offsets("orders", 0) == (0, 1)
    with pytest.raises(fakebroker.ClusterError) as exists:
        fake_kafka.create_topic("orders")
    assert exists.value.error == "TOPIC_ALREADY_EXISTS"


@pytest.mark.fake_kafka(host="0.0.0.0", advertised_host="127.0.0.3", brokers=2,
                        topics={"orders": 2})
def test_the_marker_binds_one_address_and_advertises_another(fake_kafka):
    assert {b.host for b in fake_kafka.brokers} == {"127.0.0.3"}
    for broker in fake_kafka.brokers:  # every broker answers at the advertised address
        with WireClient(f"{broker.host}:{broker.port}") as client:
            metadata = client.request("Metadata", 12, {"topics": None})
        assert {(b.host, b.port) for b in metadata.brokers} == {
            (b.host, b.port) for b in fake_kafka.brokers}


@pytest.mark.parametrize("options,error,says", [
    ({"brokers": 0}, "OptionError", "brokers: expected a whole number >= 1, got 0"),
    ({"host": "0.0.0.0"}, "OptionError", "host: binding '0.0.0.0' needs advertised_host,"),
    ({"port": -1}, "OptionError", "port: expected a port from 0 to 65535"),
    ({"bogus": 1}, "TypeError", "unknown cluster option.*bogus"),
    ({"journal_sink": 3}, "TypeError", "journal_sink: expected a text file or a path, got 3"),
    ({"topics": ["orders"]}, "TypeError",
     r"topics: expected a mapping of topic name to a partition count or spec, e.g. "
     r"\{'orders': 3\}; got \['orders'\]"),
    ({"topics": {"orders": 0}}, "ClusterError", "topic 'orders': .*partitions"),
    ({"topics": {"orders": "3"}}, "TypeError", "topic 'orders': a topic is a partition count"),
    ({"topics": {"orders": {"partitions": 1, "replication_factor": 2}}}, "ClusterError",
     "topic 'orders': .*replication factor"),
    ({"topics": {"bad/name": 1}}, "ClusterError", "topic 'bad/name'"),
])
def test_a_bad_option_is_refused_naming_it_when_fake_kafka_is_made(options, error, says):
    from fakebroker.options import OptionError

    raised = {"OptionError": OptionError, "TypeError": TypeError,
              "ClusterError": fakebroker.ClusterError}[error]
    with pytest.raises(raised, match=says):
        fakebroker.FakeKafka(**options)  # not started: refused before anything runs


def test_a_journal_sink_may_be_a_path_appended_to_and_closed_at_stop(tmp_path):
    journal = tmp_path / "journal.jsonl"
    journal.write_text("kept\n")
    for sink in (journal, str(journal)):
        with fakebroker.FakeKafka(journal_sink=sink) as kafka:
            with WireClient(kafka.bootstrap_servers) as client:
                client.request("ApiVersions", 3, {"client_software_name": "t",
                                                  "client_software_version": "1"})
            assert _open_files() & {journal}  # opened by the running cluster
        assert not _open_files() & {journal}  # and closed at stop
    first, *entries = journal.read_text().splitlines()
    assert first == "kept"
    assert [json.loads(entry)["api"] for entry in entries] == ["ApiVersions", "ApiVersions"]


def _open_files() -> set[Path]:
    """The files this process has open (Linux's /proc)."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to see open files")
    found = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            found.add(Path(os.readlink(fd)))
        except OSError:  # closed since listed
            pass
    return found


def test_a_journal_file_that_cannot_be_opened_is_refused_at_start_naming_it(tmp_path):
    kafka = fakebroker.FakeKafka(journal_sink=tmp_path / "missing" / "journal.jsonl")
    with pytest.raises(OSError, match="journal_sink: cannot open .*missing/journal.jsonl"):
        kafka.start()


def test_an_error_that_ends_the_cluster_is_logged_and_raised_by_the_next_call(tmp_path,
                                                                            caplog):
    sink = (tmp_path / "journal.jsonl").open("w")
    sink.close()  # closed under the cluster: recording the first request fails
    kafka = fakebroker.FakeKafka(journal_sink=sink).start()
    with pytest.raises(OSError), WireClient(kafka.bootstrap_servers) as client:
        client.request("ApiVersions", 3, {"client_software_name": "t",
                                          "client_software_version": "1"})
    kafka._thread.join(timeout=10)  # the cluster's thread ends on the error (no race below)
    for _ in range(2):  # every call says why, with the error as its cause
        with pytest.raises(ClusterStopped, match="ValueError: I/O operation on closed file"
                           ) as stopped:
            kafka.topics()
        assert isinstance(stopped.value.__cause__, ValueError)
    with pytest.raises(ClusterStopped):
        kafka.bootstrap_servers  # noqa: B018 (a property is a call too)
    (logged,) = [r for r in caplog.records if r.name == "fakebroker" and r.levelname == "ERROR"]
    assert "I/O operation on closed file" in logged.getMessage() and logged.exc_info
    kafka.stop()  # reported already: stopping says nothing more


def test_stop_raises_an_error_that_ended_the_cluster_unless_reported(tmp_path):
    sink = (tmp_path / "journal.jsonl").open("w")
    sink.close()
    with pytest.raises(ClusterStopped, match="I/O operation on closed file"):  # noqa: PT012
        with fakebroker.FakeKafka(journal_sink=sink) as kafka, \
                pytest.raises(OSError), WireClient(kafka.bootstrap_servers) as client:
            client.request("ApiVersions", 3, {"client_software_name": "t",
                                              "client_software_version": "1"})
