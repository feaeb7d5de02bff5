"""Snapshots of groups as tests see them (``GroupView``), and the consumer protocol's
subscription and assignment bytes decoded for them.

Views are frozen copies: later changes to the group do not show in a view already taken.
Subscription and assignment bytes both start with an int16 version followed by the
ConsumerProtocolSubscription / ConsumerProtocolAssignment data message at that version (newer
versions than the schema knows are read as the newest, which readers must tolerate by Kafka's
rules); bytes that do not parse read as no topics / no partitions.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fakebroker.protocol.codec import DecodeError, data_codec
from fakebroker.protocol.specs import data_spec, parse_range


def _decode(name: str, data: bytes):
    if len(data) < 2:
        return None
    version = struct.unpack_from(">h", data)[0]
    newest = max(parse_range(data_spec(name)["versions"]))
    try:
        return data_codec(name, min(max(version, 0), newest)).parse(data[2:])
    except (DecodeError, struct.error, KeyError):
        return None


def subscribed_topics(metadata: bytes) -> list[str]:
    """Topics of a consumer-protocol subscription ([] if it does not parse)."""
    parsed = _decode("ConsumerProtocolSubscription", metadata)
    return list(parsed.topics) if parsed is not None else []


def assigned_partitions(assignment: bytes) -> dict[str, list[int]]:
    """Topic -> partitions of a consumer-protocol assignment ({} if it does not parse)."""
    parsed = _decode("ConsumerProtocolAssignment", assignment)
    if parsed is None:
        return {}
    return {t.topic: sorted(t.partitions) for t in parsed.assigned_partitions}


Tasks = dict[str, list[int]]  # subtopology id -> partitions (task ids), sorted


@dataclass(frozen=True, slots=True)
class MemberView:
    """One group member as a test sees it."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    # decoded when the group uses the consumer protocol; a streams member's active tasks by
    # subtopology id
    assignment: dict[str, list[int]]
    subscribed_regex: str | None = None  # a KIP-848 member's subscription regex
    member_epoch: int | None = None  # a KIP-848 or streams member's; None in a classic group
    # a streams member's: its Kafka Streams process, its standby and warm-up tasks
    process_id: str | None = None
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)


def sorted_tasks(tasks: Mapping[str, Iterable[int]]) -> Tasks:
    """Tasks (subtopology id -> task ids, any iterables) as a view holds them: sorted, no
    subtopology without tasks."""
    return {s: sorted(ps) for s, ps in sorted(tasks.items()) if ps}


@dataclass(frozen=True, slots=True)
class GroupView:
    """A snapshot of a classic group: ``kafka.group(name)``."""

    group_id: str
    state: str  # Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberView, ...]


def consumer_group_view(group) -> GroupView:
    """Snapshot of a KIP-848 ``ConsumerGroup``: generation is the group epoch, the protocol
    name the server assignor, states as Kafka names them (Empty, Assigning, Reconciling,
    Stable)."""
    members = tuple(
        MemberView(m.member_id, m.instance_id, m.client_id, m.client_host,
                   {t: sorted(ps) for t, ps in m.assigned.items()}, m.regex, m.epoch)
        for m in group.members.values()
    )
    return GroupView(group.group_id, group.state, group.group_epoch, "consumer",
                     group.assignor, None, members)


def streams_group_view(group) -> GroupView:
    """Snapshot of a KIP-1071 ``StreamsGroup``: generation is the group epoch, protocol type
    "streams", the protocol name the assignor ("sticky"), states as Kafka names them (Empty,
    NotReady, Assigning, Reconciling, Stable); each member's assignment is the active tasks
    it owns by subtopology id, beside its standby and warm-up tasks, its member epoch and its
    process id (what StreamsGroupDescribe reports as the member's current assignment)."""
    members = tuple(
        MemberView(m.member_id, m.instance_id, m.client_id, m.client_host,
                   sorted_tasks(m.active), member_epoch=m.epoch, process_id=m.process_id,
                   standby=sorted_tasks(m.standby), warmup=sorted_tasks(m.warmup))
        for m in group.members.values()
    )
    return GroupView(group.group_id, group.state, group.group_epoch, "streams", "sticky", None,
                     members)


def group_view(group) -> GroupView:
    """Snapshot of a ``fakebroker.state.classic_groups.ClassicGroup``."""
    consumer = group.protocol_type == "consumer"
    members = tuple(
        MemberView(m.member_id, m.instance_id, m.client_id, m.client_host,
                   assigned_partitions(m.assignment) if consumer else {})
        for m in group.members.values()
    )
    return GroupView(group.group_id, group.state.value, group.generation_id,
                     group.protocol_type, group.protocol_name, group.leader_id, members)


class PartitionOffsets(tuple):
    """``kafka.offsets(topic, partition)``: (log start offset, high watermark) as a pair,
    which it compares and unpacks as, with the last stable offset beside it
    (``.last_stable_offset``: where read_committed readers stop)."""

    last_stable_offset: int

    def __new__(cls, log_start_offset: int, high_watermark: int, last_stable_offset: int
                ) -> PartitionOffsets:
        pair = super().__new__(cls, (log_start_offset, high_watermark))
        pair.last_stable_offset = last_stable_offset
        return pair

    @property
    def log_start_offset(self) -> int:
        return self[0]

    @property
    def high_watermark(self) -> int:
        return self[1]

    def __repr__(self) -> str:
        return (f"PartitionOffsets(log_start_offset={self[0]}, high_watermark={self[1]}, "
                f"last_stable_offset={self.last_stable_offset})")


@dataclass(frozen=True, slots=True)
class TransactionView:
    """A snapshot of a transactional id: ``kafka.transactions()[transactional_id]``."""

    transactional_id: str
    state: str  # Empty, Ongoing, CompleteCommit, CompleteAbort (Kafka's names)
    producer_id: int
    producer_epoch: int
    partitions: tuple[tuple[str, int], ...]  # of the ongoing transaction (none once ended)
    groups: tuple[str, ...]  # whose offsets it carries
    start_time_ms: int  # wall clock; -1 when no transaction began
    timeout_ms: int


def transaction_view(txn) -> TransactionView:
    """Snapshot of a ``fakebroker.state.transactions.Transaction``."""
    return TransactionView(txn.transactional_id, txn.state.value, txn.producer_id,
                           txn.producer_epoch, tuple(sorted(txn.partitions)),
                           tuple(sorted(txn.groups)), txn.start_time_ms, txn.timeout_ms)


@dataclass(frozen=True, slots=True)
class InFlightRecord:
    """One delivered record of a share-partition: ``kafka.share_group(name)``."""

    offset: int
    state: str  # Available, Acquired, Acknowledged, Archived
    delivery_count: int
    member_id: str | None  # the member holding it (Acquired)


@dataclass(frozen=True, slots=True)
class ShareMemberView:
    member_id: str
    client_id: str
    client_host: str
    member_epoch: int
    subscribed: tuple[str, ...]
    assignment: dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class ShareGroupView:
    """A snapshot of a share group (KIP-932): members and their assignments, and per
    (topic, partition) the start offset and the in-flight records."""

    group_id: str
    state: str  # Empty, Stable
    group_epoch: int
    members: tuple[ShareMemberView, ...]
    start_offsets: dict[tuple[str, int], int]  # -1: not set yet
    in_flight: dict[tuple[str, int], tuple[InFlightRecord, ...]]


def share_group_view(group) -> ShareGroupView:
    """Snapshot of a ``fakebroker.state.share_groups.ShareGroup``."""
    members = tuple(
        ShareMemberView(m.member_id, m.client_id, m.client_host, m.epoch, tuple(m.subscribed),
                        {t: sorted(ps) for t, ps in sorted(m.assigned.items())})
        for m in group.members.values())
    partitions = sorted(group.partitions.items())
    return ShareGroupView(
        group.group_id, group.state, group.group_epoch, members,
        {key: p.start_offset for key, p in partitions},
        {key: tuple(InFlightRecord(offset, r.state.name.capitalize(), r.delivery_count,
                                   r.member_id) for offset, r in p.in_flight())
         for key, p in partitions})
