"""Producer ids, and each partition's producer states: epochs and sequence numbers.

Follows Kafka's ProducerStateManager rules, which are kept per partition (a partition knows a
producer's epoch only from the batches and markers written to it; the coordinator's epoch
bumps reach a partition by its markers, and a transactional batch of an older epoch is fenced
by the coordinator's verification before it reaches the partition):

* A batch whose (epoch, first sequence, last sequence) equals one of the last five appended
  for its producer on that partition is a retry: it is not appended again, and the answer
  carries the offset it got the first time.
* An epoch older than the one the partition last took from the producer (in a batch or a
  transaction marker) is fenced (INVALID_PRODUCER_EPOCH): a partition knows its own
  producers' epochs, as Kafka's ProducerStateManager does (measured: a producer at epoch 1 on
  one partition still writes epoch 0 to another).
* A new epoch on a partition must start at sequence 0, and the batch after one appended must
  follow it; otherwise the answer is OUT_OF_ORDER_SEQUENCE_NUMBER. A producer new to the
  partition may start at any sequence (Kafka's entry has no epoch yet; measured).
* A transaction marker sets the producer's epoch on its partition (a new epoch forgets the
  batches of the one before, as Kafka's ``ProducerStateEntry.maybeUpdateProducerEpoch``).
* Sequences wrap from 2**31 - 1 to 0.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field

from fakebroker.protocol.errors import ClusterError

MAX_CACHED_BATCHES = 5
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AppendedBatch:
    first_sequence: int
    last_sequence: int
    base_offset: int
    epoch: int
    max_timestamp: int  # as stored (a LogAppendTime topic's: the append time)


@dataclass(slots=True)
class PartitionProducerState:
    """One producer's state on one partition."""

    epoch: int
    recent: deque[AppendedBatch] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))

    @property
    def last_sequence(self) -> int:
        return self.recent[-1].last_sequence if self.recent else -1


def next_sequence(sequence: int) -> int:
    return 0 if sequence == INT32_MAX else sequence + 1


@dataclass
class ProducerRegistry:
    """Allocated producer ids, and each partition's producer states."""

    # Kafka hands out producer ids from 0 (in blocks its controller allocates).
    _ids: itertools.count = field(default_factory=lambda: itertools.count(0))
    # (topic, partition) -> producer id -> state
    partitions: dict[tuple[str, int], dict[int, PartitionProducerState]] = field(
        default_factory=dict
    )

    def init_producer(self) -> tuple[int, int]:
        """InitProducerId without a transactional id (an idempotent producer): always a new
        id at epoch 0, whatever id and epoch the request names, as Kafka's coordinator
        answers (the producer bumps its epoch itself). Transactional ids are the
        transaction coordinator's (``fakebroker.state.transactions``)."""
        return self.new_id(), 0

    def new_id(self) -> int:
        """A producer id never handed out before."""
        return next(self._ids)

    def epoch(self, topic: str, partition: int, producer_id: int) -> int | None:
        """The producer's last epoch on the partition (None: nothing of it written there)."""
        state = self.partitions.get((topic, partition), {}).get(producer_id)
        return None if state is None else state.epoch

    def end_transaction(self, topic: str, partition: int, producer_id: int, epoch: int
                        ) -> None:
        """A transaction marker of ``epoch`` appended to the partition: the producer's epoch
        there (its batches of an epoch before forgotten)."""
        states = self.partitions.setdefault((topic, partition), {})
        state = states.get(producer_id)
        if state is None or state.epoch != epoch:
            states[producer_id] = PartitionProducerState(epoch)

    def check(
        self, topic: str, partition: int, producer_id: int, epoch: int,
        first_sequence: int, record_count: int,
    ) -> AppendedBatch | None:
        """Check a batch before it is appended.

        Returns the batch as appended before when it is a retried duplicate (so it must not be
        appended again), or None when it may be appended. Raises ``ClusterError``.
        """
        state = self.partitions.get((topic, partition), {}).get(producer_id)
        if state is not None and epoch < state.epoch:
            raise ClusterError(
                "INVALID_PRODUCER_EPOCH",
                f"Producer {producer_id}'s epoch {epoch} is older than {state.epoch}",
            )
        last_sequence = (first_sequence + record_count - 1) % (INT32_MAX + 1)
        if state is not None and state.epoch == epoch:
            for batch in state.recent:
                if (batch.first_sequence, batch.last_sequence) == (first_sequence, last_sequence):
                    return batch
            if first_sequence != next_sequence(state.last_sequence):
                raise ClusterError(
                    "OUT_OF_ORDER_SEQUENCE_NUMBER",
                    f"Out of order sequence number for producer {producer_id} at offset: "
                    f"expected {next_sequence(state.last_sequence)}, got {first_sequence}",
                )
        elif state is not None and first_sequence != 0:
            raise ClusterError(
                "OUT_OF_ORDER_SEQUENCE_NUMBER",
                f"Producer {producer_id} at epoch {epoch} must start at sequence 0, "
                f"got {first_sequence}",
            )
        return None

    def continues(self, topic: str, partition: int, producer_id: int, epoch: int,
                  first_sequence: int) -> bool:
        """Whether a batch is the plain next one of the producer's epoch on the partition:
        neither a retry, a refusal, a new epoch nor a producer new to the partition."""
        state = self.partitions.get((topic, partition), {}).get(producer_id)
        return state is not None and state.epoch == epoch \
            and first_sequence == next_sequence(state.last_sequence)

    def record(
        self, topic: str, partition: int, producer_id: int, epoch: int,
        first_sequence: int, record_count: int, base_offset: int, max_timestamp: int,
    ) -> None:
        """Remember an appended batch (after ``check`` allowed it)."""
        states = self.partitions.setdefault((topic, partition), {})
        state = states.get(producer_id)
        if state is None or state.epoch != epoch:
            state = states[producer_id] = PartitionProducerState(epoch)
        last_sequence = (first_sequence + record_count - 1) % (INT32_MAX + 1)
        state.recent.append(AppendedBatch(first_sequence, last_sequence, base_offset, epoch,
                                          max_timestamp))

    def forget_partition(self, topic: str, partition: int | None = None) -> None:
        """Drop sequence state of a deleted topic (or one partition)."""
        for key in [k for k in self.partitions if k[0] == topic and partition in (None, k[1])]:
            del self.partitions[key]
