"""KIP-848 consumer groups: server-side assignment, member epochs and reconciliation.

Guarantees, following Kafka's GroupMetadataManager for the ``consumer`` protocol:

* Every membership or subscription change bumps the group epoch and recomputes the target
  assignment with the group's assignor (``uniform``, the default, or ``range``).
* A member reaches the new epoch only after it has stopped owning the partitions it must give
  up: it is first sent its assignment without them (keeping its epoch), and a partition is
  given to its new owner only once no other member owns it or is revoking it.
* A heartbeat must carry the member's current epoch (or the previous one, when a response was
  lost); otherwise FENCED_MEMBER_EPOCH. An unknown member id gets UNKNOWN_MEMBER_ID.
  Epoch 0 joins, -1 leaves, -2 leaves temporarily (a static member keeps nothing here either).
* A member silent for its session timeout (45 s, group.consumer.session.timeout.ms) is removed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

Assignment = dict[str, set[int]]  # topic name -> partitions

JOIN, LEAVE, TEMPORARY_LEAVE = 0, -1, -2


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed: list[str]
    epoch: int = 0
    previous_epoch: int = -1
    assigned: Assignment = field(default_factory=dict)
    revoking: Assignment = field(default_factory=dict)
    sent: Assignment | None = None  # what the member was last told it owns
    deadline: float = 0.0


@dataclass
class ConsumerGroup:
    group_id: str
    assignor: str = "uniform"
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """Kafka's consumer group states: Empty, Assigning, Reconciling, Stable."""
        if not self.members:
            return "Empty"
        if self.assignment_epoch != self.group_epoch:
            return "Assigning"
        if any(m.epoch != self.assignment_epoch or m.revoking
               or m.assigned != self.target.get(m.member_id, {})
               for m in self.members.values()):
            return "Reconciling"
        return "Stable"


class ConsumerGroupError(Exception):
    def __init__(self, error: str, message: str = ""):
        super().__init__(message or error)
        self.error = error


def compute_target(group: ConsumerGroup, partitions_of: dict[str, int]) -> dict[str, Assignment]:
    """The assignor's target: each subscribed partition to exactly one subscribed member."""
    target: dict[str, Assignment] = {m: {} for m in group.members}
    topics = sorted({t for m in group.members.values() for t in m.subscribed
                     if t in partitions_of})
    if group.assignor == "range":
        for topic in topics:
            owners = sorted(m.member_id for m in group.members.values() if topic in m.subscribed)
            count = partitions_of[topic]
            for i, owner in enumerate(owners):
                lo, hi = count * i // len(owners), count * (i + 1) // len(owners)
                if hi > lo:
                    target[owner][topic] = set(range(lo, hi))
        return target
    ordered = sorted(group.members)
    turn = 0
    for topic in topics:
        for partition in range(partitions_of[topic]):
            for _ in range(len(ordered)):
                owner = ordered[turn % len(ordered)]
                turn += 1
                if topic in group.members[owner].subscribed:
                    target[owner].setdefault(topic, set()).add(partition)
                    break
    return target


def _minus(a: Assignment, b: Assignment) -> Assignment:
    out = {t: ps - b.get(t, set()) for t, ps in a.items()}
    return {t: ps for t, ps in out.items() if ps}


def _union(a: Assignment, b: Assignment) -> Assignment:
    out = {t: set(ps) for t, ps in a.items()}
    for t, ps in b.items():
        out.setdefault(t, set()).update(ps)
    return out


@dataclass
class ConsumerGroupCoordinator:
    """Every KIP-848 consumer group of the cluster."""

    # topic name -> partition count, from the cluster's topics
    partitions_of: Callable[[], dict[str, int]] = dict
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    _changed: trio.Event = field(default_factory=trio.Event)

    def heartbeat(
        self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
        rack_id: str | None, client_id: str, client_host: str,
        subscribed: list[str] | None, assignor: str | None, owned: Assignment | None,
        now: float,
    ) -> tuple[ConsumerMember, Assignment | None]:
        """One ConsumerGroupHeartbeat: (the member, the assignment to send or None)."""
        if not group_id:
            raise ConsumerGroupError("INVALID_GROUP_ID")
        group = self.groups.setdefault(group_id, ConsumerGroup(group_id))
        if assignor and assignor not in ("uniform", "range"):
            raise ConsumerGroupError("UNSUPPORTED_ASSIGNOR", f"assignor {assignor} unknown")
        if member_epoch in (LEAVE, TEMPORARY_LEAVE):
            member = group.members.get(member_id)
            if member is None:
                raise ConsumerGroupError("UNKNOWN_MEMBER_ID")
            self._remove(group, member_id)
            member.epoch = member_epoch
            return member, None
        if member_epoch == JOIN:
            if subscribed is None:
                raise ConsumerGroupError("INVALID_REQUEST",
                                         "SubscribedTopicNames must be set when joining")
            if assignor:
                group.assignor = assignor
            member_id = member_id or str(uuid.uuid4())
            if member_id in group.members:
                self._remove(group, member_id)
            member = ConsumerMember(member_id, instance_id, rack_id, client_id, client_host,
                                    list(subscribed))
            group.members[member_id] = member
            group.group_epoch += 1
            self._changed.set()
            self._changed = trio.Event()
        else:
            member = group.members.get(member_id)
            if member is None:
                raise ConsumerGroupError("UNKNOWN_MEMBER_ID")
            if member_epoch not in (member.epoch, member.previous_epoch):
                raise ConsumerGroupError("FENCED_MEMBER_EPOCH",
                                         f"expected epoch {member.epoch}, got {member_epoch}")
            if subscribed is not None and sorted(subscribed) != sorted(member.subscribed):
                member.subscribed = list(subscribed)
                group.group_epoch += 1
        member.deadline = now + self.session_timeout_ms / 1000
        self._refresh_target(group)
        if owned is not None:
            member.revoking = {t: ps & owned.get(t, set())
                               for t, ps in member.revoking.items()}
            member.revoking = {t: ps for t, ps in member.revoking.items() if ps}
        return member, self._reconcile(group, member)

    def _refresh_target(self, group: ConsumerGroup) -> None:
        if group.assignment_epoch != group.group_epoch:
            group.target = compute_target(group, self.partitions_of())
            group.assignment_epoch = group.group_epoch

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember) -> Assignment | None:
        target = group.target.get(member.member_id, {})
        to_revoke = _minus(member.assigned, target)
        if to_revoke:
            member.assigned = _minus(member.assigned, to_revoke)
            member.revoking = _union(member.revoking, to_revoke)
        if not member.revoking:
            taken = {}
            for other in group.members.values():
                if other is not member:
                    taken = _union(taken, _union(other.assigned, other.revoking))
            member.assigned = _union(member.assigned,
                                     _minus(_minus(target, member.assigned), taken))
            if member.epoch != group.assignment_epoch:
                member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch
        if member.sent != member.assigned:
            member.sent = {t: set(ps) for t, ps in member.assigned.items()}
            return member.sent
        return None

    def _remove(self, group: ConsumerGroup, member_id: str) -> None:
        del group.members[member_id]
        group.group_epoch += 1
        self._refresh_target(group)

    def member(self, group_id: str, member_id: str) -> ConsumerMember | None:
        group = self.groups.get(group_id)
        return group.members.get(member_id) if group is not None else None

    def validate_commit(self, group_id: str, member_id: str, member_epoch: int) -> None:
        """OffsetCommit/OffsetFetch checks of a consumer-group member (-1: none to check)."""
        member = self.member(group_id, member_id)
        if member is None:
            raise ConsumerGroupError("UNKNOWN_MEMBER_ID")
        if member_epoch != member.epoch:
            raise ConsumerGroupError("STALE_MEMBER_EPOCH")

    def expire(self, now: float) -> None:
        """Remove every member whose session timed out at ``now``."""
        for group in self.groups.values():
            for member_id, member in list(group.members.items()):
                if member.deadline <= now:
                    self._remove(group, member_id)

    def next_deadline(self) -> float:
        return min((m.deadline for g in self.groups.values() for m in g.members.values()),
                   default=float("inf"))

    async def run_timers(self) -> None:
        """Forever: remove members whose session timed out (trio's clock)."""
        while True:
            with trio.move_on_at(self.next_deadline()):
                await self._changed.wait()
            self.expire(trio.current_time())
