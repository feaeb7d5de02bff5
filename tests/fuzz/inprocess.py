"""The fast mode: mutated requests straight through one broker's pipeline (frame -> decode ->
handler -> encode, ``fakebroker.pipeline``), no sockets, under trio's ``MockClock`` (a request
that waits — a long-polling Fetch, a group barrier — waits no real time).

The loop is coverage-guided: cProfile's profiler (its C part: Python 3.10 and 3.11 have no
``sys.monitoring``, and atheris has no wheel for them at its current release) records, for a
quarter of the inputs (``TRACED``), which functions of the broker each input reaches, per
API key; an input that reaches a function not reached before for its API, or gets an outcome
not seen before for its API and version (``tests.fuzz.outcomes``), joins the pool of parents
that later inputs are mutated from, beside the corpus's seeds. Every choice comes from one
``random.Random(seed)``: a run is replayed by its seed and input count.

The broker's state grows with the run, and one kind of growth makes every later input slow:
a mutated CreateTopics or CreatePartitions may ask 1,000 or 9,999 partitions, and from then on
every Metadata, Produce or Fetch naming all topics costs per partition (encoded by the broker,
decoded again here). So when the cluster holds more than ``MAX_PARTITIONS`` partitions (the
corpus makes 148), the broker is replaced by a fresh one, the corpus replayed to it again (its
requests the seeds from then on); the pool and the coverage are kept.

A **crash** is any of: an exception out of the pipeline, a line the broker logs at ERROR (a
handler's bug: the pipeline closes the connection and logs its traceback), an answer
fakebroker's own codec cannot decode. Each crash candidate is then sent over TCP to a running
fake broker (``SocketCheck``): its connection must be answered, or closed with at most one
warning line and no traceback, and another connection must still be served.
"""

from __future__ import annotations

import cProfile
import functools
import itertools
import json
import logging
import random
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import trio
import trio.testing

from fakebroker.faults.rules import FaultRegistry
from fakebroker.journal import Journal
from fakebroker.outcomes import WAIT, Close, Peer, Throttled
from fakebroker.pipeline import Pipeline
from fakebroker.state.cluster import Cluster
from tests.conformance.corpus import Request
from tests.conformance.replay import plain
from tests.conformance.run import corpus
from tests.fuzz.mutations import Mutant, Seed, mutate
from tests.fuzz.outcomes import (
    CLOSED,
    NO_ANSWER,
    PENDING,
    UNDECODABLE,
    Outcome,
    answered,
)
from tests.fuzz.seeds import OfflineSide, fake_versions, seed_of
from tests.fuzz.socket_check import SocketCheck

PENDING_AFTER = 3600.0  # virtual seconds a request may wait before it counts as pending
POOL_SIZE = 4096  # parents kept beside the seeds (a new one replaces a random one when full)
CHECK_EVERY = 100_000  # inputs between socket checks of an ordinary input (the broker lives)
PROGRESS_EVERY = 10_000
MAX_PARTITIONS = 1000  # a fresh broker when the cluster holds more (the corpus makes 148)
RESET_CHECK_EVERY = 100  # inputs between looks at the cluster's partition count
TRACED = 0.25  # the share of inputs traced for coverage (tracing makes an input ~5x slower)


@dataclass(frozen=True)
class Crash:
    """A crash: the input (its index in the run, what it is, its frame) and what went
    wrong (a traceback, the ERROR lines, or the socket check's findings)."""

    index: int
    label: str
    frame: bytes
    problem: str

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "frame": self.frame.hex(),
                "problem": self.problem}


@dataclass
class Report:
    """What a run did: inputs, crashes, outcomes by kind, the guidance's figures."""

    seed: int
    inputs: int = 0
    crashes: list[Crash] = field(default_factory=list)  # the first of each kind
    crash_count: int = 0  # every crashing input
    outcomes: Counter[str] = field(default_factory=Counter)
    covered: int = 0  # (API key, function) pairs reached
    pool: int = 0
    socket_checks: int = 0
    fresh_brokers: int = 0  # brokers replaced for holding over MAX_PARTITIONS partitions
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the process's CPU time (a shared machine's load aside)
    warm_up_seconds: float = 0.0  # of ``seconds``: the corpus replayed first

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items()))
        return (f"seed {self.seed}: {self.inputs} inputs in {self.seconds:.0f} s "
                f"({self.inputs / max(self.seconds, 1e-9):.0f}/s; CPU {self.cpu_seconds:.0f} s, "
                f"{self.inputs / max(self.cpu_seconds, 1e-9):.0f}/CPU s; warm-up "
                f"{self.warm_up_seconds:.0f} s), crashes {self.crash_count} "
                f"({len(self.crashes)} kinds)"
                f"; {kinds}; {self.covered} (API, function) pairs reached, pool {self.pool}, "
                f"{self.socket_checks} socket checks, {self.fresh_brokers} fresh brokers")


class _Errors(logging.Handler):
    """The broker's ERROR lines (tracebacks included) since the last ``take``."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self._thread:  # not the socket check's broker thread
            self.lines.append(self.format(record))

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines


class _Coverage:
    """(API key, code object) pairs the broker's functions were called under, recorded by
    cProfile's profiler, in C, between ``profiler.enable()`` and ``profiler.disable()``: the
    same pairs a call-only ``sys.settrace`` function records (both at once over 1,500 inputs),
    for about a fifth less CPU. A traced input still costs about five untraced ones: once a
    profile function is set, Python 3.11's eval loop takes its tracing path at every
    instruction."""

    def __init__(self) -> None:
        self.seen: dict[int, set[CodeType]] = {}
        self.profiler = cProfile.Profile(builtins=False, subcalls=False)

    def __len__(self) -> int:
        return sum(map(len, self.seen.values()))

    def new(self, api_key: int) -> bool:
        """Whether the functions called since the last ``new`` include one never called
        before under ``api_key``."""
        seen = self.seen.setdefault(api_key, set())
        before = len(seen)
        seen.update(entry.code for entry in self.profiler.getstats()
                    if type(entry.code) is CodeType)
        self.profiler.clear()
        return len(seen) > before


class _Broker:
    """One broker's pipeline and the connection inputs come on (a new one after a close)."""

    def __init__(self, seed: int) -> None:
        self.cluster = Cluster()
        broker = self.cluster.add_broker("127.0.0.1", 9092)
        self.pipeline = Pipeline(self.cluster, broker, FaultRegistry(seed=seed), Journal(),
                                 trio.sleep)
        self._ids = itertools.count(1)
        self.peer = Peer(next(self._ids), "/127.0.0.1")

    def partitions(self) -> int:
        return sum(len(topic.partitions) for topic in self.cluster.topics.values())

    def reconnect(self) -> None:
        self.peer.gone.set()
        self.pipeline.connection_closed(self.peer)
        self.peer = Peer(next(self._ids), "/127.0.0.1")

    async def send(self, frame: bytes) -> tuple[Outcome, Any]:
        """The outcome of one request frame, and the answer as plain data (None if none)."""
        outcome: Any = self.pipeline.answer_now(frame, self.peer)
        if outcome is WAIT:
            with trio.move_on_after(PENDING_AFTER):
                return self._read(frame, await self.pipeline.answer(frame, self.peer))
            self.reconnect()
            return Outcome(PENDING), None
        return self._read(frame, outcome)

    def _read(self, frame: bytes, outcome: Any) -> tuple[Outcome, Any]:
        if outcome is None:
            return Outcome(NO_ANSWER), None
        if isinstance(outcome, Close):
            self.reconnect()
            if outcome.last is not None:
                return answered(frame, outcome.last[4:]), None
            return Outcome(CLOSED), None
        if isinstance(outcome, Throttled):
            outcome = outcome.frame
        if not outcome:  # an acks=0 Produce over its quota
            return Outcome(NO_ANSWER), None
        return answered(frame, outcome[4:]), None


def run_in_process(inputs: int, seed: int = 1, guided: bool = True,
                   progress: Callable[[str], None] | None = None,
                   check: SocketCheck | None = None,
                   max_partitions: int = MAX_PARTITIONS) -> Report:
    """Fuzz ``inputs`` mutated requests through a fresh broker's pipeline (seeded by
    ``seed``); ``progress`` gets a line every 10,000 inputs. Crash candidates are checked
    over TCP on ``check`` (one is started when needed if None, and stopped after). The broker
    is replaced by a fresh one when it holds more than ``max_partitions`` partitions."""
    owned = check is None
    check = check or SocketCheck()
    try:
        return trio.run(functools.partial(_fuzz, inputs, seed, guided, progress, check,
                                          max_partitions),
                        clock=trio.testing.MockClock(autojump_threshold=0))
    finally:
        if owned:
            check.close()


async def _fuzz(inputs: int, seed: int, guided: bool, progress: Callable[[str], None] | None,
                check: SocketCheck, max_partitions: int) -> Report:
    rng = random.Random(seed)
    broker = _Broker(seed)
    errors = _Errors()
    logger = logging.getLogger("fakebroker")
    logger.addHandler(errors)
    report = Report(seed)
    coverage = _Coverage()
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        seeds = await _warm_up(broker)
        report.warm_up_seconds = time.perf_counter() - started
        errors.take()  # the corpus itself is the conformance tests' business
        pool: list[Seed] = []
        signatures: set[tuple[int, int, Outcome]] = set()
        kinds: set[tuple[int, str] | None] = set()  # crashes by API key and last line
        for index in range(inputs):
            parent = rng.choice(seeds) if not pool or rng.random() < 0.5 else rng.choice(pool)
            mutant = mutate(parent, rng)
            traced = guided and rng.random() < TRACED
            if traced:
                coverage.profiler.enable()
            try:
                outcome, _ = await broker.send(mutant.frame)
                problem = "\n".join(errors.take())
            except Exception:
                outcome, problem = Outcome(CLOSED), traceback.format_exc()
                broker.reconnect()
            finally:
                coverage.profiler.disable()
            report.outcomes[outcome.kind] += 1
            if outcome.kind == UNDECODABLE:
                problem = f"the broker's answer does not decode: {outcome}"
            kind = (parent.api_key, problem.strip().rsplit("\n", 1)[-1]) if problem else None
            if problem:
                report.crash_count += 1
            if (kind is not None and kind not in kinds) or index % CHECK_EVERY == CHECK_EVERY - 1:
                found = check.check(mutant.frame)
                report.socket_checks += 1
                if problem or found:
                    kinds.add(kind)
                    report.crash_count += not problem
                    crash = Crash(index, mutant.label, mutant.frame,
                                  "\n".join(filter(None, [problem, *found])))
                    report.crashes.append(crash)
                    if progress:
                        progress(f"CRASH {json.dumps(crash.as_json())}")
            signature = (parent.api_key, parent.version, outcome)
            if (traced and coverage.new(parent.api_key)) or signature not in signatures:
                signatures.add(signature)
                child = _child(mutant)
                if len(pool) < POOL_SIZE:
                    pool.append(child)
                else:
                    pool[rng.randrange(POOL_SIZE)] = child
            report.inputs = index + 1
            if report.inputs % RESET_CHECK_EVERY == 0 and broker.partitions() > max_partitions:
                broker = _Broker(seed)
                seeds = await _warm_up(broker)
                errors.take()
                report.fresh_brokers += 1
            if progress and report.inputs % PROGRESS_EVERY == 0:
                report.seconds = time.perf_counter() - started
                report.cpu_seconds = time.process_time() - cpu_started
                report.covered, report.pool = len(coverage), len(pool)
                progress(report.summary())
    finally:
        coverage.profiler.disable()
        logger.removeHandler(errors)
    report.seconds = time.perf_counter() - started
    report.cpu_seconds = time.process_time() - cpu_started
    report.covered, report.pool = len(coverage), len(pool)
    return report


def _child(mutant: Mutant) -> Seed:
    """A mutant as a parent: its body if field-aware mutations alone made it."""
    seed = mutant.seed
    return Seed(seed.api_key, seed.version, seed.client_id, mutant.body, mutant.frame)


async def _warm_up(broker: _Broker) -> list[Seed]:
    """Replay the corpus, unmutated, through the pipeline: the broker gets the corpus's state
    and every request becomes a seed."""
    side = OfflineSide(broker.cluster)
    seeds = []
    for step in corpus(fake_versions()):
        if not isinstance(step, Request):
            continue
        seed = seed_of(step, side)
        seeds.append(seed)
        outcome = broker.pipeline.answer_now(seed.frame, broker.peer)
        if outcome is WAIT:
            with trio.move_on_after(PENDING_AFTER):
                outcome = await broker.pipeline.answer(seed.frame, broker.peer)
        if isinstance(outcome, Throttled):
            outcome = outcome.frame
        if isinstance(outcome, bytes | bytearray) and outcome:
            found = _decoded(seed, outcome)
            if found is not None:
                side.learn(step, seed.body or {}, found)
        elif isinstance(outcome, Close):
            broker.reconnect()
    return seeds


def _decoded(seed: Seed, frame: bytes | bytearray) -> dict[str, Any] | None:
    from fakebroker.protocol.framing import decode_response

    try:
        return plain(decode_response(seed.api_key, seed.version, bytes(frame[4:]))[1])
    except ValueError:
        return None
