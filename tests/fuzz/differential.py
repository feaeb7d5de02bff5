"""The differential mode: the same seeded mutations over TCP to the fake and to Apache Kafka
4.4.0, their outcomes compared.

Both brokers are started as the conformance run starts them (``both_brokers``: a single-node
KRaft Kafka and a one-broker fake with the settings that matter set alike, answering as Kafka
4.4.0: the versions it serves and refuses) and get the
conformance corpus, unmutated, first (``replay``): the same topics, groups and producers on
both, and each side's ids learnt. Then every input is a corpus request, its placeholders
filled in for each side, mutated on both sides by generators seeded alike (so both get the
same mutation), sent on that side's fuzz connection, and followed by an ApiVersions probe:
the probe's answer coming first means the request got none (after a Metadata letting Kafka
auto-create topics, the run waits until Kafka leads them: ``await_auto_created``). The outcome
(``Outcome``: closed, the answer's error names, no answer, or pending after ``WAIT`` s) is
compared (one side pending and the other not is inconclusive, not a difference; so is an input
whose byte-level mutations fell on frames of different lengths, as when the two sides' member
ids differ in length: the same seeded positions then hit different fields, two inputs and not
one); a difference not matched by an entry of tests/fuzz/differences.toml (each with its
reason) is *unexplained*.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import re
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakebroker.protocol.framing import encode_request
from tests.conformance.compare import tomllib
from tests.conformance.corpus import Request, Settle
from tests.conformance.replay import Side, replay
from tests.conformance.run import both_brokers, common_versions, corpus
from tests.fuzz.mutations import Mutant, mutate
from tests.fuzz.outcomes import CLOSED, NO_ANSWER, PENDING, Outcome, answered
from tests.fuzz.seeds import seed_of
from tests.real_kafka import KAFKA_VERSION

WAIT = 0.5  # s an input may take to be answered (a mutated long poll may take its maximum)
CONNECT_ATTEMPTS = 3
# Neither replayed nor mutated here: the corpus's client quotas include 127.0.0.1's
# connection_creation_rate (50/s), which throttles the fuzzer's new connections (one after
# every closed input) on Kafka; and a mutated CreateTopics or CreatePartitions makes Kafka
# create up to 10,000 partitions on disk, after which it answers nothing in time for
# minutes on a 2-core machine. The in-process mode mutates them.
NOT_REPLAYED = frozenset({"AlterClientQuotas"})
# Array elements repeated at most this often here (the in-process mode: 5,000). Kafka reads a
# keyed array (an ImplicitLinkedHashMultiCollection: Produce's topics, ElectLeaders' and
# AddPartitionsToTxn's...) in a time that grows faster than the square of its equal keys, on
# the network thread that read the request (measured on Kafka 4.4, ElectLeaders v2 with N
# entries for one topic: 500 0.23 s, 1,000 2.4 s, 3,000 36 s, 5,000 over 120 s; N distinct
# topics: 0.02 s at 2,000). Three such requests hold its three network threads: it then
# answers nothing and accepts no connection for minutes.
MAX_REPEAT = 300
NOT_MUTATED = NOT_REPLAYED | {"CreateTopics", "CreatePartitions"}
# Kafka's one node (tests/conformance/run.py's both_brokers): an UnregisterBroker naming it makes
# Kafka drop its own broker from its metadata until it restarts (no leader, no coordinator
# for the rest of the run: measured, 16,000 of the next 85,000 inputs differed), where the
# fake keeps it (tests/conformance/known.toml, "unregister-live-broker"). Such inputs are
# withheld from both sides.
KAFKA_NODE = 1
UNREGISTER_BROKER = 64
METADATA = 3
AUTO_CREATE_WAIT = 2.0  # s Kafka may take to make the topics a Metadata auto-created
PROBE_CORRELATION = 0x7FFF_FFF0
PROBE = encode_request(18, 0, PROBE_CORRELATION, "fuzz-probe", {})
DIFFERENCES = Path(__file__).with_name("differences.toml")


@dataclass(frozen=True)
class Explained:
    """A kind of difference kept on purpose: the inputs it covers (API name, a regular
    expression over the mutations, Kafka's and the fake's outcomes as ``str(Outcome)``
    patterns) and why."""

    api: str
    mutation: str
    kafka: str
    fake: str
    reason: str
    versions: str = "*"  # the API versions covered: "*", "N" or "N-M"

    def covers(self, difference: Difference) -> bool:
        low, _, high = self.versions.partition("-")
        return ((self.api in ("*", difference.api))
                and (self.versions == "*"
                     or int(low) <= difference.version <= int(high or low))
                and re.search(self.mutation, difference.mutation) is not None
                and re.fullmatch(self.kafka, str(difference.kafka)) is not None
                and re.fullmatch(self.fake, str(difference.fake)) is not None)


def load_explained(path: Path = DIFFERENCES) -> list[Explained]:
    return [Explained(**entry) for entry in tomllib.loads(path.read_text()).get("difference", [])]


@dataclass(frozen=True)
class Difference:
    index: int
    api: str
    version: int
    mutation: str
    kafka: Outcome
    fake: Outcome
    frame: bytes  # the fake's input
    kafka_frame: bytes  # Kafka's (its own ids filled in)
    explained_by: str | None

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "api": self.api, "version": self.version,
                "mutation": self.mutation, "kafka": str(self.kafka), "fake": str(self.fake),
                "frame": self.frame.hex(), "kafka_frame": self.kafka_frame.hex(),
                "explained_by": self.explained_by}


@dataclass
class DiffResult:
    seed: int
    inputs: int = 0
    same: int = 0
    differences: list[Difference] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)  # Kafka's, by kind
    stopped: str | None = None  # why the run ended early
    inconclusive: int = 0  # one side answered, the other not within WAIT
    withheld: int = 0  # inputs that would take Kafka's own broker away (``fells_kafka``)
    unlike: int = 0  # byte-level mutations of frames of different lengths: not one input
    seconds: float = 0.0

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if d.explained_by is None]

    def kinds(self) -> Counter[tuple[str, str, str, str | None]]:
        """Differences by API, Kafka's outcome, the fake's, and the entry explaining them."""
        return Counter((d.api, str(d.kafka), str(d.fake), d.explained_by)
                       for d in self.differences)

    def summary(self) -> str:
        lines = [f"seed {self.seed}: {self.inputs} inputs in {self.seconds:.0f} s, "
                 f"{self.same} same outcome, {self.inconclusive} inconclusive (one side pending), "
                 f"{self.unlike} unlike (frames of different lengths mutated byte-wise), "
                 f"{self.withheld} withheld (unregistering Kafka's own broker), "
                 f"{len(self.differences)} differences "
                 f"({len(self.unexplained)} unexplained); Kafka's outcomes: "
                 + ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items()))
                 + (f"; stopped: {self.stopped}" if self.stopped else "")]
        for (api, kafka, fake, why), n in self.kinds().most_common():
            lines.append(f"  {n:6d}  {api}: Kafka {kafka} / fake {fake}"
                         f"  [{why or 'UNEXPLAINED'}]")
        return "\n".join(lines)


class _Connection:
    """One side's fuzz connection, made again after it closes."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.address = (host, int(port))
        self.sock: socket.socket | None = None
        self.closed = False

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def send(self, frame: bytes) -> None:
        """Send ``frame`` (its size prefix added) and the probe; ``outcome`` reads what
        became of it."""
        self.closed = False
        for attempt in range(CONNECT_ATTEMPTS):
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(self.address, timeout=WAIT)
                break
            except TimeoutError:  # a loaded machine: Kafka's acceptor is slow
                if attempt == CONNECT_ATTEMPTS - 1:
                    raise
        assert self.sock is not None
        try:
            self.sock.sendall(struct.pack(">i", len(frame)) + frame + PROBE)
        except OSError:  # closed while we wrote (a frame refused from its size on)
            self.closed = True

    def outcome(self, frame: bytes) -> Outcome:
        """What became of ``frame``, sent by ``send``."""
        sock = self.sock
        try:
            if self.closed or sock is None:
                raise EOFError
            answer = self._frame(sock)
            if struct.unpack_from(">i", answer)[0] == PROBE_CORRELATION and not (
                    len(frame) >= 8 and struct.unpack_from(">i", frame, 4)[0]
                    == PROBE_CORRELATION):
                return Outcome(NO_ANSWER)
            self._frame(sock)  # the probe's answer
            return answered(frame, answer)
        except (ConnectionError, EOFError):
            self.close()
            return Outcome(CLOSED)
        except TimeoutError:
            self.close()
            return Outcome(PENDING)

    @staticmethod
    def _frame(sock: socket.socket) -> bytes:
        size = struct.unpack(">i", _exactly(sock, 4))[0]
        return _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def run_differential(tmp_dir: Path, inputs: int, seed: int = 1,
                     progress: Callable[[str], None] | None = None,
                     sent: Callable[[int, str], bool] | None = None,
                     trace: Callable[[str], None] | None = None) -> DiffResult:
    """Start both brokers (Kafka in ``tmp_dir``), replay the corpus, then send ``inputs``
    seeded mutations to both and compare their outcomes.

    ``sent(index, api)``, when given, chooses the inputs sent: the others are drawn all the
    same (every input is the one the whole run has at its index) but not sent, so a
    difference that earlier inputs cause can be narrowed down to them. ``trace``, when given,
    gets a line for every input sent: its index, API, version, mutations and both outcomes."""
    explained = load_explained()
    logger = logging.getLogger("fakebroker")
    level = logger.level
    logger.setLevel(logging.ERROR)  # a warning per closed input; restored after the run
    try:
        with both_brokers(tmp_dir, kafka_version=KAFKA_VERSION) as sides:
            steps = [dataclasses.replace(s, quota_entities=None) if isinstance(s, Settle)
                     else s for s in corpus(common_versions(sides[0]))
                     if not (isinstance(s, Request) and s.api in NOT_REPLAYED)]
            replay(steps, sides)
            requests = [s for s in steps
                        if isinstance(s, Request) and s.api not in NOT_MUTATED]
            return _fuzz(sides, requests, inputs, seed, explained, progress, sent, trace)
    finally:
        logger.setLevel(level)


def _fuzz(sides: list[Side], requests: list[Request], inputs: int, seed: int,
          explained: list[Explained], progress: Callable[[str], None] | None,
          sent: Callable[[int, str], bool] | None = None,
          trace: Callable[[str], None] | None = None) -> DiffResult:
    from fakebroker.protocol.specs import api_spec

    kafka, fake = sides
    seeds = [(seed_of(r, kafka), seed_of(r, fake)) for r in requests]
    connections = [_Connection(kafka.address), _Connection(fake.address)]
    rng = random.Random(seed)
    result = DiffResult(seed)
    started = time.perf_counter()
    try:
        for index in range(inputs):
            kafka_seed, fake_seed = rng.choice(seeds)
            draw = rng.getrandbits(64)
            if sent is not None and not sent(index, api_spec(fake_seed.api_key).name):
                continue
            mutants = [mutate(kafka_seed, random.Random(draw), MAX_REPEAT),
                       mutate(fake_seed, random.Random(draw), MAX_REPEAT)]
            if fells_kafka(mutants[0].frame):
                result.withheld += 1
                continue
            try:
                for connection, mutant in zip(connections, mutants, strict=True):
                    connection.send(mutant.frame)
            except OSError as exc:  # a timeout (Kafka's acceptor), a refusal (a broker gone)
                result.stopped = (f"a broker accepted no connection after input {index}: "
                                  f"{exc!r}")
                break
            outcomes = [c.outcome(m.frame) for c, m in zip(connections, mutants, strict=True)]
            result.outcomes[outcomes[0].kind] += 1
            if outcomes[0].kind != CLOSED:
                await_auto_created(kafka, mutants[0].frame)
            if trace:
                trace(f"#{index} {api_spec(fake_seed.api_key).name} v{fake_seed.version} "
                      f"[{', '.join(mutants[1].mutations)}] Kafka {outcomes[0]} / fake "
                      f"{outcomes[1]}")
            result.inputs = index + 1
            if outcomes[0] == outcomes[1]:
                result.same += 1
            elif mutants[0].body is None and len(kafka_seed.frame) != len(fake_seed.frame):
                result.unlike += 1
            elif PENDING in (outcomes[0].kind, outcomes[1].kind):
                result.inconclusive += 1  # one side slow (a loaded machine, a long poll)
            else:
                result.differences.append(_difference(index, mutants, *outcomes,
                                                      explained))
            if progress and result.inputs % 1000 == 0:
                result.seconds = time.perf_counter() - started
                progress(result.summary().split("\n", 1)[0])
    finally:
        for connection in connections:
            connection.close()
    result.seconds = time.perf_counter() - started
    return result


def await_auto_created(kafka: Side, frame: bytes) -> None:
    """After a Metadata that lets Kafka auto-create topics: wait (at most ``AUTO_CREATE_WAIT``
    s) until Kafka leads the valid names it asked for. Kafka answers before its controller
    has made them, the fake makes them at once: without the wait, the next input naming
    one (OffsetCommit of "ghost" right after such a Metadata) found it on the fake only."""
    from fakebroker.protocol.framing import DecodeError, decode_request, peek_header
    from fakebroker.state.cluster import invalid_topic_name

    try:
        if peek_header(frame)[0] != METADATA:
            return
        body = decode_request(frame)[1]
    except (DecodeError, KeyError):
        return
    if not getattr(body, "allow_auto_topic_creation", True) or body.topics is None:
        return
    names = tuple(dict.fromkeys(t.name for t in body.topics if t.name is not None
                                and invalid_topic_name(t.name) is None
                                and not t.name.startswith("__")))
    if names:
        try:
            kafka.settle(Settle(topics=names), time.monotonic() + AUTO_CREATE_WAIT)
        except TimeoutError:
            pass  # not made (a name Kafka keeps, a name not auto-created): nothing to wait for


def fells_kafka(frame: bytes) -> bool:
    """Whether ``frame`` is an UnregisterBroker naming Kafka's own node (as Kafka reads it)."""
    from fakebroker.protocol.framing import DecodeError, decode_request, peek_header

    try:
        if peek_header(frame)[0] != UNREGISTER_BROKER:
            return False
        return decode_request(frame)[1].broker_id == KAFKA_NODE
    except (DecodeError, KeyError):  # a frame that does not parse: closed, harmlessly
        return False


def _difference(index: int, mutants: list[Mutant], kafka: Outcome, fake: Outcome,
                explained: list[Explained]) -> Difference:
    from fakebroker.protocol.specs import api_spec

    mutant = mutants[1]
    found = Difference(index, api_spec(mutant.seed.api_key).name, mutant.seed.version,
                       ", ".join(mutant.mutations), kafka, fake, mutant.frame,
                       mutants[0].frame, None)
    for entry in explained:
        if entry.covers(found):
            return Difference(**{**found.__dict__, "explained_by": entry.reason[:60]})
    return found
