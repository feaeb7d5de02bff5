"""Transactions and exactly-once with the real JVM clients (issue 14): the Apache Kafka Java
client's transactional producer, a consume-transform-produce loop that crashes and is
restarted, a zombie fenced by its successor, read_committed consumers (3.9.1, transactions
v1, and 4.4.0, transactions v2 where the broker finalizes ``transaction.version`` 2: the
``java_client`` fixture), and a Kafka Streams 4.4.0 word count with
``processing.guarantee=exactly_once_v2`` killed in the middle of its input, or, in a streams
group, stalled there past its session (on the fake also fenced at once by ``kick_member``).

Every test takes the ``kafka`` fixture: ``--kafka=real`` runs them on Apache Kafka 4.4.0 (the
oracle they were written against), ``--kafka=fake`` on fakebroker (one only there: the 4.4.0
client on transactions v1, which needs the fake's ``transaction_version`` setting). What they
assert is what an application relies on: each committed record read exactly once, in Kafka's
offsets (a transaction's end takes one offset: its control record), no aborted or still-open
record ever read under read_committed, consumed offsets committed with the output, and the
named error a fenced producer gets.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fakebroker import FakeKafka
from fakebroker.real_cluster import RealCluster
from fakebroker.real_cluster import wait_for as eventually
from tests.clients.java import NETWORK_DEBUG, run_harness, run_harness_full, start_harness
from tests.clients.process import GroupMember
from tests.clients.streams import start_word_count

Kafka = FakeKafka | RealCluster  # what the `kafka` fixture gives (tests/dual.py)

pytestmark = pytest.mark.java

# Long enough that the broker never aborts a transaction by itself in a test that does not
# wait for that (its timeout check runs every 10 s by default).
LONG_TXN_TIMEOUT = "transaction.timeout.ms=60000"


# -- helpers ---------------------------------------------------------------------------------


def txn_produce(kafka: Kafka, topic: str, txn_id: str, plan: str, *args: str,
                client_version: str | None = None) -> list[dict]:
    """Harness ``txn-produce``: one transaction per plan item (commit:N, abort:N, open:N)."""
    return run_harness("txn-produce", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                       "--txn-id", txn_id, "--plan", plan, *args, client_version=client_version)


def read(kafka: Kafka, topic: str, isolation: str = "read_committed",
         client_version: str | None = None) -> list[dict]:
    """Every record a group-less Java consumer with that isolation level reads from the
    beginning to the end offsets it lists (for read_committed: the last stable offsets)."""
    lines = run_harness("consume", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                        f"isolation.level={isolation}", client_version=client_version)
    records = [line for line in lines if "offset" in line and "value" in line]
    assert lines[-1] == {"done": len(records)}  # and none past the end offsets
    return records


def end_offsets(kafka: Kafka, topic: str, isolation: str, client_version: str | None = None
                ) -> dict[int, int]:
    """Partition -> the Java Admin's listOffsets(latest) at that isolation level: the high
    watermark (read_uncommitted) or the last stable offset (read_committed)."""
    lines = run_harness("admin-list-offsets", "--bootstrap", kafka.bootstrap_servers,
                        "--topic", topic, "--spec", "latest", "--isolation", isolation,
                        client_version=client_version)
    return {line["partition"]: line["offset"] for line in lines}


def transaction_version(kafka: Kafka) -> int:
    """The ``transaction.version`` feature level the broker finalizes (0 when not listed)."""
    (features,) = run_harness("admin-describe-features", "--bootstrap", kafka.bootstrap_servers,
                              client_version="4.4.0")
    return features["finalized"].get("transaction.version", 0)


def copy_args(kafka: Kafka, *, input: str, output: str, name: str) -> tuple[str, ...]:
    """Harness ``txn-copy`` options: group ``name``, static member ``name`` (its restart
    replaces it at once) and transactional.id ``name``; at most 10 records per transaction."""
    return ("--bootstrap", kafka.bootstrap_servers, "--input", input, "--output", output,
            "--group", name, "--instance-id", name, "--txn-id", name, "max.poll.records=10",
            LONG_TXN_TIMEOUT)


def produce(kafka: Kafka, topic: str, count: int, client_version: str | None = None) -> None:
    """``count`` records, key k<i> and value v<i>, by the default (idempotent) producer."""
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                        "--count", str(count), client_version=client_version)
    assert lines[-1] == {"done": count}


# -- the transactional producer ---------------------------------------------------------------


@pytest.mark.fake_kafka(topics={"payments": 1})
def test_java_transactional_producer_commits_and_aborts(kafka, java_client):
    """Three transactions, committed, aborted, committed: each takes its records' offsets
    plus one for its end marker; read_committed reads exactly the committed records at those
    offsets; the aborted ones stay in the log, read only by read_uncommitted."""
    lines = txn_produce(kafka, "payments", f"payer-{java_client}", "commit:5,abort:3,commit:4",
                        LONG_TXN_TIMEOUT, client_version=java_client)
    assert lines[-1] == {"done": 12}
    assert [line["outcome"] for line in lines if "outcome" in line] == [
        "committed", "aborted", "committed"]
    acked = [(line["offset"], line["value"]) for line in lines if "offset" in line]
    assert acked == [(o, f"v{i}") for i, o in enumerate([0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13])]

    assert kafka.offsets("payments", 0) == (0, 15)  # markers at 5, 9 and 14
    assert end_offsets(kafka, "payments", "read_committed", java_client) == {0: 15}
    committed = read(kafka, "payments", "read_committed", java_client)
    assert [(r["offset"], r["key"], r["value"]) for r in committed] == [
        (o, f"k{i}", f"v{i}") for o, i in
        [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (10, 8), (11, 9), (12, 10), (13, 11)]]
    uncommitted = read(kafka, "payments", "read_uncommitted", java_client)
    assert [(r["offset"], r["value"]) for r in uncommitted] == acked

    stored = kafka.records("payments", 0)
    assert [(r.offset, r.transaction) for r in stored] == [
        (o, "aborted" if 6 <= o <= 8 else "committed") for o, _ in acked]
    assert len({r.producer_id for r in stored}) == 1


def requests_of_a_transaction(kafka: Kafka, client_version: str) -> dict[str, set[int]]:
    """API -> the versions of the requests the Java client sends (NetworkClient's debug log)
    for two transactions on "payments", one committed, one aborted."""
    result = run_harness_full("txn-produce", "--bootstrap", kafka.bootstrap_servers,
                              "--topic", "payments", "--txn-id", f"payer-{client_version}",
                              "--plan", "commit:2,abort:1", jvm_args=NETWORK_DEBUG,
                              client_version=client_version)
    assert result.lines[-1] == {"done": 3}
    sent: dict[str, set[int]] = defaultdict(set)
    for api, version in re.findall(r"Sending (\w+) request with header "
                                   r"RequestHeader\(apiKey=\w+, apiVersion=(\d+)", result.stderr):
        sent[api].add(int(version))
    return sent


@pytest.mark.fake_kafka(topics={"payments": 1})
def test_java_client_speaks_the_transaction_version_the_broker_finalizes(kafka, java_client):
    """Transactions v2 (KIP-890) where both sides have it: the 4.4.0 client on a broker that
    finalizes transaction.version 2 (Kafka 4.4.0 does, and the fake by default) adds
    partitions to its transaction implicitly, by Produce v12+, and ends it with EndTxn v5+;
    otherwise (the 3.9.1 client always) it sends AddPartitionsToTxn first and EndTxn below v5
    (transactions v1)."""
    sent = requests_of_a_transaction(kafka, java_client)
    if java_client != "3.9.1" and transaction_version(kafka) >= 2:
        assert "ADD_PARTITIONS_TO_TXN" not in sent
        assert min(sent["PRODUCE"]) >= 12 and min(sent["END_TXN"]) >= 5
    else:
        assert sent["ADD_PARTITIONS_TO_TXN"]
        assert max(sent["END_TXN"]) < 5


@pytest.mark.fake_only("the cluster's transaction_version setting (Kafka 4.4.0 finalizes 2; "
                       "downgraded to 1 by hand it answered the same)")
@pytest.mark.fake_kafka(topics={"payments": 1}, transaction_version=1)
def test_java_4_client_runs_transactions_v1_where_only_v1_is_finalized(kafka):
    """The 4.4.0 client on a broker that finalizes transaction.version 1: AddPartitionsToTxn,
    EndTxn below v5, and its transactions' outcomes as on v2."""
    assert transaction_version(kafka) == 1
    sent = requests_of_a_transaction(kafka, "4.4.0")
    assert sent["ADD_PARTITIONS_TO_TXN"] and max(sent["END_TXN"]) < 5
    assert [(r["offset"], r["value"]) for r in read(kafka, "payments")] == [(0, "v0"), (1, "v1")]


@pytest.mark.fake_kafka(topics={"payments": 1})
def test_java_open_transaction_hides_what_follows_until_the_restart_aborts_it(
        kafka, java_client):
    """A producer that vanishes inside a transaction leaves it open: the last stable offset
    stops at its first record, so read_committed reads only what was committed before it. The
    restarted producer (same transactional.id) aborts it in initTransactions: its records stay
    unread, and the new transaction's records follow its abort marker."""
    txn_id = f"payer-{java_client}"
    first = txn_produce(kafka, "payments", txn_id, "commit:3,open:4", LONG_TXN_TIMEOUT,
                        client_version=java_client)
    assert first[-2:] == [{"txn": 1, "outcome": "open"}, {"halted": 1}]
    assert [line["offset"] for line in first if line.get("txn") == 1 and "offset" in line] == [
        4, 5, 6, 7]
    assert end_offsets(kafka, "payments", "read_uncommitted", java_client) == {0: 8}
    assert end_offsets(kafka, "payments", "read_committed", java_client) == {0: 4}
    assert kafka.offsets("payments", 0).last_stable_offset == 4
    assert [r.transaction for r in kafka.records("payments", 0)] == ["committed"] * 3 + [
        "open"] * 4
    assert [r["value"] for r in read(kafka, "payments", client_version=java_client)] == [
        "v0", "v1", "v2"]

    second = txn_produce(kafka, "payments", txn_id, "commit:2", "--value-prefix", "w",
                         LONG_TXN_TIMEOUT, client_version=java_client)
    assert second[-1] == {"done": 2}
    assert [line["offset"] for line in second if "offset" in line] == [9, 10]  # abort at 8
    assert end_offsets(kafka, "payments", "read_committed", java_client) == {0: 12}
    assert [r.transaction for r in kafka.records("payments", 0)] == ["committed"] * 3 + [
        "aborted"] * 4 + ["committed"] * 2
    assert [(r["offset"], r["value"]) for r in read(kafka, "payments",
                                                    client_version=java_client)] == [
        (0, "v0"), (1, "v1"), (2, "v2"), (9, "w0"), (10, "w1")]


@pytest.mark.fake_kafka(topics={"payments": 1}, overrides={
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "2000"})
def test_java_abandoned_transaction_is_aborted_after_its_timeout(kafka):
    """Nobody restarts the vanished producer: the broker aborts its transaction once
    transaction.timeout.ms (here 1 s) has passed, within its periodic check (every 10 s by
    default, 2 s here); the last stable offset then reaches the high watermark, past the
    abort marker, and read_committed reads only the committed records."""
    lines = txn_produce(kafka, "payments", "abandoned", "commit:2,open:3",
                        "transaction.timeout.ms=1000")
    assert lines[-1] == {"halted": 1}
    assert [line["offset"] for line in lines if line.get("txn") == 1 and "offset" in line] == [
        3, 4, 5]
    deadline = time.monotonic() + 40
    while end_offsets(kafka, "payments", "read_committed") != {0: 7}:
        assert time.monotonic() < deadline, "the open transaction was never aborted"
        time.sleep(1)
    assert kafka.offsets("payments", 0) == (0, 7)  # the abort marker took offset 6
    assert [r.transaction for r in kafka.records("payments", 0)] == ["committed"] * 2 + [
        "aborted"] * 3
    assert [(r["offset"], r["value"]) for r in read(kafka, "payments")] == [(0, "v0"), (1, "v1")]


# -- consume-transform-produce ----------------------------------------------------------------


@pytest.mark.fake_kafka(topics={"orders": 2, "shouted": 2})
def test_java_consume_transform_produce_is_exactly_once_across_a_crash(kafka, java_client):
    """A copier (read_committed consumer, transactional producer, offsets sent to the
    transaction) crashes after sending 25 records, its last transaction open: only the
    transactions it committed are visible. Restarted with the same transactional.id and group,
    it aborts that transaction, resumes at the offsets committed with the output and finishes:
    the output holds every input record exactly once, upper-cased, and the group's offsets
    are the input's end offsets."""
    produce(kafka, "orders", 60, java_client)
    args = copy_args(kafka, input="orders", output="shouted", name=f"shouter-{java_client}")
    crashed = run_harness("txn-copy", *args, "--crash-after", "25", client_version=java_client)
    assert crashed[-1] == {"halted": 25}
    before = sum(line["records"] for line in crashed if line.get("event") == "committed")
    assert 0 < before < 25  # the 25th record's transaction was never committed
    assert len(read(kafka, "shouted", client_version=java_client)) == before
    in_log = Counter(r.transaction for p in range(2) for r in kafka.records("shouted", p))
    assert in_log == {"committed": before, "open": 25 - before}  # its last one was written

    restarted = run_harness("txn-copy", *args, client_version=java_client)
    assert restarted[-1] == {"done": 60 - before}
    output = read(kafka, "shouted", client_version=java_client)
    assert sorted((r["key"], r["value"]) for r in output) == sorted(
        (f"k{i}", f"V{i}") for i in range(60))
    # Kafka writes a commit's markers after EndTxn answers: its offsets show once they land.
    ends = {partition: kafka.offsets("orders", partition)[1] for partition in range(2)}
    eventually(lambda: ends == {partition: kafka.committed(f"shouter-{java_client}", "orders",
                                                           partition) for partition in range(2)},
               f"the group's offsets at the input's ends {ends}")
    # The crashed transaction's records are still in the log, aborted: read_uncommitted sees them.
    uncommitted = read(kafka, "shouted", "read_uncommitted", java_client)
    assert len(uncommitted) == 60 + 25 - before
    in_log = Counter(r.transaction for p in range(2) for r in kafka.records("shouted", p))
    assert in_log == {"committed": 60, "aborted": 25 - before}


# What the zombie does first when it wakes, the options that make it pause there, and what it
# gets (the same on transactions v1 and v2, with the 3.9.1 and the 4.4.0 client: seen on Kafka
# 4.4.0, and on it downgraded to transaction.version 1 by the harness's admin-update-features):
# its Produce with the old epoch is refused (INVALID_PRODUCER_EPOCH): an abortable error, and
# the abortTransaction that follows is fenced; its offsets' request to the coordinators is
# fenced outright (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH): a fatal error.
ZOMBIE_WAKES_TO = {
    "send": (("--pause-after", "5", "--pause-at", "send"),
             [{"event": "failed", "step": "sendOffsetsToTransaction",
               "error": "InvalidProducerEpochException"},
              {"event": "abort-failed", "error": "ProducerFencedException"}]),
    "send-offsets": (("--pause-after", "1", "--pause-at", "offsets"),
                     [{"event": "failed", "step": "sendOffsetsToTransaction",
                       "error": "ProducerFencedException"}]),
}


@pytest.mark.parametrize("wakes_to", sorted(ZOMBIE_WAKES_TO))
@pytest.mark.fake_kafka(topics={"orders": 1, "shouted": 1})
def test_java_zombie_copier_is_fenced_by_its_successor(kafka, java_client, wakes_to):
    """A copier stalls inside a transaction, 5 records sent, either in the middle of a poll's
    records or once they are all sent; its successor with the same transactional.id and static
    member id takes over: its initTransactions aborts the zombie's transaction, and it copies
    everything. When the zombie wakes, its next send or its sendOffsetsToTransaction is
    refused with the named error (ZOMBIE_WAKES_TO) and it commits nothing; the output holds
    each input record once and the group's offset is the input's end."""
    options, failures = ZOMBIE_WAKES_TO[wakes_to]
    produce(kafka, "orders", 20, java_client)
    name = f"shouter-{java_client}"
    args = copy_args(kafka, input="orders", output="shouted", name=name)
    with start_harness("txn-copy", *args, *options, client_version=java_client) as zombie:
        paused = zombie.wait_for({"event": "paused"}, timeout=60)
        successor = run_harness("txn-copy", *args, client_version=java_client)
        assert successor[-1] == {"done": 20}
        zombie.proc.stdin.write(b"go\n")
        zombie.proc.stdin.flush()
        lines = zombie.wait(timeout=30)
    assert zombie.returncode == 2 and lines[-1]["error"] == failures[0]["error"]
    assert [line for line in lines if line.get("event") in (
        "failed", "aborted", "abort-failed", "committed")] == failures

    output = read(kafka, "shouted", client_version=java_client)
    assert sorted(r["value"] for r in output) == sorted(f"V{i}" for i in range(20))
    eventually(lambda: kafka.committed(name, "orders", 0) == 20,
               "the offsets committed with the output")
    # The zombie's records sent before its pause, aborted, then the successor's 20 (what it
    # sends after waking is refused).
    assert [r.transaction for r in kafka.records("shouted", 0)] == [
        "aborted"] * paused["sent"] + ["committed"] * 20


# -- Kafka Streams ----------------------------------------------------------------------------

WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape"]


def lines_of_words(start: int, count: int) -> list[str]:
    """``count`` lines of 1-4 words from WORDS, deterministic, different for each ``start``;
    every other word capitalised (the app counts words lower-cased)."""
    out = []
    for n in range(start, start + count):
        out.append(" ".join(WORDS[(n * 3 + k * 5) % len(WORDS)].title() if k % 2 else
                            WORDS[(n * 3 + k * 5) % len(WORDS)] for k in range(1 + n % 4)))
    return out


def true_counts(lines: list[str]) -> dict[str, int]:
    """Word (lower-cased) -> how many times the lines hold it."""
    counts: dict[str, int] = defaultdict(int)
    for line in lines:
        for word in line.lower().split():
            counts[word] += 1
    return dict(counts)


def produce_lines(kafka: Kafka, topic: str, lines: list[str], tmp_path: Path) -> None:
    """One record per line (key k<i>), by the Java client's default producer."""
    values = tmp_path / f"lines-{time.monotonic_ns()}.txt"
    values.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    done = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                       "--values-file", str(values))
    assert done[-1] == {"done": len(lines)}


def latest_counts(kafka: Kafka, topic: str, partitions: int) -> dict[str, int]:
    """Word -> the last count in the log (read_uncommitted: for waiting only)."""
    latest: dict[str, int] = {}
    for p in range(partitions):
        for r in kafka.records(topic, p):
            latest[r.key.decode()] = int(r.value.decode())
    return latest


def committed_counts(kafka: Kafka, topic: str) -> dict[str, list[int]]:
    """Word -> every count a read_committed consumer reads for it, in offset order."""
    seen: dict[str, list[int]] = defaultdict(list)
    for r in sorted(read(kafka, topic), key=lambda r: (r["partition"], r["offset"])):
        seen[r["key"]].append(int(r["value"]))
    return dict(seen)


def wait_for_counts(kafka: Kafka, app: GroupMember, topic: str, want: dict[str, int],
                    timeout: float = 45) -> None:
    """Until the latest count per word in the log (read_uncommitted) is ``want``; fails at
    once if the app stopped."""
    deadline = time.monotonic() + timeout
    while latest_counts(kafka, topic, 2) != want:
        assert app.running(), f"the app stopped: {app.lines()[-5:]}\n{app.stderr_tail()}"
        assert time.monotonic() < deadline, (
            f"counts not reached: {latest_counts(kafka, topic, 2)} != {want}\n"
            f"{app.lines()[-5:]}\n{app.stderr_tail()}")
        time.sleep(0.5)


def topic_configs(kafka: Kafka, topic: str) -> dict[str, str]:
    """The configs set on the topic itself (DescribeConfigs source DYNAMIC_TOPIC_CONFIG):
    for a topic Kafka Streams created, the ones its CreateTopics request carried."""
    lines = run_harness("admin-describe-configs", "--bootstrap", kafka.bootstrap_servers,
                        "--topic", topic)
    return {line["name"]: line["value"] for line in lines
            if line.get("source") == "DYNAMIC_TOPIC_CONFIG"}


@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2})
@pytest.mark.parametrize("protocol", ["classic", "streams"])
def test_streams_word_count_is_exactly_once_through_its_repartition_and_store(kafka, tmp_path,
                                                                               protocol):
    """A Kafka Streams word count (exactly_once_v2, a groupBy repartition, a count store):
    read_committed, each word's counts are exactly 1, 2, ..., n (no record cache: every
    update is sent), n its true count. Its internal topics were made with the input's two
    partitions and Streams' own configs: the repartition topic (cleanup.policy delete, kept
    forever: Streams purges it itself) and the store's changelog (cleanup.policy compact);
    with the classic protocol Streams creates them, with ``group.protocol=streams`` (a
    streams group, KIP-1071) the broker does, from the topology Streams sends."""
    lines = lines_of_words(0, 40)
    want = true_counts(lines)
    produce_lines(kafka, "lines", lines, tmp_path)
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "state",
                          props=(f"group.protocol={protocol}",)) as app:
        app.wait_for({"state": "RUNNING"}, timeout=60)
        wait_for_counts(kafka, app, "counts", want)
        # a streams group: Kafka Streams' own protocol, the broker assigning its tasks
        assert kafka.group("wc").protocol_type == {"classic": "consumer",
                                                   "streams": "streams"}[protocol]
        assert app.stop()[-1] == {"done": 40}
    assert committed_counts(kafka, "counts") == {w: list(range(1, n + 1))
                                                 for w, n in want.items()}

    topics = kafka.topics()
    assert topics["wc-words-repartition"] == 2 and topics["wc-counts-changelog"] == 2
    assert topic_configs(kafka, "wc-words-repartition") == {
        "cleanup.policy": "delete", "retention.ms": "-1", "segment.bytes": "52428800",
        "message.timestamp.type": "CreateTime"}
    assert topic_configs(kafka, "wc-counts-changelog") == {
        "cleanup.policy": "compact", "message.timestamp.type": "CreateTime"}


@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2})
def test_streams_word_count_killed_mid_stream_restarts_without_losing_or_doubling(
        kafka, tmp_path):
    """The word count counts a first batch of lines, then is SIGKILLed in the middle of a
    second: slowed down (20 ms a line), committing every second and sending at once
    (linger.ms=0), so its open transaction has records in the log when it dies. More lines
    arrive, and it restarts with the same application.id and state directory (so the same
    transactional.id: the dead one's transaction is aborted at once). Read read_committed,
    each word's counts are still exactly 1, 2, ..., n over both runs: nothing counted twice,
    nothing lost, no aborted record read. (With processing.guarantee=at_least_once the same
    run overcounts and this test fails.)"""
    batches = [lines_of_words(0, 100), lines_of_words(100, 100), lines_of_words(200, 30)]
    state = tmp_path / "state"
    group = ("group.instance.id=wc-instance",)  # the restart replaces the dead member at once
    produce_lines(kafka, "lines", batches[0], tmp_path)
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=state, delay_ms=20,
                          props=(*group, "max.poll.records=10", "commit.interval.ms=1000",
                                 "linger.ms=0")) as app:
        wait_for_counts(kafka, app, "counts", true_counts(batches[0]))
        produce_lines(kafka, "lines", batches[1], tmp_path)
        app.wait_for(lambda line: line.get("seen", 0) >= 140, timeout=30)
        killed = app.kill()
    seen = max(line["seen"] for line in killed if "seen" in line)
    assert 140 <= seen < 200  # killed in the middle of the second batch

    produce_lines(kafka, "lines", batches[2], tmp_path)
    want = true_counts([line for batch in batches for line in batch])
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=state, props=group) as app:
        wait_for_counts(kafka, app, "counts", want, timeout=50)
        app.stop()
    assert committed_counts(kafka, "counts") == {w: list(range(1, n + 1))
                                                 for w, n in want.items()}
    for topic in ("counts", "wc-words-repartition", "wc-counts-changelog"):
        outcomes = {r.transaction for p in range(2) for r in kafka.records(topic, p)}
        assert outcomes <= {"committed", "aborted"}, topic  # the dead one's were ended


# A killed instance leaves its tasks to the others once its session times out: 6 s here, on
# brokers whose streams session minimum is lowered to allow it (Kafka's default minimum and
# session timeout are 45 s).
QUICK_STREAMS_SESSIONS = {"group.streams.min.session.timeout.ms": 6000,
                          "group.streams.session.timeout.ms": 6000,
                          "group.streams.min.heartbeat.interval.ms": 1000,
                          "group.streams.heartbeat.interval.ms": 1000,
                          "group.streams.initial.rebalance.delay.ms": 0}


@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2}, overrides=QUICK_STREAMS_SESSIONS)
def test_streams_group_takes_a_killed_instances_tasks_over_exactly_once(kafka, tmp_path):
    """Two instances of the word count in one streams group (``group.protocol=streams``): the
    broker gives each a share of the tasks. One is SIGKILLed in the middle of the input; once
    its session times out the broker assigns its tasks to the other, which restores the
    counts from the changelog and goes on. Read read_committed, each word's counts are still
    exactly 1, 2, ..., n: nothing lost, nothing counted twice."""
    batches = [lines_of_words(0, 60), lines_of_words(60, 100), lines_of_words(160, 30)]
    props = ("group.protocol=streams", "max.poll.records=10", "commit.interval.ms=500",
             "linger.ms=0")
    produce_lines(kafka, "lines", batches[0], tmp_path)
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "a", delay_ms=20, props=props) as a, \
            start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines",
                             output="counts", state_dir=tmp_path / "b", delay_ms=20,
                             props=props) as b:
        group = eventually(lambda: (g := kafka.group("wc")) and len(g.members) == 2
                           and all(m.assignment for m in g.members) and g, "both have tasks")
        assert group.protocol_type == "streams"
        wait_for_counts(kafka, a, "counts", true_counts(batches[0]), timeout=60)
        produce_lines(kafka, "lines", batches[1], tmp_path)
        a.wait_for(lambda line: line.get("seen", 0) >= 20, timeout=30)
        a.kill()
        produce_lines(kafka, "lines", batches[2], tmp_path)
        want = true_counts([line for batch in batches for line in batch])
        wait_for_counts(kafka, b, "counts", want, timeout=90)
        (survivor,) = kafka.group("wc").members
        assert {s: len(ps) for s, ps in survivor.assignment.items()} == {"0": 2, "1": 2}
        b.stop()
    assert committed_counts(kafka, "counts") == {w: list(range(1, n + 1))
                                                 for w, n in want.items()}


def fenced_word_count(kafka: Kafka, tmp_path: Path, fence: Callable[[GroupMember], None]
                      ) -> None:
    """Two instances of the word count in one streams group (client ids a and b); ``fence(a)``
    fences instance a's member while both are in the middle of the input. Its next heartbeat is
    UNKNOWN_MEMBER_ID and its tasks go to the other; what it had not committed cannot be (its
    member epoch is gone), Kafka Streams closes its tasks as lost and joins again, and the
    group ends with tasks for both. Read read_committed, each word's counts are exactly 1,
    2, ..., n: nothing lost, nothing counted twice."""
    batches = [lines_of_words(0, 60), lines_of_words(60, 200), lines_of_words(260, 30)]
    props = ("group.protocol=streams", "max.poll.records=10", "commit.interval.ms=500",
             "linger.ms=0")
    produce_lines(kafka, "lines", batches[0], tmp_path)
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "a", delay_ms=40,
                          props=(*props, "client.id=a")) as a, \
            start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines",
                             output="counts", state_dir=tmp_path / "b", delay_ms=40,
                             props=(*props, "client.id=b")) as b:
        eventually(lambda: (g := kafka.group("wc")) and len(g.members) == 2
                   and all(m.assignment for m in g.members), "both have tasks")
        wait_for_counts(kafka, a, "counts", true_counts(batches[0]), timeout=60)
        read_before = len(a.lines())
        produce_lines(kafka, "lines", batches[1], tmp_path)
        a.wait_for(lambda line: "seen" in line, start=read_before, timeout=30)  # under way
        fence(a)
        produce_lines(kafka, "lines", batches[2], tmp_path)
        want = true_counts([line for batch in batches for line in batch])
        wait_for_counts(kafka, b, "counts", want, timeout=90)
        eventually(lambda: len(kafka.group("wc").members) == 2 and all(
            m.assignment for m in kafka.group("wc").members), "the fenced one has tasks again",
            timeout=60)
        assert a.running() and b.running(), (a.lines()[-3:], b.lines()[-3:])
        a.stop()
        b.stop()
    assert committed_counts(kafka, "counts") == {w: list(range(1, n + 1))
                                                 for w, n in want.items()}


@contextmanager
def stalled(app: GroupMember) -> Iterator[None]:
    """The application stopped (SIGSTOP) for the block, as in a long GC pause."""
    os.kill(app.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(app.proc.pid, signal.SIGCONT)


@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2}, overrides=QUICK_STREAMS_SESSIONS)
def test_a_streams_member_stalled_past_its_session_rejoins_and_counts_once(kafka, tmp_path):
    def past_its_session(app: GroupMember) -> None:
        with stalled(app):
            time.sleep(8)  # its session: 6 s

    fenced_word_count(kafka, tmp_path, past_its_session)


@pytest.mark.fake_only("kick_member is the fake's")
@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2}, overrides=QUICK_STREAMS_SESSIONS)
def test_a_fenced_streams_member_rejoins_and_every_line_is_counted_once(kafka, tmp_path):
    def kicked(app: GroupMember) -> None:  # its session ended now, not 6 s later
        (member,) = (m for m in kafka.group("wc").members if m.client_id.startswith("a-"))
        with stalled(app):
            kafka.kick_member("wc", member.member_id)

    fenced_word_count(kafka, tmp_path, kicked)
