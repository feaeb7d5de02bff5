"""Share groups (KIP-932, Kafka's queues): members, assignment, share sessions, and the
share-partitions whose records the members acquire and acknowledge.

Guarantees, following Kafka 4.4's GroupMetadataManager (share protocol), SharePartition and
ShareSessionCache, measured against Kafka 4.4:

* A member joins with epoch 0 and its subscribed topic names, heartbeats with its epoch, and
  leaves with -1. A share group starts at group epoch ``CREATED_EPOCH`` (1), whether a join
  or AlterShareGroupOffsets makes it, so its first member joins at epoch 2 (Kafka 4.4,
  measured: ShareGroupDescribe shows a group AlterShareGroupOffsets made at group and
  assignment epoch 1; a fresh group's first join, and one after DeleteGroups, answers 2).
  Every change of membership or subscription, or of the subscribed topics' partitions,
  bumps the group epoch. Only partitions whose share state is initialized are assigned:
  after a heartbeat, the subscribed topics' partitions are (Kafka asks its share coordinator
  then, asynchronously: measured on 4.4, a join answers no partition), and a heartbeat
  finding initialized partitions of a subscribed topic that the target (at the group epoch)
  does not assign bumps the group epoch (Kafka's initializedAssignmentPending; measured: a
  later heartbeat takes the group from 2 to 3, the member's assignment following at the next
  target). A heartbeat computes a new target assignment at the group epoch
  when the target lags behind it, at most once per ``share.assignment.interval.ms`` (the
  group's, else ``group.share.assignment.interval.ms``, 1 s): within the interval the
  target stays, and the member is answered at the target's epoch with its part of it
  (none for a member new since), as Kafka 4.4's ``maybeUpdateTargetAssignment`` (measured:
  a second member joining a fresh group at once is answered epoch 2, the group at 3). A
  member then takes its target at once (a share group has no revocation: partitions are
  shared, not owned) and the target's epoch. A member leaving bumps the group epoch and
  leaves the target as it is, unless it was the last member: then the target is the group
  epoch's, and the next one is computed without waiting (Kafka's shareGroupFenceMember
  writes it so, at timestamp 0). The answer to a heartbeat carries the assignment on a
  join, on a full request (subscribed topic names given) and when it changed since the
  member was last told. An epoch other than the member's is
  FENCED_MEMBER_EPOCH, but for its previous epoch (the one before its last change: a member
  that missed an answer; Kafka 4.4's throwIfShareGroupMemberEpochIsInvalid, measured), an
  unknown member UNKNOWN_MEMBER_ID, a group that does not exist GROUP_ID_NOT_FOUND, with
  Kafka's messages.
* Assignment (Kafka's ``simple`` assignor): with no more members than partitions, each
  partition of the subscribed topics goes to one member (round-robin over members and
  partitions, sorted); with more members than partitions, members share partitions, each
  member getting one (member i the partition i mod n), so every member fetches. (Kafka's
  assignor spreads partitions by hash: which member gets which partition may differ.)
* Each (group, topic, partition) has a ``SharePartition`` (``fakebroker.state.share_partitions``)
  made when its state is initialized (a subscribing heartbeat, AlterShareGroupOffsets) or at
  the group's first fetch of it, its start offset set by ``share.auto.offset.reset`` at the
  first fetch. It outlives the members (DeleteShareGroupOffsets finds it after they left).
  A fetch of a partition the group has no share state for (the group does not exist: no
  member ever joined it, or DeleteGroups deleted it; or the partition was never assigned to
  a member nor altered) acquires nothing, as on Kafka, which has nothing to start it from.
* A share session per (group, member): ShareFetch at epoch 0 opens it, each later request must
  carry the next epoch (INVALID_SHARE_SESSION_EPOCH), one with no session is
  SHARE_SESSION_NOT_FOUND, -1 closes it. A connection keeps the last session opened on it, as
  Kafka's ShareSessionCache keeps one per connection id: when the connection closes, that
  session ends (``connection_closed``) unless a session opened on the connection was ended
  since (closed, or opened again: the connection's entry is then stale, whichever session it
  names); the earlier sessions opened on it live on. Closing the session or its connection
  closing releases every record the member holds (at once offered to the other members, its
  delivery count kept); so does, in the fake, the member's group session timing out or its
  ``fence`` (not measured on Kafka: a timeout is 45 s by default). A member leaving the
  group (heartbeat -1) keeps its share session and its records, which it may still
  acknowledge: Kafka's group coordinator does not end share sessions (measured on 4.4).
* Configs: Kafka's broker limits (``SETTINGS``, Kafka's defaults) and each group's own
  ``share.*`` configs (IncrementalAlterConfigs on the GROUP resource), checked against them as
  Kafka checks them (``validate_group_config``).

The coordinator takes the clock and never waits: ``now`` in, ``next_deadline`` (the earliest
session timeout or acquisition lock), ``expire(now)``; ``new_deadline`` is told each deadline
set and ``on_release`` each time records become available again (waiting ShareFetches retry).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.modern_groups import (
    Assignment,
    fenced,
    throw_if_empty,
    unknown_member,
)
from fakebroker.state.share_partitions import Acquired, SharePartition

JOIN, LEAVE = 0, -1
CREATED_EPOCH = 1  # a new share group's epoch, before its first member joins
UNSET = -1  # a share-partition's start offset before share.auto.offset.reset sets it
ASSIGNOR = "simple"


@dataclass(frozen=True)
class ShareSettings:
    """Kafka's ``group.share.*`` broker configs the coordinator reads, at Kafka 4.4's
    defaults; ``from_broker_config`` takes the running broker's (``--override``) values."""

    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    assignment_interval_ms: int = 1_000
    record_lock_duration_ms: int = 30_000
    min_record_lock_duration_ms: int = 15_000
    max_record_lock_duration_ms: int = 60_000
    delivery_count_limit: int = 5
    min_delivery_count_limit: int = 2
    max_delivery_count_limit: int = 10
    partition_max_record_locks: int = 2_000
    min_partition_max_record_locks: int = 100
    max_partition_max_record_locks: int = 4_000

    @classmethod
    def from_broker_config(cls, config: Callable[[str], str | None]) -> ShareSettings:
        """The settings of a broker whose config ``name`` is ``config(name)`` (None: Kafka's
        default): field ``min_x_y`` is ``group.share.min.x.y``, ``x_y`` is ``group.share.x.y``."""
        values = {}
        for f in fields(cls):
            value = config("group.share." + f.name.replace("_", "."))
            if value is not None:
                values[f.name] = int(value)
        return cls(**values)


SETTINGS = ShareSettings()

# Group config -> (the ShareSettings fields of its broker default, minimum and maximum; the
# least value its ConfigDef takes at all).
BOUNDED = {
    "share.session.timeout.ms": ("session_timeout_ms", "min_session_timeout_ms",
                                 "max_session_timeout_ms", 1),
    "share.heartbeat.interval.ms": ("heartbeat_interval_ms", "min_heartbeat_interval_ms",
                                    "max_heartbeat_interval_ms", 1),
    "share.record.lock.duration.ms": ("record_lock_duration_ms",
                                      "min_record_lock_duration_ms",
                                      "max_record_lock_duration_ms", 1000),
    "share.delivery.count.limit": ("delivery_count_limit", "min_delivery_count_limit",
                                   "max_delivery_count_limit", 2),
    "share.partition.max.record.locks": ("partition_max_record_locks",
                                         "min_partition_max_record_locks",
                                         "max_partition_max_record_locks", 100),
}
CHOICES = {
    "share.isolation.level": ("read_committed", "read_uncommitted"),
}
RESET = "share.auto.offset.reset"
BY_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?")


def group_config_defaults(settings: ShareSettings = SETTINGS) -> dict[str, str]:
    """Every share group config with its default (the broker's, where one backs it)."""
    out = {name: str(getattr(settings, fields[0])) for name, fields in BOUNDED.items()}
    out.update({RESET: "latest", "share.isolation.level": "read_uncommitted"})
    return out


def check_int(name: str, value: str, least: int, bits: int = 32) -> int:
    """A group config's INT (``bits`` 64: LONG) value, INVALID_CONFIG (``ClusterError``) with
    Kafka's ConfigDef texts for one that is no such number or below ``least``."""
    try:
        number = int(value)
        if not -2**(bits - 1) <= number < 2**(bits - 1):
            raise ValueError(value)
    except ValueError:
        raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                           f"{name}: Not a number of type "
                           f"{'INT' if bits == 32 else 'LONG'}") from None
    if number < least:
        raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                           f"{name}: Value must be at least {least}")
    return number


def check_bounded(name: str, value: str, least: int, low: int, high: int) -> None:
    """A group config within the broker's minimum and maximum (``low``, ``high``), as Kafka's
    GroupConfig checks share.* and streams.* timeouts, with its text."""
    if not low <= check_int(name, value, least) <= high:
        raise ClusterError("INVALID_CONFIG",
                           f"{name} must be in the range {low} to {high} inclusive.")


def validate_group_config(name: str, value: str, settings: ShareSettings = SETTINGS) -> None:
    """INVALID_CONFIG (``ClusterError``) for a share group config value Kafka refuses."""
    if name in BOUNDED:
        _, low_field, high_field, least = BOUNDED[name]
        check_bounded(name, value, least, getattr(settings, low_field),
                      getattr(settings, high_field))
    elif name in CHOICES:
        if value not in CHOICES[name]:
            raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                               f"{name}: String must be one of: {', '.join(CHOICES[name])}")
    elif name == RESET:
        if value not in ("earliest", "latest") and not BY_DURATION.fullmatch(value):
            raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                               f"{name}: Invalid value `{value}` for configuration {name}. "
                               "The value must be either 'earliest', 'latest' or of the "
                               "format 'by_duration:<PnDTnHnMn.nS>'.")


@dataclass(frozen=True)
class Heartbeat:
    """One ShareGroupHeartbeat request."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: list[str] | None = None
    client_id: str = ""
    client_host: str = ""


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed: list[str] = field(default_factory=list)
    epoch: int = 0
    previous_epoch: int = 0  # the epoch before its last change: a heartbeat may still carry it
    assigned: Assignment = field(default_factory=dict)
    sent: Assignment | None = None  # what the member was last told
    deadline: float = 0.0  # its session ends then


@dataclass
class ShareSession:
    """A member's share session on the broker: its next epoch, the partitions it fetches and
    the connection that opened it (broker id, connection number)."""

    epoch: int = 1
    partitions: list[tuple[str, int]] = field(default_factory=list)
    connection: tuple[int, int] | None = None


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = CREATED_EPOCH
    members: dict[str, ShareMember] = field(default_factory=dict)
    # the target assignment: its epoch, when it was computed (None: never, or the last
    # member left: the next one waits for no interval), member id -> its part
    assignment_epoch: int = CREATED_EPOCH
    assigned_at: float | None = None
    target: dict[str, Assignment] = field(default_factory=dict)
    # the subscribed topics' partition counts at the last bump (Kafka's metadata hash)
    metadata: dict[str, int] = field(default_factory=dict)
    # (topic, partition) -> its share-partition: its share state initialized
    partitions: dict[tuple[str, int], SharePartition] = field(default_factory=dict)
    # an alter named a negative partition: Kafka keeps it, and its next delete fails on it
    invalid_partition: bool = False
    # whether any share state was ever initialized or altered for the group (Kafka's share
    # group state metadata record, kept once written, even when its topics are deleted)
    state_recorded: bool = False

    @property
    def state(self) -> str:
        """Kafka's share group states: Empty, Stable."""
        return "Stable" if self.members else "Empty"


MAX_MEMBER_ID = 36  # characters: a UUID's string form


def check_member_id(member_id: str | None) -> None:
    """INVALID_REQUEST (no message) for a member id Kafka 4.4 refuses in ShareFetch,
    ShareAcknowledge and ShareGroupHeartbeat before it looks their share session or group up
    (KafkaApis.isMemberIdValid): null, empty, or longer than ``MAX_MEMBER_ID`` characters
    (measured; any other string is looked up)."""
    if not member_id or len(member_id) > MAX_MEMBER_ID:
        raise ClusterError("INVALID_REQUEST", None)


def validate(hb: Heartbeat) -> None:
    """Kafka's request checks (throwIfShareGroupHeartbeatRequestIsInvalid), with its texts."""
    throw_if_empty(hb.group_id, "GroupId")
    if not hb.member_id.strip():
        raise ClusterError("INVALID_REQUEST", None)
    throw_if_empty(hb.rack_id, "RackId")
    if hb.member_epoch == JOIN and not hb.subscribed_topic_names:
        raise ClusterError("INVALID_REQUEST", "SubscribedTopicNames must be set in first request.")
    if hb.member_epoch < LEAVE:
        raise ClusterError("INVALID_REQUEST", "MemberEpoch is invalid.")


def compute_target(members: dict[str, set[str]], partitions_of: dict[str, int]
                   ) -> dict[str, Assignment]:
    """The simple assignor's target (module docstring); ``members``: member id -> its
    subscribed existing topics."""
    target: dict[str, Assignment] = {m: {} for m in members}
    for topic in sorted(set().union(*members.values()) if members else set()):
        owners = sorted(m for m, topics in members.items() if topic in topics)
        count = partitions_of.get(topic, 0)
        if not owners or not count:
            continue
        if len(owners) <= count:
            for p in range(count):
                target[owners[p % len(owners)]].setdefault(topic, set()).add(p)
        else:
            for i, owner in enumerate(owners):
                target[owner].setdefault(topic, set()).add(i % count)
    return target


@dataclass
class ShareGroupCoordinator:
    """Every share group of the cluster, their share sessions and share-partitions."""

    partitions_of: Callable[[], dict[str, int]] = dict
    settings: ShareSettings = SETTINGS
    groups: dict[str, ShareGroup] = field(default_factory=dict)
    # group id -> its share.* configs set (a group need not exist to have them)
    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    sessions: dict[tuple[str, str], ShareSession] = field(default_factory=dict)
    # connection -> ((group, member) of the last session opened on it, whether it is stale)
    tracked: dict[tuple[int, int], tuple[tuple[str, str], bool]] = field(default_factory=dict)
    claim: Callable[[str], bool] = lambda group_id: True
    new_deadline: Callable[[float], None] = lambda deadline: None
    on_release: Callable[[], None] = lambda: None

    # -- configs --------------------------------------------------------------------------

    def config(self, group_id: str, name: str) -> str:
        """The group's value of ``name``: its own, else the default."""
        own = self.configs.get(group_id, {})
        return own[name] if name in own else group_config_defaults(self.settings)[name]

    def _int(self, group_id: str, name: str) -> int:
        return int(self.config(group_id, name))

    # -- membership -----------------------------------------------------------------------

    def group(self, group_id: str) -> ShareGroup | None:
        """The share group ``group_id`` names, as Kafka's group coordinator knows groups."""
        return self.groups.get(group_id)

    def _make(self, group_id: str) -> ShareGroup:
        return self.groups.setdefault(group_id, ShareGroup(group_id))

    def heartbeat(self, hb: Heartbeat, now: float) -> tuple[ShareMember, Assignment | None]:
        """One ShareGroupHeartbeat: (the member, the assignment to send or None). Raises
        ``ClusterError`` (nothing changed) as Kafka answers."""
        validate(hb)
        group = self.group(hb.group_id)
        if hb.member_epoch == LEAVE:
            if group is None:
                raise ClusterError("GROUP_ID_NOT_FOUND", f"Group {hb.group_id} not found.")
            member = self._existing(group, hb.member_id)
            self._remove(group, member.member_id, end_session=False)
            member.epoch = LEAVE
            return member, None
        if group is None:
            if hb.member_epoch != JOIN:
                raise ClusterError("GROUP_ID_NOT_FOUND", f"Share group {hb.group_id} not found.")
            if not self.claim(hb.group_id):
                raise ClusterError("GROUP_ID_NOT_FOUND",
                                   f"Group {hb.group_id} is not a share group.")
            group = self._make(hb.group_id)
        member = group.members.get(hb.member_id)
        bump = False
        if member is None:
            if hb.member_epoch != JOIN:
                raise unknown_member(hb.member_id, group.group_id)
            member = group.members[hb.member_id] = ShareMember(
                hb.member_id, hb.rack_id, hb.client_id, hb.client_host)
            bump = True
        elif hb.member_epoch > member.epoch:
            raise fenced("share", hb.member_epoch, member.epoch)
        elif hb.member_epoch not in (JOIN, member.epoch, member.previous_epoch):
            raise ClusterError(
                "FENCED_MEMBER_EPOCH",
                f"The share group member has a smaller member epoch ({hb.member_epoch}) than "
                f"the one known by the group coordinator ({member.epoch}), and it does not "
                f"match the previous member epoch ({member.previous_epoch}). The member must "
                "abandon all its partitions and rejoin.")
        member.rack_id = hb.rack_id if hb.rack_id is not None else member.rack_id
        member.client_id, member.client_host = hb.client_id, hb.client_host
        names = hb.subscribed_topic_names
        if names is not None and set(names) != set(member.subscribed):  # a set, as Kafka's
            member.subscribed, bump = list(dict.fromkeys(names)), True
        partitions_of = self.partitions_of()
        if bump or self._metadata(group, partitions_of) != group.metadata \
                or self._initialized_unassigned(group):
            group.group_epoch += 1
            group.metadata = self._metadata(group, partitions_of)
        if group.assignment_epoch < group.group_epoch and self._may_assign(group, now):
            group.target = self._targets(group, partitions_of)
            group.assignment_epoch, group.assigned_at = group.group_epoch, now
        self._initialize(group, partitions_of)
        if member.epoch != group.assignment_epoch:
            member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch
        member.assigned = group.target.get(member.member_id, {})
        member.deadline = now + self._int(group.group_id, "share.session.timeout.ms") / 1000
        self.new_deadline(member.deadline)
        if hb.member_epoch == JOIN or names is not None or member.sent != member.assigned:
            member.sent = {t: set(ps) for t, ps in member.assigned.items()}
            return member, member.sent
        return member, None

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, "share.heartbeat.interval.ms")

    @staticmethod
    def _existing(group: ShareGroup, member_id: str) -> ShareMember:
        member = group.members.get(member_id)
        if member is None:
            raise unknown_member(member_id, group.group_id)
        return member

    def _may_assign(self, group: ShareGroup, now: float) -> bool:
        """Whether a new target assignment may be computed now (Kafka's
        canComputeNextTargetAssignment): none yet, no interval, or the interval passed."""
        own = self.configs.get(group.group_id, {}).get("share.assignment.interval.ms")
        interval = int(own) if own is not None else self.settings.assignment_interval_ms
        return (group.assigned_at is None or not interval
                or now >= group.assigned_at + interval / 1000)

    @staticmethod
    def _metadata(group: ShareGroup, partitions_of: dict[str, int]) -> dict[str, int]:
        return {t: partitions_of[t] for m in group.members.values() for t in m.subscribed
                if t in partitions_of}

    @staticmethod
    def _targets(group: ShareGroup, partitions_of: dict[str, int]) -> dict[str, Assignment]:
        """The assignor's target over the partitions whose share state is initialized."""
        target = compute_target({m.member_id: {t for t in m.subscribed if t in partitions_of}
                                 for m in group.members.values()}, partitions_of)
        return {member: {t: kept for t, ps in assignment.items()
                         if (kept := {p for p in ps if (t, p) in group.partitions})}
                for member, assignment in target.items()}

    @staticmethod
    def _initialized_unassigned(group: ShareGroup) -> bool:
        """Kafka's initializedAssignmentPending: the target is the group epoch's, yet the
        initialized partitions of a subscribed topic are not the ones it assigns."""
        if group.assignment_epoch < group.group_epoch or not group.members:
            return False
        subscribed = {t for m in group.members.values() for t in m.subscribed}
        assigned = {(t, p) for a in group.target.values() for t, ps in a.items() for p in ps}
        return any(key not in assigned for key in group.partitions if key[0] in subscribed)

    @staticmethod
    def _initialize(group: ShareGroup, partitions_of: dict[str, int]) -> None:
        """The share state of every partition of the subscribed topics, initialized (its start
        offset unset until the first fetch): Kafka asks its share coordinator to after the
        heartbeat, and assigns a partition only once it is."""
        for topic in {t for m in group.members.values() for t in m.subscribed}:
            for p in range(partitions_of.get(topic, 0)):
                group.partitions.setdefault((topic, p), SharePartition())
                group.state_recorded = True

    def _remove(self, group: ShareGroup, member_id: str, end_session: bool = True) -> None:
        """The member gone: the group epoch bumped, the target kept but for the member's
        part; the last member gone, the target is the new epoch's (module docstring)."""
        del group.members[member_id]
        group.target.pop(member_id, None)
        if end_session:
            self.close_session(group.group_id, member_id)
        group.group_epoch += 1
        group.metadata = self._metadata(group, self.partitions_of())
        if not group.members:
            group.assignment_epoch, group.assigned_at = group.group_epoch, None

    def fence(self, group_id: str, member_id: str) -> None:
        """Remove a member now, as if its session had timed out: its records are released
        and its next heartbeat gets UNKNOWN_MEMBER_ID."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        self._remove(group, member_id)

    def delete(self, group_id: str) -> None:
        """DeleteGroups of a share group: NON_EMPTY_GROUP while it has members; its
        share-partitions go with it. The first delete after an alter named a negative
        partition (``refuse_alter``) fails, UNKNOWN_SERVER_ERROR, the group kept; the next
        one deletes it (Kafka 4.4 asks its share-state persister to delete that partition's
        state, which refuses the index; measured)."""
        group = self.group(group_id)
        if group is None:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        if group.members:
            raise ClusterError("NON_EMPTY_GROUP")
        if group.invalid_partition:
            group.invalid_partition = False
            raise ClusterError("UNKNOWN_SERVER_ERROR")
        del self.groups[group_id]

    # -- share sessions ---------------------------------------------------------------------

    def open_session(self, group_id: str, member_id: str,
                     partitions: Iterable[tuple[str, int]],
                     connection: tuple[int, int] | None = None) -> ShareSession:
        """Epoch 0: a new session (replacing the member's previous one, its records
        released) with ``partitions``, kept by ``connection`` (broker id, connection
        number)."""
        self.close_session(group_id, member_id)
        session = self.sessions[(group_id, member_id)] = ShareSession(
            partitions=list(dict.fromkeys(partitions)), connection=connection)
        if connection is not None:
            self.tracked[connection] = ((group_id, member_id), False)
        return session

    def is_current(self, group_id: str, member_id: str, session: ShareSession) -> bool:
        """Whether ``session`` is still the member's (not closed nor replaced since)."""
        return self.sessions.get((group_id, member_id)) is session

    def connection_closed(self, connection: tuple[int, int]) -> None:
        """End the last session ``connection`` opened (its member's records released),
        unless its entry went stale (module docstring)."""
        entry = self.tracked.pop(connection, None)
        if entry is not None and not entry[1]:
            self.close_session(*entry[0])

    def session(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The session a request at ``epoch`` (> 0, or -1 to close) continues; its epoch
        moves on. SHARE_SESSION_NOT_FOUND / INVALID_SHARE_SESSION_EPOCH as Kafka answers."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise ClusterError("SHARE_SESSION_NOT_FOUND")
        if epoch != LEAVE:
            if epoch != session.epoch:
                raise ClusterError("INVALID_SHARE_SESSION_EPOCH")
            session.epoch += 1
        return session

    def close_session(self, group_id: str, member_id: str) -> None:
        """End the member's session; every record it holds is released."""
        session = self.sessions.pop((group_id, member_id), None)
        if session is None:
            return
        if session.connection in self.tracked:  # whichever session the entry names
            self.tracked[session.connection] = (self.tracked[session.connection][0], True)
        group = self.groups.get(group_id)
        released = False
        for partition in (group.partitions.values() if group is not None else ()):
            released |= partition.release(member_id, self._int(group_id,
                                                               "share.delivery.count.limit"))
        if released:
            self.on_release()

    # -- records ----------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic: str, partition: int) -> SharePartition:
        """The share-partition of an existing group, made at its first fetch."""
        return self.groups[group_id].partitions.setdefault((topic, partition), SharePartition())

    def acquire(self, group_id: str, member_id: str, topic: str, partition: int,
                batches: Sequence[tuple[int, int]], log_start: int, log_end: int,
                max_records: int, now: float,
                read_end: Callable[[int], int | None] = lambda _offset: None
                ) -> list[Acquired]:
        """Acquire records of one partition for a member (``SharePartition.acquire``, which
        ``read_end`` bounds to one segment of the log), the share-partition initialized first
        by the group's ``share.auto.offset.reset``. Nothing from a partition the group has no
        share state for (``has_state``)."""
        if not self.has_state(group_id, topic, partition):
            return []
        share = self.share_partition(group_id, topic, partition)
        share.fetched = True
        if not share.initialized:
            share.initialize(log_start if self.config(group_id, RESET) == "earliest"
                             else log_end)
        lock_ms = self._int(group_id, "share.record.lock.duration.ms")
        acquired = share.acquire(member_id, batches, log_start, log_end, max_records,
                                 self._int(group_id, "share.partition.max.record.locks"),
                                 now, lock_ms / 1000, read_end)
        if acquired:
            self.new_deadline(now + lock_ms / 1000)
        return acquired

    def has_state(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether the group has share state for the partition (as ``known_partitions``): none
        for a group that does not exist, no member ever joined it or it was deleted; none for
        a partition never assigned to its members nor altered. Kafka's broker then reads
        state its share coordinator never initialized, which it refuses (ShareFetch answers
        the partition UNKNOWN_SERVER_ERROR once its wait is over, measured on Kafka 4.4)."""
        group = self.groups.get(group_id)
        return group is not None and ((topic, partition) in group.partitions or any(
            partition in m.assigned.get(topic, ()) for m in group.members.values()))

    def acquirable(self, group_id: str, member_id: str, topic: str, partition: int,
                   batches: Sequence[tuple[int, int]], log_start: int, log_end: int,
                   now: float, read_end: Callable[[int], int | None] = lambda _offset: None
                   ) -> bool:
        """Whether ``acquire`` would acquire any record now; nothing changes (a trial on a
        copy of the share-partition)."""
        group = self.groups.get(group_id)
        if group is None:
            return False
        key = (topic, partition)
        kept = group.partitions.get(key)
        if kept is not None:
            group.partitions[key] = copy.deepcopy(kept)
        new_deadline, self.new_deadline = self.new_deadline, lambda _deadline: None
        try:
            return bool(self.acquire(group_id, member_id, topic, partition, batches, log_start,
                                     log_end, 1, now, read_end))
        finally:
            self.new_deadline = new_deadline
            if kept is None:
                group.partitions.pop(key, None)
            else:
                group.partitions[key] = kept

    def out_of_range_start(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether the partition's start offset was altered below -1, out of the log's range
        (``move_start``)."""
        group = self.groups.get(group_id)
        share = group.partitions.get((topic, partition)) if group is not None else None
        return share is not None and share.start_offset < UNSET

    def move_start(self, group_id: str, topic: str, partition: int, log_start: int) -> None:
        """Move a start offset out of the log's range to ``log_start``: as Kafka 4.4's fetch
        does when it meets one (measured: a ShareFetch begun after the start offset was
        altered below -1 moves it and acquires nothing from the partition, the next fetch
        starts there; a fetch already waiting meets nothing of it)."""
        self.groups[group_id].partitions[(topic, partition)].initialize(log_start)

    def acknowledge(self, group_id: str, member_id: str, topic: str, partition: int,
                    batches: Iterable[tuple[int, int, Sequence[int]]], now: float) -> None:
        """Apply one partition's acknowledgement batches (first, last, types) in order
        (``SharePartition.acknowledge``); ``ClusterError`` at the first refused (and those
        before it rolled back). Waiting fetches are woken when records are available again."""
        group = self.groups.get(group_id)
        share = group.partitions.get((topic, partition)) if group is not None else None
        if share is None or not share.fetched:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION",
                               "This server does not host this topic-partition.")
        was = share.next_deadline()
        try:
            share.acknowledge(member_id, list(batches), now,
                              self._int(group_id, "share.record.lock.duration.ms") / 1000,
                              self._int(group_id, "share.delivery.count.limit"))
        finally:
            if share.available():
                self.on_release()
            if share.next_deadline() != was:
                self.new_deadline(share.next_deadline())

    def lock_duration_ms(self, group_id: str) -> int:
        return self._int(group_id, "share.record.lock.duration.ms")

    def expire_locks(self, group_id: str) -> None:
        """A fault: every acquisition lock of the group is due (``expire`` releases them)."""
        group = self.groups.get(group_id)
        if group is None:
            raise ClusterError("GROUP_ID_NOT_FOUND", f"no share group {group_id}")
        for partition in group.partitions.values():
            partition.expire_locks()

    # -- start offsets (Describe/Alter/DeleteShareGroupOffsets) ----------------------------

    def known_partitions(self, group_id: str) -> list[tuple[str, int]]:
        """The partitions the group has share state for: fetched, altered, or assigned to a
        member (Kafka initializes the state of a partition when it is assigned)."""
        group = self.groups.get(group_id)
        if group is None:
            return []
        known = set(group.partitions)
        for member in group.members.values():
            known |= {(t, p) for t, ps in member.assigned.items() for p in ps}
        return sorted(known)

    def start_offset(self, group_id: str, topic: str, partition: int) -> SharePartition | None:
        group = self.groups.get(group_id)
        return group.partitions.get((topic, partition)) if group is not None else None

    def _empty_group(self, group_id: str, create: bool) -> ShareGroup:
        """The share group an offsets request changes: it must have no member (NON_EMPTY_GROUP
        "The group is not empty."); ``create`` makes a missing one, else GROUP_ID_NOT_FOUND."""
        group = self.group(group_id)
        if group is None:
            if not create:
                raise ClusterError("GROUP_ID_NOT_FOUND", f"Group {group_id} not found.")
            if not self.claim(group_id):
                raise ClusterError("GROUP_ID_NOT_FOUND", f"Group {group_id} is not a share group.")
            group = self._make(group_id)
        if group.members:
            raise ClusterError("NON_EMPTY_GROUP", "The group is not empty.")
        return group

    def check_alter(self, group_id: str) -> None:
        """Whether AlterShareGroupOffsets may change the group: an empty one, or a missing one
        (made by ``alter_group``) whose id no group of another kind holds."""
        if self.group(group_id) is not None or not self.claim(group_id):
            self._empty_group(group_id, create=True)

    def alter_group(self, group_id: str) -> ShareGroup:
        """The group an alter naming a known topic changes, made when missing: Kafka 4.4 makes
        it only then (measured: an alter naming no topic, or only unknown ones, leaves no
        group; one naming a known topic makes it, whatever its partitions, and records share
        state for it: ``state_recorded``)."""
        group = self._empty_group(group_id, create=True)
        group.state_recorded = True
        return group

    def refuse_alter(self, group_id: str) -> None:
        """An alter naming a negative partition, refused: the group remembers it (``delete``)."""
        self.alter_group(group_id).invalid_partition = True

    def alter_start_offset(self, group_id: str, topic: str, partition: int, offset: int) -> None:
        """AlterShareGroupOffsets: the partition's share state starts afresh at ``offset``
        (-1: uninitialized, set again by ``share.auto.offset.reset`` at the next fetch; below
        -1: out of the log's range, ``move_start``)."""
        share = self.share_partition(group_id, topic, partition)
        share.initialize(offset)
        share.write()

    def check_delete_offsets(self, group_id: str) -> None:
        self._empty_group(group_id, create=False)

    def state_recorded(self, group_id: str) -> bool:
        """Whether an existing group ever had share state initialized or altered: without,
        Kafka's DeleteShareGroupOffsets looks at none of the topics named (measured)."""
        return self.groups[group_id].state_recorded

    def delete_start_offsets(self, group_id: str, topic: str) -> bool:
        """DeleteShareGroupOffsets of one topic: its partitions' share state is forgotten;
        whether there was any."""
        group = self.groups[group_id]
        gone = [key for key in group.partitions if key[0] == topic]
        for key in gone:
            del group.partitions[key]
        return bool(gone)

    # -- time -------------------------------------------------------------------------------

    def expire(self, now: float) -> None:
        """Remove the members whose session ran out, release the records whose lock did."""
        released = False
        for group in self.groups.values():
            for member_id, member in list(group.members.items()):
                if member.deadline <= now:
                    self._remove(group, member_id)
            limit = self._int(group.group_id, "share.delivery.count.limit")
            for partition in group.partitions.values():
                released |= partition.expire(now, limit)
        if released:
            self.on_release()

    def next_deadline(self) -> float:
        return min([m.deadline for g in self.groups.values() for m in g.members.values()]
                   + [p.next_deadline() for g in self.groups.values()
                      for p in g.partitions.values()], default=float("inf"))

