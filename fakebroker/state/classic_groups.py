"""Classic consumer groups: members, generations and rebalances (JoinGroup, SyncGroup,
Heartbeat, LeaveGroup).

The coordinator follows Kafka's classic group protocol (ClassicGroup / GroupCoordinator):

* States Empty, PreparingRebalance, CompletingRebalance, Stable, Dead.
* A rebalance completes as soon as every known member has rejoined (no waiting out the
  rebalance timeout); members that do not rejoin within the largest rebalance timeout are
  removed. One that began from Empty completes when ``initial_rebalance_delay_ms`` (0 by
  default) has passed, and not on a join or a LeaveGroup (Kafka's maybeCompleteJoinPhase):
  only its timer, or a member's expiry once every member left has rejoined, ends it.
* The protocol is the one every member supports that most members list first; the leader
  is kept across generations while it stays a member.
* A member whose session timeout passes without a join, sync, heartbeat or commit is removed
  and the group rebalances; a member id handed out with MEMBER_ID_REQUIRED expires too.
* A member that has not sent SyncGroup within the group's rebalance timeout (the largest of
  its members', a negative one counting as 0) after the join barrier closed is removed and
  the group rebalances (Kafka's pending sync).
* A JoinGroup's protocols are checked before its member id (Kafka's supportsProtocols): an
  Empty group wants a non-empty protocol type and at least one protocol, any other the
  group's protocol type and a protocol every member supports. As in Kafka's ClassicGroup,
  "every member supports" counts each member's listing of the protocol: a member that lists
  one twice counts twice, so no protocol is then supported by exactly as many listings as the
  group has members — no other member may join (INCONSISTENT_GROUP_PROTOCOL) and the
  rebalance cannot choose a protocol: the join barrier stays shut (Kafka's completion throws
  and is rolled back, its timer spent) until such a member's new member join timeout passes.
  When the member leaves instead, the group stays PreparingRebalance with no members (so
  DeleteGroups, which wants an Empty group, answers NON_EMPTY_GROUP), and a new member of
  its protocol type joins and waits there too, as on Kafka.
* A new member (one that has not yet got its first JoinGroup answer) waiting at the barrier
  is removed after 5 minutes (Kafka's classic new member join timeout): its JoinGroup is
  answered UNKNOWN_MEMBER_ID.
* ``max_size`` (Kafka's group.max.size) bounds the members, as Kafka's acceptJoiningMember
  does: an Empty group takes every JoinGroup; a Stable or CompletingRebalance one a new member
  while it has fewer members; a rebalancing one a member already waiting at the barrier, or
  another while fewer are waiting. A refused member gets GROUP_MAX_SIZE_REACHED with no
  member id, and a refused member of the group leaves it (the barrier still waits for the
  rebalance timeout, as Kafka's does).
* Static members (group.instance.id) keep their place: a restarted static member gets a new
  member id and the old one's assignment without a rebalance when the group's selected
  protocol stays the same; a stale member id for the instance gets FENCED_INSTANCE_ID.

Like the KIP-848 coordinator it takes the clock and never waits: every operation takes
``now`` (seconds on the caller's clock) and answers at once, or — a JoinGroup at the barrier,
a follower's SyncGroup before the leader's — returns a ``Pending`` that the coordinator settles
when the barrier closes, a timeout passes or the member goes. ``next_deadline`` says when the
next timeout is due, ``expire(now)`` applies those due, and ``new_deadline`` is called with every
deadline set (a session restarted, a rebalance begun, a member id handed out). Committed offsets
are not kept here but in the cluster's one offset store (``fakebroker.state.offsets``).
"""

from __future__ import annotations

import enum
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.offsets import offsets_partition
from fakebroker.state.pending import Pending

JoinAnswer = dict[str, Any]  # JoinGroup response fields
MAX_SIZE = 2_147_483_647  # group.max.size's default: no bound
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000  # Kafka's CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    deadline: float = 0.0  # when the session expires (the caller's clock)
    joining: Pending[JoinAnswer] | None = None  # its JoinGroup, waiting at the barrier
    # Added by a JoinGroup and not yet answered: while it waits at the barrier, ``deadline``
    # is its new member join timeout (Kafka's ClassicGroupMember.isNew).
    new: bool = False

    def metadata_for(self, protocol: str) -> bytes:
        return next(meta for name, meta in self.protocols if name == protocol)

    def touch(self, now: float) -> None:
        self.deadline = now + self.session_timeout_ms / 1000


@dataclass
class ClassicGroup:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)  # MEMBER_ID_REQUIRED ids -> expiry
    static: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    rebalance_deadline: float | None = None
    # When the timer of a rebalance that began from Empty fires (Kafka's
    # tryCompleteInitialRebalanceElseSchedule): ``initial_rebalance_delay_ms`` after it began,
    # at once with no delay; None once it fired.
    delay_until: float | None = None
    # This rebalance began from Empty (Kafka's previousState EMPTY): its timer completes it,
    # whatever ids are pending, and no join or LeaveGroup does (Kafka's maybeCompleteJoinPhase);
    # a member's or a pending member id's expiry does once every member left has rejoined.
    initial: bool = False
    syncing: dict[str, Pending[bytes]] = field(default_factory=dict)  # followers' SyncGroups
    # Members of this generation yet to send SyncGroup, and when they are removed for it
    # (Kafka's pending sync: the group's rebalance timeout after the join barrier closed).
    pending_sync: set[str] = field(default_factory=set)
    sync_deadline: float | None = None
    # Made by a commit from outside that stored no offset: Kafka's writes (OffsetCommit,
    # JoinGroup, SyncGroup) find it, its reads (DescribeGroups) not, until a record is written
    # to its __consumer_offsets partition (``note_commit``, ``_partition_written``), even
    # while a generation of members joined it waits for its leader's SyncGroup.
    unwritten: bool = False

    def rebalance_timeout_ms(self) -> int:
        """The largest rebalance timeout of the members, never below 0 (Kafka's
        ClassicGroup.rebalanceTimeoutMs: a member's negative timeout counts as 0)."""
        return max([0, *(m.rebalance_timeout_ms for m in self.members.values())])

    def supports(self, protocol_type: str, protocols: list[str]) -> bool:
        """Whether a member with these protocols may join (Kafka's
        ClassicGroup.supportsProtocols): an Empty group takes any non-empty protocol type
        with at least one protocol; any other one the group's protocol type with a protocol
        every member supports."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(protocols)
        listed = self.listings()
        return protocol_type == self.protocol_type and any(
            listed[name] == len(self.members) for name in protocols)

    def listings(self, members: list[Member] | None = None) -> Counter[str]:
        """How often the members (all by default) list each protocol, a protocol listed twice
        by one member counted twice (Kafka's ClassicGroup.supportedProtocols)."""
        chosen = self.members.values() if members is None else members
        return Counter(name for m in chosen for name, _ in m.protocols)

    def all_rejoined(self) -> bool:
        """Every member waits at the join barrier and no member id handed out with
        MEMBER_ID_REQUIRED is still to join (Kafka's hasAllMembersJoined: a pending member
        holds the barrier until it joins or its session times out)."""
        return all(m.joining is not None for m in self.members.values()) and not self.pending


@dataclass
class ClassicGroupCoordinator:
    """Every classic group of the cluster."""

    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    groups: dict[str, ClassicGroup] = field(default_factory=dict)
    # Whether a new group may take this id (the registry of both kinds decides; see
    # ``fakebroker.state.groups``), and who to tell of each deadline set.
    claim: Callable[[str], bool] = lambda group_id: True
    new_deadline: Callable[[float], None] = lambda deadline: None

    # -- bookkeeping ----------------------------------------------------------------------

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def _touch(self, member: Member, now: float) -> None:
        """Restart the member's session."""
        member.touch(now)
        self.new_deadline(member.deadline)

    def _group_or_new(self, group_id: str) -> ClassicGroup:
        """The group, created Empty if there is none (INCONSISTENT_GROUP_PROTOCOL when the
        id belongs to a group of the other protocol with members)."""
        found = self.groups.get(group_id)
        if found is None:
            if not self.claim(group_id):
                raise ClusterError("INCONSISTENT_GROUP_PROTOCOL")
            found = self.groups[group_id] = ClassicGroup(group_id)
        return found

    # -- JoinGroup ------------------------------------------------------------------------

    def allows(self, session_timeout_ms: int) -> bool:
        """Whether a JoinGroup's session timeout is within group.min/max.session.timeout.ms:
        Kafka checks it first, whatever kind of group the id names (INVALID_SESSION_TIMEOUT)."""
        return self.min_session_timeout_ms <= session_timeout_ms <= self.max_session_timeout_ms

    def join(
        self, group_id: str, member_id: str, instance_id: str | None, client_id: str,
        client_host: str, session_timeout_ms: int, rebalance_timeout_ms: int,
        protocol_type: str, protocols: list[tuple[str, bytes]], require_known_member_id: bool,
        now: float, max_size: int = MAX_SIZE,
    ) -> JoinAnswer | Pending[JoinAnswer]:
        """Handle a JoinGroup: the response fields, or a ``Pending`` of them while the member
        waits at the barrier. Raises ``ClusterError`` for the errors answered at once.
        ``max_size`` is group.max.size (the session timeout was checked before: ``allows``).
        In Kafka's order: a member id for a group that does not exist (UNKNOWN_MEMBER_ID;
        the group is not made), the group's size, its protocols (``ClassicGroup.supports``),
        then the member id and instance id (Kafka's validateMember). The rebalance timeout
        is kept as sent (the JoinGroup API module sends the session timeout for v0)."""
        if member_id and group_id not in self.groups and self.claim(group_id):
            raise ClusterError("UNKNOWN_MEMBER_ID")
        made = group_id not in self.groups
        group = self._group_or_new(group_id)
        if made:  # Kafka appends the new group's empty metadata, whatever the answer
            self._partition_written(group_id)
        if not self._accepts(group, member_id, max_size):
            self._refuse(group, member_id)
            return self.error_answer("", "GROUP_MAX_SIZE_REACHED")
        if group.state is GroupState.DEAD:
            raise ClusterError("COORDINATOR_NOT_AVAILABLE")
        if not group.supports(protocol_type, [n for n, _ in protocols]):
            raise ClusterError("INCONSISTENT_GROUP_PROTOCOL")
        if not member_id:
            return self._join_new(group, instance_id, client_id, client_host,
                                  session_timeout_ms, rebalance_timeout_ms, protocol_type,
                                  protocols, require_known_member_id, now)
        if member_id in group.pending:
            del group.pending[member_id]
            member = Member(member_id, instance_id, client_id, client_host, session_timeout_ms,
                            rebalance_timeout_ms, protocol_type, protocols)
            return self._add_and_rebalance(group, member, now)
        member = self._validate_member(group, member_id, instance_id)
        changed = member.protocols != protocols
        member.protocols, member.client_id = protocols, client_id
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        self._touch(member, now)
        if group.state is GroupState.PREPARING_REBALANCE:
            return self._await_join(group, member, now)
        if group.state is not GroupState.EMPTY and not changed and (
                group.state is GroupState.COMPLETING_REBALANCE
                or member_id != group.leader_id):
            return self._join_answer(group, member)
        self._prepare_rebalance(group, now)
        return self._await_join(group, member, now)

    @staticmethod
    def _accepts(group: ClassicGroup, member_id: str, max_size: int) -> bool:
        """Whether the group has room for this JoinGroup (Kafka's acceptJoiningMember): a
        rebalancing group counts the members waiting at the barrier, so the last to rejoin
        are the ones left out; a member id handed out with MEMBER_ID_REQUIRED is not yet a
        member."""
        member = group.members.get(member_id)
        if group.state is GroupState.PREPARING_REBALANCE:
            waiting = sum(m.joining is not None for m in group.members.values())
            return (member is not None and member.joining is not None) or waiting < max_size
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            return member is not None or len(group.members) < max_size
        return True

    def _refuse(self, group: ClassicGroup, member_id: str) -> None:
        """A refused member leaves the group (Kafka's ClassicGroup.remove): no rebalance
        begins or completes for it."""
        group.pending.pop(member_id, None)
        if member_id in group.members:
            self._remove(group, member_id)

    def _join_new(
        self, group: ClassicGroup, instance_id: str | None, client_id: str, client_host: str,
        session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
        protocols: list[tuple[str, bytes]], require_known_member_id: bool, now: float,
    ) -> JoinAnswer | Pending[JoinAnswer]:
        prefix = instance_id or client_id
        member_id = f"{prefix}-{uuid.uuid4()}"
        member = Member(member_id, instance_id, client_id, client_host, session_timeout_ms,
                        rebalance_timeout_ms, protocol_type, protocols)
        if instance_id is not None and instance_id in group.static:
            return self._replace_static(group, group.static[instance_id], member, now)
        if require_known_member_id and instance_id is None:
            group.pending[member_id] = now + session_timeout_ms / 1000
            self.new_deadline(group.pending[member_id])
            return self.error_answer(member_id, "MEMBER_ID_REQUIRED")
        return self._add_and_rebalance(group, member, now)

    def _replace_static(self, group: ClassicGroup, old_id: str, member: Member, now: float
                        ) -> JoinAnswer | Pending[JoinAnswer]:
        """A static member came back with a new member id (e.g. after a restart)."""
        old = group.members.pop(old_id)
        member.assignment = old.assignment
        group.members[member.member_id] = member
        group.static[member.instance_id or ""] = member.member_id
        if group.leader_id == old_id:
            group.leader_id = member.member_id
        self._release(group, old, "FENCED_INSTANCE_ID", "FENCED_INSTANCE_ID")
        self._touch(member, now)
        if group.state is GroupState.STABLE and \
                self.select_protocol(group) == group.protocol_name:
            return self._join_answer(group, member)  # as Kafka: no rebalance needed
        if group.state is GroupState.PREPARING_REBALANCE:
            return self._await_join(group, member, now)
        self._prepare_rebalance(group, now)
        return self._await_join(group, member, now)

    def _add_and_rebalance(self, group: ClassicGroup, member: Member, now: float
                           ) -> JoinAnswer | Pending[JoinAnswer]:
        if not group.members:
            group.protocol_type = member.protocol_type
        group.members[member.member_id] = member
        if member.instance_id is not None:
            group.static[member.instance_id] = member.member_id
        member.new = True
        member.deadline = now + NEW_MEMBER_JOIN_TIMEOUT_MS / 1000
        self.new_deadline(member.deadline)
        if group.state is not GroupState.PREPARING_REBALANCE:
            self._prepare_rebalance(group, now)
        return self._await_join(group, member, now)

    def _await_join(self, group: ClassicGroup, member: Member, now: float
                    ) -> JoinAnswer | Pending[JoinAnswer]:
        """The member waits at the barrier, which this join may close."""
        joining = member.joining = Pending()
        self._maybe_complete_join(group, now)
        return joining.result() if joining.settled else joining

    def _prepare_rebalance(self, group: ClassicGroup, now: float) -> None:
        was_empty = group.state is GroupState.EMPTY
        if group.state is GroupState.COMPLETING_REBALANCE:  # Kafka's
            for member in group.members.values():  # resetAndPropagateAssignmentWithError
                member.assignment = b""
        for syncing in group.syncing.values():
            syncing.fail(ClusterError("REBALANCE_IN_PROGRESS"))
        group.syncing.clear()
        group.pending_sync.clear()
        group.sync_deadline = None
        group.state = GroupState.PREPARING_REBALANCE
        group.initial = was_empty
        group.rebalance_deadline = now + group.rebalance_timeout_ms() / 1000
        group.delay_until = now + self.initial_rebalance_delay_ms / 1000 if was_empty else None
        self.new_deadline(group.rebalance_deadline if group.delay_until is None
                          else min(group.rebalance_deadline, group.delay_until))

    def _maybe_complete_join(self, group: ClassicGroup, now: float) -> None:
        """After a join or a LeaveGroup (Kafka's maybeCompleteJoinPhase), or when the initial
        rebalance's timer is due: a rebalance that began from Empty completes once, when its
        timer fires (if its completion fails, nothing completes it but an expiry: Kafka keeps
        such a group PreparingRebalance after its members left), any other once every member
        has rejoined."""
        if group.state is not GroupState.PREPARING_REBALANCE:
            return
        if group.initial:
            if group.delay_until is not None and group.delay_until <= now:
                self._complete_join(group, now)
        elif group.all_rejoined():
            self._complete_join(group, now)

    def _complete_if_all_rejoined(self, group: ClassicGroup, now: float) -> None:
        """After a member or a pending member id expired, whether or not the rebalance began
        from Empty (Kafka's removeMemberAndUpdateClassicGroup and
        removePendingMemberAndUpdateClassicGroup)."""
        if group.state is GroupState.PREPARING_REBALANCE and group.all_rejoined():
            self._complete_join(group, now)

    def _complete_join(self, group: ClassicGroup, now: float) -> None:
        """Close the join barrier: drop members that did not rejoin, start a generation. When
        the members that rejoined have no protocol in common (``ClassicGroup.listings``), the
        barrier stays shut and nothing changes: Kafka's completion fails on its protocol vote
        and is rolled back, its timer spent."""
        rejoined = [m for m in group.members.values() if m.joining is not None]
        if rejoined and not self._candidates(group, rejoined):
            group.rebalance_deadline = group.delay_until = None
            return
        for member_id in [m for m, member in group.members.items() if member.joining is None]:
            self._remove(group, member_id)
        group.rebalance_deadline = group.delay_until = None
        group.initial = False
        group.generation_id += 1
        if not group.members:  # Kafka writes an Empty generation's metadata at once
            self._partition_written(group.group_id)
            group.state = GroupState.EMPTY
            group.protocol_name = group.leader_id = None
            return
        group.state = GroupState.COMPLETING_REBALANCE
        group.protocol_name = self.select_protocol(group)
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        for member in group.members.values():
            member.new = False
            self._touch(member, now)
            assert member.joining is not None
            joining, member.joining = member.joining, None
            joining.resolve(self._join_answer(group, member))
        group.pending_sync = set(group.members)
        group.sync_deadline = now + group.rebalance_timeout_ms() / 1000
        self.new_deadline(group.sync_deadline)

    @staticmethod
    def _candidates(group: ClassicGroup, members: list[Member] | None = None) -> set[str]:
        """The protocols listed exactly once per member (Kafka's candidateProtocols)."""
        chosen = list(group.members.values()) if members is None else members
        return {name for name, count in group.listings(chosen).items()
                if count == len(chosen)}

    @classmethod
    def select_protocol(cls, group: ClassicGroup) -> str:
        """The protocol every member supports that most members list first."""
        candidates = cls._candidates(group)
        if not candidates:
            raise ClusterError("INCONSISTENT_GROUP_PROTOCOL")
        votes = Counter(next(n for n, _ in m.protocols if n in candidates)
                        for m in group.members.values())
        return max(sorted(candidates), key=lambda name: votes[name])

    def _join_answer(self, group: ClassicGroup, member: Member) -> JoinAnswer:
        is_leader = member.member_id == group.leader_id
        members = [{"member_id": m.member_id, "group_instance_id": m.instance_id,
                    "metadata": m.metadata_for(group.protocol_name or "")}
                   for m in group.members.values()] if is_leader else []
        return {"error_code": 0, "generation_id": group.generation_id,
                "protocol_type": group.protocol_type, "protocol_name": group.protocol_name,
                "leader": group.leader_id or "", "skip_assignment": False,
                "member_id": member.member_id, "members": members}

    @staticmethod
    def error_answer(member_id: str, error: str) -> JoinAnswer:
        return {"error_code": error_code(error), "generation_id": -1, "protocol_type": None,
                "protocol_name": None, "leader": "", "member_id": member_id, "members": []}

    # -- SyncGroup ------------------------------------------------------------------------

    def sync(self, group_id: str, generation_id: int, member_id: str,
             instance_id: str | None, protocol_type: str | None, protocol_name: str | None,
             assignments: dict[str, bytes], now: float) -> bytes | Pending[bytes]:
        """Handle a SyncGroup: this member's assignment, or — a follower before the leader
        synced — a ``Pending`` of it. Raises (or fails the ``Pending`` with) ``ClusterError``."""
        group, member = self._member(group_id, member_id, instance_id)
        if generation_id != group.generation_id:
            raise ClusterError("ILLEGAL_GENERATION")
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name):
            raise ClusterError("INCONSISTENT_GROUP_PROTOCOL")
        self._touch(member, now)
        if group.state is GroupState.PREPARING_REBALANCE:
            raise ClusterError("REBALANCE_IN_PROGRESS")
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            group.sync_deadline = None
        if group.state is GroupState.STABLE:
            return member.assignment
        if member_id != group.leader_id:
            syncing = group.syncing[member_id] = Pending()
            return syncing
        for m in group.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        group.state = GroupState.STABLE
        self._partition_written(group_id)  # the generation's metadata, with its assignment
        for syncing_id, syncing in group.syncing.items():
            syncing.resolve(group.members[syncing_id].assignment)
        group.syncing.clear()
        return member.assignment

    def _member(self, group_id: str, member_id: str, instance_id: str | None
                ) -> tuple[ClassicGroup, Member]:
        group = self.group(group_id)
        if group is None or group.state is GroupState.DEAD:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        if instance_id is not None and instance_id in group.static and \
                group.static[instance_id] != member_id:
            raise ClusterError("FENCED_INSTANCE_ID")
        member = group.members.get(member_id)
        if member is None:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        return group, member

    @staticmethod
    def _validate_member(group: ClassicGroup, member_id: str, instance_id: str | None
                         ) -> Member:
        """The member a JoinGroup names (Kafka's ClassicGroup.validateMember): an instance id
        the group does not know is UNKNOWN_MEMBER_ID, one held by another member id
        FENCED_INSTANCE_ID."""
        if instance_id is not None:
            known = group.static.get(instance_id)
            if known is None:
                raise ClusterError("UNKNOWN_MEMBER_ID")
            if known != member_id:
                raise ClusterError("FENCED_INSTANCE_ID")
        member = group.members.get(member_id)
        if member is None:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        return member

    # -- Heartbeat, LeaveGroup ------------------------------------------------------------

    def heartbeat(self, group_id: str, generation_id: int, member_id: str,
                  instance_id: str | None, now: float) -> None:
        group, member = self._member(group_id, member_id, instance_id)
        if generation_id != group.generation_id:
            raise ClusterError("ILLEGAL_GENERATION")
        self._touch(member, now)
        if group.state is GroupState.PREPARING_REBALANCE:
            raise ClusterError("REBALANCE_IN_PROGRESS")

    def leave(self, group_id: str, member_id: str, instance_id: str | None, now: float) -> None:
        """One member leaves (by member id, or by instance id for static members)."""
        group = self.group(group_id)
        if group is None:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        if instance_id is not None:
            known = group.static.get(instance_id)
            if known is None:
                raise ClusterError("UNKNOWN_MEMBER_ID")
            if member_id and member_id != known:
                raise ClusterError("FENCED_INSTANCE_ID")
            member_id = known
        if member_id in group.pending:  # the barrier may have waited for it alone
            del group.pending[member_id]
            self._maybe_complete_join(group, now)
            return
        if member_id not in group.members:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        self._remove_and_rebalance(group, member_id, now, expired=False)

    def expire_member(self, group_id: str, member_id: str, now: float) -> None:
        """Remove a member now, as if its session had timed out: the group rebalances and the
        member's next request gets UNKNOWN_MEMBER_ID, so it rejoins with a new member id."""
        group = self.group(group_id)
        if group is None or member_id not in group.members:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        self._remove_and_rebalance(group, member_id, now, expired=True)

    def _remove(self, group: ClassicGroup, member_id: str) -> None:
        member = group.members.pop(member_id)
        group.pending_sync.discard(member_id)
        if member.instance_id is not None and group.static.get(member.instance_id) == member_id:
            del group.static[member.instance_id]
        self._release(group, member, "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS")

    def _release(self, group: ClassicGroup, member: Member, join_error: str, sync_error: str
                 ) -> None:
        """Answer a departed member's waiting JoinGroup and SyncGroup with errors: the
        JoinGroup of a member removed (UNKNOWN_MEMBER_ID) with no member id, as Kafka's
        (measured), any other with the member's."""
        if member.joining is not None:
            answered_id = "" if join_error == "UNKNOWN_MEMBER_ID" else member.member_id
            member.joining.resolve(self.error_answer(answered_id, join_error))
        syncing = group.syncing.pop(member.member_id, None)
        if syncing is not None:
            syncing.fail(ClusterError(sync_error))

    def _expire_pending_sync(self, group: ClassicGroup, now: float) -> None:
        """The rebalance timeout passed since the barrier closed: the members that have not
        sent SyncGroup leave and the group rebalances (Kafka's expirePendingSync). A static
        member replaced since stays pending under its old member id, as in Kafka's
        replaceStaticMember, so the group rebalances for it too."""
        group.sync_deadline = None
        if not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            if member_id in group.members:
                self._remove(group, member_id)
        self._prepare_rebalance(group, now)
        self._maybe_complete_join(group, now)

    def _remove_and_rebalance(self, group: ClassicGroup, member_id: str, now: float,
                              expired: bool) -> None:
        """The member leaves (by LeaveGroup, or ``expired``: its session or new member join
        timeout passed) and the group rebalances, or its rebalance may complete."""
        self._remove(group, member_id)
        if group.state is GroupState.PREPARING_REBALANCE:
            if expired:
                self._complete_if_all_rejoined(group, now)
            else:
                self._maybe_complete_join(group, now)
        elif not group.members:
            group.state = GroupState.EMPTY
            group.generation_id += 1
            group.protocol_name = group.leader_id = None
            self._partition_written(group.group_id)
        else:
            self._prepare_rebalance(group, now)

    def take_over(self, group: ClassicGroup, now: float) -> None:
        """Hold a group converted from a consumer group (an online downgrade,
        ``fakebroker.state.mixed_groups``): its members' sessions start and it rebalances,
        so every member rejoins at a new generation."""
        self.groups[group.group_id] = group
        for member in group.members.values():
            self._touch(member, now)
        self._prepare_rebalance(group, now)

    def give_up(self, group_id: str) -> None:
        """The group leaves this coordinator (upgraded to a consumer group): the JoinGroups
        and SyncGroups waiting in it are answered REBALANCE_IN_PROGRESS, so their members
        join again, now in the consumer group (Kafka's convertToConsumerGroup)."""
        group = self.groups.pop(group_id, None)
        if group is None:
            return
        for member in group.members.values():
            self._release(group, member, "REBALANCE_IN_PROGRESS", "REBALANCE_IN_PROGRESS")

    def force_rebalance(self, group_id: str, now: float) -> None:
        """Start a rebalance now (members learn it from their next heartbeat)."""
        group = self.group(group_id)
        if group is not None and group.members and \
                group.state is not GroupState.PREPARING_REBALANCE:
            self._prepare_rebalance(group, now)

    # -- offsets, deletion ----------------------------------------------------------------

    def validate_commit(self, group_id: str, generation_id: int, member_id: str,
                        instance_id: str | None, now: float) -> None:
        """Whether an OffsetCommit may store its offsets, or ``ClusterError`` as Kafka answers
        (ClassicGroup.validateOffsetCommit); a commit from outside the group creates it Empty
        if needed. Any group id is one, the empty one too (Kafka refuses only a null id)."""
        group = self._group_or_new(group_id)
        if generation_id < 0 and group.state is GroupState.EMPTY:
            return  # from outside the group (admin, assign-only consumer), member id or not
        _, member = self._member(group_id, member_id, instance_id)
        if generation_id != group.generation_id:
            raise ClusterError("ILLEGAL_GENERATION")
        if group.state is GroupState.COMPLETING_REBALANCE:
            raise ClusterError("REBALANCE_IN_PROGRESS")
        self._touch(member, now)

    def subscribed_topics(self, group_id: str) -> set[str]:
        """The topics the members of a ``consumer``-protocol group subscribe to, read from their
        metadata for the selected protocol (none for other protocol types)."""
        from fakebroker.state import views  # decoding subscriptions: only OffsetDelete asks

        group = self.group(group_id)
        if group is None or group.protocol_type != "consumer":
            return set()
        return {t for m in group.members.values() for name, meta in m.protocols
                if name == group.protocol_name for t in views.subscribed_topics(meta)}

    def note_commit(self, group_id: str, made: bool, stored: bool) -> None:
        """After a commit the group accepted (``made``: that commit made the group): a group
        made by a commit that stored no offset is ``unwritten`` until a record is written to
        its ``__consumer_offsets`` partition, for it or any other group there
        (``_partition_written``), as Kafka 4.4 answers (measured: DescribeGroups
        GROUP_ID_NOT_FOUND, a member's commit UNKNOWN_MEMBER_ID; Kafka's reads see a
        partition's state as of its last committed write)."""
        group = self.groups.get(group_id)
        if group is not None:
            group.unwritten = (made or group.unwritten) and not stored
        if stored:
            self._partition_written(group_id)

    def _partition_written(self, group_id: str) -> None:
        """Kafka wrote a record for ``group_id``: every unwritten group of its
        ``__consumer_offsets`` partition is seen. Kafka 4.4 writes (measured) for a commit
        that stores an offset, a JoinGroup that makes the group (its empty metadata, even when
        answered MEMBER_ID_REQUIRED), a leader's SyncGroup (the generation's assignment), a
        generation that starts Empty (after a LeaveGroup or an expiry) and DeleteGroups (its
        tombstones); not for a JoinGroup of an existing group, nor for a rebalance that
        starts a generation with members (that waits for the leader's SyncGroup). Kafka may
        answer a JoinGroup that makes a group before its write is committed (a read then
        shows the partition's state before it, for some milliseconds); the fake's write is
        seen at once."""
        partition = offsets_partition(group_id)
        for other in self.groups.values():
            if other.unwritten and offsets_partition(other.group_id) == partition:
                other.unwritten = False

    def delete(self, group_id: str) -> None:
        group = self.group(group_id)
        if group is None or group.state is GroupState.DEAD:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        if group.state is not GroupState.EMPTY:  # Kafka's validateDeleteGroup: by state
            raise ClusterError("NON_EMPTY_GROUP")
        group.state = GroupState.DEAD
        del self.groups[group_id]
        self._partition_written(group_id)  # the group's tombstones

    # -- timers ---------------------------------------------------------------------------

    def next_deadline(self) -> float:
        deadlines = [float("inf")]
        for group in self.groups.values():
            deadlines += list(group.pending.values())
            deadlines += [m.deadline for m in group.members.values()
                          if m.joining is None or m.new]
            if group.rebalance_deadline is not None:
                deadlines.append(group.rebalance_deadline)
            if group.delay_until is not None:
                deadlines.append(group.delay_until)
            if group.sync_deadline is not None:
                deadlines.append(group.sync_deadline)
        return min(deadlines)

    def expire(self, now: float) -> None:
        """Apply every timeout due at ``now``."""
        for group in list(self.groups.values()):
            expired = [m for m, expiry in group.pending.items() if expiry <= now]
            for member_id in expired:
                del group.pending[member_id]
            if expired:
                self._complete_if_all_rejoined(group, now)
            if group.delay_until is not None and group.delay_until <= now:
                self._maybe_complete_join(group, now)
                group.delay_until = None  # fired
            if group.rebalance_deadline is not None and group.rebalance_deadline <= now:
                self._complete_join(group, now)
            if group.sync_deadline is not None and group.sync_deadline <= now:
                self._expire_pending_sync(group, now)
            for member_id, member in list(group.members.items()):
                if (member.joining is None or member.new) and member.deadline <= now \
                        and member_id in group.members:
                    self._remove_and_rebalance(group, member_id, now, expired=True)
