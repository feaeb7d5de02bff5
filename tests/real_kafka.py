"""A real Apache Kafka broker (4.4.0, single-node KRaft, broker and controller in one JVM) for
tests that compare fakebroker with the real thing: the oracle.

The launcher itself is ``fakebroker.real.launch`` (``fakebroker kafka serve`` and the benchmark's
``kafka`` peers run it, from an installed wheel too, which has no ``tests/``); this module names
it for the tests and adds what only tests need: ``require_real_kafka`` (skip, or fail under CI) and
``python -m tests.real_kafka [ROUNDS] [--no-cds] [--secure]``, which measures start-up (of
the secure preset's broker with ``--secure``: tests/real_secure_kafka.py).

    from tests.real_kafka import start_real_kafka
    with start_real_kafka(tmp_dir) as kafka:
        ...  # kafka.bootstrap_servers, kafka.startup_seconds, kafka.tmp_dir

Tests use the session-scoped ``real_kafka`` fixture (tests/conftest.py): one broker per
session (per xdist worker), started on first use; it skips when Kafka is not installed, fails
under ``CI=true``. How a start goes (log directory, ports, log file, JVM options and the
class-data-sharing archive): ``fakebroker.real.launch``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from fakebroker.real.launch import (
    BASE_PROPERTIES,
    INSTALL_HINT,
    KAFKA_VERSION,
    RealKafka,
    RealKafkaMissing,
    kafka_available,
    kafka_dir,
    start_real_kafka,
)

__all__ = [  # what tests import from here
    "KAFKA_VERSION", "SUITE_LOG_TIMING", "RealKafka", "RealKafkaMissing", "kafka_available",
    "main", "require_real_kafka", "start_real_kafka",
]

# The real broker's retention timing (``BASE_PROPERTIES``: no check during a run, for tests
# write records stamped 2023), which the suite's fake clusters take too unless a test times
# them itself (tests/conftest.py, the conformance run).
SUITE_LOG_TIMING: dict[str, str] = {name: BASE_PROPERTIES[name] for name in (
    "log.initial.task.delay.ms", "log.retention.check.interval.ms")}


def require_real_kafka(version: str = KAFKA_VERSION) -> None:
    """For fixtures: skip the test when Kafka (``version``: 4.4.0, or 3.9.1) is not installed,
    but fail it under ``CI=true`` (CI installs it: its absence there is a broken install, not
    a reason to skip)."""
    from tests.absent import absent

    if not kafka_available(version):
        absent(f"Apache Kafka {version} is not installed in {kafka_dir(version)}: "
               f"{INSTALL_HINT}")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tests.real_kafka [ROUNDS] [--no-cds] [--secure]``: start and stop the
    broker ROUNDS times (default 3); one JSON line per start: seconds to format, to start (JVM
    start to Metadata answer), the broker's CPU seconds until then, and seconds to stop."""
    import json
    import sys
    import tempfile

    from tests.real_secure_kafka import start_secure_real_kafka

    args = list(sys.argv[1:] if argv is None else argv)
    if "--no-cds" in args:
        args.remove("--no-cds")
        os.environ["FAKEBROKER_KAFKA_CDS"] = "0"
    secure = "--secure" in args
    if secure:
        args.remove("--secure")
    rounds = int(args[0]) if args else 3
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="real-kafka-") as tmp:
            kafka = (start_secure_real_kafka(Path(tmp)).kafka if secure
                     else start_real_kafka(Path(tmp)))
            stat = Path(f"/proc/{kafka.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
            cds = next((f.split("=")[0][4:] for f in kafka.jvm_flags if "Archive" in f), None)
            stopping = time.monotonic()
            code = kafka.stop()
            print(json.dumps({
                "format_s": round(kafka.format_seconds, 2),
                "startup_s": round(kafka.startup_seconds, 2),
                "startup_cpu_s": round(cpu, 2),
                "stop_s": round(time.monotonic() - stopping, 2),
                "exit": code,
                "cds": cds,
                "load1": round(os.getloadavg()[0], 1),
            }), flush=True)


if __name__ == "__main__":
    main()
