"""The transaction coordinator as plain state (``fakebroker.state.transactions``): time comes
in, markers and committed offsets come out. Timeouts run on trio's MockClock (``run_timers``):
deterministic, no real sleeping. Epoch exhaustion and KIP-360 retries, which no client reaches
in a test's time, are checked here."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.offsets import CommittedOffset, OffsetStore
from fakebroker.state.producers import ProducerRegistry
from fakebroker.state.transactions import MAX_EPOCH, TransactionCoordinator, TxnState
from fakebroker.timers import run_timers

ORDERS_0 = ("orders", 0)


def coordinator() -> tuple[TransactionCoordinator, list[tuple[int, int, bool, list]]]:
    """A coordinator whose markers are recorded as (producer id, epoch, commit, partitions)."""
    written: list[tuple[int, int, bool, list]] = []
    txns = TransactionCoordinator(ProducerRegistry(), OffsetStore(), wall_ms=lambda: 1234)
    txns.write_markers = lambda pid, epoch, commit, parts, _coordinator_epoch: written.append(
        (pid, epoch, commit, list(parts)))
    return txns, written


def test_a_transaction_past_its_timeout_is_aborted_by_the_next_scan_with_its_epoch_fenced():
    """Kafka looks for timed-out transactions every 10 s (the scans count from the first
    transaction's begin here): a 2 s transaction lives until the scan at 10 s."""
    async def main():
        txns, written = coordinator()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, txns)
            pid, epoch = txns.init_producer("t", 2000, -1, -1)
            txns.add_partitions("t", pid, epoch, [ORDERS_0], trio.current_time())
            await trio.sleep(9.999)
            assert txns.transactions["t"].state is TxnState.ONGOING and written == []
            await trio.sleep(0.002)
            assert txns.transactions["t"].state is TxnState.COMPLETE_ABORT
            assert written == [(pid, epoch + 1, False, [ORDERS_0])]  # fencing its batches
            with pytest.raises(ClusterError, match="PRODUCER_FENCED"):
                txns.end("t", pid, epoch, True, version=0)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_each_scan_aborts_only_the_transactions_timed_out_before_it():
    """Scans every 1 s from the first begin (t=0): one timing out at 1.5 s is aborted at 2 s,
    one begun at 1.9 s timing out at 2.4 s lives until 3 s; an earlier deadline set between
    scans wakes no abort before the scan."""
    async def main():
        txns, _ = coordinator()
        txns.abort_scan_ms = 1000
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, txns)
            start = trio.current_time()
            first = txns.init_producer("a", 1500, -1, -1)
            txns.add_partitions("a", *first, [ORDERS_0], start)
            await trio.sleep_until(start + 1.9)
            second = txns.init_producer("b", 500, -1, -1)
            txns.add_partitions("b", *second, [ORDERS_0], trio.current_time())
            await trio.sleep_until(start + 1.999)
            assert [t.state for t in txns.transactions.values()] == [TxnState.ONGOING] * 2
            await trio.sleep_until(start + 2.001)
            assert txns.transactions["a"].state is TxnState.COMPLETE_ABORT
            assert txns.transactions["b"].state is TxnState.ONGOING
            await trio.sleep_until(start + 2.999)
            assert txns.transactions["b"].state is TxnState.ONGOING
            await trio.sleep_until(start + 3.001)
            assert txns.transactions["b"].state is TxnState.COMPLETE_ABORT
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_offsets_of_a_transaction_are_committed_at_its_commit_and_dropped_at_an_abort():
    txns, _ = coordinator()
    pid, epoch = txns.init_producer("t", 60_000, -1, -1)
    offset = CommittedOffset(7, -1, None, 1)
    for commit, expected in ((False, None), (True, offset)):
        txns.add_group("t", pid, epoch, "g", 0)
        txns.commit_offsets("g", pid, epoch, {ORDERS_0: offset})
        assert txns.pending_offset("g", *ORDERS_0)
        assert txns.offsets.get("g", *ORDERS_0) is None
        txns.end("t", pid, epoch, commit, version=0)
        assert not txns.pending_offset("g", *ORDERS_0)
        assert txns.offsets.get("g", *ORDERS_0) == expected


def test_an_exhausted_epoch_rotates_to_a_new_producer_id():
    txns, written = coordinator()
    pid, _ = txns.init_producer("t", 60_000, -1, -1)
    txns.transactions["t"].producer_epoch = MAX_EPOCH - 1
    assert txns.init_producer("t", 60_000, -1, -1) == (pid, MAX_EPOCH)
    rotated, epoch = txns.init_producer("t", 60_000, -1, -1)
    assert rotated != pid and epoch == 0
    # Transactions v2: an end at the last usable epoch rotates too, and a retry naming the
    # old id at that epoch is answered with the new one.
    txns.transactions["t"].producer_epoch = MAX_EPOCH - 1
    txns.add_partitions("t", rotated, MAX_EPOCH - 1, [ORDERS_0], 0)
    newest, epoch = txns.end("t", rotated, MAX_EPOCH - 1, True, version=2)
    assert newest not in (pid, rotated) and epoch == 0
    assert written[-1] == (rotated, MAX_EPOCH, True, [ORDERS_0])
    assert txns.end("t", rotated, MAX_EPOCH - 1, True, version=2) == (newest, 0)


def test_init_producer_id_with_the_epoch_it_just_gave_answers_it_again_kip_360():
    txns, _ = coordinator()
    pid, epoch = txns.init_producer("t", 60_000, -1, -1)
    bumped = txns.init_producer("t", 60_000, pid, epoch)
    assert bumped == (pid, epoch + 1)
    assert txns.init_producer("t", 60_000, pid, epoch) == bumped  # a retry
    with pytest.raises(ClusterError, match="PRODUCER_FENCED"):
        txns.init_producer("t", 60_000, pid + 1, 0)
