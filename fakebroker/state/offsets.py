"""The committed offsets of every group, classic and KIP-848 alike (Kafka's OffsetMetadataManager).

Guarantees:

* An offset is kept by group id, topic and partition, whatever protocol the group runs: no
  group record is needed to hold it. It stays while the group id changes kind (an empty group
  giving way to one of the other protocol) and goes only by ``delete`` (OffsetDelete) or
  ``delete_group`` (DeleteGroups).
* ``commit`` stores a batch of offsets at once, each replacing the one before for its
  partition; what ``get`` and ``of_group`` answer is what was committed last.

Transactional offsets (TxnOffsetCommit) are not here while their transaction runs: the
transaction coordinator (``fakebroker.state.transactions``) keeps them pending per producer id,
invisible to OffsetFetch (which answers UNSTABLE_OFFSET_COMMIT for them when asked to require
stable offsets), and commits each producer's batch here (``commit``) at its transaction's
commit, or drops it at an abort.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fakebroker.state.cluster import INTERNAL_PARTITIONS
from fakebroker.state.features import java_hash

TopicPartition = tuple[str, int]  # topic name, partition index


def offsets_partition(group_id: str) -> int:
    """The ``__consumer_offsets`` partition holding the group's offsets, as Kafka places it:
    ``Utils.abs(groupId.hashCode) % 50`` (``Utils.abs``: a negative hash's absolute value,
    Integer.MIN_VALUE's 0; measured on Kafka 4.4, see tests/test_wire_groups.py's
    "neighbour-75")."""
    h = java_hash(group_id)
    signed = h - (1 << 32) if h & 0x80000000 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % INTERNAL_PARTITIONS


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int  # -1: unknown
    metadata: str | None
    commit_timestamp: int  # wall-clock milliseconds


class OffsetStore:
    """Committed offsets by group id, then (topic, partition)."""

    def __init__(self) -> None:
        self._by_group: dict[str, dict[TopicPartition, CommittedOffset]] = {}

    def commit(self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]) -> None:
        """Store ``offsets`` for ``group_id``."""
        if offsets:
            self._by_group.setdefault(group_id, {}).update(offsets)

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._by_group.get(group_id, {}).get((topic, partition))

    def of_group(self, group_id: str) -> dict[TopicPartition, CommittedOffset]:
        """Every offset ``group_id`` committed, by (topic, partition) (a copy)."""
        return dict(self._by_group.get(group_id, {}))

    def delete(self, group_id: str, topic: str, partition: int) -> None:
        """Forget one committed offset (nothing happens if there is none)."""
        offsets = self._by_group.get(group_id)
        if offsets is not None:
            offsets.pop((topic, partition), None)
            if not offsets:
                del self._by_group[group_id]

    def delete_topic(self, topic: str) -> None:
        """Forget every group's offsets of ``topic``'s partitions (the topic was deleted)."""
        for group_id, offsets in list(self._by_group.items()):
            for key in [key for key in offsets if key[0] == topic]:
                del offsets[key]
            if not offsets:
                del self._by_group[group_id]

    def delete_group(self, group_id: str) -> None:
        """Forget every offset of ``group_id``."""
        self._by_group.pop(group_id, None)
