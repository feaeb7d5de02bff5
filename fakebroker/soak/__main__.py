"""``python -m fakebroker.soak --seconds N --seed S [--json FILE]``: the chaos soak.

It runs a three-broker fake cluster for N seconds under real clients (confluent-kafka:
idempotent and transactional producers, a classic and a KIP-848 consumer group of
read_committed members joining and leaving) while a schedule drawn from ``random.Random(S)``
applies faults and failures (leader moves, brokers down and up, coordinator moves, lost
acks, delays, throttles, retriable errors, members expired, transactions aborted by the
coordinator); then checks the invariants of ``fakebroker.soak.checker`` on what the clients
were told and what the broker stored. The seed reproduces the schedule (its digest is
printed), not the threads' timing: see ``fakebroker.soak.schedule``.

Prints a short report (records produced, acked, consumed; faults applied by kind; each
invariant's count) and exits 1 if any invariant was violated, 2 if it could not run
(confluent-kafka missing: it comes with the ``test`` extra).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import logging
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from fakebroker.soak.checker import check
from fakebroker.soak.schedule import Shape, digest, schedule

BROKERS = 3
PARTITIONS = 4
IDEMPOTENT_PRODUCERS = 2
TRANSACTIONAL_IDS = ("txn0", "txn1")
GROUPS = ("soak-classic", "soak-848")
INITIAL_MEMBERS = 2
HANG_SECONDS = 600  # after the run's seconds: longer than its end can take


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakebroker.soak",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--seconds", type=float, required=True, help="how long faults run")
    parser.add_argument("--seed", type=int, required=True, help="seed of the schedule")
    parser.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        print("fakebroker.soak needs confluent-kafka, which the test extra installs "
              "(pip install -e '.[test]' in the checkout)", file=sys.stderr)
        return 2
    # A hang of the process (a client holding the GIL while it waits) ends it, with every
    # thread's stack on stderr: faulthandler's timer needs no GIL.
    faulthandler.dump_traceback_later(args.seconds + HANG_SECONDS, exit=True)
    report = soak(args.seconds, args.seed)
    faulthandler.cancel_dump_traceback_later()
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if not any(report["invariants"].values()) else 1


def soak(seconds: float, seed: int) -> dict[str, Any]:
    """Run the soak; its report as a dict (``render`` prints it)."""
    from fakebroker.soak.workload import TOPIC, Run
    from fakebroker.sync import FakeKafka

    shape = Shape(BROKERS, PARTITIONS, GROUPS, TRANSACTIONAL_IDS)
    events = schedule(seed, seconds, shape)
    quiet_from = events[-1].at if events else 0.0
    started = time.monotonic()
    topics = {TOPIC: {"partitions": PARTITIONS, "replication_factor": BROKERS}}
    broker_log = _BrokerLog()
    with broker_log, FakeKafka(brokers=BROKERS, topics=topics, seed=seed) as kafka:
        run = Run(kafka, seed, shape)
        run.start_producers(IDEMPOTENT_PRODUCERS, TRANSACTIONAL_IDS)
        for group in GROUPS:
            for _ in range(INITIAL_MEMBERS):
                run.join(group)
        down: set[int] = set()
        for event in events:
            time.sleep(max(0.0, started + event.at - time.monotonic()))
            run.apply(event)
            if event.kind == "broker_down":
                down.add(event.params["broker"])
            elif event.kind == "broker_up":
                down.discard(event.params["broker"])
        time.sleep(max(0.0, started + quiet_from - time.monotonic()))
        run.quiesce(down)
        time.sleep(max(0.0, started + seconds - time.monotonic()))
        run.finish(timeout=120)
        elapsed = time.monotonic() - started
    verdict = check(run.history)
    counts = run.stats.counts
    txns = run.history.outcomes.values()
    return {
        "seed": seed, "seconds": seconds, "elapsed_s": round(elapsed, 1),
        "schedule": {"events": len(events), "digest": digest(events)},
        "records": {"produced": counts["produced"], "acked": counts["acked"],
                    "delivery_failed": counts["delivery_failed"],
                    # sent by a producer retired (fenced) before it reported them
                    "unreported": counts["produced"] - counts["acked"]
                    - counts["delivery_failed"],
                    "consumed": counts["consumed"], "final_read": counts["final_read"],
                    "stored": len(run.history.stored)},
        "transactions": {"committed": sum(o == "committed" for o in txns),
                         "aborted": sum(o == "aborted" for o in txns)},
        "commits": counts["commits"],
        "faults": dict(sorted(run.stats.faults.items())),
        "skipped": dict(sorted(run.stats.skipped.items())),
        "client_events": dict(sorted((k, v) for k, v in counts.items()
                                     if ":" in k or k in ("undelivered",
                                                          "final_read_incomplete"))),
        "client_errors": dict(sorted(run.stats.client_errors.items())),
        "broker_log": dict(sorted(broker_log.counts.items())),
        "invariants": verdict.counts,
        "examples": {k: v for k, v in verdict.examples.items() if v},
    }


class _BrokerLog(logging.Handler):
    """While the soak runs, the broker's log lines are counted by level (a lost ack's
    dropped connection is a warning each time); errors are printed too."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.logger = logging.getLogger("fakebroker")

    def emit(self, record: logging.LogRecord) -> None:
        self.counts[record.levelname] += 1
        if record.levelno >= logging.ERROR:
            print(self.format(record), file=sys.stderr)

    def __enter__(self) -> _BrokerLog:
        self.propagate, self.logger.propagate = self.logger.propagate, False
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        self.logger.propagate = self.propagate


def render(report: dict[str, Any]) -> str:
    """The report as a few lines of text."""
    def pairs(d: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"

    lines = [
        f"soak: seed {report['seed']}, {report['seconds']:g} s (ran {report['elapsed_s']} s), "
        f"schedule {report['schedule']['digest']} of {report['schedule']['events']} events",
        f"records: {pairs(report['records'])}",
        f"transactions: {pairs(report['transactions'])}; offset commits {report['commits']}",
        f"faults applied: {pairs(report['faults'])}",
        f"skipped: {pairs(report['skipped'])}",
        f"client events: {pairs(report['client_events'])}",
        f"client errors reported: {pairs(report['client_errors'])}",
        f"broker log lines: {pairs(report['broker_log'])}",
        f"invariants: {pairs(report['invariants'])}",
    ]
    for name, examples in report["examples"].items():
        lines += [f"  {name}: {e}" for e in examples]
    lines.append("OK" if not any(report["invariants"].values()) else "VIOLATED")
    return "\n".join(lines)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: the clients the run retired (fenced producers) are left to the OS, not
    # destroyed by the interpreter's shutdown (see workload.Run.retired).
    os._exit(code)
