"""The chaos soak: its checker finds each kind of violation in a history made to have it
(and none in a clean one), its schedule is the seed's, and a 60 s soak, run as documented
(``python -m fakebroker.soak --seconds 60 --seed 7``), ends with every invariant at 0."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fakebroker.soak.checker import Ack, Commit, History, Read, Stored, check, value_of
from fakebroker.soak.schedule import KINDS, Shape, digest, schedule
from tests.conftest import OUTSIDE

SHAPE = Shape(brokers=3, partitions=4, groups=("classic", "848"), transactional_ids=("t0",))


def clean_history() -> History:
    """Two idempotent records and a committed transaction of two, acked, stored, read once
    by a read_committed member that committed its way through; an aborted transaction's
    record stored as aborted and never read."""
    idem = [value_of("idem0", 0, None), value_of("idem0", 1, None)]
    committed = [value_of("t0", 0, "t0.0"), value_of("t0", 1, "t0.0")]
    aborted = value_of("t0", 2, "t0.1")
    history = History()
    history.acks = [Ack(idem[0], 0, 0), Ack(idem[1], 1, 0), Ack(committed[0], 0, 1),
                    Ack(committed[1], 1, 1), Ack(aborted, 0, 3)]
    history.outcomes = {"t0.0": "committed", "t0.1": "aborted"}
    history.stored = [Stored(0, 0, idem[0]), Stored(1, 0, idem[1]),
                      Stored(0, 1, committed[0], "committed"),
                      Stored(1, 1, committed[1], "committed"),
                      Stored(0, 3, aborted, "aborted")]
    history.reads = [Read("m1", 0, 0, idem[0]), Read("m1", 0, 1, committed[0]),
                     Read("m1", 1, 1, committed[1])]
    history.commits = [Commit("classic", "m1", 1, 0, 1), Commit("classic", "m1", 1, 0, 2),
                       Commit("classic", "m1", 1, 0, 5), Commit("classic", "m1", 2, 0, 3)]
    return history


def test_a_clean_history_violates_nothing():
    verdict = check(clean_history())
    assert verdict.ok and set(verdict.counts.values()) == {0}


def test_an_acked_record_missing_from_its_offset_is_lost():
    history = clean_history()
    history.stored = [s for s in history.stored if (s.partition, s.offset) != (1, 0)]
    assert check(history).counts["acked_lost"] == 1


def test_an_acked_record_at_another_offset_is_lost():
    history = clean_history()
    history.acks[0] = Ack(history.acks[0].value, 0, 7)
    assert check(history).counts["acked_lost"] == 1


def test_a_committed_transactions_record_stored_as_aborted_is_lost():
    history = clean_history()
    history.stored[2] = Stored(0, 1, history.stored[2].value, "aborted")
    verdict = check(history)
    assert verdict.counts["acked_lost"] == 1
    assert verdict.counts["read_committed_violations"] == 1  # m1 read it


def test_an_ack_without_an_offset_is_owed_somewhere_in_its_partition():
    history = clean_history()
    history.acks[1] = Ack(history.acks[1].value, 1, None)  # idem0/1, stored at 1/0
    assert check(history).ok
    history.stored = [s for s in history.stored if (s.partition, s.offset) != (1, 0)]
    assert check(history).counts["acked_lost"] == 1


def test_an_aborted_transactions_records_are_not_owed():
    history = clean_history()
    history.stored.pop()  # the aborted record gone from the log altogether
    assert check(history).ok


def test_a_record_stored_twice_is_a_duplicate():
    history = clean_history()
    history.stored.append(Stored(0, 4, value_of("idem0", 0, None)))
    verdict = check(history)
    assert verdict.counts["duplicates"] == 1
    assert "idem0/0/- stored 2 times" in verdict.examples["duplicates"][0]


def test_copies_in_an_aborted_transaction_are_not_duplicates():
    history = clean_history()
    history.stored.append(Stored(2, 0, value_of("t0", 2, "t0.1"), "aborted"))
    assert check(history).counts["duplicates"] == 0


def test_a_commit_lower_than_the_last_within_one_ownership_goes_backwards():
    history = clean_history()
    history.commits.append(Commit("classic", "m1", 2, 0, 2))  # ownership 2 had committed 3
    verdict = check(history)
    assert verdict.counts["commits_backwards"] == 1
    assert verdict.examples["commits_backwards"] == ["classic m1 partition 0: 3 then 2"]


def test_a_lower_commit_in_a_new_ownership_or_by_another_member_is_not_backwards():
    history = clean_history()
    history.commits += [Commit("classic", "m1", 3, 0, 1), Commit("classic", "m2", 1, 0, 0)]
    assert check(history).counts["commits_backwards"] == 0


def test_reading_an_aborted_transactions_record_violates_read_committed():
    history = clean_history()
    history.reads.append(Read("m2", 0, 3, value_of("t0", 2, "t0.1")))
    assert check(history).counts["read_committed_violations"] == 1


def test_reading_a_transaction_still_open_at_the_end_violates_read_committed():
    history = clean_history()
    open_record = value_of("t0", 3, "t0.2")  # its producer never learned the outcome
    history.stored.append(Stored(2, 0, open_record, "open"))
    history.reads.append(Read("m2", 2, 0, open_record))
    assert check(history).counts["read_committed_violations"] == 1


def test_a_seed_gives_one_schedule_and_another_seed_another():
    first, again, other = (schedule(s, 120, SHAPE) for s in (7, 7, 8))
    assert first == again and digest(first) == digest(again)
    assert digest(first) != digest(other)
    assert {e.kind for e in first} >= set(KINDS) | {"broker_up"}
    assert all(e.at < 115 for e in first)  # the last 5 s are quiet


def test_a_broker_is_down_only_once_its_predecessor_is_up():
    down = None
    for event in schedule(3, 600, SHAPE):
        if event.kind == "broker_down":
            assert down is None
            down = event.params["broker"]
        elif event.kind == "broker_up":
            assert event.params["broker"] == down
            down = None
    assert down is None


@pytest.mark.timeout(300)
def test_a_60_second_soak_keeps_every_invariant(tmp_path):
    report_file = tmp_path / "soak.json"
    result = subprocess.run([sys.executable, "-m", "fakebroker.soak", "--seconds", "60",
                             "--seed", "7", "--json", str(report_file)],
                            cwd=OUTSIDE, capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(report_file.read_text())
    assert report["invariants"] == {"acked_lost": 0, "duplicates": 0,
                                    "commits_backwards": 0, "read_committed_violations": 0}
    assert "invariants: acked_lost 0, duplicates 0" in result.stdout
    records = report["records"]
    assert records["acked"] > 1000 and records["consumed"] > 1000
    assert report["transactions"]["committed"] > 10 and report["transactions"]["aborted"] > 0
    assert report["faults"]["move_leader"] > 0 and report["faults"]["broker_down"] > 0


def test_without_confluent_kafka_it_says_so_in_one_line_and_exits_2():
    code = ("import sys; sys.modules['confluent_kafka'] = None\n"
            "from fakebroker.soak.__main__ import main\n"
            "sys.exit(main(['--seconds', '1', '--seed', '1']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=OUTSIDE, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "needs confluent-kafka" in result.stderr
