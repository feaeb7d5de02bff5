"""Which server assignor a KIP-848 consumer group uses, as Kafka 4.4's ConsumerGroup counts it.

Guarantees (measured on Kafka 4.4, tests/test_wire_consumer_groups.py):

* The group's assignor is the one most of its members name (ConsumerGroupHeartbeat's
  ``server_assignor``, kept until a member names another); with none named, the first of
  ``group.consumer.assignors``: ``uniform``. ConsumerGroupDescribe reports it.
* A heartbeat bumps the group epoch when the assignor its change would give differs from the
  group's, and the target assignment of that heartbeat is computed with the former.
* Ties follow Kafka's two maps. The group's own count (a timeline hash table) lists
  ``uniform`` before ``range``, so a tie is ``uniform``. The heartbeat's count is a copy
  (a java.util.HashMap, both names in one bucket): the member's old assignor is taken out,
  and dropped when no other member names it; its new one is put in at the head of the bucket
  when no other member names it. So in a tie the heartbeat of a member that alone named its
  assignor, and names it again, counts that assignor first: a member alone with ``range``
  beside one with ``uniform`` bumps the group epoch at each of its heartbeats, as on Kafka.
"""

from __future__ import annotations

from collections.abc import Iterable

ASSIGNORS = ("uniform", "range")  # group.consumer.assignors; the first is the default


def counted(named: Iterable[str | None]) -> dict[str, int]:
    """How many members name each assignor, in the order of the group's count."""
    counts = dict.fromkeys(ASSIGNORS, 0)
    for name in named:
        if name is not None:
            counts[name] += 1
    return {name: count for name, count in counts.items() if count}


def preferred(counts: dict[str, int]) -> str:
    """The assignor most members name (the first counted of a tie), else the default."""
    best = max(counts.items(), key=lambda item: item[1], default=(ASSIGNORS[0], 0))
    return best[0]


def after_change(counts: dict[str, int], old: str | None, new: str | None) -> str:
    """The assignor once one member's ``old`` assignor becomes ``new``, as the heartbeat's
    copy of the group's ``counts`` orders a tie."""
    copy = dict(counts)
    if old is not None:
        copy[old] -= 1
        if not copy[old]:
            del copy[old]
    if new in copy:
        copy[new] += 1
    elif new is not None:
        copy = {new: 1} | copy
    return preferred(copy)
