"""The differential mode: the same seeded mutations over TCP to the fake and to Apache Kafka
4.4.0, their outcomes compared.

Both brokers are started as the conformance run starts them (``both_brokers``: a single-node
KRaft Kafka and a one-broker fake with the settings that matter set alike, answering as Kafka
4.4.0: the versions it serves and refuses; both looking for timed-out transactions every
10 ms, ``ABORT_SCAN``; neither log cleaner nor group cleanup running, ``CLEANER_IDLE``; a
group's target assignment computed at the heartbeat that needs one, no member's session
running out, ``GROUP_TIMING``) and get the
conformance corpus, unmutated, first (``replay``): the same topics, groups and producers on
both, and each side's ids learnt. Then every input is a corpus request, its placeholders
filled in for each side, mutated on both sides by generators seeded alike (so both get the
same mutation), sent on that side's fuzz connection, and followed by an ApiVersions probe:
the probe's answer coming first means the request got none (after an input that may create
or delete topics, the run waits until Kafka, which does it asynchronously, has done what the
fake did: ``TOPIC_CHANGING``). The outcome (``Outcome``: closed,
the answer's error names, no answer, or pending after ``WAIT`` s) is compared (one side
pending and the other not is inconclusive, not a difference; so is an input whose byte-level
mutations fell on frames of different lengths, as when the two sides' member ids differ in
length: the same seeded positions then hit different fields, two inputs and not one, or
that made one side's ids read as structure its reader refuses and the other's reads,
``read_alike``, or that left one side's id as it was and changed the other's,
``edited_alike``); a difference not matched by an entry of tests/fuzz/differences.toml (each
with its reason) is *unexplained*.
"""

from __future__ import annotations

import contextlib
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
from tests.fuzz.outcomes import ANSWERED, CLOSED, NO_ANSWER, PENDING, Outcome, answered
from tests.fuzz.seeds import seed_of
from tests.real_kafka import KAFKA_VERSION

FETCH_KEY = 1  # Kafka's api key of Fetch
WAIT = 0.5  # s an input may take to be answered (a mutated long poll may take its maximum)
# A ShareFetch pending after WAIT s (a long poll: nothing to acquire) is waited for, at most
# DRAIN s (the corpus's longest ShareFetch wait, 10 s, and a margin), its connection kept, on
# both sides: the share session it opened or continued is the connection's, and Kafka sees a
# connection close only once the request it serves has been answered (its channel is muted
# until then), so a close at WAIT s ended the session on Kafka at the end of the request's
# wait, ~10 s later, and on the fake at once or as late, whichever the late inputs met:
# measured on seed 2, whose first pending ShareFetch (#533, epoch 0, 10 s) left Kafka's
# session to answer the next ones INVALID_SHARE_SESSION_EPOCH where the fake's was gone.
DRAINED = frozenset({"ShareFetch"})
DRAIN = 12.0
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
# The mutated APIs that create (Metadata's auto-creation) or delete topics: Kafka does it a
# moment after it answers (measured on Kafka 4.4: a Fetch of a topic just auto-created
# answers UNKNOWN_TOPIC_OR_PARTITION, then NOT_LEADER_OR_FOLLOWER, for ~50 ms), the fake at
# once, so after one that changed the fake's topics the run waits (at most SETTLE s) until
# Kafka has done it too. A byte-level mutant's names are not known (its frame may name another
# topic than its body did: seed 3's #9434 fetched a topic one such Metadata had just created
# on both), so after one the fake's whole topic list is compared. The API is the one the
# frame's header names: bits flipped in it make another API's request one of these (seed 1's
# #708881, a DescribeLogDirs v1 read as a Metadata v1, auto-created the topic it named on
# both, Kafka after the fake: the DescribeTopicPartitions at #708884 found it on the fake
# only). CreateTopics is never a seed mutated (``NOT_MUTATED``) but may be such a frame.
TOPIC_CHANGING = frozenset({"Metadata", "DeleteTopics", "CreateTopics"})
SETTLE = 5.0
# Both coordinators look for the transactions past their timeout every 10 ms (Kafka's default:
# every 10 s, from its start; the fake's count from its first transaction), so a timed-out
# transaction is aborted at nearly the same moment on both and the run compares what the
# coordinators answer, not where two 10 s scans fall: with the default, an input between a
# transaction's deadline and one side's scan differed (seed 1's #25951, #27317, #28317).
ABORT_SCAN = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "10"}
# Neither log cleaner runs during a run (its first pass, at Kafka's start, finds nothing to
# clean): a mutated config (seed 2's IncrementalAlterConfigs #32661, validate_only flipped)
# makes a corpus topic ``compact,delete`` with retention.ms 1000, and each cleaner pass (every
# ``log.cleaner.backoff.ms``, 15 s) then deletes all of its logs, the active segment too, log
# start = log end, on two independent clocks: the Fetch of offset 100 that followed was in
# range on one side and not on the other, at inputs no difference explains (seed 2's #64413,
# #68495, #69007, #76593, measured). Time retention is never checked either
# (``SUITE_LOG_TIMING``), so a log's start moves only by what an input does.
# Nor does either group coordinator's cleanup (``offsets.retention.check.interval.ms``, 10
# minutes, counted from each broker's own start): in a run past 10 minutes Kafka deleted the
# empty group "clas" of earlier mutated joins while the fake, which did not clean up then, still
# described it (seed 2's DescribeGroups #99634, #99886 in a 601 s run).
DAY = str(24 * 3600 * 1000)  # ms
CLEANER_IDLE = {"log.cleaner.backoff.ms": DAY, "offsets.retention.check.interval.ms": DAY}
# Both group coordinators compute a KIP-848 consumer, share or streams group's target
# assignment at the heartbeat that needs one, and neither waits to: by default Kafka computes
# one at most once per assignment interval (1 s), a streams group's first after an initial
# delay (3 s), each on an assignor thread (offload), so whether a heartbeat met a new target
# depended on where the run's clock fell on two brokers' own timers (the fake computes one at
# every change: its consumer groups' documented difference): in a run of the group APIs
# alone, seed 1's OffsetCommit #149678 and #151394 met a consumer member at another epoch on
# each side (STALE_MEMBER_EPOCH on Kafka, UNKNOWN_MEMBER_ID on the fake), not with these. No
# member's session runs out in a run either (a day; Kafka's maximum is raised to it): an
# expiry falling between the two sides' copies of an input parts them for good.
GROUP_TIMING = {**{f"group.{kind}.assignment.interval.ms": "0"
                   for kind in ("consumer", "share", "streams")},
                **{f"group.{kind}.assignor.offload.enable": "false"
                   for kind in ("consumer", "share", "streams")},
                "group.streams.initial.rebalance.delay.ms": "0",
                **{f"group.{kind}.{bound}session.timeout.ms": DAY
                   for kind in ("consumer", "share", "streams") for bound in ("max.", "")}}
# Kafka checks every producer.id.expiration.check.interval.ms (10 minutes from its start) for
# idempotent producers whose last batch's timestamp is older than producer.id.expiration.ms
# (1 day) and forgets them; the corpus's batches carry timestamps of 2023, so a run past 10
# minutes found Kafka accepting epochs and sequences the fake, which keeps its producers
# (producer-id expiration is not modelled), refuses, and the reverse (seed 1 from #207693: 98
# Produce differences; none in a run to #230000 with the check idled). The check is idled on
# Kafka.
KAFKA_ONLY = {"producer.id.expiration.check.interval.ms": DAY}
# Inputs withheld from both sides, as they leave Kafka in a state no later input can be compared
# in (``fells_kafka``):
# * an UnregisterBroker naming Kafka's one node (tests/conformance/run.py's both_brokers):
#   Kafka drops its own broker from its metadata until it restarts (no leader, no coordinator
#   for the rest of the run: measured, 16,000 of the next 85,000 inputs differed), where the
#   fake keeps it (tests/conformance/known.toml, "unregister-live-broker");
# * an IncrementalAlterConfigs with a config operation Kafka does not know (not 0-3): its
#   quorum controller fails on a NullPointerException (ConfigurationControlManager,
#   answered UNKNOWN_SERVER_ERROR, as the fake answers it) and renounces its leadership, and
#   requests for the controller get NOT_LEADER_OR_FOLLOWER for a while after (seed 3: an
#   AddRaftVoter 64 inputs later, measured);
# * an AddRaftVoter with a listener named by the empty string: Kafka's raft IO thread fails on
#   ListenerName.normalised's ConfigException ("The provided listener name is null or empty
#   string", from Endpoints.fromAddVoterRequest) and its ProcessTerminatingFaultHandler ends
#   the process (measured on 4.4: seeds 2 and 3 at 100,000 inputs stopped there, every later
#   connection refused), where the fake answers INVALID_REQUEST;
# * a Produce with a partition's records null (as Kafka reads the frame): Kafka never answers
#   it (its request handler's NullPointerException in ProduceRequest.partitionSizes, met
#   again while logging the first error, so no error response is sent) and so never unmutes
#   its connection: the fuzzer's close of it goes unseen, and the share session opened on it
#   lives on (measured on 4.4: fetched at its next epochs for 23 s after the close, a 5 s
#   Produce timeout) where the fake, answering INVALID_RECORD, ends it at the close (seed 2:
#   #89121 opened the session, #89124 the Produce; #89481, #89540, #89776, #89923 then met
#   Kafka's session, INVALID_SHARE_SESSION_EPOCH / SHARE_SESSION_NOT_FOUND). Only a partition
#   Kafka has gets that far: one naming a partition it does not have is answered
#   (UNKNOWN_TOPIC_OR_PARTITION, as by the fake: 2 of the 8 such inputs of seed 2's
#   80,000-90,000), but which partitions Kafka has is not the frame's to tell, so those few
#   comparisons are given up with the rest;
# * an AlterConfigs naming a resource twice (type and name): Kafka never answers it either
#   (AlterConfigsResponse.errors collects its results by resource: an IllegalStateException,
#   "Duplicate key", met again while sending the error response), where the fake answers
#   INVALID_REQUEST: the same muted connection (measured on seed 2's 80,000-90,000: 3 of 3
#   pending, each an IllegalStateException in Kafka's log).
KAFKA_NODE = 1
UNREGISTER_BROKER = 64
INCREMENTAL_ALTER_CONFIGS = 44
ADD_RAFT_VOTER = 80
PRODUCE = 0
ALTER_CONFIGS = 33
CONFIG_OPERATIONS = range(4)  # SET, DELETE, APPEND, SUBTRACT
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
    # the API keys the frames carry, as "N" or "N-M" ("*": any): a byte-level mutation may
    # have changed the key of the API drawn (``api``)
    sent_keys: str = "*"

    def covers(self, difference: Difference) -> bool:
        return ((self.api in ("*", difference.api))
                and in_range(self.versions, difference.version)
                and (self.sent_keys == "*" or len(difference.frame) >= 2 and in_range(
                    self.sent_keys, struct.unpack_from(">h", difference.frame)[0]))
                and re.search(self.mutation, difference.mutation) is not None
                and re.fullmatch(self.kafka, str(difference.kafka)) is not None
                and re.fullmatch(self.fake, str(difference.fake)) is not None)


def in_range(covered: str, value: int) -> bool:
    """``value`` within ``covered``: "*" (anything), "N" or "N-M"."""
    low, _, high = covered.partition("-")
    return covered == "*" or int(low) <= value <= int(high or low)


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
    withheld: int = 0  # inputs that would disable a part of Kafka (``fells_kafka``)
    unlike: int = 0  # byte-level mutations of frames of different lengths, or of frames
    # the reader refuses on one side only (``read_alike``), or overwrites keeping one side's
    # id only (``edited_alike``): not one input
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
                 f"{self.unlike} unlike (frames mutated byte-wise of different lengths, "
                 f"read differently or one side's id kept), "
                 f"{self.withheld} withheld (disabling a part of Kafka), "
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
        self.unread = 0  # frames still to come for the last input (pending: not yet read)

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
        """What became of ``frame``, sent by ``send``. A pending one leaves the connection
        open: ``settle`` waits for the rest or closes it."""
        sock = self.sock
        self.unread = 2  # the answer (none: acks=0) and the probe's
        try:
            if self.closed or sock is None:
                raise EOFError
            answer = self._frame(sock)
            self.unread = 1
            if struct.unpack_from(">i", answer)[0] == PROBE_CORRELATION and not (
                    len(frame) >= 8 and struct.unpack_from(">i", frame, 4)[0]
                    == PROBE_CORRELATION):
                self.unread = 0
                return Outcome(NO_ANSWER)
            self._frame(sock)  # the probe's answer
            self.unread = 0
            return answered(frame, answer)
        except (ConnectionError, EOFError):
            self.close()
            return Outcome(CLOSED)
        except TimeoutError:
            return Outcome(PENDING)

    def settle(self, frame: bytes, deadline: float) -> None:
        """After a pending ``frame``: read its late answer and the probe's by ``deadline``
        (``time.monotonic``), the connection kept (what the broker holds for it lives on),
        else close it."""
        sock = self.sock
        if sock is None or not self.unread:
            return
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            if self.unread == 2 and struct.unpack_from(">i", self._frame(sock))[0] \
                    == PROBE_CORRELATION and not (
                        len(frame) >= 8 and struct.unpack_from(">i", frame, 4)[0]
                        == PROBE_CORRELATION):
                self.unread = 0  # that was the probe's: the request got no answer
            else:
                self._frame(sock)  # the probe's answer
                self.unread = 0
        except (ConnectionError, EOFError, TimeoutError):
            self.close()
        finally:
            if self.sock is not None:
                self.sock.settimeout(WAIT)

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
        with both_brokers(tmp_dir, kafka_version=KAFKA_VERSION,
                          overrides={**ABORT_SCAN, **CLEANER_IDLE, **GROUP_TIMING},
                          kafka_only=KAFKA_ONLY) as sides:
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
            named = watched_topics(mutants[0])
            before = _present(fake, named) if named != [] else []
            try:
                for connection, mutant in zip(connections, mutants, strict=True):
                    connection.send(mutant.frame)
            except OSError as exc:  # a timeout (Kafka's acceptor), a refusal (a broker gone)
                result.stopped = (f"a broker accepted no connection after input {index}: "
                                  f"{exc!r}")
                break
            outcomes = [c.outcome(m.frame) for c, m in zip(connections, mutants, strict=True)]
            pending = PENDING in (outcomes[0].kind, outcomes[1].kind)
            if pending and api_spec(fake_seed.api_key).name in DRAINED:
                deadline = time.monotonic() + DRAIN  # both sides' wait runs at once
                for connection, mutant in zip(connections, mutants, strict=True):
                    connection.settle(mutant.frame, deadline)
            elif pending or (outcomes[0].kind == CLOSED) != (outcomes[1].kind == CLOSED):
                # what one side's close ends (a pending input's, or a refusal the other side
                # answered: the share session opened on the connection) ends on the other
                # side too, so the next ShareFetch finds no session on either side
                for connection in connections:
                    connection.close()
            result.outcomes[outcomes[0].kind] += 1
            if named != [] and (present := _present(fake, named)) != before:
                changed = sorted(set(present) ^ set(before))
                _topics_settled(kafka, changed, [n for n in changed if n in present])
            if trace:
                trace(f"#{index} {api_spec(fake_seed.api_key).name} v{fake_seed.version} "
                      f"[{', '.join(mutants[1].mutations)}] Kafka {outcomes[0]} / fake "
                      f"{outcomes[1]}")
            result.inputs = index + 1
            if outcomes[0] == outcomes[1]:
                result.same += 1
            elif mutants[0].body is None and (len(kafka_seed.frame) != len(fake_seed.frame)
                                              or not read_alike(mutants[0].frame,
                                                                mutants[1].frame)) \
                    or not edited_alike(kafka_seed.frame, mutants[0].frame,
                                        fake_seed.frame, mutants[1].frame):
                result.unlike += 1
            elif pending:
                result.inconclusive += 1  # one side slow (a loaded machine, a long poll)
            else:
                found = _difference(index, mutants, *outcomes, explained)
                if found.explained_by is None and (drift := _drifted(sides, mutants[1],
                                                                     *outcomes)):
                    found = dataclasses.replace(found, explained_by=drift)
                result.differences.append(found)
            if progress and result.inputs % 1000 == 0:
                result.seconds = time.perf_counter() - started
                progress(result.summary().split("\n", 1)[0])
    finally:
        for connection in connections:
            connection.close()
    result.seconds = time.perf_counter() - started
    return result


OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
DRIFTED = "drifted log: each side's Fetch outcome is its own log's range"


def _drifted(sides: list[Side], mutant: Mutant, kafka: Outcome, fake: Outcome) -> str | None:
    """Why a Fetch difference is the two logs' drift and not the fetch, if it is: see
    ``drift_explains``. The fetched partitions are read from the fake's body (a byte-level
    mutant's as the fake's reader reads it: both sides read alike, ``read_alike`` and
    ``edited_alike`` made sure) and each side's log start and end asked then (ListOffsets
    earliest and latest); a partition neither side has is left out (``fetch_offsets``)."""
    from fakebroker.protocol.framing import DecodeError, decode_request

    body = mutant.body
    if body is None:
        try:
            header, body = decode_request(mutant.frame)
        except (DecodeError, KeyError, ValueError):
            return None
        if header.api_key != FETCH_KEY:
            return None
    elif mutant.seed.api_key != FETCH_KEY:
        return None
    if body.get("session_epoch", -1) > 0:  # an incremental fetch: more partitions
        return None
    kafka_side, fake_side = sides
    names = {topic_id: name for name, topic_id in fake_side.topic_ids.items()}
    offsets = fetch_offsets(body, names)
    if offsets is None:
        return None
    fetched = []
    for (name, partition), offset in offsets.items():
        ranges = [_log_range(side, name, partition) for side in (kafka_side, fake_side)]
        if ranges == [None, None]:  # on neither side (each answers UNKNOWN_TOPIC_OR_PARTITION)
            continue
        if None in ranges:
            return None
        fetched.append((offset, *ranges))
    if not drift_explains(kafka, fake, fetched):
        return None
    return DRIFTED + "; " + "; ".join(
        f"offset {o}: Kafka [{k[0]}, {k[1]}], fake [{f[0]}, {f[1]}]" for o, k, f in fetched)


def fetch_offsets(body: Any, names: dict[Any, str]) -> dict[tuple[str, Any], int] | None:
    """The offset a Fetch ``body`` reads each (topic name, partition) at: a partition named
    twice at its last offset, in the place of its first, as both brokers read it (measured on
    Kafka 4.4). Topic ids are named by ``names``; None if a topic or offset is unreadable."""
    offsets: dict[tuple[str, Any], int] = {}
    for topic in body.get("topics") or ():
        name = topic.get("topic") or names.get(topic.get("topic_id"))
        for partition in topic.get("partitions") or ():
            if not isinstance(name, str) or not isinstance(partition, dict) or \
                    not isinstance(offset := partition.get("fetch_offset"), int):
                return None
            offsets[name, partition.get("partition")] = offset
    return offsets


def drift_explains(kafka: Outcome, fake: Outcome,
                   fetched: list[tuple[int, tuple[int, int], tuple[int, int]]]) -> bool:
    """Whether a Fetch's two outcomes differ only as the two logs do: ``fetched`` holds each
    partition's fetch offset and Kafka's and the fake's log (start, end) at that moment. So
    when the outcomes differ by OFFSET_OUT_OF_RANGE alone, each side answers it exactly when
    an offset is outside its own [start, end] (as Kafka's log read refuses), and some fetched
    log's range differs between the sides. Two logs drift apart after an explained
    difference: a Produce batch the fake stores where Kafka refuses it (INVALID_RECORD, in
    tests/fuzz/differences.toml), then a DeleteRecords to the high watermark, which moves each
    log's start to its own end (seed 2: orders-1 at [100, 120] on Kafka and [101, 124] on the
    fake at #64413)."""
    if (kafka.kind, fake.kind) != (ANSWERED, ANSWERED) or not fetched or \
            kafka.errors ^ fake.errors != {OUT_OF_RANGE}:
        return False
    for outcome, side in ((kafka, 1), (fake, 2)):
        out = any(not entry[side][0] <= entry[0] <= entry[side][1] for entry in fetched)
        if out != (OUT_OF_RANGE in outcome.errors):
            return False
    return any(k != f for _, k, f in fetched)


def _log_range(side: Side, topic: str, partition: Any) -> tuple[int, int] | None:
    """``side``'s log start and end of ``topic``'s ``partition``; None if not both known."""
    if not isinstance(partition, int):
        return None
    found = []
    for timestamp in (-2, -1):  # earliest, latest
        answer = side.call(Request("ListOffsets", 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
                {"partition_index": partition, "current_leader_epoch": -1,
                 "timestamp": timestamp}]}]}, "drift probe", client_id="settle"))
        try:
            (entry,) = answer["topics"][0]["partitions"]
        except (TypeError, KeyError, IndexError, ValueError):
            return None
        if entry["error_code"]:
            return None
        found.append(entry["offset"])
    return found[0], found[1]


def watched_topics(mutant: Mutant) -> list[str] | None:
    """The topics an input may create or delete (``TOPIC_CHANGING``), to be watched until
    Kafka has done what the fake did: those its body names, None (any topic) for a frame
    mutated byte-wise, [] for an input of another API."""
    from fakebroker.protocol.framing import DecodeError, peek_header
    from fakebroker.protocol.specs import api_spec

    try:
        sent = api_spec(peek_header(mutant.frame)[0]).name
    except (DecodeError, KeyError):  # no header, or an API Kafka does not define
        return []
    if sent not in TOPIC_CHANGING:
        return []
    return None if mutant.body is None else _named_topics(mutant.body)


def _named_topics(body: Any) -> list[str]:
    """The topic names a Metadata or DeleteTopics body names (those a topic may have)."""
    named = [t.get("name") for t in body.get("topics") or () if isinstance(t, dict)]
    named += list(body.get("topic_names") or ())
    return sorted({n for n in named if isinstance(n, str) and 0 < len(n) <= 249})


def _topics_settled(kafka: Side, names: list[str], present: list[str]) -> None:
    """Wait (at most ``SETTLE`` s) until Kafka has those of ``names`` the fake has
    (``present``), each led and answering for every partition, and not the others (see
    ``TOPIC_CHANGING``)."""
    deadline = time.monotonic() + SETTLE
    while _present(kafka, names) != present:
        if time.monotonic() > deadline:
            return  # not settled: the inputs after it may differ, and say so
        time.sleep(0.01)
    if present:
        with contextlib.suppress(TimeoutError):
            kafka.settle(Settle(topics=tuple(present)), deadline)


def _present(side: Side, names: list[str] | None) -> list[str]:
    """Which of ``names`` (None: of every topic) ``side``'s metadata lists."""
    topics = None if names is None else [{"name": n} for n in names]
    answer = side.call(Request("Metadata", 12, {"topics": topics,
                                                "allow_auto_topic_creation": False},
                               "settle", client_id="settle"))
    return sorted(t["name"] for t in answer["topics"] if t["error_code"] == 0)


def read_alike(kafka_frame: bytes, fake_frame: bytes) -> bool:
    """Whether the request reader (Kafka's generated readers' rules, which the fake's codec
    follows: tests/test_wire_request_parsing.py) refuses both frames of one byte-level input
    or neither. The two differ in each side's ids (a topic id, a producer id); a mutation that
    moves what is read (a length, a count) can make those bytes structure, a varint or a
    tagged field, that one side's reader refuses and the other's reads: two inputs and not
    one. Seed 1, #37320: an OffsetFetch v10 whose member id's length lost a bit reads the
    topic id as the group's tagged fields, a varint longer than 5 bytes with the fake's id
    (closed by both brokers, sent that frame) and two tagged fields with Kafka's (answered
    by both)."""
    return _reads(kafka_frame) == _reads(fake_frame)


def edited_alike(kafka_seed: bytes, kafka_frame: bytes, fake_seed: bytes,
                 fake_frame: bytes) -> bool:
    """Whether a mutation that overwrote bytes in place left each run of bytes in which the two
    seeds differ (a side's own id: a topic id, a producer id, a member id) as it was on both
    sides or on neither. An overwrite that writes, into one side's id, the byte it already
    held changes the other side's id only: one side then names its own topic (or producer)
    and the other an unknown one, two inputs and not one (seed 1, #60246: a Fetch's "00 at
    58" kept the fake's topic id, OFFSET_OUT_OF_RANGE, and made Kafka's unknown,
    UNKNOWN_TOPIC_ID). A run is compared also when another mutation changed the frames'
    length after it (seed 2, #96062: a Produce v13's "80 at 45" wrote the byte the fake's
    topic id ended with, then "tagged field 5" lengthened both frames at their end); one that
    moved the run (bytes inserted or deleted before it) leaves it unlike its seed on both
    sides. Seeds or frames of two lengths (ids of two lengths) are not compared here."""
    if len(kafka_seed) != len(fake_seed) or len(kafka_frame) != len(fake_frame):
        return True
    run: list[int] = []
    for position in [*range(len(kafka_seed)), len(kafka_seed)]:
        if position < len(kafka_seed) and kafka_seed[position] != fake_seed[position]:
            run.append(position)
            continue
        if run:
            start, end = run[0], run[-1] + 1
            if (kafka_frame[start:end] == kafka_seed[start:end]) != \
                    (fake_frame[start:end] == fake_seed[start:end]):
                return False
            run = []
    return True


def _reads(frame: bytes) -> bool:
    from fakebroker.protocol.framing import DecodeError, decode_request

    try:
        decode_request(frame)
    except (DecodeError, KeyError, ValueError):
        return False
    return True


def fells_kafka(frame: bytes) -> bool:
    """Whether ``frame``, as Kafka reads it, would leave Kafka unable to answer later inputs
    as before: an UnregisterBroker naming its own node, an IncrementalAlterConfigs with an
    unknown config operation, an AddRaftVoter with a listener of no name or no host (either
    ends Kafka's process: seed 1's #411219, measured), a Produce with a partition's records
    null or an AlterConfigs naming a resource twice (never answered: its connection's close
    goes unseen, what Kafka holds for the connection lives on)."""
    from fakebroker.protocol.framing import DecodeError, decode_request, peek_header

    try:
        api_key = peek_header(frame)[0]
        if api_key not in (UNREGISTER_BROKER, INCREMENTAL_ALTER_CONFIGS, ADD_RAFT_VOTER,
                           PRODUCE, ALTER_CONFIGS):
            return False
        body = decode_request(frame)[1]
    except (DecodeError, KeyError):  # a frame that does not parse: closed, harmlessly
        return False
    if api_key == UNREGISTER_BROKER:
        return body.broker_id == KAFKA_NODE
    if api_key == ADD_RAFT_VOTER:
        return any("" in (listener.name, listener.host) for listener in body.listeners)
    if api_key == ALTER_CONFIGS:
        named = [(r.resource_type, r.resource_name) for r in body.resources or ()]
        return len(set(named)) < len(named)
    if api_key == PRODUCE:
        return any(p.records is None for t in body.topic_data or ()
                   for p in t.partition_data or ())
    return any(c.config_operation not in CONFIG_OPERATIONS
               for r in body.resources for c in r.configs)


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
