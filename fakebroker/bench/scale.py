"""Workload 9: scale curves, each cost measured at geometric sizes on every system in one run.

Five dimensions, each grown on one broker process per system (``systems.launch``), the state
of one point kept for the next, so a point's size is what the broker holds then:

* ``partitions``: a new topic of N partitions per point. Metadata round trip naming that topic,
  produce and consume of ``records`` records spread round-robin over its partitions, the
  broker's RSS growth over the topic's creation per partition.
* ``topics``: topics of one partition added until N exist. Metadata round trip for all topics,
  produce and consume spread over all of them, RSS growth per topic added.
* ``connections``: idle connections (each has sent ApiVersions) added until N are open.
  Metadata round trip on one more connection, produce and consume on a one-partition topic,
  RSS growth per connection added.
* ``record_bytes``: ``total_bytes`` of records of N bytes a round produced to one partition
  (N = 1,000,000 sits under ``message.max.bytes``, 1,048,588, with its batch's overhead; the
  producer's own limit is raised to it, librdkafka's default being 1,000,000), then consumed.
* ``groups``: classic groups of ``members`` members each added until N exist. Time for a new
  group to join (median of the groups added at that point), RSS growth per group added.

Metadata is timed on a raw connection (``latency.round_trips``: the answer read as bytes, not
decoded), with a new client id every request so no kept answer fits; produce and consume with
confluent-kafka (records per second; produce: one untimed record per partition, then the
median of ``ROUNDS`` timed rounds of ``records``; consume: as many records as the point
produced, read from the beginning of the same partitions, from ``assign()`` on a connected
consumer: at a ``partitions`` point exactly those records, the topic being new; at a
``topics`` or ``connections`` point the oldest ones, earlier points' records first, as the
partitions hold those too). Before any point each broker is warmed up
(``warm_up``).

A group's members are wire clients (``GroupJoin``: FindCoordinator v3, then JoinGroup v5,
SyncGroup v3, Heartbeat v3; one connection and one thread each), not librdkafka consumers:
10,000 librdkafka instances would be 10,000 threads of their own, the client's cost, not the
broker's. They do what a consumer's classic protocol does: MEMBER_ID_REQUIRED answered by
joining again with the id, the leader assigns (nothing: they subscribe to no topic), a member
of a generation that lacks some members heartbeats until REBALANCE_IN_PROGRESS and joins
again. A group has joined when all its members have synced one generation holding all of
them; its join time runs from its first JoinGroup. Groups join ``GROUP_WAVE`` at a time;
their members never leave (their session timeout outlasts the run), so the broker holds every
group joined.

Each cost's growth is named from its log-log slope between the two largest points (where a
fixed overhead no longer hides it): ``falling``, ``constant``, ``sublinear``, ``linear`` or
``worse than linear`` (``growth``); a throughput's from its inverse, the time per record; the
RSS row's per unit, so ``constant`` there is a total growing linearly. Never a timed test:
only one run's figures side by side mean anything.
"""

from __future__ import annotations

import math
import socket
import statistics
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace

import psutil
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from fakebroker.bench.clients import QUIET, unique
from fakebroker.bench.latency import round_trips
from fakebroker.bench.systems import Running
from fakebroker.bench.throughput import CONSUMER_TUNING
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.framing import encode_request
from fakebroker.wire_client import WireClient

METADATA = (3, 12)
MESSAGE_MAX_BYTES = 1_048_588  # Kafka's default message.max.bytes
TIMEOUT_S = 600.0
ROUNDS = 3  # timed produce rounds per point: their median is the point's figure
GROUP_WAVE = 10  # groups joining at once: 100 connections of 10 members
# An empty ConsumerProtocolSubscription / Assignment v0: version 0, no topics, null user data.
EMPTY_CONSUMER_PROTOCOL = struct.pack(">hii", 0, 0, -1)
SESSION_TIMEOUT_MS = 1_200_000  # 20 min, under Kafka's group.max.session.timeout.ms (30 min)


@dataclass(frozen=True)
class ScaleSizes:
    """The points of each dimension and the work done at each."""

    points: tuple[int, ...]  # partitions and topics
    connections: tuple[int, ...]
    groups: tuple[int, ...]
    record_bytes: tuple[int, ...]
    records: int  # produced and consumed at each point of partitions, topics, connections
    total_bytes: int  # produced and consumed at each record size
    members: int  # per group
    metadata_round_trips: int


FULL = ScaleSizes((1, 10, 100, 1000, 10_000), (1, 10, 100, 1000), (1, 10, 100, 1000),
                  (100, 1000, 10_000, 100_000, 1_000_000), 20_000, 20_000_000, 10, 50)
QUICK = ScaleSizes((1, 10), (1, 10), (1, 2), (100, 10_000), 200, 200_000, 3, 10)
DIMENSIONS = ("partitions", "topics", "connections", "record_bytes", "groups")


def capped(sizes: ScaleSizes, largest: int | None) -> ScaleSizes:
    """``sizes`` without the counts (not record sizes) above ``largest`` (None: all)."""
    if largest is None:
        return sizes

    def cap(points: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(p for p in points if p <= largest)
    return replace(sizes, points=cap(sizes.points), connections=cap(sizes.connections),
                   groups=cap(sizes.groups))


@dataclass(frozen=True)
class Cost:
    """One curve's figure: its key, label and unit."""

    key: str
    label: str
    unit: str


COSTS: dict[str, Cost] = {c.key: c for c in (
    Cost("metadata_us", "Metadata v12 round trip (median)", "µs"),
    Cost("produce_rps", "produce (confluent-kafka)", "records/s"),
    Cost("consume_rps", "consume, from assign() to the last record", "records/s"),
    Cost("produce_mbps", "produce (confluent-kafka)", "MB/s"),
    Cost("consume_mbps", "consume, from assign() to the last record", "MB/s"),
    Cost("join_ms", "a new group's join, all members synced (median)", "ms"),
    Cost("rss_per_unit", "RSS growth per unit added", "bytes"),
)}
# Costs whose growth is named from their inverse: a throughput's cost is time per record.
INVERSE = frozenset({"produce_rps", "consume_rps", "produce_mbps", "consume_mbps"})
# What one unit is, per dimension, for the RSS row.
UNITS = {"partitions": "partition", "topics": "topic", "connections": "connection",
         "record_bytes": "payload byte", "groups": "group"}

# (dimension, cost, system) -> {size: value}
Curves = dict[tuple[str, str, str], dict[int, float]]


def growth(curve: dict[int, float], inverse: bool = False) -> tuple[str, float]:
    """The name of a curve's growth and its log-log slope between its two largest points (of
    the inverse for a throughput). Fewer than two positive points: ("—", nan)."""
    points = sorted((s, v) for s, v in curve.items() if v > 0)
    if len(points) < 2:
        return "—", math.nan
    (s0, v0), (s1, v1) = points[-2:]
    slope = math.log(v1 / v0) / math.log(s1 / s0)
    if inverse:
        slope = -slope
    if slope < -0.25:
        name = "falling"
    elif slope < 0.25:
        name = "constant"
    elif slope < 0.8:
        name = "sublinear"
    elif slope <= 1.2:
        name = "linear"
    else:
        name = "worse than linear"
    return name, slope


# -- Clients ----------------------------------------------------------------------------------


def _admin(system: Running) -> AdminClient:
    return AdminClient({"bootstrap.servers": system.bootstrap, **QUIET})


# Kafka's controller refuses an operation of more than 10,000 metadata records (a topic is one,
# each partition one more) and a CreateTopics or CreatePartitions request of more than 10,000
# partitions in all (POLICY_VIOLATION): requests here make or add at most this many.
PARTITIONS_PER_REQUEST = 5000


def create_topics(system: Running, names: list[str], partitions: int = 1,
                  chunk: int = 1000) -> None:
    """Create the topics with CreateTopics, at most ``chunk`` topics and
    ``PARTITIONS_PER_REQUEST`` partitions to a request; a topic of more partitions than that
    is created with that many, then grown by CreatePartitions, ``PARTITIONS_PER_REQUEST`` at a
    time, as many topics to a request as that bound allows."""
    admin = _admin(system)
    options = {"operation_timeout": TIMEOUT_S, "request_timeout": TIMEOUT_S}
    first = min(partitions, PARTITIONS_PER_REQUEST)
    for batch in _batches(names, first, chunk):
        futures = admin.create_topics([NewTopic(n, first, 1) for n in batch], **options)
        for future in futures.values():
            future.result(TIMEOUT_S)
    grown = first
    while grown < partitions:
        total = min(grown + PARTITIONS_PER_REQUEST, partitions)
        for batch in _batches(names, total - grown, chunk):
            futures = admin.create_partitions([NewPartitions(n, total) for n in batch],
                                              **options)
            for future in futures.values():
                future.result(TIMEOUT_S)
        grown = total
    wait_listed(system, names, partitions)


def _batches(names: list[str], each: int, chunk: int) -> list[list[str]]:
    """``names`` in runs of at most ``chunk`` names, and of at most ``PARTITIONS_PER_REQUEST``
    partitions when each name is given ``each`` (at least one name a run)."""
    size = max(1, min(chunk, PARTITIONS_PER_REQUEST // each))
    return [names[start:start + size] for start in range(0, len(names), size)]


def wait_listed(system: Running, names: list[str], partitions: int) -> None:
    """Return once Metadata lists every topic of ``names`` with ``partitions`` partitions, each
    with a leader: Kafka's controller answers CreateTopics before its broker has applied the
    new metadata, and a producer that asks too early is told UNKNOWN_TOPIC_OR_PARTITION."""
    wanted = set(names)
    deadline = time.perf_counter() + TIMEOUT_S
    with WireClient(system.bootstrap.split(",")[0], timeout=TIMEOUT_S) as client:
        while True:
            answer = client.request("Metadata", 12, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False})
            ready = {t.name for t in answer.topics if t.error_code == 0
                     and len(t.partitions) == partitions
                     and all(p.leader_id >= 0 for p in t.partitions)}
            if wanted <= ready:
                return
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{len(wanted - ready)} topics not listed in {TIMEOUT_S} s")
            time.sleep(0.2)


def metadata_us(system: Running, topics: list[str] | None, count: int) -> float:
    """Median Metadata v12 round trip naming ``topics`` (None: all), each request new."""
    body = {"topics": None if topics is None else [{"name": t, "topic_id": None}
                                                   for t in topics],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
    frames = [encode_request(*METADATA, n + 1, f"scale-{n:06d}-{unique('c')}", body)
              for n in range(count + 3)]
    host, _, port = system.bootstrap.split(",")[0].rpartition(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        round_trips(sock, frames[:3], 3, True)  # warm-up
        return statistics.median(round_trips(sock, frames[3:], count, True))


@dataclass(frozen=True)
class Produced:
    """A point's produce: the median of its timed rounds, and how many records it wrote."""

    rps: float
    records: int


def produce(system: Running, targets: list[tuple[str, int]], count: int, size: int,
            rounds: int = ROUNDS) -> Produced:
    """One record of ``size`` bytes to each of the (topic, partition) ``targets``, untimed (the
    producer connects to the leader, each partition takes its first record), then ``rounds``
    timed rounds of ``count`` records round-robin over them, each timed until all are
    acknowledged (Kafka's vary: a round of 2,000 records sometimes waits ~1.5 s)."""
    failed: list[str] = []
    producer = Producer({"bootstrap.servers": system.bootstrap, "message.max.bytes":
                         MESSAGE_MAX_BYTES, "delivery.report.only.error": True,
                         "on_delivery": lambda error, _m: failed.append(str(error)), **QUIET})
    value = b"x" * size

    def send(n: int) -> float:
        begin = time.perf_counter()
        for k in range(n):
            topic, partition = targets[k % len(targets)]
            while True:
                try:
                    producer.produce(topic, value, partition=partition)
                    break
                except BufferError:
                    producer.poll(0.001)
        left = producer.flush(TIMEOUT_S)
        elapsed = time.perf_counter() - begin
        if left or failed:
            raise KafkaException(f"{left + len(failed)} records not delivered "
                                 f"({failed[0] if failed else 'timeout'})")
        return n / elapsed

    send(len(targets))
    rps = statistics.median(send(count) for _ in range(rounds))
    return Produced(rps, len(targets) + rounds * count)


def consume(system: Running, targets: list[tuple[str, int]], count: int) -> float:
    """Read ``count`` records from the beginning of ``targets``; records per second from
    ``assign()`` on a connected consumer (each partition's start is part of what grows)."""
    consumer = Consumer({"bootstrap.servers": system.bootstrap, "group.id": unique("scale"),
                         "enable.auto.commit": False, **CONSUMER_TUNING, **QUIET})
    try:
        consumer.list_topics(timeout=TIMEOUT_S)  # connected, before the clock starts
        begin = time.perf_counter()
        consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in targets])
        got = 0
        deadline = time.perf_counter() + TIMEOUT_S
        while got < count:
            for message in consumer.consume(min(10000, count - got), timeout=1.0):
                if message.error() is not None:
                    raise KafkaException(message.error())
                got += 1
            if time.perf_counter() > deadline:
                raise KafkaException(f"consumed {got} of {count} records in {TIMEOUT_S} s")
        return got / (time.perf_counter() - begin)
    finally:
        consumer.close()


# -- Groups -----------------------------------------------------------------------------------


class GroupJoin:
    """A classic group of ``members`` wire-client members joining at once."""

    def __init__(self, address: str, group_id: str, members: int):
        self.address, self.group_id, self.members = address, group_id, members
        self.sizes: dict[int, int] = {}  # generation -> its members, as its leader saw them
        self.done: list[float] = []
        self.errors: list[BaseException] = []
        self.clients: list[WireClient] = []  # kept open: members never leave
        self.began = 0.0

    def start(self) -> list[threading.Thread]:
        self.began = time.perf_counter()
        threads = [threading.Thread(target=self._run, daemon=True) for _ in range(self.members)]
        for thread in threads:
            thread.start()
        return threads

    def join_s(self) -> float:
        """Seconds from the first JoinGroup until the last member synced a full generation."""
        if self.errors:
            raise self.errors[0]
        if len(self.done) != self.members:
            raise TimeoutError(f"{self.group_id}: {len(self.done)} of {self.members} joined")
        return max(self.done) - self.began

    def _run(self) -> None:
        try:
            client = WireClient(self.address, timeout=TIMEOUT_S, client_id=self.group_id)
            self.clients.append(client)
            self._member(client)
            self.done.append(time.perf_counter())
        except BaseException as exc:  # reported by join_s
            self.errors.append(exc)

    def _member(self, client: WireClient) -> None:
        while True:  # as a client does: Kafka makes its offsets topic at the first ask
            found = client.request("FindCoordinator", 3, {"key": self.group_id, "key_type": 0})
            if found.error_code not in RETRIED:
                _check("FindCoordinator", found.error_code)
                break
            time.sleep(0.1)
        member_id = ""
        while True:
            joined = client.request("JoinGroup", 5, {
                "group_id": self.group_id, "session_timeout_ms": SESSION_TIMEOUT_MS,
                "rebalance_timeout_ms": 60_000, "member_id": member_id,
                "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": EMPTY_CONSUMER_PROTOCOL}]})
            member_id = joined.member_id or member_id
            if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:
                continue
            if joined.error_code in RETRIED:  # offsets loading: ask again, as a client does
                time.sleep(0.1)
                continue
            _check("JoinGroup", joined.error_code)
            generation = joined.generation_id
            assignments = []
            if joined.leader == member_id:
                self.sizes[generation] = len(joined.members)
                assignments = [{"member_id": m.member_id, "assignment": EMPTY_CONSUMER_PROTOCOL}
                               for m in joined.members]
            synced = client.request("SyncGroup", 3, {
                "group_id": self.group_id, "generation_id": generation, "member_id": member_id,
                "group_instance_id": None, "assignments": assignments})
            if synced.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
                continue
            _check("SyncGroup", synced.error_code)
            if self.sizes.get(generation) == self.members:
                return
            while True:  # a generation without every member: the others' joins end it
                time.sleep(0.005)
                beat = client.request("Heartbeat", 3, {
                    "group_id": self.group_id, "generation_id": generation,
                    "member_id": member_id, "group_instance_id": None})
                if beat.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
                    break
                _check("Heartbeat", beat.error_code)
                if self.sizes.get(generation) == self.members:
                    return


RETRIED = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
                     ErrorCode.COORDINATOR_LOAD_IN_PROGRESS})


def _check(api: str, error_code: int) -> None:
    if error_code:
        raise RuntimeError(f"{api}: {ErrorCode(error_code).name}")


def join_groups(system: Running, count: int, members: int, keep: ExitStack) -> list[float]:
    """Join ``count`` new groups, ``GROUP_WAVE`` at a time; each one's join time in seconds.
    Their connections stay open in ``keep``."""
    address = system.bootstrap.split(",")[0]
    times: list[float] = []
    for start in range(0, count, GROUP_WAVE):
        joins = [GroupJoin(address, unique("scale-group"), members)
                 for _ in range(min(GROUP_WAVE, count - start))]
        threads = [t for j in joins for t in j.start()]
        for thread in threads:
            thread.join(TIMEOUT_S)
        for join in joins:
            for client in join.clients:
                keep.callback(client.close)
            times.append(join.join_s())
    return times


# -- Dimensions -------------------------------------------------------------------------------


def _rss(system: Running) -> int:
    return psutil.Process(system.pid).memory_info().rss


@contextmanager
def _growth(system: Running, record: Callable[[float], None], units: int) -> Iterator[None]:
    """Record the broker's RSS growth over the block per unit of ``units``."""
    before = _rss(system)
    yield
    record((_rss(system) - before) / units)


def _traffic(system: Running, sizes: ScaleSizes, targets: list[tuple[str, int]],
             put: Callable[[str, float], None]) -> None:
    produced = produce(system, targets, sizes.records, 100)
    put("produce_rps", produced.rps)
    put("consume_rps", consume(system, targets, produced.records))


def warm_up(system: Running, sizes: ScaleSizes) -> None:
    """What a broker loads once, before any point: a topic made, written, read, described;
    a group joined (fakebroker imports a request's modules when one first comes)."""
    topic = unique("warm-up")
    create_topics(system, [topic])
    consume(system, [(topic, 0)], produce(system, [(topic, 0)], 1000, 100, rounds=1).records)
    metadata_us(system, [topic], 3)
    with ExitStack() as keep:
        join_groups(system, 1, sizes.members, keep)


def partitions(system: Running, sizes: ScaleSizes, put: Callable[[int, str, float], None],
               log: Callable[[str], None]) -> None:
    for n in sizes.points:
        topic = unique(f"p{n}")
        log(f"partitions {n}")
        with _growth(system, lambda v, n=n: put(n, "rss_per_unit", v), n):
            create_topics(system, [topic], n)
        put(n, "metadata_us", metadata_us(system, [topic], sizes.metadata_round_trips))
        _traffic(system, sizes, [(topic, p) for p in range(n)],
                 lambda k, v, n=n: put(n, k, v))


def topics(system: Running, sizes: ScaleSizes, put: Callable[[int, str, float], None],
           log: Callable[[str], None]) -> None:
    names: list[str] = []
    for n in sizes.points:
        log(f"topics {n}")
        added = [unique("t") for _ in range(n - len(names))]
        with _growth(system, lambda v, n=n: put(n, "rss_per_unit", v), len(added)):
            create_topics(system, added)
        names += added
        put(n, "metadata_us", metadata_us(system, None, sizes.metadata_round_trips))
        _traffic(system, sizes, [(t, 0) for t in names], lambda k, v, n=n: put(n, k, v))


def connections(system: Running, sizes: ScaleSizes, put: Callable[[int, str, float], None],
                log: Callable[[str], None]) -> None:
    topic = unique("c")
    create_topics(system, [topic])
    address = system.bootstrap.split(",")[0]
    with ExitStack() as stack:
        opened = 0
        for n in sizes.connections:
            log(f"connections {n}")
            with _growth(system, lambda v, n=n: put(n, "rss_per_unit", v), n - opened):
                for _ in range(n - opened):
                    client = stack.enter_context(WireClient(address, timeout=TIMEOUT_S))
                    client.request("ApiVersions", 3, {"client_software_name": "scale",
                                                      "client_software_version": "1"})
            opened = n
            put(n, "metadata_us", metadata_us(system, [topic], sizes.metadata_round_trips))
            _traffic(system, sizes, [(topic, 0)], lambda k, v, n=n: put(n, k, v))


def record_bytes(system: Running, sizes: ScaleSizes, put: Callable[[int, str, float], None],
                 log: Callable[[str], None]) -> None:
    for size in sizes.record_bytes:
        log(f"record bytes {size}")
        topic = unique(f"r{size}")
        create_topics(system, [topic])
        count = max(10, sizes.total_bytes // size)
        written = (ROUNDS * count + 1) * size
        with _growth(system, lambda v, s=size: put(s, "rss_per_unit", v), written):
            produced = produce(system, [(topic, 0)], count, size)
        put(size, "produce_rps", produced.rps)
        put(size, "produce_mbps", produced.rps * size / 1e6)
        rps = consume(system, [(topic, 0)], produced.records)
        put(size, "consume_rps", rps)
        put(size, "consume_mbps", rps * size / 1e6)


def groups(system: Running, sizes: ScaleSizes, put: Callable[[int, str, float], None],
           log: Callable[[str], None]) -> None:
    with ExitStack() as keep:
        joined = 0
        for n in sizes.groups:
            log(f"groups {n}")
            with _growth(system, lambda v, n=n: put(n, "rss_per_unit", v), n - joined):
                times = join_groups(system, n - joined, sizes.members, keep)
            joined = n
            put(n, "join_ms", statistics.median(times) * 1000)


RUNS: dict[str, Callable[[Running, ScaleSizes, Callable[[int, str, float], None],
                          Callable[[str], None]], None]] = {
    "partitions": partitions, "topics": topics, "connections": connections,
    "record_bytes": record_bytes, "groups": groups}
DESCRIPTIONS = {
    "partitions": "one new topic of N partitions per point",
    "topics": "N topics of one partition",
    "connections": "N idle connections open",
    "record_bytes": "records of N bytes",
    "groups": "N classic groups of {members} members each",
}


# -- Report -----------------------------------------------------------------------------------


def key(dimension: str, cost: str, size: int) -> str:
    """The ``Results`` metric holding a curve's point."""
    return f"scale:{dimension}:{cost}:{size}"


def curves(values: dict[str, dict[str, list[float]]]) -> Curves:
    """The curves in a run's figures (the medians of the ``scale:`` metrics)."""
    found: Curves = {}
    for metric, per_system in values.items():
        if metric.startswith("scale:"):
            _, dimension, cost, size = metric.split(":")
            for system, figures in per_system.items():
                found.setdefault((dimension, cost, system), {})[int(size)] = \
                    statistics.median(figures)
    return found


def _figure(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table(values: dict[str, dict[str, list[float]]], systems: list[str],
          sizes: ScaleSizes) -> str:
    """Per dimension a markdown table: each cost per system at each size, and its growth."""
    found = curves(values)
    out: list[str] = []
    for dimension in DIMENSIONS:
        points = sorted({s for (d, _, _), c in found.items() if d == dimension for s in c})
        if not points:
            continue
        out.append(f"scale: {dimension} ({DESCRIPTIONS[dimension].format(members=sizes.members)})"
                   "\n")
        out.append("| cost | unit | system | " + " | ".join(f"{p:,}" for p in points)
                   + " | growth (slope) |")
        out.append("|" + "---|" * (len(points) + 4))
        for cost in COSTS.values():
            for system in systems:
                curve = found.get((dimension, cost.key, system))
                if not curve:
                    continue
                name, slope = growth(curve, cost.key in INVERSE)
                unit, label = cost.unit, cost.label
                if cost.key == "rss_per_unit":
                    unit, label = "bytes", f"RSS growth per {UNITS[dimension]}"
                cells = [_figure(curve[p]) if p in curve else "—" for p in points]
                out.append(f"| {label} | {unit} | {system} | " + " | ".join(cells)
                           + f" | {name} ({slope:.2f}) |")
        out.append("")
    return "\n".join(out)
