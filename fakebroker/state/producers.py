"""Producer ids, epochs and per-partition sequence numbers for idempotent producers.

Follows Kafka's ProducerStateManager rules:

* A batch whose (epoch, first sequence, last sequence) equals one of the last five appended
  for its producer on that partition is a retry: it is not appended again, and the answer
  carries the offset it got the first time.
* An epoch older than the producer's current one is fenced (INVALID_PRODUCER_EPOCH).
* A new epoch, or a producer unknown on the partition, must start at sequence 0; otherwise,
  and for any gap or reordering, the answer is OUT_OF_ORDER_SEQUENCE_NUMBER.
* Sequences wrap from 2**31 - 1 to 0.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field

MAX_CACHED_BATCHES = 5
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AppendedBatch:
    first_sequence: int
    last_sequence: int
    base_offset: int
    epoch: int


@dataclass(slots=True)
class PartitionProducerState:
    """One producer's state on one partition."""

    epoch: int
    recent: deque[AppendedBatch] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))

    @property
    def last_sequence(self) -> int:
        return self.recent[-1].last_sequence if self.recent else -1


class SequenceError(Exception):
    """The batch breaks the sequence rules; ``error`` is the Kafka error name."""

    def __init__(self, error: str, message: str):
        super().__init__(message)
        self.error = error


def next_sequence(sequence: int) -> int:
    return 0 if sequence == INT32_MAX else sequence + 1


@dataclass
class ProducerRegistry:
    """Allocated producer ids, transactional ids and their epochs."""

    _ids: itertools.count = field(default_factory=lambda: itertools.count(1000))
    epochs: dict[int, int] = field(default_factory=dict)
    transactional: dict[str, int] = field(default_factory=dict)
    # (topic, partition) -> producer id -> state
    partitions: dict[tuple[str, int], dict[int, PartitionProducerState]] = field(
        default_factory=dict
    )

    def init_producer(
        self, transactional_id: str | None, producer_id: int = -1, epoch: int = -1
    ) -> tuple[int, int]:
        """InitProducerId: a new id at epoch 0, or the same id with its epoch bumped.

        A transactional id keeps its producer id and bumps the epoch on every call. Without
        one, every call gets a new id at epoch 0, whatever id and epoch it names (as Kafka's
        TransactionCoordinator answers: an idempotent producer bumps its epoch itself,
        KIP-360). Raises ``SequenceError`` with PRODUCER_FENCED.
        """
        if transactional_id is not None and transactional_id in self.transactional:
            pid = self.transactional[transactional_id]
            if producer_id >= 0 and (producer_id != pid or epoch != self.epochs[pid]):
                raise SequenceError("PRODUCER_FENCED", "The producer has been fenced")
            return self._bump(pid)
        pid = next(self._ids)
        self.epochs[pid] = 0
        if transactional_id is not None:
            self.transactional[transactional_id] = pid
        return pid, 0

    def _bump(self, pid: int) -> tuple[int, int]:
        epoch = self.epochs[pid] + 1
        if epoch > 32767:
            pid, epoch = next(self._ids), 0
        self.epochs[pid] = epoch
        return pid, epoch

    def check(
        self, topic: str, partition: int, producer_id: int, epoch: int,
        first_sequence: int, record_count: int,
    ) -> int | None:
        """Check a batch before it is appended.

        Returns the base offset the batch got before when it is a retried duplicate (so it must
        not be appended again), or None when it may be appended. Raises ``SequenceError``.
        """
        states = self.partitions.get((topic, partition), {})
        state = states.get(producer_id)
        known_epoch = self.epochs.get(producer_id)
        if known_epoch is not None and epoch < known_epoch:
            raise SequenceError(
                "INVALID_PRODUCER_EPOCH",
                f"Producer {producer_id}'s epoch {epoch} is older than {known_epoch}",
            )
        last_sequence = (first_sequence + record_count - 1) % (INT32_MAX + 1)
        if state is not None and state.epoch == epoch:
            for batch in state.recent:
                if (batch.first_sequence, batch.last_sequence) == (first_sequence, last_sequence):
                    return batch.base_offset
            if first_sequence != next_sequence(state.last_sequence):
                raise SequenceError(
                    "OUT_OF_ORDER_SEQUENCE_NUMBER",
                    f"Out of order sequence number for producer {producer_id} at offset: "
                    f"expected {next_sequence(state.last_sequence)}, got {first_sequence}",
                )
        elif first_sequence != 0:
            raise SequenceError(
                "OUT_OF_ORDER_SEQUENCE_NUMBER",
                f"Producer {producer_id} at epoch {epoch} must start at sequence 0, "
                f"got {first_sequence}",
            )
        return None

    def record(
        self, topic: str, partition: int, producer_id: int, epoch: int,
        first_sequence: int, record_count: int, base_offset: int,
    ) -> None:
        """Remember an appended batch (after ``check`` allowed it)."""
        states = self.partitions.setdefault((topic, partition), {})
        state = states.get(producer_id)
        if state is None or state.epoch != epoch:
            state = states[producer_id] = PartitionProducerState(epoch)
        if producer_id not in self.epochs or self.epochs[producer_id] < epoch:
            self.epochs[producer_id] = epoch
        last_sequence = (first_sequence + record_count - 1) % (INT32_MAX + 1)
        state.recent.append(AppendedBatch(first_sequence, last_sequence, base_offset, epoch))

    def forget_partition(self, topic: str, partition: int | None = None) -> None:
        """Drop sequence state of a deleted topic (or one partition)."""
        for key in [k for k in self.partitions if k[0] == topic and partition in (None, k[1])]:
            del self.partitions[key]
