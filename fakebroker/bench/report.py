"""Results of one run: figures per (metric, system), medians, ratios, targets, a table."""

from __future__ import annotations

import operator
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

# fakebroker's median, the medians of all systems -> met, not met, or None: cannot tell (the
# peer it is judged against was not measured).
Check = Callable[[float, dict[str, float]], bool | None]


@dataclass(frozen=True)
class Metric:
    """One reported figure. ``higher_is_better`` orients the ratio's reading (None: neither,
    a count to read beside another figure); ``target`` (text) and ``check`` state the goal
    for fakebroker, if there is one."""

    key: str
    label: str
    unit: str
    higher_is_better: bool | None
    target: str = ""
    check: Check | None = None


def _vs(peer: str, factor: float, cmp: Callable[[float, float], bool]) -> Check:
    def check(ours: float, medians: dict[str, float]) -> bool | None:
        return cmp(ours, factor * medians[peer]) if peer in medians else None
    return check


def _at_most(limit: float) -> Check:
    return lambda ours, _medians: ours <= limit


# Time to first record is judged against the real broker with the same client, set up as a
# test suite would set it (no initial rebalance delay): a cold JVM's class loading is in both.
FIRST_RECORD_TARGET = ("≤ 1.0× kafka-nodelay", _vs("kafka-nodelay", 1.0, operator.le))


METRICS: tuple[Metric, ...] = (
    Metric("start_inprocess_ms", "1. start in-process, until a client connects", "ms", False,
           "≤ 5 ms", _at_most(5)),
    Metric("stop_inprocess_ms", "1. stop in-process", "ms", False),
    Metric("start_process_ms", "1. start as a process, until ready for a client", "ms", False,
           "≤ 150 ms", _at_most(150)),
    Metric("stop_process_ms", "1. stop a process (SIGTERM until exit)", "ms", False,
           "≤ 20 ms", _at_most(20)),
    Metric("produce_rps", "2. produce 100-byte records (confluent-kafka)", "records/s", True,
           "≥ 1.0× tansu", _vs("tansu", 1.0, operator.ge)),
    Metric("produce_cpu_us", "2. … the broker's CPU per produced record", "µs", False),
    Metric("enqueue_rps", "2. … the client's own pace: its produce() calls, queue never full",
           "records/s", True),
    Metric("consume_rps", "3. consume them, assign from the beginning, client back-off off",
           "records/s", True, "≥ 1.0× tansu", _vs("tansu", 1.0, operator.ge)),
    Metric("consume_default_rps", "3. consume them at librdkafka's defaults", "records/s", True),
    Metric("consume_default_pauses", "3. … the client's 1 s queue-full pauses at its defaults",
           "pauses", None),
    Metric("api_versions_p50_us", "4. ApiVersions v3 round trip p50", "µs", False,
           "≤ 1.5× echo", _vs("trio-echo", 1.5, operator.le)),
    Metric("api_versions_p99_us", "4. ApiVersions v3 round trip p99", "µs", False),
    Metric("metadata_p50_us", "4. Metadata v8 round trip p50", "µs", False,
           "≤ 1.5× echo", _vs("trio-echo", 1.5, operator.le)),
    Metric("metadata_p99_us", "4. Metadata v8 round trip p99", "µs", False),
    Metric("metadata_new_p50_us", "4. Metadata v8, every request new, p50", "µs", False),
    Metric("metadata_new_p99_us", "4. Metadata v8, every request new, p99", "µs", False),
    Metric("first_record_confluent_ms", "5. first record, confluent-kafka group consumer", "ms",
           False, *FIRST_RECORD_TARGET),
    Metric("first_record_kafka_python_ms", "5. first record, kafka-python group consumer",
           "ms", False, *FIRST_RECORD_TARGET),
    Metric("first_record_java_warm_ms", "5. first record, Java group consumer (warm JVM)", "ms",
           False, *FIRST_RECORD_TARGET),
    Metric("first_record_java_cold_ms", "5. first record, Java (first in a new JVM)", "ms",
           False, *FIRST_RECORD_TARGET),
    Metric("rss_growth_per_byte", "6. RSS growth over the produce per payload byte", "B/B",
           False, "≤ 1.2", _at_most(1.2)),
    Metric("rss_total_per_byte", "6. whole RSS after the produce per payload byte", "B/B",
           False),
    Metric("idle_cpu_percent", "7. idle CPU, 50 consumers long-polling", "% of a core",
           False, "< 5 %", lambda ours, _m: ours < 5),
    Metric("suite_test_p50_ms", "8. a user's suite: a test (topic, 100 records, new group) p50",
           "ms", False),
    Metric("suite_test_p95_ms", "8. a user's suite: a test p95", "ms", False),
    Metric("suite_whole_s", "8. a user's suite: the whole run, broker start included", "s",
           False),
)


@dataclass
class Results:
    """Every figure of a run: values[metric][system] is a list, one per repeat."""

    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)  # workload -> system -> why
    notes: dict[str, dict[str, str]] = field(default_factory=dict)  # workload -> system -> note

    def add(self, metric: str, system: str, value: float) -> None:
        self.values.setdefault(metric, {}).setdefault(system, []).append(value)

    def fail(self, workload: str, system: str, reason: str) -> None:
        self.errors.setdefault(workload, {})[system] = reason

    def note(self, workload: str, system: str, text: str) -> None:
        self.notes.setdefault(workload, {})[system] = text

    def medians(self, metric: str) -> dict[str, float]:
        return {s: statistics.median(v) for s, v in self.values.get(metric, {}).items() if v}


def _figure(value: float) -> str:
    if value >= 10000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _count(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def table(results: Results, systems: list[str]) -> str:
    """A markdown table: metric, each system's median, fakebroker ÷ each peer, the target."""
    peers = [s for s in systems if s != "fakebroker"]
    head = ["workload", "unit", *systems, *(f"fb ÷ {p}" for p in peers), "target", "met"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for metric in METRICS:
        medians = results.medians(metric.key)
        if not medians:
            continue
        ours = medians.get("fakebroker")
        arrow = {True: " ↑", False: " ↓", None: ""}[metric.higher_is_better]
        cells = [metric.label, metric.unit + arrow]
        shown = _count if metric.higher_is_better is None else _figure
        cells += [shown(medians[s]) if s in medians else "—" for s in systems]
        for peer in peers:
            ok = ours is not None and medians.get(peer)
            cells.append(f"{ours / medians[peer]:.2f}×" if ok else "—")
        met = ""
        if metric.check is not None and ours is not None:
            met = {True: "yes", False: "**no**", None: "—"}[metric.check(ours, medians)]
        rows.append("| " + " | ".join([*cells, metric.target, met]) + " |")
    return "\n".join(rows)
