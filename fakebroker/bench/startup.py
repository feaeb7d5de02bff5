"""Workload 1: from starting a fixture until a client can connect, then stopping it.

* in-process: ``FakeKafka(...).start()`` (fakebroker), ``rd_kafka_mock_cluster_new`` through
  librdkafka's C API (the mock), nafka's thread runner (what its pytest fixture uses, timed
  inside nafka's own venv). The clock runs until a TCP connection to the first broker
  succeeds; stop is timed separately. tansu has no in-process form.
* as a process: from spawning the process until a TCP connection succeeds, and from SIGTERM
  until it exits (``systems.launch`` and ``Running.stop``); interpreter start-up and imports
  count, as they do for a user.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from fakebroker import FakeKafka
from fakebroker.bench import peers
from fakebroker.bench.mock import MockCluster
from fakebroker.bench.systems import Running, launch

Timings = tuple[list[float], list[float]]  # (start ms, stop ms) per round


def _connect(bootstrap: str) -> None:
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    socket.create_connection((host, int(port))).close()


def fakebroker_inprocess(rounds: int) -> Timings:
    starts, stops = [], []
    for _ in range(rounds):
        begin = time.perf_counter()
        kafka = FakeKafka().start()
        _connect(kafka.bootstrap_servers)
        ready = time.perf_counter()
        kafka.stop()
        starts.append((ready - begin) * 1000)
        stops.append((time.perf_counter() - ready) * 1000)
    return starts, stops


def mock_inprocess(rounds: int) -> Timings:
    starts, stops = [], []
    for _ in range(rounds):
        begin = time.perf_counter()
        cluster = MockCluster().start()
        _connect(cluster.bootstrap_servers)
        ready = time.perf_counter()
        cluster.stop()
        starts.append((ready - begin) * 1000)
        stops.append((time.perf_counter() - ready) * 1000)
    return starts, stops


def nafka_inprocess(rounds: int) -> Timings:
    driver = Path(__file__).with_name("nafka_driver.py")
    result = subprocess.run(
        [str(peers.nafka_python()), "-I", str(driver), "inprocess", "--rounds", str(rounds)],
        capture_output=True, text=True, check=True, timeout=120,
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return data["start_ms"], data["stop_ms"]


INPROCESS = {
    "fakebroker": fakebroker_inprocess,
    "librdkafka-mock": mock_inprocess,
    "nafka": nafka_inprocess,
}


def inprocess(name: str, rounds: int) -> Timings | None:
    """Start/stop timings of ``name`` in-process; None when it has no in-process form."""
    measure = INPROCESS.get(name)
    return measure(rounds) if measure is not None else None


def as_process(name: str, rounds: int,
               on_start: Callable[[Running], None] | None = None) -> Timings:
    """Start/stop timings of ``name`` as a process; ``on_start`` sees each started system."""
    starts, stops = [], []
    for _ in range(rounds):
        running = launch(name)
        if on_start is not None:
            on_start(running)
        starts.append(running.start_s * 1000)
        stops.append(running.stop() * 1000)
    return starts, stops
