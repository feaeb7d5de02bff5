"""The cookbook's CI scenario files (tests/scenarios/*.toml), each run by ``fakebroker serve
--scenario`` with a real confluent-kafka producer and group consumer: every record arrives,
every fault in the file was applied, the journal shows it. A scenario naming the
transactional id ``cookbook-tx`` is run with a confluent-kafka transactional producer of that
id and a read_committed group consumer: every committed record arrives exactly once, an
aborted transaction's never."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from fakebroker.control.ctl import call
from fakebroker.control.scenario import ScenarioError, parse_scenario
from tests.clients.consumers import start_consumer
from tests.clients.producers import TransactionalProducer, produce
from tests.conftest import start_served, stop_served

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

TRANSACTIONAL_ID = "cookbook-tx"
SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.toml"))
pytestmark = pytest.mark.timeout(120)


def values(count: int, start: int = 0) -> list[bytes]:
    return [f"v{i}".encode() for i in range(start, start + count)]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.stem for s in SCENARIOS])
def test_a_consumer_recovers_from_the_scenario(tmp_path, scenario):
    declared = tomllib.loads(scenario.read_text())
    process, details = start_served(tmp_path, "--scenario", str(scenario),
                                    "--control-port", "0")
    started = time.monotonic()
    if TRANSACTIONAL_ID in scenario.read_text():
        run_transactions(process, details, declared, started)
        return
    try:
        bootstrap, url = details["bootstrap_servers"], details["control_url"]
        produce(bootstrap, "orders", values(20))
        consumer = start_consumer("confluent-kafka", bootstrap, "orders", "cookbook",
                                  **{"heartbeat.interval.ms": 500, "request.timeout.ms": 5000})
        consumer.wait_for_values(values(20))
        last_step = max((s["at_ms"] for s in declared.get("timeline", [])), default=0)
        time.sleep(max(0.0, started + last_step / 1000 + 0.3 - time.monotonic()))
        produce(bootstrap, "orders", values(20, start=20))
        consumer.wait_for_values(values(40))
        consumer.stop()
        faults = call(url, "GET", "/faults")
        assert [f["hits"] for f in faults] == [f.get("count", 1) for f in declared["faults"]]
        assert call(url, "GET", "/journal?faulted=true")
        partitions = call(url, "GET", "/cluster")["topics"]["orders"]["partitions"]
        assert sum(p["high_watermark"] for p in partitions) == 40  # no record stored twice
    finally:
        stop_served(process)


def run_transactions(process, details: dict, declared: dict, started: float) -> None:
    """A transaction open across the timeline's steps, committed after them, then one
    aborted: a read_committed consumer gets the committed records exactly once."""
    try:
        bootstrap, url = details["bootstrap_servers"], details["control_url"]
        producer = TransactionalProducer("confluent-kafka", bootstrap, TRANSACTIONAL_ID)
        producer.begin()
        producer.send("orders", values(20))
        last_step = max((s["at_ms"] for s in declared.get("timeline", [])), default=0)
        time.sleep(max(0.0, started + last_step / 1000 + 0.3 - time.monotonic()))
        producer.send("orders", values(20, start=20))
        producer.commit()
        producer.begin()
        producer.send("orders", values(5, start=100))
        producer.abort()
        producer.close()
        consumer = start_consumer("confluent-kafka", bootstrap, "orders", "cookbook",
                                  **{"isolation.level": "read_committed",
                                     "heartbeat.interval.ms": 500})
        consumer.wait_for_values(values(40))
        time.sleep(1)  # and nothing more comes
        consumed = consumer.stop()
        assert sorted((v for _, _, v in consumed), key=lambda v: int(v[1:])) == values(40)
        faults = call(url, "GET", "/faults")
        assert [f["hits"] for f in faults] == [f.get("count", 1) for f in declared["faults"]]
        assert call(url, "GET", "/journal?faulted=true")
        assert call(url, "GET", "/cluster")["transactions"][TRANSACTIONAL_ID]["state"] == \
            "CompleteAbort"
    finally:
        stop_served(process)


@pytest.mark.parametrize("text,says", [
    ('[cluster]\nbrokers = 2\n[[timeline]]\nat_ms = 100\naction = "broker-down"\nbroker = 3\n',
     "[[timeline]] #1: broker-down: no broker 3 (the cluster has brokers 1 to 2)"),
    ('[cluster]\nbrokers = 3\n[topics]\norders = 1\n'
     '[[timeline]]\nat_ms = 200\naction = "move-leader"\ntopic = "orders"\nbroker = 2\n'
     '[[timeline]]\nat_ms = 100\naction = "broker-down"\nbroker = 2\n',
     "[[timeline]] #1: move-leader: broker 2 is down"),  # in time order, not file order
    ('[cluster]\nbrokers = 2\n'
     '[[timeline]]\nat_ms = 100\naction = "broker-down"\nbroker = 2\n'
     '[[timeline]]\nat_ms = 200\naction = "broker-down"\nbroker = 2\n',
     "[[timeline]] #2: broker-down: broker 2 is down"),
    ('[topics]\norders = 2\n[[timeline]]\nat_ms = 0\naction = "delete-records"\n'
     'topic = "orders"\npartition = 2\n',
     "[[timeline]] #1: delete-records: no partition orders/2"),
    ('[topics]\norders = 2\n[[faults]]\napi = "Fetch"\ntopic = "orders"\npartition = 5\n'
     'error = 6\n', "[[faults]] #1: no partition orders/5"),
    ('[[faults]]\napi = "Fetch"\nbroker = 2\nerror = 6\n', "[[faults]] #1: no broker 2"),
    ('[topics]\norders = 0\n', "[topics] topic 'orders': Number of partitions"),
    ('[topics]\norders = { partitions = 1, replication_factor = 2 }\n',
     "[topics] topic 'orders': Unable to replicate the partition 2 time(s)"),
])
def test_a_scenario_is_checked_whole_against_its_cluster_before_anything_starts(text, says):
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(tomllib.loads(text), "s.toml")
    assert str(refused.value).startswith("s.toml: ") and says in str(refused.value)


def test_flags_given_beside_a_scenario_are_checked_with_it():
    declared = tomllib.loads('[cluster]\nbrokers = 3\n'
                             '[[timeline]]\nat_ms = 0\naction = "set-latency"\nbroker = 3\n'
                             'ms = 10\n')
    assert parse_scenario(declared, "s.toml").timeline
    with pytest.raises(ScenarioError, match="set-latency: no broker 3"):
        parse_scenario(declared, "s.toml", {"brokers": 2, "topics": {}})
