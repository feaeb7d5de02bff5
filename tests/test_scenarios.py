"""The cookbook's CI scenario files (tests/scenarios/*.toml), each run by ``fakebroker serve
--scenario`` with a real confluent-kafka producer and group consumer: every record arrives,
every fault in the file was applied, the journal shows it."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from fakebroker.control.ctl import call
from tests.clients.consumers import start_consumer
from tests.clients.producers import produce
from tests.conftest import start_served, stop_served

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

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
