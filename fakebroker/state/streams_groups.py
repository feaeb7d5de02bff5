"""Streams groups (KIP-1071, ``group.protocol=streams``): Kafka Streams' own rebalance
protocol, with the topology sent to the broker and the tasks assigned by it.

Guarantees, following Kafka 4.4's GroupMetadataManager (streams protocol), InternalTopicManager
and StickyTaskAssignor, measured against Kafka 4.4 (tests/test_wire_streams_groups.py):

* A member joins with epoch 0 and its topology (subtopologies: source topics, repartition
  source and sink topics, changelog topics); the first topology a group sees is its topology
  (another one at its epoch or a later one is INVALID_REQUEST "Topology updates are not
  supported yet.", as Kafka 4.4 has none; an earlier one is ignored); a member whose
  topology epoch is behind the group's is told STALE_TOPOLOGY. Heartbeats carry the
  member's epoch, -1 leaves.
* The topology is configured as InternalTopicManager does: a missing source topic makes the
  status MISSING_SOURCE_TOPICS ("Source topics a, b are missing.") and no tasks; a repartition
  topic without a partition count gets the largest count of the source and repartition
  source topics of the subtopologies writing to it (round after round; a round deciding
  nothing, or a repartition source topic no subtopology writes, is STREAMS_INVALID_TOPOLOGY
  for the join that brings the topology, with Kafka's texts), a changelog topic its
  subtopology's task count (the largest count of its source and repartition source
  topics; a subtopology reading neither is STREAMS_INVALID_TOPOLOGY too); the internal
  topics missing are named
  in MISSING_INTERNAL_TOPICS ("Internal topics are missing: x, y", in Java's HashMap order)
  and returned for the caller to create with those counts; an existing internal topic with
  another count is INCORRECTLY_PARTITIONED_TOPICS. A subtopology has one task per partition
  of that count.
* Every change of membership, of a member's process, rack or tags, of the topology, of its
  topics' partition counts, or of the topology becoming valid bumps the group epoch. The
  target assignment follows the group epoch, but not sooner than
  ``streams.initial.rebalance.delay.ms`` after a member joins the group empty (when it is
  made, and again once its last member left or was fenced: the target is then empty at the
  new group epoch, which that member joins at; as Kafka's initial rebalance timer) and
  ``streams.assignment.interval.ms`` after the previous one: until then the status is
  ASSIGNMENT_DELAYED with Kafka's text. A new group's first target is empty and the group
  epoch moves on at once for the real one (a first member joins at epoch 1 in a group at
  epoch 2; at epoch 2 with no initial delay), as on Kafka.
* The assignor is ``sticky``: subtopology by subtopology, each member keeps the active tasks
  it had within a fair share of that subtopology's tasks (the larger shares going to the
  least loaded members), the rest go to the least loaded members; ``streams.num.standby.replicas``
  standby tasks per active task of a stateful subtopology (one with a changelog topic; a
  stateless task gets none, as on Kafka) go to members of other processes, the least loaded
  first.
* Reconciliation as for KIP-848 consumers: a member is first told its active tasks without
  those it must give up (keeping its epoch), reaches the new epoch once it has none to give
  up, and gets a task only once no other member owns it. A heartbeat must carry the member's
  epoch, or its previous one if the active, standby and warm-up tasks it owns are all still
  assigned to it; otherwise FENCED_MEMBER_EPOCH ("The streams group member has a greater
  member epoch ..."). The answer carries the tasks when they changed (always for a join).
* A member silent for its session timeout (``streams.session.timeout.ms``, 45 s, within the
  broker's ``group.streams.min/max.session.timeout.ms``) is removed, so is one that has not
  given up its tasks within its rebalance timeout. A member asking to shut the application
  down makes every member's answer carry SHUTDOWN_APPLICATION.
* Request checks and their texts are Kafka's (``validate``); UNKNOWN_MEMBER_ID,
  GROUP_ID_NOT_FOUND ("Streams group g not found.") as Kafka's. A group holding
  ``group.streams.max.size`` members refuses a join of any other member with
  GROUP_MAX_SIZE_REACHED ("The streams group has reached its maximum capacity of N
  members."); its own members may join again.

Not modelled: static members (an instance id only narrows which changes to a member move
the group epoch, as on Kafka; ``_update``), interactive query endpoints (a member's endpoint
is kept, the endpoint epoch stays 0), warm-up tasks and task lags (none are given),
rack-aware standby placement.

The coordinator takes the clock and never waits: ``now`` in, ``next_deadline`` (the earliest
session or revocation timeout), ``expire(now)``; ``new_deadline`` is told each deadline set.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.features import java_bucket
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
)
from fakebroker.state.share_groups import check_bounded, check_int

Tasks = Assignment  # subtopology id -> partitions (task ids)

JOIN, LEAVE, TEMPORARY_LEAVE = 0, -1, -2
ASSIGNOR = "sticky"
# StreamsGroupHeartbeatResponse status codes
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS = 0, 1, 2
MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED = 3, 4, 5
# What Kafka 4.4 answers every member (broker configs it does not let a group change)
TASK_OFFSET_INTERVAL_MS = 60_000
ACCEPTABLE_RECOVERY_LAG = 10_000


@dataclass(frozen=True)
class StreamsSettings:
    """Kafka's ``group.streams.*`` broker configs the coordinator reads, at Kafka 4.4's
    defaults; ``from_broker_config`` takes the running broker's (``--override``) values."""

    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    num_standby_replicas: int = 0
    max_standby_replicas: int = 2
    initial_rebalance_delay_ms: int = 3_000
    assignment_interval_ms: int = 1_000
    max_size: int = 2_147_483_647

    @classmethod
    def from_broker_config(cls, config: Callable[[str], str | None]) -> StreamsSettings:
        """Field ``min_x_y`` is broker config ``group.streams.min.x.y`` (None: the default)."""
        values = {}
        for f in fields(cls):
            value = config("group.streams." + f.name.replace("_", "."))
            if value is not None:
                values[f.name] = int(value)
        return cls(**values)


SETTINGS = StreamsSettings()
# Group config -> the StreamsSettings field of its broker default.
DEFAULTS = {
    "streams.session.timeout.ms": "session_timeout_ms",
    "streams.heartbeat.interval.ms": "heartbeat_interval_ms",
    "streams.num.standby.replicas": "num_standby_replicas",
    "streams.initial.rebalance.delay.ms": "initial_rebalance_delay_ms",
    "streams.assignment.interval.ms": "assignment_interval_ms",
}


def validate_group_config(name: str, value: str, settings: StreamsSettings = SETTINGS) -> None:
    """INVALID_CONFIG (``ClusterError``) for a streams group config value Kafka refuses, with
    its texts (measured)."""
    if name == "streams.session.timeout.ms":
        check_bounded(name, value, 1, settings.min_session_timeout_ms,
                      settings.max_session_timeout_ms)
    elif name == "streams.heartbeat.interval.ms":
        check_bounded(name, value, 1, settings.min_heartbeat_interval_ms,
                      settings.max_heartbeat_interval_ms)
    elif name == "streams.num.standby.replicas":
        if check_int(name, value, 0) > settings.max_standby_replicas:
            raise ClusterError("INVALID_CONFIG", f"{name} must be less than or equal to "
                               f"{settings.max_standby_replicas}")
    elif name in DEFAULTS:
        check_int(name, value, 0)
    elif name == "streams.assignor.name" and value != ASSIGNOR:
        raise ClusterError("INVALID_CONFIG", f"{name} '{value}' is not a registered task "
                           f"assignor. Registered assignors are: [{ASSIGNOR}].")


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic of a subtopology: partitions 0 (or less) means "the broker decides"."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    source_topic_regex: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]


@dataclass(frozen=True)
class Heartbeat:
    """One StreamsGroupHeartbeat request (``None``: not sent, unchanged)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology: Topology | None = None
    active: Tasks | None = None
    standby: Tasks | None = None
    warmup: Tasks | None = None
    process_id: str | None = None
    client_tags: dict[str, str] | None = None
    user_endpoint: tuple[str, int] | None = None
    shutdown_application: bool = False
    client_id: str = ""
    client_host: str = ""


@dataclass(frozen=True)
class Status:
    code: int
    detail: str


@dataclass
class StreamsMember:
    member_id: str
    client_id: str
    client_host: str
    instance_id: str | None = None
    rack_id: str | None = None
    process_id: str = ""
    client_tags: dict[str, str] = field(default_factory=dict)
    topology_epoch: int = -1
    rebalance_timeout_ms: int = 300_000
    user_endpoint: tuple[str, int] | None = None
    epoch: int = 0
    previous_epoch: int = -1
    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)
    revoking: Tasks = field(default_factory=dict)
    deadline: float = 0.0  # its session ends then (the caller's clock)
    revoke_deadline: float | None = None


@dataclass(frozen=True)
class Target:
    """One member's target assignment."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)


@dataclass
class ConfiguredTopology:
    """A topology with the partition counts decided: the tasks of each subtopology, the
    internal topics to create (name -> (partitions, replication factor, configs)), and the
    status that keeps it from being ready, if any."""

    tasks: dict[str, int] = field(default_factory=dict)
    stateful: frozenset[str] = frozenset()  # subtopologies with a store (a changelog topic)
    to_create: dict[str, tuple[int, int, dict[str, str]]] = field(default_factory=dict)
    problem: Status | None = None

    @property
    def ready(self) -> bool:
        return self.problem is None


@dataclass
class StreamsGroup:
    group_id: str
    delay_from: float = 0.0  # when the initial rebalance delay began: a join to it empty
    group_epoch: int = 0
    assignment_epoch: int = 0
    last_assignment: float = float("-inf")
    topology: Topology | None = None
    configured: ConfiguredTopology | None = None
    metadata: tuple[tuple[str, int], ...] = ()  # partition counts the topology was configured on
    validated_epoch: int = -1
    first_assignment_pending: bool = True
    members: dict[str, StreamsMember] = field(default_factory=dict)
    target: dict[str, Target] = field(default_factory=dict)
    shutdown_requested_by: str | None = None

    @property
    def state(self) -> str:
        """Kafka's streams group states: Empty, NotReady, Assigning, Reconciling, Stable."""
        if not self.members:
            return "Empty"
        if self.configured is None or not self.configured.ready:
            return "NotReady"
        if self.assignment_epoch != self.group_epoch:
            return "Assigning"
        if any(m.epoch != self.assignment_epoch or m.revoking
               or m.active != self.target.get(m.member_id, Target()).active
               for m in self.members.values()):
            return "Reconciling"
        return "Stable"


def validate(hb: Heartbeat) -> None:
    """Kafka's request checks (GroupCoordinatorService: throwIfStreamsGroupHeartbeatRequest
    IsUsingUnsupportedFeatures, then ...IsInvalid), in its order, with its texts."""
    def invalid(message: str) -> ClusterError:
        return ClusterError("INVALID_REQUEST", message)

    if hb.topology is not None and any(s.source_topic_regex
                                       for s in hb.topology.subtopologies):
        raise invalid("Regular expressions for source topics are not supported yet.")
    throw_if_empty(hb.member_id, "MemberId")
    throw_if_empty(hb.group_id, "GroupId")
    throw_if_empty(hb.instance_id, "InstanceId")
    throw_if_empty(hb.rack_id, "RackId")
    if hb.member_epoch == JOIN:
        throw_if_join_without_rebalance_timeout(hb.rebalance_timeout_ms)
        for tasks, name in ((hb.active, "ActiveTasks"), (hb.standby, "StandbyTasks"),
                            (hb.warmup, "WarmupTasks")):
            if tasks is None or tasks:  # not sent is not empty, as Kafka reads it
                raise invalid(f"{name} must be empty when (re-)joining.")
        if hb.topology is None:
            raise invalid("Topology must be non-null when (re-)joining.")
        for subtopology in hb.topology.subtopologies:
            for topic in subtopology.state_changelog_topics:
                if topic.partitions != 0:
                    raise ClusterError(
                        "STREAMS_INVALID_TOPOLOGY",
                        f"Changelog topic {topic.name} must have an undefined partition "
                        f"count, but it is set to {topic.partitions}.")
    elif hb.member_epoch == TEMPORARY_LEAVE:
        throw_if_static_leave_without_instance(hb.instance_id)
    elif hb.member_epoch < TEMPORARY_LEAVE:
        raise invalid(f"MemberEpoch is {hb.member_epoch}, but must be greater than or equal "
                      "to -2.")
    sent = (hb.active, hb.standby, hb.warmup)
    if any(t is not None for t in sent) and any(t is None for t in sent):
        raise invalid("If one task-type is non-null, all must be non-null.")
    if hb.member_epoch != JOIN and hb.topology is not None:
        raise invalid("Topology can only be provided when (re-)joining.")


def java_hash_order(names: Iterable[str]) -> list[str]:
    """``names`` as a Java ``HashMap``'s key set lists them (by bucket, then insertion)."""
    unique = list(dict.fromkeys(names))
    buckets = 16
    while len(unique) > buckets * 3 // 4:
        buckets *= 2
    return sorted(unique, key=lambda name: java_bucket(name, buckets))


def configure(topology: Topology, partitions_of: dict[str, int]) -> ConfiguredTopology:
    """The topology with its partition counts decided (InternalTopicManager.configureTopics):
    see the module's guarantees."""
    missing = sorted({t for s in topology.subtopologies for t in s.source_topics
                      if t not in partitions_of})
    if missing:
        return ConfiguredTopology(problem=Status(
            MISSING_SOURCE_TOPICS, f"Source topics {', '.join(missing)} are missing."))
    decided = partition_counts(topology, partitions_of)

    def count(topic: str) -> int | None:
        return decided.get(topic, partitions_of.get(topic))

    tasks = {s.subtopology_id: max((count(t) or 0 for t in (
        *s.source_topics, *(r.name for r in s.repartition_source_topics))), default=0)
        for s in topology.subtopologies}
    wanted: dict[str, tuple[int, int, dict[str, str]]] = {}
    for s in topology.subtopologies:
        for info in s.repartition_source_topics:
            wanted[info.name] = (count(info.name) or 0, info.replication_factor,
                                 dict(info.configs))
        for info in s.state_changelog_topics:
            wanted[info.name] = (tasks[s.subtopology_id], info.replication_factor,
                                 dict(info.configs))
    to_create = {}
    for name in java_hash_order(wanted):
        partitions = wanted[name][0]
        if name not in partitions_of:
            to_create[name] = wanted[name]
        elif partitions_of[name] != partitions:
            return ConfiguredTopology(problem=Status(
                INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {name} has different number of partitions: expected "
                f"{partitions}, found {partitions_of[name]}"))
    problem = Status(MISSING_INTERNAL_TOPICS, "Internal topics are missing: "
                     + ", ".join(to_create)) if to_create else None
    stateful = frozenset(s.subtopology_id for s in topology.subtopologies
                         if s.state_changelog_topics)
    return ConfiguredTopology(tasks, stateful, to_create, problem)


def by_id(topology: Topology) -> dict[str, Subtopology]:
    """The subtopologies by id, as Kafka's StreamsTopology holds (and compares) them."""
    return {s.subtopology_id: s for s in topology.subtopologies}


def partition_counts(topology: Topology, partitions_of: dict[str, int]) -> dict[str, int]:
    """The repartition topics' partition counts (``repartition_counts``), once every
    subtopology is known to have a task count (ChangelogTopics.setup, over every subtopology
    in its HashMap order): STREAMS_INVALID_TOPOLOGY "No source topics found for subtopology
    X" for one reading no source topic nor repartition topic. A repartition topic whose count
    comes out below 1 (sent negative, or taken from one sent negative) is
    UNKNOWN_SERVER_ERROR with no message: Kafka 4.4's ConfiguredInternalTopic throws
    IllegalArgumentException ("Number of partitions must be at least 1.") out of its
    coordinator (measured)."""
    decided = repartition_counts(topology, partitions_of)
    subtopologies = by_id(topology)
    for subtopology_id in java_hash_order(subtopologies):
        s = subtopologies[subtopology_id]
        if not s.source_topics and not s.repartition_source_topics:
            raise ClusterError("STREAMS_INVALID_TOPOLOGY",
                               f"No source topics found for subtopology {subtopology_id}")
    if any(decided[t.name] < 1 for s in topology.subtopologies
           for t in s.repartition_source_topics):  # a changelog count is below 1 only then
        raise ClusterError("UNKNOWN_SERVER_ERROR")
    return decided


def repartition_counts(topology: Topology, partitions_of: dict[str, int]) -> dict[str, int]:
    """The partition counts of the repartition topics (RepartitionTopics.setup): those the
    topology gives, then each sink topic not given one takes the largest count of its
    subtopology's source topics and of its repartition source topics known so far, round
    after round. STREAMS_INVALID_TOPOLOGY with Kafka's texts when a round decides nothing
    and a sink still needs a count (a loop), or when a repartition source topic is no
    subtopology's sink."""
    decided = {t.name: t.partitions for s in topology.subtopologies
               for t in s.repartition_source_topics if t.partitions != 0}

    def upstream(s: Subtopology) -> int | None:
        known = [c for c in (*(decided.get(t.name) for t in s.repartition_source_topics),
                             *(partitions_of.get(t) for t in s.source_topics)) if c is not None]
        return max(known, default=None)

    needed = True
    while needed:
        needed = progress = False
        for s in topology.subtopologies:
            for sink in s.repartition_sink_topics:
                if sink in decided:
                    continue
                found = upstream(s)
                if found is None:
                    needed = True
                else:
                    decided[sink], progress = found, True
        if needed and not progress:
            raise ClusterError("STREAMS_INVALID_TOPOLOGY", "Failed to compute number of "
                               "partitions for all repartition topics. There may be loops "
                               "in the topology that cannot be resolved.")
    if any(t.name not in decided for s in topology.subtopologies
           for t in s.repartition_source_topics):
        raise ClusterError("STREAMS_INVALID_TOPOLOGY", "Failed to compute number of partitions "
                           "for all repartition topics, because a repartition source topic is "
                           "never used as a sink topic.")
    return decided


def assign(tasks: dict[str, int], members: dict[str, str], previous: dict[str, Target],
           standby_replicas: int, stateful: Collection[str] = ()) -> dict[str, Target]:
    """The sticky assignor's target: every task active on one member (``members``: member id
    -> process id), and each task of a ``stateful`` subtopology (one with a store to keep
    warm: Kafka gives a stateless task no standby) ``standby_replicas`` times standby on
    members of other processes."""
    active: dict[str, Tasks] = {m: {} for m in members}
    load = dict.fromkeys(members, 0)
    order = sorted(members)
    for sub in sorted(tasks):
        count = tasks[sub]
        if not count or not members:
            continue
        share, extra = divmod(count, len(members))
        by_load = sorted(order, key=lambda m: (load[m], m))
        room = {m: share + (1 if i < extra else 0) for i, m in enumerate(by_load)}
        free = set(range(count))
        for m in order:  # keep what it had, up to its share
            kept = sorted(previous.get(m, Target()).active.get(sub, set()) & free)[:room[m]]
            for p in kept:
                active[m].setdefault(sub, set()).add(p)
                free.discard(p)
                room[m] -= 1
                load[m] += 1
        for p in sorted(free):
            owner = min((m for m in order if room[m] > 0), key=lambda m: (load[m], m))
            active[owner].setdefault(sub, set()).add(p)
            room[owner] -= 1
            load[owner] += 1
    standby: dict[str, Tasks] = {m: {} for m in members}
    for sub in sorted(set(tasks) & set(stateful)):
        for p in range(tasks[sub]):
            owner = next((m for m in order if p in active[m].get(sub, ())), None)
            if owner is None:
                continue
            others = [m for m in order if members[m] != members[owner]]
            was = [m for m in others if p in previous.get(m, Target()).standby.get(sub, ())]
            chosen = was[:standby_replicas]
            rest = sorted((m for m in others if m not in chosen), key=lambda m: (load[m], m))
            for m in chosen + rest[:standby_replicas - len(chosen)]:
                standby[m].setdefault(sub, set()).add(p)
                load[m] += 1
    return {m: Target(active[m], standby[m]) for m in members}


@dataclass
class Answer:
    """What a heartbeat answers beside the member: its tasks when they are to be sent, the
    statuses, and the internal topics the caller must create (name -> (partitions,
    replication factor, configs))."""

    member: StreamsMember
    tasks: tuple[Tasks, Tasks, Tasks] | None = None
    status: list[Status] = field(default_factory=list)
    to_create: dict[str, tuple[int, int, dict[str, str]]] = field(default_factory=dict)


@dataclass
class StreamsGroupCoordinator(EpochCommitChecks):
    """Every streams group of the cluster."""

    # topic name -> partition count, from the cluster's topics
    partitions_of: Callable[[], dict[str, int]] = dict
    settings: StreamsSettings = SETTINGS
    # the group's configs set (IncrementalAlterConfigs on the GROUP resource)
    group_configs: Callable[[str], dict[str, str]] = lambda group_id: {}
    groups: dict[str, StreamsGroup] = field(default_factory=dict)
    claim: Callable[[str], bool] = lambda group_id: True
    new_deadline: Callable[[float], None] = lambda deadline: None

    def config(self, group_id: str, name: str) -> int:
        """The group's value of the ``streams.*`` config ``name``: its own, else the broker's."""
        own = self.group_configs(group_id)
        return int(own[name]) if name in own else getattr(self.settings, DEFAULTS[name])

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.config(group_id, "streams.heartbeat.interval.ms")

    # -- membership -----------------------------------------------------------------------

    def heartbeat(self, hb: Heartbeat, now: float) -> Answer:
        """One StreamsGroupHeartbeat. Raises ``ClusterError`` (nothing changed) as Kafka
        answers."""
        validate(hb)
        group = self.groups.get(hb.group_id)
        if hb.member_epoch in (LEAVE, TEMPORARY_LEAVE):
            if group is None:
                raise ClusterError("GROUP_ID_NOT_FOUND",
                                   f"Streams group {hb.group_id} not found.")
            member = self._existing(group, hb.member_id)
            self._remove(group, member.member_id)
            member.epoch = LEAVE
            return Answer(member)
        if group is None:
            if hb.member_epoch != JOIN:
                raise ClusterError("GROUP_ID_NOT_FOUND",
                                   f"Streams group {hb.group_id} not found.")
            if not self.claim(hb.group_id):
                raise ClusterError("GROUP_ID_NOT_FOUND",
                                   f"Group {hb.group_id} is not a streams group.")
            group = StreamsGroup(hb.group_id, delay_from=now)
        if hb.member_epoch == JOIN:
            self._check_room(group, hb.member_id)
        if hb.topology is not None:
            self._check_topology(group, hb.topology)
        member = group.members.get(hb.member_id)
        if member is None and hb.member_epoch != JOIN:
            raise unknown_member(hb.member_id, group.group_id)
        if member is not None and hb.member_epoch != JOIN:
            self._check_epoch(member, hb)
        # the topology configured again now, as it raises before anything changes (Kafka
        # writes nothing for a heartbeat that fails)
        reconfigured = self._reconfigured(group, group.topology or hb.topology)
        self.groups[hb.group_id] = group  # a new one only once its join is let in, as Kafka's
        bump = False
        if member is None:
            delay = self.config(group.group_id, "streams.initial.rebalance.delay.ms") / 1000
            if not group.members and now >= group.delay_from + delay:
                group.delay_from = now  # Kafka's initial rebalance timer, unless still set
            member = StreamsMember(hb.member_id, hb.client_id, hb.client_host)
            group.members[hb.member_id] = member
            bump = True
        bump |= self._update(member, hb, joining=hb.member_epoch == JOIN)
        status: list[Status] = []
        if hb.topology is not None and group.topology is None:
            group.topology, bump = hb.topology, True
        if group.topology is not None and member.topology_epoch < group.topology.epoch:
            status.append(Status(STALE_TOPOLOGY, f"The member's topology epoch "
                                 f"{member.topology_epoch} is behind the group's topology "
                                 f"epoch {group.topology.epoch}."))
        bump |= self._configure(group, reconfigured)
        if bump:
            group.group_epoch += 1
        status += self._maybe_assign(group, now)
        answer = Answer(member, status=status)
        before = (member.active, member.standby, member.warmup)
        self._reconcile(group, member, hb, now)
        after = (member.active, member.standby, member.warmup)
        if hb.member_epoch == JOIN or before != after:
            answer.tasks = tuple({s: set(ps) for s, ps in t.items()} for t in after)
        member.deadline = now + self.config(group.group_id, "streams.session.timeout.ms") / 1000
        self.new_deadline(member.deadline)
        configured = group.configured
        if configured is not None and configured.problem is not None:
            answer.status.append(configured.problem)
            answer.to_create = dict(configured.to_create)
        if hb.shutdown_application:
            group.shutdown_requested_by = member.member_id
        if group.shutdown_requested_by is not None:
            answer.status.append(Status(
                SHUTDOWN_APPLICATION, f"Streams group member {group.shutdown_requested_by} "
                "encountered a fatal error and requested a shutdown for the entire "
                "application."))
        return answer

    def _check_topology(self, group: StreamsGroup, topology: Topology) -> None:
        """Kafka's checks of a join's topology before anything changes (maybeUpdateTopology,
        then configureTopics for a topology the group takes): INVALID_REQUEST for one that
        differs from the group's (a later topology epoch, or other subtopologies, compared by
        id; one of an earlier epoch is stale and ignored), STREAMS_INVALID_TOPOLOGY for the
        first topology when its repartition topics' counts cannot be decided
        (``partition_counts``; with every source topic there). First, a topology of a
        negative epoch, or naming a subtopology id twice (Kafka collects them into a map that
        refuses a duplicate key), fails the join as an exception Kafka 4.4 does not catch:
        UNKNOWN_SERVER_ERROR with no message, nothing changed, a new group not made
        (measured: epochs -1, -2 and -7, on a new and on an existing group; ids "0" or "1"
        twice, on a new group)."""
        if topology.epoch < 0 or len(by_id(topology)) < len(topology.subtopologies):
            raise ClusterError("UNKNOWN_SERVER_ERROR", None)
        if group.topology is None:
            partitions_of = self.partitions_of()
            if all(t in partitions_of for s in topology.subtopologies for t in s.source_topics):
                partition_counts(topology, partitions_of)
        elif topology.epoch >= group.topology.epoch and (
                topology.epoch > group.topology.epoch or by_id(topology) != by_id(group.topology)):
            raise ClusterError("INVALID_REQUEST", "Topology updates are not supported yet.")

    def _check_room(self, group: StreamsGroup, member_id: str) -> None:
        """GROUP_MAX_SIZE_REACHED for a join to a group holding ``group.streams.max.size``
        members, unless the member is one of them (Kafka 4.4's throwIfStreamsGroupIsFull,
        measured: a member joining again is let in)."""
        if len(group.members) >= self.settings.max_size and member_id not in group.members:
            raise ClusterError("GROUP_MAX_SIZE_REACHED", "The streams group has reached its "
                               f"maximum capacity of {self.settings.max_size} members.")

    @staticmethod
    def _existing(group: StreamsGroup, member_id: str) -> StreamsMember:
        member = group.members.get(member_id)
        if member is None:
            raise unknown_member(member_id, group.group_id)
        return member

    @staticmethod
    def _check_epoch(member: StreamsMember, hb: Heartbeat) -> None:
        """FENCED_MEMBER_EPOCH unless the member's epoch, or its previous one with the
        active, standby and warm-up tasks it owns all among those it is assigned (Kafka's
        throwIfStreamsGroupMemberEpochIsInvalid; not sent is not among them)."""
        if hb.member_epoch > member.epoch or (
                hb.member_epoch < member.epoch and not (
                    hb.member_epoch == member.previous_epoch
                    and subset(hb.active, member.active)
                    and subset(hb.standby, member.standby)
                    and subset(hb.warmup, member.warmup))):
            raise fenced("streams", hb.member_epoch, member.epoch)

    @staticmethod
    def _update(member: StreamsMember, hb: Heartbeat, joining: bool) -> bool:
        """Apply the heartbeat's member fields (a join sets the user endpoint, even to none);
        True when the member changed as Kafka 4.4 weighs it for a new target assignment
        (hasStreamsMemberMetadataChanged): any field of a member the heartbeat names no
        instance id for (its client id and host too), else its topology epoch, rack, client
        tags or process id."""
        def relevant() -> tuple[Any, ...]:
            return member.topology_epoch, member.rack_id, member.client_tags, member.process_id

        def metadata() -> tuple[Any, ...]:
            return (*relevant(), member.instance_id, member.client_id, member.client_host,
                    member.rebalance_timeout_ms, member.user_endpoint)

        before, relevant_before = metadata(), relevant()
        if hb.process_id is not None:
            member.process_id = hb.process_id
        if hb.rack_id is not None:
            member.rack_id = hb.rack_id
        if hb.client_tags is not None:
            member.client_tags = dict(hb.client_tags)
        if hb.instance_id is not None:
            member.instance_id = hb.instance_id
        if hb.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = hb.rebalance_timeout_ms
        if hb.topology is not None:
            member.topology_epoch = hb.topology.epoch
        if joining or hb.user_endpoint is not None:
            member.user_endpoint = hb.user_endpoint
        member.client_id, member.client_host = hb.client_id, hb.client_host
        if hb.instance_id is None:
            return before != metadata()
        return relevant_before != relevant()

    def _reconfigured(self, group: StreamsGroup, topology: Topology | None) -> tuple[
            tuple[tuple[str, int], ...], ConfiguredTopology] | None:
        """``topology`` (the group's, or the one it takes) configured, with the partition
        counts it was configured on, when it is new to the group or its topics' counts moved;
        None otherwise. Changes nothing; raises as ``configure`` does."""
        if topology is None:
            return None
        partitions_of = self.partitions_of()
        names = sorted({t for s in topology.subtopologies for t in (
            *s.source_topics, *(i.name for i in s.repartition_source_topics),
            *(i.name for i in s.state_changelog_topics))})
        metadata = tuple((n, partitions_of.get(n, 0)) for n in names)
        if group.configured is not None and metadata == group.metadata:
            return None
        return metadata, configure(topology, partitions_of)

    def _configure(self, group: StreamsGroup, reconfigured: tuple[
            tuple[tuple[str, int], ...], ConfiguredTopology] | None) -> bool:
        """Take the topology configured again (``_reconfigured``), if it was; True when that
        calls for a new group epoch."""
        changed = reconfigured is not None
        if reconfigured is not None:
            group.metadata, group.configured = reconfigured
        if group.topology is None or group.configured is None:  # no topology
            return changed
        validated = group.topology.epoch if group.configured.ready else -1
        if validated != group.validated_epoch:
            group.validated_epoch, changed = validated, True
        return changed

    def _maybe_assign(self, group: StreamsGroup, now: float) -> list[Status]:
        """A new target assignment when the group epoch moved past it and no delay holds it
        back; the ASSIGNMENT_DELAYED status otherwise. A group's first target is empty, at
        once, and the group epoch moves on for the real one (as Kafka numbers them)."""
        if group.group_epoch <= group.assignment_epoch:
            return []
        if not group.assignment_epoch:
            group.target = {m: Target() for m in group.members}
            group.assignment_epoch, group.last_assignment = group.group_epoch, now
            group.group_epoch += 1
        delay = self.config(group.group_id, "streams.initial.rebalance.delay.ms") / 1000
        if now < group.delay_from + delay:
            return [Status(ASSIGNMENT_DELAYED, "Assignment delayed due to the configured "
                           "initial rebalance delay.")]
        interval = self.config(group.group_id, "streams.assignment.interval.ms") / 1000
        if not group.first_assignment_pending and now < group.last_assignment + interval:
            return [Status(ASSIGNMENT_DELAYED, "Assignment delayed due to the configured "
                           "assignment interval.")]
        group.first_assignment_pending = False  # the first real one waits for no interval
        configured = group.configured
        ready = configured is not None and configured.ready
        group.target = assign(
            configured.tasks if ready else {},
            {m.member_id: m.process_id or m.member_id for m in group.members.values()},
            group.target, self.config(group.group_id, "streams.num.standby.replicas"),
            configured.stateful if ready else ())
        group.assignment_epoch, group.last_assignment = group.group_epoch, now
        return []

    def _reconcile(self, group: StreamsGroup, member: StreamsMember, hb: Heartbeat,
                   now: float) -> None:
        target = group.target.get(member.member_id, Target())
        if hb.active is not None:  # what it reports owning: what it revoked is gone
            member.revoking = {s: ps & hb.active.get(s, set())
                               for s, ps in member.revoking.items()}
            member.revoking = {s: ps for s, ps in member.revoking.items() if ps}
        to_revoke = minus(member.active, target.active)
        if to_revoke:
            member.active = minus(member.active, to_revoke)
            member.revoking = union(member.revoking, to_revoke)
            member.standby = dict(target.standby)
            if member.revoke_deadline is None:
                member.revoke_deadline = now + member.rebalance_timeout_ms / 1000
                self.new_deadline(member.revoke_deadline)
        if member.revoking:
            return
        member.revoke_deadline = None
        taken: Tasks = {}
        for other in group.members.values():
            if other is not member:
                taken = union(taken, union(other.active, other.revoking))
        member.active = union(member.active, minus(minus(target.active, member.active), taken))
        member.standby = {s: set(ps) for s, ps in target.standby.items()}
        if member.epoch != group.assignment_epoch:
            member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch

    def _remove(self, group: StreamsGroup, member_id: str) -> None:
        """The member gone, a new group epoch; the last one gone, the (empty) target
        assignment is at that epoch and the next one waits for no assignment interval, as
        Kafka 4.4's streamsGroupFenceMember writes it (assignment timestamp 0)."""
        del group.members[member_id]
        group.target.pop(member_id, None)
        if group.shutdown_requested_by == member_id and not group.members:
            group.shutdown_requested_by = None
        group.group_epoch += 1
        if not group.members:
            group.assignment_epoch, group.target = group.group_epoch, {}
            group.first_assignment_pending = True

    def expire_member(self, group_id: str, member_id: str) -> None:
        """Remove a member now, as if its session had timed out."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        self._remove(group, member_id)

    def delete(self, group_id: str) -> None:
        """DeleteGroups of a streams group: NON_EMPTY_GROUP while it has members."""
        group = self.groups.get(group_id)
        if group is None:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        if group.members:
            raise ClusterError("NON_EMPTY_GROUP")
        del self.groups[group_id]

    def member(self, group_id: str, member_id: str) -> StreamsMember | None:
        group = self.groups.get(group_id)
        return group.members.get(member_id) if group is not None else None

    def source_topics(self, group_id: str) -> set[str]:
        """The topics the group's topology reads (OffsetDelete keeps their offsets)."""
        group = self.groups.get(group_id)
        if group is None or group.topology is None or not group.members:
            return set()
        return {t for s in group.topology.subtopologies for t in (
            *s.source_topics, *(i.name for i in s.repartition_source_topics))}

    # -- time -----------------------------------------------------------------------------

    def expire(self, now: float) -> None:
        """Remove every member whose session, or time to revoke, ran out at ``now``."""
        for group in self.groups.values():
            for member_id, member in list(group.members.items()):
                if min(member.deadline, member.revoke_deadline or member.deadline) <= now:
                    self._remove(group, member_id)

    def next_deadline(self) -> float:
        return min((min(m.deadline, m.revoke_deadline or m.deadline)
                    for g in self.groups.values() for m in g.members.values()),
                   default=float("inf"))
