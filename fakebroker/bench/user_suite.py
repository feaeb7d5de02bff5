"""Workload 8: a user's suite, run by pytest as a user runs it.

``tests`` tests, each with a fresh one-partition topic (the ``fake_kafka`` marker's), produce
100 records with confluent-kafka and read them back with a new group consumer at the client's
defaults (``auto.offset.reset`` earliest, ``subscribe``, ``poll``), through the pytest
plugin's ``kafka`` fixture:

* on ``fakebroker`` (or a baseline), ``--kafka=fake``: each test its own in-process fake
  cluster, started and stopped by the fixture, as a user's suite gets it;
* on a Kafka system or kfake, ``--kafka=real --kafka-bootstrap`` to the broker started for
  the run: one broker for the whole suite, each test isolated by its name prefix (its topic
  made before it, its group and topic deleted after it).

Figures: each test's time as pytest's JUnit report gives it (setup, call and teardown), its
median and 95th percentile, and the whole suite: pytest's wall time from the command to its
exit, plus, for a real broker, its start (a suite that starts one pays it once).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from fakebroker.bench.systems import Running, child_env

RECORDS = 100
TIMEOUT_S = 600.0

SUITE = '''
import time

import pytest
from confluent_kafka import Consumer, Producer


@pytest.mark.parametrize("n", range({tests}))
@pytest.mark.fake_kafka(topics={{"orders": 1}})
def test_orders_are_read_back_by_a_new_group(kafka, n):
    orders = kafka.name("orders")
    producer = Producer({{"bootstrap.servers": kafka.bootstrap_servers}})
    for i in range({records}):
        producer.produce(orders, value=b"%d" % i)
    assert producer.flush(30) == 0
    consumer = Consumer({{"bootstrap.servers": kafka.bootstrap_servers,
                         "group.id": kafka.name("billing"), "auto.offset.reset": "earliest"}})
    consumer.subscribe([orders])
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < {records} and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            seen.append(int(message.value()))
    consumer.close()
    assert seen == list(range({records}))
'''


@dataclass(frozen=True)
class SuiteFigures:
    per_test_s: list[float]
    wall_s: float  # pytest's command until its exit

    @property
    def p50_s(self) -> float:
        return statistics.median(self.per_test_s)

    @property
    def p95_s(self) -> float:
        ordered = sorted(self.per_test_s)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(tests: int, system: Running | None, fakebroker_name: str = "fakebroker"
        ) -> SuiteFigures:
    """Run the suite of ``tests`` tests on ``system`` (a real broker), or on in-process fakes
    of ``fakebroker_name`` (the measuring fakebroker or a baseline) when ``system`` is None.
    ``RuntimeError`` with pytest's last lines if a test fails."""
    with tempfile.TemporaryDirectory(prefix="fakebroker-bench-suite-") as folder:
        root = Path(folder)
        (root / "test_users_suite.py").write_text(SUITE.format(tests=tests, records=RECORDS))
        report = root / "report.xml"
        where = (["--kafka=fake"] if system is None else
                 ["--kafka=real", f"--kafka-bootstrap={system.bootstrap}"])
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             f"--junitxml={report}", *where],
            cwd=root, env=child_env(fakebroker_name), capture_output=True, text=True,
            timeout=TIMEOUT_S)
        wall = time.perf_counter() - began
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            raise RuntimeError(f"the user's suite failed (exit {done.returncode}): {tail}")
        cases = ET.parse(report).getroot().iter("testcase")
        return SuiteFigures([float(case.get("time", "nan")) for case in cases], wall)

