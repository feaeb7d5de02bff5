"""The transaction coordinator: transactional ids, their producer ids and epochs, and the
transactions they run (Kafka's TransactionCoordinator, TransactionMetadata and the marker
writer in one).

Guarantees:

* A transactional id keeps its producer id across InitProducerId calls and bumps the epoch
  each time, which fences the instance before it (PRODUCER_FENCED on the coordinator's APIs,
  INVALID_PRODUCER_EPOCH on its produce and offset commits). An exhausted epoch (32767)
  rotates to a new producer id at epoch 0.
* InitProducerId during an ongoing transaction fences its epoch, aborts it and answers
  CONCURRENT_TRANSACTIONS; the client's retry then bumps the epoch again, as Kafka does.
* A transaction ends when EndTxn (or its timeout) says so: the commit or abort markers are
  written at once to every partition of the transaction (``write_markers``, the cluster's
  log side) and the group offsets it carried are committed or dropped, so the states
  PrepareCommit and PrepareAbort last no time here (Kafka answers CONCURRENT_TRANSACTIONS
  while they last; the fake always has its markers written before it answers).
* Transactions v2 (KIP-890): a transaction begun by an implicit add (``add_partitions`` from
  a Produce v12+, ``add_group`` from a TxnOffsetCommit v5+: the handlers decide, by the
  request's version) or ended by EndTxn v5 runs at version 2: every end by
  the client bumps the epoch and answers it, and a later end naming the epoch one below is
  taken for a retry of the last one (also after a timeout's abort fenced that epoch: an abort
  is then answered as done, a commit INVALID_TXN_STATE), as Kafka's coordinator does.
* A partition asked about by ``verify_partitions`` and not in the ongoing transaction is
  ``not_added`` (TRANSACTION_ABORTABLE, Kafka 3.8 on; INVALID_TXN_STATE in 3.6 and 3.7, whose
  coordinator answered that).
* Time comes in as ``now`` (trio's clock, seconds). A transaction past its timeout is
  aborted, its epoch fenced first, by the next scan for timed-out transactions, as Kafka's
  coordinator does (``abortTimedOutTransactions``, every
  transaction.abort.timed.out.transaction.cleanup.interval.ms, ``abort_scan_ms``): scans
  fall every ``abort_scan_ms`` from the first transaction's begin (Kafka's from its start),
  so a transaction lives up to one interval past its timeout on both brokers.
  ``next_deadline`` is the first scan after the earliest timeout, ``expire(now)`` is the
  last scan at or before ``now``. Wall-clock milliseconds (start times, marker timestamps)
  come from ``wall_ms``.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.offsets import (
    CommittedOffset,
    OffsetStore,
    TopicPartition,
    offsets_partition,
)
from fakebroker.state.producers import ProducerRegistry

# The release whose coordinator first answered TRANSACTION_ABORTABLE for a partition not in
# the transaction (KIP-890; 3.6 and 3.7 answered INVALID_TXN_STATE).
ABORTABLE_FROM = "3.8"

# Kafka's broker config: how often its coordinator aborts the timed-out transactions.
ABORT_SCAN_CONFIG = "transaction.abort.timed.out.transaction.cleanup.interval.ms"

MAX_EPOCH = 32767  # Short.MaxValue: an epoch that cannot be bumped again
NO_PRODUCER_ID = -1  # an InitProducerId naming no producer (any other id is named)
COORDINATOR_EPOCH = 0  # the fake's coordinators never change epoch (markers carry it)


class TxnState(enum.Enum):
    """Kafka's transaction states, by the names DescribeTransactions and ListTransactions use."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


COMPLETE = (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


@dataclass(slots=True)
class Transaction:
    """One transactional id and its current (or last) transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int = -1
    last_producer_epoch: int = -1  # TV2: the epoch a retried end names (one below)
    previous_producer_id: int = -1  # before an epoch exhaustion rotated the id
    timeout_ms: int = 60_000
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)  # of the ongoing one
    groups: set[str] = field(default_factory=set)
    start_time_ms: int = -1  # wall clock, when the transaction began (-1: none)
    deadline: float = math.inf  # trio clock: when an ongoing transaction times out
    # The transaction version it runs (2: begun by an implicit add, or ended by EndTxn v5):
    # under 2 a retried end is told by the epoch one below the current one.
    version: int = 0


# Writes the markers of a transaction: (producer id, epoch, commit, partitions).
MarkerWriter = Callable[[int, int, bool, Iterable[TopicPartition], int], object]


class TransactionCoordinator:
    """Every transactional id of the cluster, its transactions and their pending offsets."""

    def __init__(self, producers: ProducerRegistry, offsets: OffsetStore,
                 max_timeout_ms: int = 900_000,
                 wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
                 not_added: str = "TRANSACTION_ABORTABLE", abort_scan_ms: int = 10_000
                 ) -> None:
        self.producers = producers
        self.abort_scan_ms = abort_scan_ms
        self._scan_origin: float | None = None  # the first begin's ``now``: scans count from it
        self.offsets = offsets
        self.max_timeout_ms = max_timeout_ms
        self.not_added = not_added
        self.wall_ms = wall_ms
        self.transactions: dict[str, Transaction] = {}
        # Writes the markers to the partition logs; set by the cluster.
        self.write_markers: MarkerWriter = lambda *_: None
        # group id -> producer id -> pending offsets (TxnOffsetCommit), until the end.
        self.pending: dict[str, dict[int, dict[TopicPartition, CommittedOffset]]] = {}
        # __consumer_offsets partition -> producer id -> (its last epoch there, whether the
        # partition holds its transaction open: until the end writes its marker there).
        self.offsets_producers: dict[int, dict[int, tuple[int, bool]]] = {}
        self._watchers: list[Callable[[float], None]] = []

    # -- InitProducerId -------------------------------------------------------------------

    def init_producer(self, transactional_id: str, timeout_ms: int, producer_id: int,
                      epoch: int) -> tuple[int, int]:
        """InitProducerId with a transactional id: (producer id, epoch). Raises
        ``ClusterError``: INVALID_REQUEST (empty id), INVALID_TRANSACTION_TIMEOUT (above
        ``max_timeout_ms``, or not positive), PRODUCER_FENCED (KIP-360: the named id or epoch
        is not this id's; every id but -1 is named, a negative one too, as Kafka reads it),
        CONCURRENT_TRANSACTIONS (an ongoing transaction was aborted; retry)."""
        if not transactional_id:
            raise ClusterError("INVALID_REQUEST")
        if not 0 < timeout_ms <= self.max_timeout_ms:
            raise ClusterError("INVALID_TRANSACTION_TIMEOUT")
        txn = self.transactions.get(transactional_id)
        if txn is None:
            txn = self.transactions[transactional_id] = Transaction(
                transactional_id, self.producers.new_id(), timeout_ms=timeout_ms)
        expected = producer_id != NO_PRODUCER_ID  # any other id, negative too (KafkaApis)
        if expected and not (
                txn.producer_epoch < 0 or producer_id == txn.producer_id
                or (producer_id == txn.previous_producer_id and epoch >= MAX_EPOCH)):
            raise ClusterError("PRODUCER_FENCED")
        if txn.state is TxnState.ONGOING:
            self._fence_and_abort(txn)
            raise ClusterError("CONCURRENT_TRANSACTIONS")
        if txn.producer_epoch >= MAX_EPOCH and (not expected or epoch == txn.producer_epoch):
            txn.previous_producer_id, txn.producer_id = txn.producer_id, self.producers.new_id()
            txn.last_producer_epoch = txn.producer_epoch if expected else -1
            txn.producer_epoch = 0
        elif not expected:
            txn.last_producer_epoch, txn.producer_epoch = -1, txn.producer_epoch + 1
        elif txn.producer_epoch < 0 or epoch == txn.producer_epoch:
            txn.last_producer_epoch, txn.producer_epoch = txn.producer_epoch, \
                txn.producer_epoch + 1
        elif epoch != txn.last_producer_epoch:  # a retry of the last bump gets it again
            raise ClusterError("PRODUCER_FENCED")
        txn.timeout_ms = timeout_ms
        txn.state = TxnState.EMPTY
        txn.partitions.clear()
        txn.groups.clear()
        txn.start_time_ms = -1
        txn.version = 0
        return txn.producer_id, txn.producer_epoch

    # -- adding partitions and groups -----------------------------------------------------

    def _current(self, transactional_id: str, producer_id: int, epoch: int) -> Transaction:
        """The transaction a request names, checked as Kafka checks it: unknown id or
        producer id INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED (no end is
        ever in progress here, so never Kafka's CONCURRENT_TRANSACTIONS)."""
        if not transactional_id:
            raise ClusterError("INVALID_REQUEST")
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            raise ClusterError("INVALID_PRODUCER_ID_MAPPING")
        if txn.producer_epoch != epoch:
            raise ClusterError("PRODUCER_FENCED")
        return txn

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: Iterable[TopicPartition], now: float, version: int = 0
                       ) -> None:
        """AddPartitionsToTxn (``version`` 0), or a transactions v2 produce (2): the
        partitions join the transaction, which begins if none is ongoing, of that
        transaction version. Raises ``ClusterError`` as ``_current``."""
        txn = self._current(transactional_id, producer_id, epoch)
        self._begin(txn, now, version)
        txn.partitions.update(partitions)

    def verify_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, str]:
        """AddPartitionsToTxn's verifyOnly (a partition leader asking before it appends a
        transactional batch): per partition NONE or ``not_added`` (not in the transaction).
        Raises ``ClusterError`` as ``_current``."""
        txn = self._current(transactional_id, producer_id, epoch)
        return {tp: ("NONE" if txn.state is TxnState.ONGOING and tp in txn.partitions
                     else self.not_added) for tp in partitions}

    def add_group(self, transactional_id: str, producer_id: int, epoch: int, group_id: str,
                  now: float, version: int = 0) -> None:
        """AddOffsetsToTxn (``version`` 0), or a transactions v2 TxnOffsetCommit (2): the
        group's offsets join the transaction."""
        txn = self._current(transactional_id, producer_id, epoch)
        self._begin(txn, now, version)
        txn.groups.add(group_id)

    def has_group(self, transactional_id: str, producer_id: int, epoch: int, group_id: str
                  ) -> bool:
        """Whether the transaction carries ``group_id``'s offsets (TxnOffsetCommit's
        verification). Raises ``ClusterError`` as ``_current``."""
        txn = self._current(transactional_id, producer_id, epoch)
        return txn.state is TxnState.ONGOING and group_id in txn.groups

    def commit_offsets(self, group_id: str, producer_id: int, epoch: int,
                       offsets: dict[TopicPartition, CommittedOffset]) -> None:
        """TxnOffsetCommit: offsets pending until the producer's transaction ends; the
        group's offsets partition holds the producer's transaction open at ``epoch``."""
        self.pending.setdefault(group_id, {}).setdefault(producer_id, {}).update(offsets)
        held = self.offsets_producers.setdefault(offsets_partition(group_id), {})
        held[producer_id] = (max(epoch, held.get(producer_id, (epoch, True))[0]), True)

    def offsets_producer(self, group_id: str, producer_id: int) -> tuple[int, bool]:
        """The producer's state on the group's offsets partition (shared by every group of
        that ``__consumer_offsets`` partition): its last epoch there (-1: none), and whether
        the partition holds its transaction open."""
        return self.offsets_producers.get(offsets_partition(group_id), {}).get(
            producer_id, (-1, False))

    def pending_offset(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether a transaction holds an offset of this group and partition not yet
        committed (OffsetFetch's UNSTABLE_OFFSET_COMMIT)."""
        return any((topic, partition) in offsets
                   for offsets in self.pending.get(group_id, {}).values())

    def _begin(self, txn: Transaction, now: float, version: int) -> None:
        if txn.state is TxnState.ONGOING:
            return
        txn.state = TxnState.ONGOING
        txn.version = version
        txn.partitions.clear()
        txn.groups.clear()
        txn.start_time_ms = self.wall_ms()
        txn.deadline = now + txn.timeout_ms / 1000
        if self._scan_origin is None:
            self._scan_origin = now
        for watcher in self._watchers:
            watcher(self._scan_after(txn.deadline))

    # -- ending ---------------------------------------------------------------------------

    def end(self, transactional_id: str, producer_id: int, epoch: int, commit: bool,
            version: int) -> tuple[int, int]:
        """EndTxn at transaction ``version`` (2: EndTxn v5): commit or abort the ongoing
        transaction; answers (producer id, epoch) to use next (bumped under version 2).
        Answered as Kafka 4.4 answers: the end that already happened again is NONE (under
        version 2 named by the epoch before its bump), the other INVALID_TXN_STATE, as is a
        commit with no transaction; under version 2 an abort with no transaction bumps the
        epoch. Raises ``ClusterError``."""
        if not transactional_id:
            raise ClusterError("INVALID_REQUEST")
        txn = self.transactions.get(transactional_id)
        if txn is None:
            raise ClusterError("INVALID_PRODUCER_ID_MAPPING")
        v2 = version >= 2
        bumped = v2 and txn.version >= 2 and txn.state in COMPLETE  # by the end retried
        retry_overflow = (bumped and txn.previous_producer_id == producer_id
                          and epoch == MAX_EPOCH - 1 and txn.producer_epoch == 0)
        retry = retry_overflow or (bumped and txn.producer_epoch == epoch + 1)
        if txn.producer_id != producer_id and not retry_overflow:
            raise ClusterError("INVALID_PRODUCER_ID_MAPPING")
        if epoch != txn.producer_epoch and not retry:
            raise ClusterError("PRODUCER_FENCED")
        wanted = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        if txn.state is TxnState.ONGOING:
            txn.version = version
            self._complete(txn, commit, bump=v2)
        elif v2 and not retry and not commit:  # nothing to abort: the epoch bumps all the same
            txn.version = version
            self._complete(txn, False, bump=True)
        elif txn.state is not wanted or (v2 and not retry):
            raise ClusterError("INVALID_TXN_STATE")
        return txn.producer_id, txn.producer_epoch

    def _complete(self, txn: Transaction, commit: bool, bump: bool) -> None:
        """Write the markers and settle the offsets of ``txn``'s transaction. With ``bump``
        (transactions v2) the epoch is bumped first and the markers carry the new one."""
        old_id = txn.producer_id
        if bump:
            if txn.producer_epoch >= MAX_EPOCH - 1:
                txn.previous_producer_id, txn.producer_id = old_id, self.producers.new_id()
                txn.last_producer_epoch, txn.producer_epoch = -1, 0
                marker_epoch = MAX_EPOCH
            else:
                txn.last_producer_epoch = txn.producer_epoch
                txn.producer_epoch += 1
                marker_epoch = txn.producer_epoch
        else:
            marker_epoch = txn.producer_epoch
        self.write_markers(old_id, marker_epoch, commit, sorted(txn.partitions),
                           COORDINATOR_EPOCH)
        for group_id in txn.groups:
            self.offsets_producers.setdefault(offsets_partition(group_id), {})[old_id] = (
                marker_epoch, False)
            offsets = self.pending.get(group_id, {}).pop(old_id, None)
            if commit and offsets:
                self.offsets.commit(group_id, offsets)
            if group_id in self.pending and not self.pending[group_id]:
                del self.pending[group_id]
        txn.state = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        txn.partitions.clear()  # as Kafka's completed transaction: its start time stays
        txn.groups.clear()
        txn.deadline = math.inf

    def _fence_and_abort(self, txn: Transaction) -> None:
        """Bump the epoch (fencing the producer) and abort with it, as Kafka does for an
        InitProducerId during a transaction and for a transaction past its timeout."""
        if txn.producer_epoch < MAX_EPOCH:
            txn.producer_epoch += 1
        txn.last_producer_epoch = -1
        self._complete(txn, commit=False, bump=False)

    def abort(self, transactional_id: str) -> None:
        """Abort the id's ongoing transaction now, as its timeout would (``ClusterError``:
        TRANSACTIONAL_ID_NOT_FOUND, or INVALID_TXN_STATE when none is ongoing)."""
        txn = self.transactions.get(transactional_id)
        if txn is None:
            raise ClusterError("TRANSACTIONAL_ID_NOT_FOUND",
                               f"no transactional id {transactional_id}")
        if txn.state is not TxnState.ONGOING:
            raise ClusterError("INVALID_TXN_STATE",
                               f"{transactional_id} has no ongoing transaction "
                               f"({txn.state.value})")
        self._fence_and_abort(txn)

    # -- time -----------------------------------------------------------------------------

    def _scans_by(self, now: float) -> int:
        """How many abort scans fell at or before ``now`` (0 before the first begin)."""
        if self._scan_origin is None:
            return 0
        interval = self.abort_scan_ms / 1000
        return max(0, math.floor((now - self._scan_origin) / interval + 1e-9))

    def _scan_after(self, deadline: float) -> float:
        """The first abort scan strictly after ``deadline`` (Kafka aborts a transaction
        whose start plus timeout is before the scan's time)."""
        if math.isinf(deadline) or self._scan_origin is None:
            return deadline
        return self._scan_origin + (self._scans_by(deadline) + 1) * self.abort_scan_ms / 1000

    def next_deadline(self) -> float:
        """When the scan aborting the earliest timed-out transaction falls (``inf``: none)."""
        return self._scan_after(
            min((t.deadline for t in self.transactions.values()), default=math.inf))

    def expire(self, now: float) -> None:
        """The last abort scan at or before ``now``: abort every ongoing transaction whose
        timeout passed before it, its epoch fenced first."""
        scans = self._scans_by(now)
        if self._scan_origin is None or scans == 0:
            return
        scan = self._scan_origin + scans * self.abort_scan_ms / 1000
        for txn in list(self.transactions.values()):
            if txn.state is TxnState.ONGOING and txn.deadline < scan:
                self._fence_and_abort(txn)

    def watch_deadlines(self, callback: Callable[[float], None]) -> Callable[[], None]:
        """Call ``callback(deadline)`` with every deadline set; returns its remover."""
        self._watchers.append(callback)
        return lambda: self._watchers.remove(callback)
