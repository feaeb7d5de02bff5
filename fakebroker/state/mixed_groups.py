"""Online migration between classic and KIP-848 consumer groups, as Kafka 4.4's
GroupMetadataManager runs it: the upgrade of a classic group, the classic members of a consumer
group, and the downgrade back, each allowed by group.consumer.migration.policy
(``MigrationPolicy``; bidirectional by default).

Guarantees:

* Upgrade (Kafka's convertToConsumerGroup): a joining ConsumerGroupHeartbeat to a classic group
  with members converts it to a consumer group when the policy allows upgrades, the group's
  protocol type is "consumer" and it has no more members than group.consumer.max.size;
  otherwise GROUP_ID_NOT_FOUND with Kafka's message saying why. The consumer group starts at
  the classic generation as its group and assignment epoch; each classic member keeps its
  member id, its last assignment (as its target too) and its subscription, at that epoch.
  Bytes that do not parse as the consumer protocol, or an assignment carrying user data (a
  custom assignor's), refuse the upgrade as Kafka does. JoinGroups and SyncGroups waiting in
  the classic group are answered REBALANCE_IN_PROGRESS.
* Classic members of a consumer group (``join``, ``sync``, ``heartbeat``, ``leave``): a JoinGroup
  is a full heartbeat (its subscription's topics and owned partitions), answered at once with
  the member's epoch as the generation, no leader and no members; SyncGroup answers the
  member's current assignment in the consumer protocol (at the version of its subscription).
  A Heartbeat, or a SyncGroup, answers REBALANCE_IN_PROGRESS while the member must rejoin: the
  group epoch is past its epoch (a SyncGroup: unless it is revoking), it is revoking
  partitions, or partitions it waits for are free now. A member told so must rejoin within its
  rebalance timeout, and sync within it after a join, or it is removed; its session is its
  own session timeout. A classic member commits offsets at any OffsetCommit version; another
  generation than its epoch is ILLEGAL_GENERATION.
* Downgrade (Kafka's convertToClassicGroup): when members leave (a ConsumerGroupHeartbeat
  leave, a LeaveGroup, a timeout) and only classic members remain, at least one, no more than
  group.max.size, and the policy allows downgrades, the group becomes a classic group of
  protocol type "consumer" at the group epoch as its generation, each member assigned its
  target assignment; it rebalances at once, so every member rejoins.

Differences from Kafka 4.4: a static member of the classic protocol replacing the last member of
the consumer protocol does not downgrade the group (Kafka converts it without a rebalance).
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from fakebroker.protocol.codec import DecodeError, data_codec
from fakebroker.protocol.errors import ClusterError
from fakebroker.protocol.specs import data_spec, parse_range
from fakebroker.state.classic_groups import (
    ClassicGroup,
    ClassicGroupCoordinator,
    GroupState,
    JoinAnswer,
    Member,
)
from fakebroker.state.consumer_groups import (
    ClassicMembership,
    ConsumerGroup,
    ConsumerGroupCoordinator,
    ConsumerMember,
)
from fakebroker.state.kafka_ids import kafka_uuid_text
from fakebroker.state.modern_groups import Assignment, minus, union, unknown_member

CONSUMER_PROTOCOL = "consumer"


class MigrationPolicy(enum.Enum):
    """group.consumer.migration.policy: which conversions run online."""

    DISABLED = "disabled"
    DOWNGRADE = "downgrade"
    UPGRADE = "upgrade"
    BIDIRECTIONAL = "bidirectional"

    @classmethod
    def of(cls, value: str | None) -> MigrationPolicy:
        """The policy a config value names, in any case (unset: Kafka's default)."""
        return cls((value or cls.BIDIRECTIONAL.value).lower())

    @property
    def upgrades(self) -> bool:
        return self in (MigrationPolicy.UPGRADE, MigrationPolicy.BIDIRECTIONAL)

    @property
    def downgrades(self) -> bool:
        return self in (MigrationPolicy.DOWNGRADE, MigrationPolicy.BIDIRECTIONAL)


# -- the consumer protocol's bytes ------------------------------------------------------------

@dataclass(frozen=True)
class Subscription:
    """A ConsumerProtocolSubscription: topics, owned partitions (v1+), rack (v3+)."""

    topics: list[str]
    owned: Assignment
    rack_id: str | None


def _newest(name: str) -> int:
    return max(parse_range(data_spec(name)["versions"]))


def _parsed(name: str, data: bytes):
    """The data message at the version its first two bytes name (newer versions read as the
    newest known, as Kafka reads them); ``DecodeError`` for bytes that do not parse."""
    if len(data) < 2:
        raise DecodeError("no version")
    version = struct.unpack_from(">h", data)[0]
    if version < 0:
        raise DecodeError(f"version {version}")
    return data_codec(name, min(version, _newest(name))).parse(data[2:])


def subscription(metadata: bytes) -> Subscription:
    """The subscription in a JoinGroup protocol's metadata (``DecodeError``: malformed)."""
    parsed = _parsed("ConsumerProtocolSubscription", metadata)
    owned: Assignment = {}
    for t in getattr(parsed, "owned_partitions", None) or ():
        owned.setdefault(t.topic, set()).update(t.partitions)
    return Subscription(list(parsed.topics), {t: ps for t, ps in owned.items() if ps},
                        getattr(parsed, "rack_id", None))


def encoded_assignment(assigned: Assignment, metadata: bytes) -> bytes:
    """A ConsumerProtocolAssignment at the version of the member's subscription ``metadata``
    (as Kafka's prepareAssignment answers a classic member's SyncGroup)."""
    newest = _newest("ConsumerProtocolAssignment")
    version = min(max(struct.unpack_from(">h", metadata)[0], 0), newest) \
        if len(metadata) >= 2 else 0
    body = data_codec("ConsumerProtocolAssignment", version).build({
        "assigned_partitions": [{"topic": t, "partitions": sorted(ps)}
                                for t, ps in sorted(assigned.items())],
        "user_data": None})
    return struct.pack(">h", version) + body


# -- upgrade ----------------------------------------------------------------------------------

def upgraded(classic: ClassicGroup, policy: MigrationPolicy, max_size: int,
             partitions_of: dict[str, int]) -> ConsumerGroup:
    """The consumer group a classic group with members becomes for a joining
    ConsumerGroupHeartbeat (Kafka's validateOnlineUpgrade and ConsumerGroup.fromClassicGroup),
    or ClusterError GROUP_ID_NOT_FOUND with Kafka's reason. ``classic`` is not changed."""
    def refused(why: str) -> ClusterError:
        return ClusterError("GROUP_ID_NOT_FOUND", f"Cannot upgrade classic group "
                            f"{classic.group_id} to consumer group because {why}.")

    if not policy.upgrades:
        raise refused("online upgrade is disabled")
    if classic.protocol_type != CONSUMER_PROTOCOL:
        raise refused("the group does not use the consumer embedded protocol")
    if len(classic.members) > max_size:
        raise refused("the group size exceeds the consumer group maximum size")
    epoch = classic.generation_id
    group = ConsumerGroup(classic.group_id, group_epoch=epoch, assignment_epoch=epoch)
    for m in classic.members.values():
        try:
            assigned = _assigned(m.assignment, partitions_of)
            subscribed = subscription(m.metadata_for(classic.protocol_name)
                                      if classic.protocol_name else m.protocols[0][1])
        except DecodeError:
            raise refused("the embedded consumer protocol is malformed") from None
        except _UserData:
            raise refused("an unsupported custom assignor is in use. Please refer to the "
                          "documentation or switch to a default assignor before "
                          "re-attempting the upgrade") from None
        group.members[m.member_id] = ConsumerMember(
            m.member_id, m.instance_id, subscribed.rack_id, m.client_id, m.client_host,
            subscribed=list(dict.fromkeys(subscribed.topics)), epoch=epoch, previous_epoch=epoch,
            assigned=assigned, sent=assigned, rebalance_timeout_ms=m.rebalance_timeout_ms,
            classic=ClassicMembership(m.session_timeout_ms, list(m.protocols)))
        group.target[m.member_id] = {t: set(ps) for t, ps in assigned.items()}
    group.subscription = {t: partitions_of[t] for t in sorted(
        {t for m in group.members.values() for t in m.subscribed if t in partitions_of})}
    return group


class _UserData(Exception):
    """An assignment carrying a custom assignor's user data, which an upgrade would lose."""


def _assigned(assignment: bytes, partitions_of: dict[str, int]) -> Assignment:
    """A classic member's last assignment by topic, partitions of unknown topics dropped (a
    member that never synced has none)."""
    if not assignment:
        return {}
    parsed = _parsed("ConsumerProtocolAssignment", assignment)
    if parsed.user_data:
        raise _UserData
    out: Assignment = {}
    for t in parsed.assigned_partitions:
        if t.topic in partitions_of:
            out.setdefault(t.topic, set()).update(t.partitions)
    return {t: ps for t, ps in out.items() if ps}


# -- downgrade --------------------------------------------------------------------------------

def downgradable(group: ConsumerGroup, leaving: list[str], policy: MigrationPolicy,
                 max_size: int) -> bool:
    """Whether removing ``leaving`` converts the group to a classic group (Kafka's
    validateOnlineDowngradeWithFencedMembers): only classic members remain, at least one, the
    policy allows downgrades and they fit in group.max.size (``max_size``)."""
    remaining = [m for m in group.members.values() if m.member_id not in leaving]
    return bool(remaining) and all(m.classic is not None for m in remaining) \
        and policy.downgrades and len(remaining) <= max_size


def downgraded(group: ConsumerGroup, leaving: list[str]) -> ClassicGroup:
    """The classic group a consumer group becomes without ``leaving`` (Kafka's
    ClassicGroup.fromConsumerGroup): Stable at the group epoch, protocol type "consumer", each
    member assigned its target assignment; the caller makes it rebalance."""
    classic = ClassicGroup(group.group_id, state=GroupState.STABLE,
                           generation_id=group.group_epoch, protocol_type=CONSUMER_PROTOCOL)
    for m in group.members.values():
        if m.member_id in leaving or m.classic is None:
            continue
        classic.members[m.member_id] = Member(
            m.member_id, m.instance_id, m.client_id, m.client_host,
            m.classic.session_timeout_ms, m.rebalance_timeout_ms, CONSUMER_PROTOCOL,
            list(m.classic.protocols))
        if m.instance_id is not None:
            classic.static[m.instance_id] = m.member_id
    classic.protocol_name = ClassicGroupCoordinator.select_protocol(classic)
    for member in classic.members.values():
        member.assignment = encoded_assignment(group.target.get(member.member_id, {}),
                                               member.metadata_for(classic.protocol_name))
    return classic


# -- classic members in a consumer group ------------------------------------------------------

@dataclass(frozen=True)
class ClassicJoin:
    """A JoinGroup's fields, as a consumer group reads them."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool


def join(coordinator: ConsumerGroupCoordinator, group: ConsumerGroup, request: ClassicJoin,
         now: float, max_size: int) -> JoinAnswer:
    """A JoinGroup to a consumer group with members (Kafka's classicGroupJoinToConsumerGroup):
    answered at once; ``ClusterError`` for the errors Kafka answers. ``max_size``:
    group.consumer.max.size."""
    member_id = request.member_id or kafka_uuid_text()
    if len(group.members) >= max_size and member_id not in group.members:
        raise ClusterError("GROUP_MAX_SIZE_REACHED")
    if not _supports(group, request.protocol_type, [n for n, _ in request.protocols]):
        raise ClusterError("INCONSISTENT_GROUP_PROTOCOL",
                           f"Member {member_id}'s protocols are not supported.")
    if request.require_known_member_id and not request.member_id \
            and request.instance_id is None:
        return ClassicGroupCoordinator.error_answer(member_id, "MEMBER_ID_REQUIRED")
    try:
        subscribed = subscription(request.protocols[0][1])
    except DecodeError:
        raise ClusterError("UNKNOWN_SERVER_ERROR") from None
    member = _joining_member(group, member_id, request)
    bump = set(subscribed.topics) != set(member.subscribed)  # a set, as Kafka keeps them
    member.subscribed = list(dict.fromkeys(subscribed.topics))
    member.rack_id = subscribed.rack_id if subscribed.rack_id is not None else member.rack_id
    if request.rebalance_timeout_ms > 0:
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
    member.client_id, member.client_host = request.client_id, request.client_host
    sync_deadline = now + member.rebalance_timeout_ms / 1000
    member.classic = ClassicMembership(request.session_timeout_ms, list(request.protocols),
                                       sync_deadline=sync_deadline)
    coordinator.new_deadline(sync_deadline)
    coordinator.settle(group, member, bump, subscribed.owned, True, now)
    return {"error_code": 0, "generation_id": member.epoch, "protocol_type": CONSUMER_PROTOCOL,
            "protocol_name": member.classic.protocol_name, "leader": "",
            "skip_assignment": False, "member_id": member.member_id, "members": []}


def _supports(group: ConsumerGroup, protocol_type: str, names: list[str]) -> bool:
    """Kafka's supportsClassicProtocols: protocol type "consumer", and a protocol every
    classic member of the group supports."""
    if protocol_type != CONSUMER_PROTOCOL or not names:
        return False
    classic = [{n for n, _ in m.classic.protocols} for m in group.members.values() if m.classic]
    return any(all(name in supported for supported in classic) for name in names)


def _joining_member(group: ConsumerGroup, member_id: str, request: ClassicJoin
                    ) -> ConsumerMember:
    """The member a JoinGroup is from: a new one, the member it names, or (a static member
    joining without a member id) a new one in the place of the instance's member."""
    if request.instance_id is not None:
        holder = group.static_member(request.instance_id)
        if holder is not None and request.member_id:
            if holder.member_id != request.member_id:
                raise ClusterError("FENCED_INSTANCE_ID")
            return holder
        if holder is not None:
            del group.members[holder.member_id]
            member = ConsumerMember(member_id, request.instance_id, holder.rack_id,
                                    request.client_id, request.client_host,
                                    subscribed=list(holder.subscribed), assigned=holder.assigned,
                                    rebalance_timeout_ms=holder.rebalance_timeout_ms)
            group.target[member_id] = group.target.pop(holder.member_id, {})
            group.members[member_id] = member
            return member
    member = group.members.get(member_id)
    if member is None:
        member = group.members[member_id] = ConsumerMember(
            member_id, request.instance_id, None, request.client_id, request.client_host)
    return member


def _classic_member(group: ConsumerGroup, member_id: str, instance_id: str | None
                    ) -> ConsumerMember:
    """The classic member a SyncGroup or Heartbeat is from (Kafka's
    validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol)."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise unknown_member(member_id, group.group_id)
    else:
        member = group.static_member(instance_id)
        if member is None:
            raise ClusterError("UNKNOWN_MEMBER_ID", f"Member with instance id {instance_id} "
                               f"is not a member of group {group.group_id}.")
        if member.member_id != member_id:
            raise ClusterError("FENCED_INSTANCE_ID")
    if member.classic is None:
        raise ClusterError("UNKNOWN_MEMBER_ID",
                           f"Member {member.member_id} does not use the classic protocol.")
    return member


def _check_generation(member: ConsumerMember, generation_id: int) -> None:
    if generation_id != member.epoch:
        raise ClusterError(
            "ILLEGAL_GENERATION", f"The request generation id {generation_id} is not equal to "
            f"the member epoch {member.epoch} of member {member.member_id}.")


def _rejoin(coordinator: ConsumerGroupCoordinator, member: ConsumerMember, now: float
            ) -> ClusterError:
    """REBALANCE_IN_PROGRESS: the member must rejoin, within its rebalance timeout."""
    assert member.classic is not None
    if member.classic.join_deadline is None:
        member.classic.join_deadline = now + member.rebalance_timeout_ms / 1000
        coordinator.new_deadline(member.classic.join_deadline)
    return ClusterError("REBALANCE_IN_PROGRESS")


def sync(coordinator: ConsumerGroupCoordinator, group: ConsumerGroup, generation_id: int,
         member_id: str, instance_id: str | None, protocol_type: str | None,
         protocol_name: str | None, now: float) -> bytes:
    """A SyncGroup to a consumer group (Kafka's classicGroupSyncToConsumerGroup): the member's
    current assignment in the consumer protocol, or ``ClusterError``."""
    member = _classic_member(group, member_id, instance_id)
    _check_generation(member, generation_id)
    assert member.classic is not None
    if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL) or (
            protocol_name is not None and protocol_name != member.classic.protocol_name):
        raise ClusterError("INCONSISTENT_GROUP_PROTOCOL")
    if group.group_epoch > member.epoch and not member.revoking:
        raise _rejoin(coordinator, member, now)
    member.classic.sync_deadline = None
    coordinator.touch(group.group_id, member, now)
    return encoded_assignment(member.assigned, member.classic.protocols[0][1])


def heartbeat(coordinator: ConsumerGroupCoordinator, group: ConsumerGroup, generation_id: int,
              member_id: str, instance_id: str | None, now: float) -> None:
    """A Heartbeat to a consumer group (Kafka's classicGroupHeartbeatToConsumerGroup):
    REBALANCE_IN_PROGRESS (``ClusterError``) while the member must rejoin."""
    member = _classic_member(group, member_id, instance_id)
    _check_generation(member, generation_id)
    coordinator.touch(group.group_id, member, now)
    if member.epoch < group.group_epoch or member.revoking or _unreleased_free(group, member):
        raise _rejoin(coordinator, member, now)


def _unreleased_free(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """The member waits for partitions of its target that no other member holds any more
    (Kafka's UNRELEASED_PARTITIONS without waitingOnUnreleasedPartition): a rejoin gets them."""
    missing = minus(group.target.get(member.member_id, {}), member.assigned)
    if not missing:
        return False
    held: Assignment = {}
    for other in group.members.values():
        if other is not member:
            held = union(held, union(other.assigned, other.revoking))
    return not minus(missing, minus(missing, held))


def leave(coordinator: ConsumerGroupCoordinator, group: ConsumerGroup,
          leaving: list[tuple[str, str | None]], now: float) -> list[str | None]:
    """A LeaveGroup to a consumer group (Kafka's classicGroupLeaveToConsumerGroup): every
    member it names leaves, of either protocol, together; per member its error's name (None:
    it left)."""
    results: list[str | None] = []
    gone: list[str] = []
    for member_id, instance_id in leaving:
        if instance_id is None:
            member = group.members.get(member_id)
            error = None if member is not None else "UNKNOWN_MEMBER_ID"
        else:
            member = group.static_member(instance_id)
            error = "UNKNOWN_MEMBER_ID" if member is None else (
                "FENCED_INSTANCE_ID" if member_id and member_id != member.member_id else None)
        results.append(error)
        if error is None and member is not None and member.member_id not in gone:
            gone.append(member.member_id)
    if gone:
        coordinator.remove(group, gone, now)
    return results
