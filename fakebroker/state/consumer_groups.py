"""KIP-848 consumer groups: server-side assignment, member epochs and reconciliation.

Guarantees, following Kafka's GroupMetadataManager for the ``consumer`` protocol:

* A member subscribes with topic names, a regular expression (ConsumerGroupHeartbeat v1,
  matched against whole topic names, as RE2J's ``matches()``), or both; it is assigned
  partitions of the existing topics that either names. An invalid regex is refused with
  INVALID_REGULAR_EXPRESSION and changes nothing.
* A new group starts at epoch 1 with no target assignment (Kafka 4.4's ModernGroup), so its
  first member with a subscription makes epoch 2. Every membership or subscription change
  bumps the group epoch and recomputes the target assignment with the group's assignor
  (``uniform``, the default, or ``range``: the one most members name, and a heartbeat that
  changes it bumps the epoch too; ``fakebroker.state.server_assignors``). So does a change
  of the subscribed topics themselves, seen at the next heartbeat of any member: a topic
  created that a regex (or a name) matches, a topic deleted, partitions added.
* A regex new to the group is resolved after the heartbeat that brought it is answered, as
  Kafka 4.4 resolves one in the background: that heartbeat is answered without its topics
  (at epoch 1 in a new group); the resolution moves the group epoch on if the subscribed
  topics change, and the next heartbeat computes the target assignment. A regex another
  member already uses is resolved at once.
* Differences from Kafka 4.4: the target assignment is computed at every bump, where Kafka
  computes it at most once per group.consumer.assignment.interval.ms (1 s), so a member
  joining within a second of the last assignment waits at the old assignment epoch there;
  and a member changing its regex gives up the old one's topics at once (the fake looks at
  the subscribed topics at every heartbeat), where Kafka waits for the new one's resolution.
* ``uniform`` is sticky: a member keeps the partitions it has while they stay within its fair
  share, and the shares differ by at most one partition when every member subscribes to the
  same topics.
* A member reaches the new epoch only after it has stopped owning the partitions it must give
  up: it is first sent its assignment without them (keeping its epoch), and a partition is
  given to its new owner only once no other member owns it or is revoking it.
* A heartbeat must carry the member's current epoch, or its previous one together with owned
  partitions it is still assigned (a lost response); otherwise FENCED_MEMBER_EPOCH. An
  unknown member id gets UNKNOWN_MEMBER_ID, a heartbeat to a group that does not exist
  GROUP_ID_NOT_FOUND. Epoch 0 joins, -1 leaves. A member the group holds may rejoin at epoch
  0 whatever its epoch (Kafka 4.4, KAFKA-19233: a fenced member's rejoin is never fenced): it
  keeps its epoch and assignment, and the heartbeat is a full one.
* Static members (``instance_id``): epoch -2 leaves temporarily. The member stays in the group
  with epoch -2 and keeps its assignment; a member joining with the same instance id takes
  its place (the new member id, the same partitions, no new group epoch), and the others are
  not disturbed. A join with an instance id still held by a member that has not left gets
  UNRELEASED_INSTANCE_ID; a heartbeat with the instance id but another member id,
  FENCED_INSTANCE_ID.
* ``max_size`` (group.consumer.max.size) bounds the members, counting a static member that
  left temporarily: a full group answers a heartbeat from a member id it does not hold with
  GROUP_MAX_SIZE_REACHED, unless it carries an instance id the group holds (a restarted
  static member takes its place; one still held gets UNRELEASED_INSTANCE_ID or
  FENCED_INSTANCE_ID as in a group with room).
* A member silent for its session timeout (its group's consumer.session.timeout.ms, else the
  broker's group.consumer.session.timeout.ms, 45 s) is removed,
  a temporarily departed static member too; so is a member that has not revoked the partitions
  it must give up within its rebalance timeout (the client's max.poll.interval.ms).

* A group may hold members of the classic protocol too (``ConsumerMember.classic``; Kafka's
  online migration, ``fakebroker.state.mixed_groups``): they are assigned as the others, each
  with its own session timeout; ``claim`` may bring a classic group upgraded, and removing
  members may hand the group over to the classic coordinator (``downgrade``).

The coordinator takes the clock and never waits: a heartbeat takes ``now`` (seconds on the
caller's clock); ``next_deadline`` says when the next member expires, ``expire(now)`` removes
those due, and ``new_deadline`` is called with every deadline set (a session restarted, a
revocation begun). Committed offsets are not kept here but in the cluster's one offset store
(``fakebroker.state.offsets``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.modern_groups import (
    Assignment,
    EpochCommitChecks,
    fenced,
    minus,
    subset,
    throw_if_empty,
    throw_if_join_without_rebalance_timeout,
    throw_if_static_leave_without_instance,
    union,
    unknown_member,
    within,
)
from fakebroker.state.server_assignors import ASSIGNORS, after_change, counted, preferred

JOIN, LEAVE, TEMPORARY_LEAVE = 0, -1, -2


@dataclass(frozen=True)
class Heartbeat:
    """One ConsumerGroupHeartbeat request, its topic ids already resolved to names.

    ``None`` fields did not change since the member's previous heartbeat (Kafka's encoding);
    ``owned`` lists the partitions the member owns (topics unknown to the cluster dropped).
    """

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


@dataclass
class ClassicMembership:
    """What a member of the classic protocol in a consumer group keeps beside a KIP-848
    member's fields (Kafka's ClassicMemberMetadata): its session timeout and the protocols
    of its last JoinGroup, and the deadlines it is held to: to rejoin once told to
    (REBALANCE_IN_PROGRESS), to sync after a join; both its rebalance timeout."""

    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]
    join_deadline: float | None = None
    sync_deadline: float | None = None

    @property
    def protocol_name(self) -> str:
        """The protocol its JoinGroup and SyncGroup answers name: the first it lists."""
        return self.protocols[0][0]


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed: list[str] = field(default_factory=list)
    regex: str | None = None
    epoch: int = 0
    previous_epoch: int = -1
    assigned: Assignment = field(default_factory=dict)
    revoking: Assignment = field(default_factory=dict)
    sent: Assignment | None = None  # what the member was last told it owns
    deadline: float = 0.0  # its session ends then (the caller's clock)
    rebalance_timeout_ms: int = 300_000
    revoke_deadline: float | None = None  # it must have revoked by then
    server_assignor: str | None = None  # the one it last named
    # A member of the classic protocol in this group (fakebroker.state.mixed_groups)
    classic: ClassicMembership | None = None

    def expiry(self) -> float:
        """When the member is removed unless it acts first: its session, its time to revoke
        and, a classic member, its time to rejoin or to sync."""
        deadlines = [self.deadline, self.revoke_deadline or self.deadline]
        if self.classic is not None:
            deadlines += [d for d in (self.classic.join_deadline, self.classic.sync_deadline)
                          if d is not None]
        return min(deadlines)

    def topics(self, partitions_of: dict[str, int], resolved: set[str]) -> set[str]:
        """The existing topics this member subscribes to, by name or by its regex once the
        group has ``resolved`` it."""
        topics = {t for t in self.subscribed if t in partitions_of}
        if self.regex and self.regex in resolved:
            pattern = re.compile(self.regex)
            topics.update(t for t in partitions_of if pattern.fullmatch(t))
        return topics


@dataclass
class ConsumerGroup:
    group_id: str
    # A new group is at epoch 1 with no target assignment yet (epoch 0), as Kafka 4.4's
    # ModernGroup starts: its first member's subscription makes epoch 2.
    group_epoch: int = 1
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    # topic -> partition count of every topic some member subscribes to, as last assigned
    # (or as its regexes were last resolved)
    subscription: dict[str, int] = field(default_factory=dict)
    # The members' regexes the group has resolved (a new one after the heartbeat bringing it)
    resolved: set[str] = field(default_factory=set)

    @property
    def assignor(self) -> str:
        """The server assignor the group uses (fakebroker.state.server_assignors)."""
        return preferred(self.assignor_counts())

    def assignor_counts(self) -> dict[str, int]:
        """How many members name each server assignor."""
        return counted(m.server_assignor for m in self.members.values())

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

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)


def claim_new(group_id: str, joining: bool) -> ConsumerGroup:
    """A new group for a join; GROUP_ID_NOT_FOUND for any other heartbeat."""
    if not joining:
        raise ClusterError("GROUP_ID_NOT_FOUND", f"Consumer group {group_id} not found.")
    return ConsumerGroup(group_id)


def check_regex(regex: str) -> None:
    """INVALID_REGULAR_EXPRESSION, with Kafka's message, for a regex that does not compile."""
    try:
        re.compile(regex)
    except re.error as exc:
        raise ClusterError(
            "INVALID_REGULAR_EXPRESSION",
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.") from None


def validate(hb: Heartbeat) -> None:
    """Kafka's request checks (throwIfConsumerGroupHeartbeatRequestIsInvalid), with its texts;
    an empty group id first ("GroupId can't be empty.")."""
    throw_if_empty(hb.group_id, "GroupId")
    if hb.version >= 1 or hb.member_epoch > 0 or hb.member_epoch == LEAVE:
        throw_if_empty(hb.member_id, "MemberId")
    throw_if_empty(hb.instance_id, "InstanceId")
    throw_if_empty(hb.rack_id, "RackId")
    if hb.member_epoch == JOIN:
        throw_if_join_without_rebalance_timeout(hb.rebalance_timeout_ms)
        if hb.owned is None or any(hb.owned.values()):
            raise ClusterError("INVALID_REQUEST",
                                     "TopicPartitions must be empty when (re-)joining.")
        if hb.subscribed_topic_names is None and hb.subscribed_topic_regex is None:
            raise ClusterError(
                "INVALID_REQUEST",
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                "(re-)joining.")
    elif hb.member_epoch == TEMPORARY_LEAVE:
        throw_if_static_leave_without_instance(hb.instance_id)
    elif hb.member_epoch < TEMPORARY_LEAVE:
        raise ClusterError("INVALID_REQUEST", "MemberEpoch is invalid.")
    if hb.server_assignor is not None and hb.server_assignor not in ASSIGNORS:
        raise ClusterError(
            "UNSUPPORTED_ASSIGNOR", f"ServerAssignor {hb.server_assignor} is not supported. "
            f"Supported assignors: {', '.join(ASSIGNORS)}.")


def compute_target(
    assignor: str, members: dict[str, set[str]], partitions_of: dict[str, int],
    previous: dict[str, Assignment],
) -> dict[str, Assignment]:
    """The assignor's target: each partition of a subscribed topic to exactly one of the
    members subscribed to it (``members``: member id -> its subscribed existing topics)."""
    target: dict[str, Assignment] = {m: {} for m in members}
    topics = sorted(set().union(*members.values()) & partitions_of.keys()) if members else []
    if assignor == "range":
        for topic in topics:
            owners = sorted(m for m, subscribed in members.items() if topic in subscribed)
            count = partitions_of[topic]
            for i, owner in enumerate(owners):
                lo, hi = count * i // len(owners), count * (i + 1) // len(owners)
                if hi > lo:
                    target[owner][topic] = set(range(lo, hi))
        return target
    partitions = [(t, p) for t in topics for p in range(partitions_of[t])]
    subscribers = sorted(m for m, subscribed in members.items() if subscribed)
    if not partitions:
        return target
    share, extra = divmod(len(partitions), len(subscribers))
    free = set(partitions)
    load = dict.fromkeys(subscribers, 0)
    kept: dict[str, list[tuple[str, int]]] = {
        m: sorted((t, p) for t, ps in previous.get(m, {}).items() for p in ps
                  if (t, p) in free and t in members[m]) for m in subscribers}

    def give(member: str, partition: tuple[str, int]) -> None:
        target[member].setdefault(partition[0], set()).add(partition[1])
        free.discard(partition)
        load[member] += 1

    for member in subscribers:  # keep up to the fair share
        for partition in kept[member][:share]:
            give(member, partition)
    for member in subscribers:  # and one more while shares of share + 1 remain
        if extra and len(kept[member]) > share:
            give(member, kept[member][share])
            extra -= 1
    for partition in sorted(free):  # the rest to the least loaded subscriber
        owner = min((m for m in subscribers if partition[0] in members[m]),
                    key=lambda m: (load[m], m))
        give(owner, partition)
    return target


@dataclass
class ConsumerGroupCoordinator(EpochCommitChecks):
    """Every KIP-848 consumer group of the cluster."""

    # topic name -> partition count, from the cluster's topics
    partitions_of: Callable[[], dict[str, int]] = dict
    # the broker's group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    # the group configs set on a group (``fakebroker.state.group_configs``), by group id
    group_configs: Callable[[str], dict[str, str]] = lambda group_id: {}
    groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    # The group a heartbeat (a join: True) to an id this coordinator does not hold makes: a new
    # one, or a classic group upgraded (not yet installed: ``install`` does); else
    # ClusterError GROUP_ID_NOT_FOUND as Kafka words it. The registry of every kind decides
    # (``fakebroker.state.groups``); it is told of every group installed.
    claim: Callable[[str, bool], ConsumerGroup] = lambda group_id, joining: claim_new(
        group_id, joining)
    installed: Callable[[str], None] = lambda group_id: None
    # Whether removing these members of the group converts it to a classic group instead
    # (an online downgrade; it then leaves this coordinator), and who to tell of each
    # deadline set.
    downgrade: Callable[[ConsumerGroup, list[str], float], bool] = \
        lambda group, leaving, now: False
    new_deadline: Callable[[float], None] = lambda deadline: None

    def heartbeat(self, hb: Heartbeat, now: float, max_size: int = 2_147_483_647
                  ) -> tuple[ConsumerMember, Assignment | None]:
        """One ConsumerGroupHeartbeat: (the member, the assignment to send or None);
        ``max_size`` is group.consumer.max.size (Kafka's default: no bound).

        Raises ``ClusterError`` (nothing changed) as Kafka answers."""
        validate(hb)
        if hb.member_epoch in (LEAVE, TEMPORARY_LEAVE):
            return self._leave(hb, now), None
        if hb.subscribed_topic_regex:
            member = self.member(hb.group_id, hb.member_id)
            if member is None or member.regex != hb.subscribed_topic_regex:
                check_regex(hb.subscribed_topic_regex)
        group = self.groups.get(hb.group_id) or self.claim(hb.group_id,
                                                            hb.member_epoch == JOIN)
        if len(group.members) >= max_size and hb.member_id not in group.members and (
                hb.instance_id is None or group.static_member(hb.instance_id) is None):
            raise ClusterError("GROUP_MAX_SIZE_REACHED", "The consumer group has reached its "
                               f"maximum capacity of {max_size} members.")
        if hb.member_epoch == JOIN:
            member = self._join(group, hb)
        else:
            member = self._existing(group, hb)
            self._check_epoch(member, hb)
        self.install(group, now)  # a group upgraded only for a heartbeat accepted (as Kafka)
        counts, old_assignor = group.assignor_counts(), member.server_assignor
        names_changed, regex_changed = self._update(member, hb)
        assignor = after_change(counts, old_assignor, member.server_assignor)
        bump = names_changed or (regex_changed and (member.regex is None
                                                    or member.regex in group.resolved)) \
            or assignor != preferred(counts)
        if hb.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = hb.rebalance_timeout_ms
        full = hb.member_epoch == JOIN or (hb.rebalance_timeout_ms != -1 and hb.owned is not None
                                           and hb.subscribed_topic_names is not None)
        return member, self.settle(group, member, bump, hb.owned, full, now, assignor)

    def install(self, group: ConsumerGroup, now: float) -> None:
        """Hold ``group`` (made by ``claim``) from now on: the members an upgrade brought start
        their sessions, and the registry is told."""
        if self.groups.get(group.group_id) is group:
            return
        self.groups[group.group_id] = group
        for member in group.members.values():
            self.touch(group.group_id, member, now)
        self.installed(group.group_id)

    def heartbeat_interval(self, group_id: str) -> int:
        """The heartbeat interval (ms) the group's members are given: its
        consumer.heartbeat.interval.ms, else the broker's (as Kafka 4.4, measured)."""
        own = self.group_configs(group_id).get("consumer.heartbeat.interval.ms")
        return int(own) if own is not None else self.heartbeat_interval_ms

    def touch(self, group_id: str, member: ConsumerMember, now: float) -> None:
        """Restart the member's session: the group's consumer.session.timeout.ms, else the
        broker's; a classic member's own."""
        own = self.group_configs(group_id).get("consumer.session.timeout.ms")
        timeout_ms = member.classic.session_timeout_ms if member.classic is not None \
            else int(own) if own is not None else self.session_timeout_ms
        member.deadline = now + timeout_ms / 1000
        self.new_deadline(member.deadline)

    def settle(self, group: ConsumerGroup, member: ConsumerMember, bump: bool,
               owned: Assignment | None, full: bool, now: float,
               assignor: str | None = None) -> Assignment | None:
        """After a member's request: a new group epoch when ``bump`` (its subscription
        changed) or the subscribed topics changed, the target assignment of the group epoch
        (with ``assignor``, by default the group's), the member's session restarted and its
        assignment reconciled given the partitions it says it ``owns`` (None: not said).
        Returns the assignment to send (None: unchanged and not ``full``)."""
        partitions_of = self.partitions_of()
        self._prune(group, partitions_of)
        if bump or self._subscription(group, partitions_of) != group.subscription:
            self._bump(group, partitions_of, assignor)
        elif group.group_epoch > group.assignment_epoch:
            self._assign(group, partitions_of, assignor)
        self.touch(group.group_id, member, now)
        assignment = self._reconcile(group, member, full)
        if owned is not None and member.revoking:
            # the partitions it no longer owns are revoked already (Kafka's
            # CurrentAssignmentBuilder: ownsRevokedPartitions)
            still = {t: ps & owned.get(t, set()) for t, ps in member.revoking.items()}
            member.revoking = {t: ps for t, ps in still.items() if ps}
            assignment = self._reconcile(group, member, full) or assignment
        if not member.revoking:
            member.revoke_deadline = None
        elif member.revoke_deadline is None:
            member.revoke_deadline = now + member.rebalance_timeout_ms / 1000
            self.new_deadline(member.revoke_deadline)
        self._resolve(group, partitions_of)
        return assignment

    def _resolve(self, group: ConsumerGroup, partitions_of: dict[str, int]) -> None:
        """Resolve the regexes new to the group, after the heartbeat that brought one is
        answered, as Kafka's background resolution does: if the subscribed topics change
        with them, the group epoch moves on, and the next heartbeat computes its target."""
        used = {m.regex for m in group.members.values() if m.regex}
        if used == group.resolved:
            return
        group.resolved = used
        subscription = self._subscription(group, partitions_of)
        if subscription != group.subscription:
            group.group_epoch += 1
            group.subscription = subscription

    def _join(self, group: ConsumerGroup, hb: Heartbeat) -> ConsumerMember:
        """The member joining with epoch 0 (new, rejoining, or replacing a static member: one
        of the classic protocol at once, as Kafka's getOrMaybeSubscribeStaticConsumerGroupMember
        replaces it, one of this protocol once it has left for now)."""
        member_id = hb.member_id or str(uuid.uuid4())
        previous = group.static_member(hb.instance_id) if hb.instance_id is not None else None
        if previous is not None:
            if previous.classic is None and previous.epoch != TEMPORARY_LEAVE:
                raise ClusterError(
                    "UNRELEASED_INSTANCE_ID",
                    f"Static member {member_id} with instance id {hb.instance_id} cannot join "
                    f"the group because the instance id is owned by {previous.member_id} member.")
            member = replace(previous, member_id=member_id, epoch=0, previous_epoch=0,
                             revoking={}, revoke_deadline=None, sent=None, classic=None)
            del group.members[previous.member_id]
            group.members[member_id] = member
            group.target[member_id] = group.target.pop(previous.member_id, {})
            return member
        member = group.members.get(member_id)
        if member is not None:  # epoch 0 is never fenced (KAFKA-19233; measured on 4.4)
            return member
        member = ConsumerMember(member_id, hb.instance_id, hb.rack_id, hb.client_id,
                                hb.client_host)
        group.members[member_id] = member
        return member

    def _existing(self, group: ConsumerGroup, hb: Heartbeat) -> ConsumerMember:
        """The member a heartbeat comes from: by instance id for a static member (then it
        must be the member holding it), else by member id."""
        if hb.instance_id is None:
            member = group.members.get(hb.member_id)
            if member is None:
                raise unknown_member(hb.member_id, group.group_id)
            return member
        member = group.static_member(hb.instance_id)
        if member is None:
            raise ClusterError("UNKNOWN_MEMBER_ID", f"Member with instance id "
                                     f"{hb.instance_id} is not a member of group "
                                     f"{group.group_id}.")
        if member.member_id != hb.member_id:
            raise ClusterError(
                "FENCED_INSTANCE_ID",
                f"Static member {hb.member_id} with instance id {hb.instance_id} was "
                f"fenced by member {member.member_id}.")
        return member

    @staticmethod
    def _check_epoch(member: ConsumerMember, hb: Heartbeat) -> None:
        if hb.member_epoch > member.epoch or (
                hb.member_epoch < member.epoch and not (
                    hb.member_epoch == member.previous_epoch
                    and subset(hb.owned, member.assigned))):
            raise fenced("consumer", hb.member_epoch, member.epoch)

    @staticmethod
    def _update(member: ConsumerMember, hb: Heartbeat) -> tuple[bool, bool]:
        """Apply the heartbeat's member fields; whether its topic names, and its regex,
        changed."""
        member.instance_id = hb.instance_id if hb.instance_id is not None \
            else member.instance_id
        member.rack_id = hb.rack_id if hb.rack_id is not None else member.rack_id
        member.client_id, member.client_host = hb.client_id, hb.client_host
        member.server_assignor = hb.server_assignor or member.server_assignor
        names_changed = regex_changed = False
        names = hb.subscribed_topic_names
        # a set, as Kafka's ConsumerGroupMember holds them: a name repeated changes nothing
        if names is not None and set(names) != set(member.subscribed):
            member.subscribed, names_changed = list(dict.fromkeys(names)), True
        regex = hb.subscribed_topic_regex
        if regex is not None and regex != (member.regex or ""):
            member.regex, regex_changed = regex or None, True
        return names_changed, regex_changed

    def _leave(self, hb: Heartbeat, now: float) -> ConsumerMember:
        """Epoch -1 (leave) or -2 (a static member's temporary leave)."""
        group = self.groups.get(hb.group_id) or self.claim(hb.group_id, False)
        member = self._existing(group, hb)
        if hb.member_epoch == TEMPORARY_LEAVE:
            member.epoch, member.revoking, member.revoke_deadline = TEMPORARY_LEAVE, {}, None
            return member
        self.remove(group, [member.member_id], now)
        member.epoch = LEAVE
        return member

    def _subscription(self, group: ConsumerGroup, partitions_of: dict[str, int]
                      ) -> dict[str, int]:
        topics = set().union(*(m.topics(partitions_of, group.resolved)
                               for m in group.members.values()))
        return {t: partitions_of[t] for t in sorted(topics)}

    def _prune(self, group: ConsumerGroup, partitions_of: dict[str, int]) -> None:
        """Forget owned and revoking partitions of topics deleted (or shrunk) since."""
        for m in group.members.values():
            m.assigned = within(m.assigned, partitions_of)
            m.revoking = within(m.revoking, partitions_of)

    def _bump(self, group: ConsumerGroup, partitions_of: dict[str, int],
              assignor: str | None = None) -> None:
        """A new group epoch and its target assignment."""
        group.group_epoch += 1
        self._assign(group, partitions_of, assignor)

    def _assign(self, group: ConsumerGroup, partitions_of: dict[str, int],
                assignor: str | None = None) -> None:
        """The target assignment of the group epoch, with ``assignor`` (by default the
        group's)."""
        group.subscription = self._subscription(group, partitions_of)
        group.target = compute_target(
            assignor or group.assignor, {m.member_id: m.topics(partitions_of, group.resolved)
                             for m in group.members.values()},
            partitions_of, group.target)
        group.assignment_epoch = group.group_epoch

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, full: bool
                   ) -> Assignment | None:
        target = group.target.get(member.member_id, {})
        to_revoke = minus(member.assigned, target)
        if to_revoke:
            member.assigned = minus(member.assigned, to_revoke)
            member.revoking = union(member.revoking, to_revoke)
        if not member.revoking:
            taken: Assignment = {}
            for other in group.members.values():
                if other is not member:
                    taken = union(taken, union(other.assigned, other.revoking))
            member.assigned = union(member.assigned,
                                     minus(minus(target, member.assigned), taken))
            if member.epoch != group.assignment_epoch:
                member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch
        if full or member.sent != member.assigned:
            member.sent = {t: set(ps) for t, ps in member.assigned.items()}
            return member.sent
        return None

    def expire_member(self, group_id: str, member_id: str, now: float) -> None:
        """Remove a member now, as if its session had timed out: its partitions go to the
        others and its next heartbeat gets UNKNOWN_MEMBER_ID, so it joins again at epoch 0."""
        if self.member(group_id, member_id) is None:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        self.remove(self.groups[group_id], [member_id], now)

    def remove(self, group: ConsumerGroup, member_ids: list[str], now: float) -> None:
        """Fence these members (Kafka's consumerGroupFenceMembers): the group converts to a
        classic group without them instead when ``downgrade`` says so, else they go and the
        group epoch moves on."""
        if self.downgrade(group, member_ids, now):
            return
        for member_id in member_ids:
            del group.members[member_id]
        group.resolved = {m.regex for m in group.members.values() if m.regex}
        self._bump(group, self.partitions_of())

    def delete(self, group_id: str) -> None:
        """DeleteGroups of a consumer group: NON_EMPTY_GROUP while it has members."""
        group = self.groups.get(group_id)
        if group is None:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        if group.members:
            raise ClusterError("NON_EMPTY_GROUP")
        del self.groups[group_id]

    def subscribed_topics(self, group_id: str) -> set[str]:
        """The existing topics some member of the group subscribes to, by name or regex."""
        group = self.groups.get(group_id)
        if group is None:
            return set()
        partitions_of = self.partitions_of()
        return set().union(*(m.topics(partitions_of, group.resolved)
                             for m in group.members.values()))

    def validate_commit(self, group_id: str, member_id: str, member_epoch: int) -> None:
        """As ``EpochCommitChecks.validate_commit``; a classic member's other generation is
        ILLEGAL_GENERATION (Kafka's validateMemberEpoch for a member of the classic
        protocol)."""
        member = self.member(group_id, member_id)
        if member is not None and member.classic is not None and member_epoch != member.epoch:
            raise ClusterError("ILLEGAL_GENERATION")
        super().validate_commit(group_id, member_id, member_epoch)

    def validate_offset_commit(self, group_id: str, member_id: str, member_epoch: int,
                               version: int | None = None) -> None:
        """As ``EpochCommitChecks.validate_offset_commit``; a classic member commits at any
        OffsetCommit version."""
        member = self.member(group_id, member_id)
        classic = member is not None and member.classic is not None
        super().validate_offset_commit(group_id, member_id, member_epoch,
                                       None if classic else version)

    def member(self, group_id: str, member_id: str) -> ConsumerMember | None:
        group = self.groups.get(group_id)
        return group.members.get(member_id) if group is not None else None


    def expire(self, now: float) -> None:
        """Remove every member whose session, time to revoke, or (a classic member) time to
        rejoin or sync ran out at ``now``."""
        for group in list(self.groups.values()):
            for member_id, member in list(group.members.items()):
                if self.groups.get(group.group_id) is group and member.expiry() <= now:
                    self.remove(group, [member_id], now)

    def next_deadline(self) -> float:
        return min((m.expiry() for g in self.groups.values() for m in g.members.values()),
                   default=float("inf"))
