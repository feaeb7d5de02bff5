"""Every group of the cluster, classic, KIP-848, share (KIP-932) and streams (KIP-1071), with
their committed offsets: ``Groups``.

Guarantees:

* A group id names at most one group at a time, of one kind: classic (JoinGroup, SyncGroup,
  Heartbeat, LeaveGroup; ``fakebroker.state.classic_groups``) or consumer (KIP-848's
  ConsumerGroupHeartbeat, and classic members too; ``fakebroker.state.consumer_groups``).
  ``kind`` says which.
* The protocol that first uses an id creates its group (a JoinGroup; an OffsetCommit from outside
  any group creates an Empty classic group, as Kafka does). An empty group gives way to the other
  protocol's, as Kafka's coordinator replaces it (``maybeDeleteEmptyClassicGroup``,
  ``maybeDeleteEmptyConsumerGroup``), and its committed offsets stay. A group with members
  migrates online as Kafka's does, within group.consumer.migration.policy (``config``;
  bidirectional by default; ``fakebroker.state.mixed_groups``): a joining
  ConsumerGroupHeartbeat upgrades a classic group to a consumer group; JoinGroup, SyncGroup,
  Heartbeat and LeaveGroup to a consumer group with members make classic members of it (``join``,
  ``sync``, ``heartbeat``, ``leave`` route each to the group's kind); when only classic members
  would remain after members leave, the group is downgraded to a classic group. With the policy
  disabled a joining ConsumerGroupHeartbeat to a classic group with members gets
  GROUP_ID_NOT_FOUND ("Cannot upgrade classic group g to consumer group because online upgrade
  is disabled.") and a JoinGroup to a consumer group with members INCONSISTENT_GROUP_PROTOCOL.
* A share group (``fakebroker.state.share_groups``) takes an id no group of another kind holds,
  and keeps it while it exists (its share-partitions' start offsets are its own, not in
  ``offsets``); ShareGroupHeartbeat to an id of another kind is GROUP_ID_NOT_FOUND.
* A streams group (``fakebroker.state.streams_groups``) takes an id no group of another kind
  holds, as a share group does; its members commit offsets as KIP-848 members do (member
  epochs), into the one store.
* Committed offsets of both kinds live in one store, ``offsets``, by group id: no group record
  holds them. OffsetCommit checks go to the group's own kind; DeleteGroups takes the offsets
  with the group.
* Every ``offsets.retention.check.interval.ms`` (``config``; 10 minutes) each empty group
  (a classic group in state Empty, a consumer or streams group without members) holding no
  committed offset and no transaction's pending ones is deleted, as Kafka's coordinator does
  (GroupCoordinatorShard.cleanupGroupMetadata, measured on 4.4); a share group stays (measured:
  one whose members left, its share state initialized, is still listed). The checks fall from the
  first time this registry is told the time (Kafka's: from the coordinator's load, at the
  broker's start). Offsets themselves never expire here (Kafka's offsets.retention.minutes,
  7 days, is not modelled).
* Time comes in, answers (or ``Pending`` answers) come out: operations take ``now``,
  ``next_deadline`` is the earliest timeout of any kind and ``expire(now)`` applies every one
  due, so one timer drives both (``fakebroker.timers``); ``watch_deadlines`` names who to tell
  of every deadline either sets.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator

from fakebroker.protocol.errors import ClusterError
from fakebroker.state import mixed_groups
from fakebroker.state.classic_groups import ClassicGroup, ClassicGroupCoordinator, JoinAnswer
from fakebroker.state.consumer_groups import ConsumerGroup, ConsumerGroupCoordinator, claim_new
from fakebroker.state.mixed_groups import ClassicJoin, MigrationPolicy
from fakebroker.state.offsets import OffsetStore
from fakebroker.state.pending import Pending
from fakebroker.state.share_groups import ShareGroup, ShareGroupCoordinator
from fakebroker.state.streams_groups import StreamsGroup, StreamsGroupCoordinator


def invalid_group_id(group_id: str | None) -> bool:
    """Whether Kafka's group coordinator refuses the group id with INVALID_GROUP_ID before
    anything else, NOT_COORDINATOR included (``isGroupIdNotEmpty``): a null or empty id, in
    JoinGroup, SyncGroup, Heartbeat, LeaveGroup, TxnOffsetCommit, OffsetDelete,
    ConsumerGroupDescribe, ShareGroupDescribe, StreamsGroupDescribe, AlterShareGroupOffsets and
    DeleteShareGroupOffsets. (OffsetCommit, OffsetFetch, DescribeGroups
    and DeleteGroups refuse only a null id; ConsumerGroupHeartbeat and ShareGroupHeartbeat
    answer an empty one INVALID_REQUEST.)"""
    return not group_id


class GroupKind(enum.Enum):
    CLASSIC = enum.auto()
    CONSUMER = enum.auto()
    SHARE = enum.auto()
    STREAMS = enum.auto()


class Groups:
    """The classic and the KIP-848 coordinator, which kind each group id is, and the offsets."""

    def __init__(self, classic: ClassicGroupCoordinator | None = None) -> None:
        self.classic = classic or ClassicGroupCoordinator()
        self.consumer = ConsumerGroupCoordinator()
        self.share = ShareGroupCoordinator()
        self.streams = StreamsGroupCoordinator()
        self.consumer.group_configs = self.streams.group_configs = \
            lambda group_id: self.share.configs.get(group_id, {})
        self.offsets = OffsetStore()
        # Broker configs as the cluster runs with them (group.consumer.migration.policy and
        # the group sizes a conversion must fit in); unset: Kafka's defaults.
        self.config: Callable[[str], str | None] = lambda name: None
        # Whether a transaction holds pending offsets of the group (TxnOffsetCommit).
        self.open_transactions: Callable[[str], bool] = lambda group_id: False
        self._next_check = float("inf")  # until the first ``now`` told, the checks' origin
        self._deadline_watchers: list[Callable[[float], None]] = []
        self.classic.claim = lambda group_id: self._make_room(
            group_id, self.consumer.groups) and not self._exclusive(group_id)
        self.consumer.claim = self._claim_for_consumer_group
        self.consumer.installed = self.classic.give_up
        self.consumer.downgrade = self._downgrade
        self.share.claim = self.streams.claim = lambda group_id: self.kind(group_id) is None
        self.classic.new_deadline = self.consumer.new_deadline = self._new_deadline
        self.share.new_deadline = self.streams.new_deadline = self._new_deadline

    # -- which kind -----------------------------------------------------------------------

    def kind(self, group_id: str) -> GroupKind | None:
        """The kind of the group ``group_id`` names, or None when there is no such group."""
        if group_id in self.consumer.groups:
            return GroupKind.CONSUMER
        if self.share.group(group_id) is not None:
            return GroupKind.SHARE
        if group_id in self.streams.groups:
            return GroupKind.STREAMS
        if group_id in self.classic.groups:
            return GroupKind.CLASSIC
        return None

    def classic_group(self, group_id: str) -> ClassicGroup | None:
        return self.classic.groups.get(group_id)

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self.consumer.groups.get(group_id)

    def share_group(self, group_id: str) -> ShareGroup | None:
        return self.share.group(group_id)

    def streams_group(self, group_id: str) -> StreamsGroup | None:
        return self.streams.groups.get(group_id)

    def _exclusive(self, group_id: str) -> bool:
        """Whether a share or streams group holds ``group_id`` (no other kind may take it)."""
        return self.share.group(group_id) is not None or group_id in self.streams.groups

    def ids(self) -> Iterator[str]:
        """Every group id, of any kind."""
        yield from self.classic.groups
        yield from self.consumer.groups
        yield from self.share.groups
        yield from self.streams.groups

    def _claim_for_consumer_group(self, group_id: str, joining: bool) -> ConsumerGroup:
        """The consumer group a ConsumerGroupHeartbeat to ``group_id`` makes (the consumer
        coordinator holds none by that id): none while a share or streams group holds it, nor
        for anything but a join while a classic group does; a new one when no classic group
        with members holds it (an empty one is dropped once the new one is installed), else
        the classic group upgraded (``fakebroker.state.mixed_groups``). ``ClusterError``
        GROUP_ID_NOT_FOUND as Kafka words it."""
        classic = self.classic.groups.get(group_id)
        if self._exclusive(group_id) or (classic is not None and not joining):
            raise ClusterError("GROUP_ID_NOT_FOUND",
                               f"Group {group_id} is not a consumer group.")
        if classic is None or not classic.members:
            return claim_new(group_id, joining)
        return mixed_groups.upgraded(classic, self.migration_policy,
                                     self._size("group.consumer.max.size"),
                                     self.consumer.partitions_of())

    def _downgrade(self, group: ConsumerGroup, leaving: list[str], now: float) -> bool:
        """Whether removing ``leaving`` converts the consumer group to a classic group; if so
        the classic coordinator takes it over, rebalancing."""
        if not mixed_groups.downgradable(group, leaving, self.migration_policy,
                                         self._size("group.max.size")):
            return False
        del self.consumer.groups[group.group_id]
        self.classic.take_over(mixed_groups.downgraded(group, leaving), now)
        return True

    @property
    def migration_policy(self) -> MigrationPolicy:
        return MigrationPolicy.of(self.config("group.consumer.migration.policy"))

    def _size(self, config: str) -> int:
        return int(self.config(config) or 2_147_483_647)

    def _mixed(self, group_id: str, joining: bool = False) -> ConsumerGroup | None:
        """The consumer group with members that classic requests to ``group_id`` go to (a
        JoinGroup only while the policy allows any migration: Kafka refuses one with
        INCONSISTENT_GROUP_PROTOCOL when it is disabled, as the classic coordinator does)."""
        group = self.consumer.groups.get(group_id)
        if joining and self.migration_policy is MigrationPolicy.DISABLED:
            return None
        return group if group is not None and group.members else None

    # -- the classic protocol's requests, to a group of either protocol ---------------------

    def join(self, group_id: str, request: ClassicJoin, now: float
             ) -> JoinAnswer | Pending[JoinAnswer]:
        """A JoinGroup: to a consumer group with members as a classic member of it, else to
        the classic coordinator (whose ``join`` says what it answers)."""
        mixed = self._mixed(group_id, joining=True)
        if mixed is not None:
            return mixed_groups.join(self.consumer, mixed, request, now,
                                     self._size("group.consumer.max.size"))
        return self.classic.join(
            group_id, request.member_id, request.instance_id, request.client_id,
            request.client_host, request.session_timeout_ms, request.rebalance_timeout_ms,
            request.protocol_type, request.protocols, request.require_known_member_id, now,
            self._size("group.max.size"))

    def sync(self, group_id: str, generation_id: int, member_id: str, instance_id: str | None,
             protocol_type: str | None, protocol_name: str | None,
             assignments: dict[str, bytes], now: float) -> bytes | Pending[bytes]:
        """A SyncGroup, to whichever protocol's group holds ``group_id``."""
        mixed = self._mixed(group_id)
        if mixed is not None:
            return mixed_groups.sync(self.consumer, mixed, generation_id, member_id,
                                     instance_id, protocol_type, protocol_name, now)
        return self.classic.sync(group_id, generation_id, member_id, instance_id,
                                 protocol_type, protocol_name, assignments, now)

    def heartbeat(self, group_id: str, generation_id: int, member_id: str,
                  instance_id: str | None, now: float) -> None:
        """A Heartbeat, to whichever protocol's group holds ``group_id``."""
        mixed = self._mixed(group_id)
        if mixed is not None:
            mixed_groups.heartbeat(self.consumer, mixed, generation_id, member_id, instance_id,
                                   now)
        else:
            self.classic.heartbeat(group_id, generation_id, member_id, instance_id, now)

    def leave(self, group_id: str, leaving: list[tuple[str, str | None]], now: float
              ) -> list[str | None]:
        """A LeaveGroup's members (member id, instance id): per member its error's name, None
        when it left."""
        mixed = self._mixed(group_id)
        if mixed is not None:
            return mixed_groups.leave(self.consumer, mixed, leaving, now)
        results: list[str | None] = []
        for member_id, instance_id in leaving:
            try:
                self.classic.leave(group_id, member_id, instance_id, now)
                results.append(None)
            except ClusterError as exc:
                results.append(exc.error)
        return results

    @staticmethod
    def _make_room(group_id: str,
                   others: dict[str, ClassicGroup] | dict[str, ConsumerGroup]) -> bool:
        """Whether a new group may take ``group_id``, given the groups of the other kind: not
        while one with members holds it; an empty one is dropped (its offsets stay)."""
        other = others.get(group_id)
        if other is not None and other.members:
            return False
        others.pop(group_id, None)
        return True

    # -- what every kind is asked ---------------------------------------------------------

    def validate_offset_commit(self, group_id: str, generation_or_epoch: int, member_id: str,
                               instance_id: str | None, now: float,
                               no_group: str = "ILLEGAL_GENERATION",
                               version: int | None = None) -> None:
        """Whether an OffsetCommit (or TxnOffsetCommit) may store its offsets, checked by the
        group's kind (a generation for a classic group, a member epoch for a consumer group);
        raises ``ClusterError`` as Kafka answers. A commit to no group creates an Empty
        classic group when its generation is negative (an admin client, an assign-only
        consumer) and is refused with ``no_group`` otherwise (Kafka's
        OffsetMetadataManager: GROUP_ID_NOT_FOUND for OffsetCommit v9+, ILLEGAL_GENERATION
        before and for TxnOffsetCommit). ``version``: an OffsetCommit's (None for a
        TxnOffsetCommit), which a consumer group's members must send at v9+. An OffsetCommit
        to a share group is GROUP_ID_NOT_FOUND at every version and generation (measured on
        Kafka 4.4: a share group commits no offsets)."""
        kind = self.kind(group_id)
        if kind is None and generation_or_epoch >= 0:
            raise ClusterError(no_group)
        if kind is GroupKind.SHARE and version is not None:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        if kind in (GroupKind.CONSUMER, GroupKind.STREAMS):
            coordinator = self.consumer if kind is GroupKind.CONSUMER else self.streams
            coordinator.validate_offset_commit(group_id, member_id, generation_or_epoch,
                                               version)
        else:
            self.classic.validate_commit(group_id, generation_or_epoch, member_id, instance_id,
                                         now)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int
                              ) -> None:
        """An OffsetFetch's member check (v9+), as Kafka's ConsumerGroup and StreamsGroup
        validateOffsetFetch: only a null member id with a negative epoch (an admin client's,
        a consumer without a group membership) is not checked; any other asker must be a
        member of a consumer or streams group at its epoch (``ClusterError``
        UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH: an empty member id and a negative epoch
        too). A null member id with an epoch of 0 or more is UNKNOWN_MEMBER_ID here (Kafka
        4.4 fails it with an uncaught NullPointerException: UNKNOWN_SERVER_ERROR). A classic
        group checks nothing (Kafka's ClassicGroup.validateOffsetFetch), and no group answers
        as an empty one."""
        kind = self.kind(group_id)
        if member_id is None and member_epoch < 0:
            return
        if kind is GroupKind.CONSUMER:
            self.consumer.validate_commit(group_id, member_id or "", member_epoch)
        elif kind is GroupKind.STREAMS:
            self.streams.validate_commit(group_id, member_id or "", member_epoch)

    def validate_offset_delete(self, group_id: str) -> None:
        """Whether OffsetDelete may delete the group's offsets at all (``ClusterError``):
        GROUP_ID_NOT_FOUND for no group and for a share group, which holds no committed
        offsets (Kafka 4.4's ShareGroup.validateOffsetDelete, measured); NON_EMPTY_GROUP for a
        classic group with members of another protocol type than "consumer", whose
        subscriptions cannot be read (Kafka's ClassicGroup.validateOffsetDelete)."""
        kind = self.kind(group_id)
        if kind is None or kind is GroupKind.SHARE:
            raise ClusterError("GROUP_ID_NOT_FOUND")
        group = self.classic.groups.get(group_id)
        if kind is GroupKind.CLASSIC and group is not None and group.members \
                and group.protocol_type != "consumer":
            raise ClusterError("NON_EMPTY_GROUP")

    def subscribed_topics(self, group_id: str) -> set[str]:
        """The topics the group's members subscribe to (OffsetDelete keeps their offsets)."""
        if self.kind(group_id) is GroupKind.CONSUMER:
            return self.consumer.subscribed_topics(group_id)
        if self.kind(group_id) is GroupKind.STREAMS:
            return self.streams.source_topics(group_id)
        return self.classic.subscribed_topics(group_id)

    def delete(self, group_id: str) -> None:
        """DeleteGroups: the group and its committed offsets; NON_EMPTY_GROUP while it has
        members, GROUP_ID_NOT_FOUND when there is none (``ClusterError`` or
        ``ClusterError``)."""
        if self.kind(group_id) is GroupKind.CONSUMER:
            self.consumer.delete(group_id)
        elif self.kind(group_id) is GroupKind.SHARE:
            self.share.delete(group_id)
        elif self.kind(group_id) is GroupKind.STREAMS:
            self.streams.delete(group_id)
        else:
            self.classic.delete(group_id)
        self.offsets.delete_group(group_id)

    def expire_member(self, group_id: str, member_id: str, now: float) -> None:
        """Remove a member now, as if its session had timed out (``ClusterError`` or
        ``ClusterError`` UNKNOWN_MEMBER_ID when the group has no such member)."""
        if self.kind(group_id) is GroupKind.CONSUMER:
            self.consumer.expire_member(group_id, member_id, now)
        elif self.kind(group_id) is GroupKind.SHARE:
            self.share.fence(group_id, member_id)
        elif self.kind(group_id) is GroupKind.STREAMS:
            self.streams.expire_member(group_id, member_id)
        else:
            self.classic.expire_member(group_id, member_id, now)

    # -- time -----------------------------------------------------------------------------

    def next_deadline(self) -> float:
        """When the earliest timeout of any group, or the next cleanup, is due (``inf``:
        none)."""
        return min(self.classic.next_deadline(), self.consumer.next_deadline(),
                   self.share.next_deadline(), self.streams.next_deadline(),
                   self._next_check)

    def expire(self, now: float) -> None:
        """Apply every timeout due at ``now``, of every kind, then the cleanup if one fell
        due."""
        self.classic.expire(now)
        self.consumer.expire(now)
        self.share.expire(now)
        self.streams.expire(now)
        if self._next_check == float("inf"):
            self._next_check = now + self._check_interval
        elif now >= self._next_check:
            self._next_check += self._check_interval * (
                1 + (now - self._next_check) // self._check_interval)
            self._delete_empty_groups()

    @property
    def _check_interval(self) -> float:
        return int(self.config("offsets.retention.check.interval.ms") or 600_000) / 1000

    def _delete_empty_groups(self) -> None:
        """Kafka's cleanupGroupMetadata: every empty group but a share group, with no
        committed offset and no pending transactional one, is deleted (DeleteGroups' rule:
        only an empty one goes)."""
        for group_id in list(self.ids()):
            if self.offsets.of_group(group_id) or self.open_transactions(group_id) or \
                    group_id in self.share.groups:
                continue
            try:
                self.delete(group_id)
            except ClusterError:  # not empty
                pass

    def watch_deadlines(self, callback: Callable[[float], None]) -> Callable[[], None]:
        """Call ``callback(deadline)`` with every deadline a coordinator sets (a timer wakes
        only for one earlier than it sleeps to); returns the function that stops it."""
        self._deadline_watchers.append(callback)
        return lambda: self._deadline_watchers.remove(callback)

    def _new_deadline(self, deadline: float) -> None:
        for watcher in self._deadline_watchers:
            watcher(deadline)
