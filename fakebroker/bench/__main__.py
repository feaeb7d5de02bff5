"""``python -m fakebroker.bench``: run the workloads against fakebroker and its peers.

Each workload runs ``--repeat`` times (first-record once: its rounds, and its Java harness's
JVMs, are its repeats); within a repeat every system gets its turn (a freshly started process
each time), so load on the machine hits all systems alike. The report gives medians,
fakebroker ÷ each peer, and the targets (issue #6; issue #13 for time to first record, judged
against real Kafka), as a markdown table, with the machine and the load average before and
after; ``--json`` also writes every raw figure. ``--baseline REV`` adds ``fakebroker@REV``
(this checkout's git revision REV) to every workload fakebroker runs in, so the table's
``fb ÷ fakebroker@REV`` column is a change's before/after from one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fakebroker.bench import systems
from fakebroker.bench.peers import PeerUnavailable
from fakebroker.bench.report import Results, table

WORKLOADS = ("start", "throughput", "latency", "first-record", "idle", "user-suite", "scale")
# The names for parts of the throughput workload.
ALIASES = {"produce": "throughput", "consume": "throughput", "memory": "throughput"}
# kafka-nodelay differs from kafka in its rebalance delay only: it is measured where that counts;
# kafka-3nodes is kafka-nodelay as a 3-node cluster, measured in the user's suite only.
# The scale workload's dimensions (fakebroker/bench/scale.py, imported by its runner).
SCALE_DIMENSIONS = ("partitions", "topics", "connections", "record_bytes", "groups")
ALL_SYSTEMS = (*systems.BROKERS, "kafka-nodelay", "kafka-3nodes", "trio-echo")


@dataclass(frozen=True)
class Sizes:
    records: int
    round_trips: int
    start_rounds: int
    process_rounds: int
    first_record_rounds: int
    idle_settle_s: float
    idle_window_s: float
    suite_tests: int
    quick: bool  # the scale workload's sizes: scale.QUICK, else scale.FULL
    scale_dimensions: tuple[str, ...] = SCALE_DIMENSIONS
    scale_max: int | None = None  # the largest point of the scale workload's counts


FULL = Sizes(1_000_000, 2000, 20, 5, 3, 3.0, 10.0, 20, False)
QUICK = Sizes(100_000, 300, 5, 2, 1, 2.0, 3.0, 5, True)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# The workloads' modules are imported by their runners: ``--help`` and the check of the bench
# extra (``require_extra``) work without it.


def run_start(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import startup

    timings = startup.inprocess(name, sizes.start_rounds)
    if timings is not None:
        results.add("start_inprocess_ms", name, statistics.median(timings[0]))
        results.add("stop_inprocess_ms", name, statistics.median(timings[1]))
    formats: list[float] = []

    def kafka_format(running: systems.Running) -> None:
        if isinstance(running, systems.RunningKafka):
            formats.append(running.format_s * 1000)

    starts, stops = startup.as_process(name, sizes.process_rounds, on_start=kafka_format)
    results.add("start_process_ms", name, statistics.median(starts))
    results.add("stop_process_ms", name, statistics.median(stops))
    if formats:  # not a row of the table: kept for the note and --json
        results.add("format_process_ms", name, statistics.median(formats))
        results.note("start", name, "start as a process = formatting a new log directory "
                     f"(a JVM of its own, median "
                     f"{results.medians('format_process_ms')[name]:.0f} ms) + the broker's "
                     "JVM until Metadata lists the broker")


def run_throughput(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import throughput

    with systems.launch(name) as system:
        figures = throughput.run(system, sizes.records)
    if figures.consume.records < sizes.records:
        results.note("throughput", name, f"consumed {figures.consume.records:,} of "
                     f"{sizes.records:,} records: the broker had deleted the rest (retention)")
    if figures.consume.pauses:
        results.note("throughput", name, f"the client paused {figures.consume.pauses} times "
                     "with its back-off removed")
    results.add("produce_rps", name, figures.produce_rps)
    results.add("produce_cpu_us", name, figures.produce_cpu_us)
    results.add("enqueue_rps", name, figures.enqueue_rps)
    results.add("consume_rps", name, figures.consume.rps)
    results.add("consume_default_rps", name, figures.consume_default.rps)
    results.add("consume_default_pauses", name, figures.consume_default.pauses)
    results.add("rss_growth_per_byte", name, figures.rss_per_byte)
    results.add("rss_total_per_byte", name, figures.total_rss_per_byte)


def run_latency(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import latency

    with systems.launch(name) as system:
        figures = latency.run(system, sizes.round_trips)
    for kind in ("api_versions", "metadata", "metadata_new"):
        p50, p99 = getattr(figures, kind)
        results.add(f"{kind}_p50_us", name, p50)
        results.add(f"{kind}_p99_us", name, p99)


JAVA_ROUNDS = 3  # consumers per JVM in first-record: one cold, then warm ones


def run_first_record(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import first_record

    rounds = sizes.first_record_rounds
    with systems.launch(name) as system:
        topic = first_record.seeded_topic(system)
        times = first_record.confluent(system, topic, rounds)
        results.add("first_record_confluent_ms", name, statistics.median(times))
        if name == "librdkafka-mock":
            results.note("first-record", name, first_record.NOT_ON_MOCK)
            return
        times = first_record.kafka_python(system, topic, rounds)
        results.add("first_record_kafka_python_ms", name, statistics.median(times))
        runs = [first_record.java(system, topic, JAVA_ROUNDS) for _ in range(rounds)]
    results.add("first_record_java_cold_ms", name, statistics.median(r[0] for r in runs))
    results.add("first_record_java_warm_ms", name,
                statistics.median(t for r in runs for t in r[1:]))


def run_idle(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import idle

    with systems.launch(name) as system:
        results.add("idle_cpu_percent", name,
                    idle.run(system, sizes.idle_settle_s, sizes.idle_window_s))


def run_user_suite(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import user_suite

    if name == "fakebroker" or name in systems.SOURCES:  # the fixture's in-process fakes
        figures, start_s = user_suite.run(sizes.suite_tests, None, name), 0.0
    else:  # one broker for the whole suite, as the plugin's real side uses one
        with systems.launch(name) as system:
            figures = user_suite.run(sizes.suite_tests, system)
        start_s = system.start_s
    results.add("suite_test_p50_ms", name, figures.p50_s * 1000)
    results.add("suite_test_p95_ms", name, figures.p95_s * 1000)
    results.add("suite_whole_s", name, figures.wall_s + start_s)


def run_scale(name: str, results: Results, sizes: Sizes) -> None:
    from fakebroker.bench import scale

    chosen = scale.capped(scale.QUICK if sizes.quick else scale.FULL, sizes.scale_max)
    for dimension in sizes.scale_dimensions:
        log(f"scale: {name}: {dimension}")
        try:
            with systems.launch(name) as system:
                scale.warm_up(system, chosen)
                scale.RUNS[dimension](
                    system, chosen,
                    lambda size, cost, value, d=dimension: results.add(
                        scale.key(d, cost, size), name, value),
                    lambda text: log(f"scale: {name}: {text}"))
        except Exception as exc:  # the points measured so far stay; the next dimension runs
            log(f"scale: {name}: {dimension} failed: {exc!r}")
            results.note(f"scale {dimension}", name, f"stopped: {exc!r}")


RUNNERS: dict[str, Callable[[str, Results, Sizes], None]] = {
    "start": run_start,
    "throughput": run_throughput,
    "latency": run_latency,
    "first-record": run_first_record,
    "idle": run_idle,
    "user-suite": run_user_suite,
    "scale": run_scale,
}
# Which systems each workload measures (the echo server is only a floor: of a round trip, and
# of a Python trio server's start as a process).
MEASURES: dict[str, tuple[str, ...]] = {
    "start": (*systems.BROKERS, "trio-echo"),
    "throughput": systems.BROKERS,
    "latency": (*systems.BROKERS, "trio-echo"),
    "first-record": (*systems.BROKERS, "kafka-nodelay"),
    "idle": systems.BROKERS,
    # Through the plugin's real side, which inspects with Kafka's own admin APIs: brokers
    # serving all of them only (kfake does).
    "user-suite": ("fakebroker", "kfake", "kafka", "kafka-nodelay", "kafka-3nodes"),
    # Against Kafka as a suite sets it (no initial rebalance delay, as the fake by default).
    "scale": ("fakebroker", "kafka-nodelay"),
}


# Workloads that repeat inside (first-record: several consumers one after another), and whose
# slowest peer (tansu, ~23 s a round) would make further repeats cost minutes.
ROUNDS_ARE_REPEATS = frozenset({"first-record", "scale"})


def machine() -> str:
    """One line: CPU model, cores, memory, OS, Python."""
    model = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    import psutil  # the bench extra's: checked by require_extra

    memory = psutil.virtual_memory().total / 2**30
    return (f"{model}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}")


def require_extra() -> None:
    """Exit with one line naming the bench extra if a module it installs is missing."""
    try:
        from fakebroker.bench import first_record, idle, latency, startup, throughput  # noqa: F401
    except ModuleNotFoundError as exc:
        raise SystemExit(f"python -m fakebroker.bench: {exc.name} is missing: the benchmark "
                         "needs fakebroker's bench extra (pip install \".[bench]\" in a "
                         "checkout, or the wheel with [bench])") from None


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m fakebroker.bench",
                                     description=__doc__.replace("``", ""))
    parser.add_argument("--workloads", default=",".join(w for w in WORKLOADS if w != "scale"),
                        help=f"comma-separated, of {', '.join(WORKLOADS)} "
                             f"(or produce, consume, memory); default all but scale (tens "
                             f"of minutes: run on its own)")
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS),
                        help=f"comma-separated, of {', '.join(ALL_SYSTEMS)}; default all")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (100k records, one repeat): seconds per workload")
    parser.add_argument("--repeat", type=int, help="repeats per workload (default 3, quick 1)")
    parser.add_argument("--scale", default=",".join(SCALE_DIMENSIONS),
                        help=f"the scale workload's dimensions, of {', '.join(SCALE_DIMENSIONS)}; "
                             "default all")
    parser.add_argument("--scale-max", type=int, metavar="N",
                        help="the scale workload's largest count (partitions, topics, "
                             "connections, groups); default 10,000 (1,000 connections, groups)")
    parser.add_argument("--json", type=Path, help="also write every raw figure here")
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure this git revision of fakebroker (before/after)")
    args = parser.parse_args(argv)
    args.workloads = list(dict.fromkeys(ALIASES.get(w, w) for w in args.workloads.split(",")))
    args.systems = args.systems.split(",")
    args.scale = args.scale.split(",")
    for value, allowed in ((args.workloads, WORKLOADS), (args.systems, ALL_SYSTEMS),
                           (args.scale, SCALE_DIMENSIONS)):
        unknown = set(value) - set(allowed)
        if unknown:
            parser.error(f"unknown: {', '.join(sorted(unknown))}")
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.baseline:
        try:
            baseline = systems.add_baseline(args.baseline)
        except ValueError as exc:
            parser.error(str(exc))
        args.systems.insert(args.systems.index("fakebroker") + 1 if "fakebroker" in
                            args.systems else 0, baseline)
    return args


def measures(workload: str, name: str) -> bool:
    """Whether ``workload`` measures system ``name`` (a baseline wherever fakebroker)."""
    return (name if name not in systems.SOURCES else "fakebroker") in MEASURES[workload]


def main(argv: list[str] | None = None) -> Results:
    """Run the chosen workloads, print the report, and return every figure."""
    args = parse(argv)
    require_extra()
    sizes = dataclasses.replace(QUICK if args.quick else FULL,
                                scale_dimensions=tuple(args.scale), scale_max=args.scale_max)
    results = Results()
    chosen = list(args.systems)
    for name in list(chosen):
        try:
            systems.prepare(name)
        except PeerUnavailable as exc:
            log(f"{name} unavailable: {exc}")
            results.fail("all", name, str(exc))
            chosen.remove(name)
    load_before = os.getloadavg()
    began = time.time()
    for workload in args.workloads:
        for repeat in range(1 if workload in ROUNDS_ARE_REPEATS else args.repeat):
            for name in (s for s in chosen if measures(workload, s)):
                log(f"{workload} #{repeat + 1}: {name}")
                try:
                    RUNNERS[workload](name, results, sizes)
                except Exception as exc:  # a peer that cannot do a workload: report, go on
                    log(f"{workload}: {name} failed: {exc!r}")
                    results.fail(workload, name, repr(exc))
                if args.json is not None:  # so far: a client that crashes keeps the rest
                    write_json(args.json, results, sizes, args.repeat, load_before, None)
    load_after = os.getloadavg()
    print(f"machine: {machine()}")
    print(f"command: python -m fakebroker.bench {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"sizes: {sizes}; repeats: {args.repeat}; took {time.time() - began:.0f} s")
    print("load average (1, 5, 15 min): before "
          f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in load_after)}")
    print()
    print(table(results, chosen))
    if "scale" in args.workloads:
        from fakebroker.bench import scale

        print()
        print(scale.table(results.values, chosen,
                          scale.QUICK if sizes.quick else scale.FULL))
    for workload, notes in results.notes.items():
        for name, text in notes.items():
            print(f"- {workload}: {name}: {text}")
    for workload, failures in results.errors.items():
        for name, reason in failures.items():
            print(f"- {workload}: {name} failed: {reason}")
    if args.json is not None:
        write_json(args.json, results, sizes, args.repeat, load_before, load_after)
    return results


def write_json(path: Path, results: Results, sizes: Sizes, repeats: int,
               load_before: tuple[float, float, float],
               load_after: tuple[float, float, float] | None) -> None:
    """Every raw figure so far, the machine, the sizes and the load averages (``load_after``
    None while the run goes on)."""
    path.write_text(json.dumps({
        "machine": machine(), "sizes": sizes.__dict__, "repeats": repeats,
        "load_before": load_before, "load_after": load_after,
        "values": results.values, "notes": results.notes, "errors": results.errors,
    }, indent=1))


if __name__ == "__main__":
    main()
