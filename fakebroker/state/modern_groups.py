"""What the groups of Kafka's modern protocols (KIP-848 consumer, share and streams groups,
whose members carry epochs and are assigned by the broker) share: assignments as sets by key
(partitions by topic name, or tasks by subtopology id), the request checks their heartbeats
have in common, and the refusals all three coordinators answer with the same words.

Guarantees: the set operations never return empty entries and never share sets with their
arguments; ``throw_if_empty``, ``fenced`` and ``unknown_member`` carry Kafka's messages
(GroupCoordinatorService's throwIfEmptyString, GroupMetadataManager's
throwIf...MemberEpochIsInvalid and getOrMaybeCreate...Member), naming the group's kind.
"""

from __future__ import annotations

from typing import Any

from fakebroker.protocol.errors import ClusterError

Assignment = dict[str, set[int]]  # topic name (or subtopology id) -> partitions


def minus(a: Assignment, b: Assignment) -> Assignment:
    out = {t: ps - b.get(t, set()) for t, ps in a.items()}
    return {t: ps for t, ps in out.items() if ps}


def union(a: Assignment, b: Assignment) -> Assignment:
    out = {t: set(ps) for t, ps in a.items()}
    for t, ps in b.items():
        out.setdefault(t, set()).update(ps)
    return {t: ps for t, ps in out.items() if ps}


def within(a: Assignment, partitions_of: dict[str, int]) -> Assignment:
    """``a`` without the partitions of deleted topics (or tasks of a smaller subtopology)."""
    out = {t: {p for p in ps if p < partitions_of.get(t, 0)} for t, ps in a.items()}
    return {t: ps for t, ps in out.items() if ps}


def subset(owned: Assignment | None, assigned: Assignment) -> bool:
    return owned is not None and all(ps <= assigned.get(t, set()) for t, ps in owned.items())


# What Java's String.trim() strips: every character up to U+0020 (control characters, NUL
# too), and nothing above it (not U+00A0 nor U+2003, which Python's str.strip() takes).
JAVA_TRIMMED = "".join(map(chr, range(0x21)))


def throw_if_empty(value: str | None, field: str) -> None:
    """INVALID_REQUEST "<field> can't be empty." for a field sent blank (not sent passes), as
    Kafka's throwIfEmptyString: blank as Java's ``trim()`` makes it."""
    if value is not None and not value.strip(JAVA_TRIMMED):
        raise ClusterError("INVALID_REQUEST", f"{field} can't be empty.")


def throw_if_join_without_rebalance_timeout(rebalance_timeout_ms: int) -> None:
    """A join (epoch 0) must carry the member's rebalance timeout."""
    if rebalance_timeout_ms == -1:
        raise ClusterError("INVALID_REQUEST",
                           "RebalanceTimeoutMs must be provided in first request.")


def throw_if_static_leave_without_instance(instance_id: str | None) -> None:
    """A temporary leave (epoch -2) is a static member's: it must name its instance."""
    if instance_id is None:
        raise ClusterError("INVALID_REQUEST", "InstanceId can't be null.")


def fenced(kind: str, sent: int, known: int) -> ClusterError:
    """FENCED_MEMBER_EPOCH for a heartbeat at epoch ``sent`` from a member of a ``kind``
    ("consumer", "share", "streams") group whose epoch is ``known``."""
    than = "greater" if sent > known else "smaller"
    return ClusterError(
        "FENCED_MEMBER_EPOCH",
        f"The {kind} group member has a {than} member epoch ({sent}) than the one known by "
        f"the group coordinator ({known}). The member must abandon all its partitions and "
        "rejoin.")


def unknown_member(member_id: str, group_id: str) -> ClusterError:
    return ClusterError("UNKNOWN_MEMBER_ID",
                        f"Member {member_id} is not a member of group {group_id}.")


class EpochCommitChecks:
    """The offset checks of a group whose members carry epochs (KIP-848 consumer and streams
    groups: Kafka's ConsumerGroup and StreamsGroup validateOffsetCommit/validateOffsetFetch
    ask the same), for a coordinator with ``groups`` (id -> group with ``members``) and
    ``member(group_id, member_id)``."""

    groups: dict[str, Any]

    def member(self, group_id: str, member_id: str) -> Any:
        raise NotImplementedError

    def validate_commit(self, group_id: str, member_id: str, member_epoch: int) -> None:
        """OffsetCommit/OffsetFetch checks of a member: UNKNOWN_MEMBER_ID for a member the
        group does not have, STALE_MEMBER_EPOCH for another epoch than its own."""
        member = self.member(group_id, member_id)
        if member is None:
            raise ClusterError("UNKNOWN_MEMBER_ID")
        if member_epoch != member.epoch:
            raise ClusterError("STALE_MEMBER_EPOCH")

    def validate_offset_commit(self, group_id: str, member_id: str, member_epoch: int,
                               version: int | None = None) -> None:
        """An OffsetCommit (at ``version``; None: a TxnOffsetCommit) to the group
        ``group_id``, as Kafka's validateOffsetCommit: a negative epoch (an admin client, a
        consumer that assigns itself partitions) may commit while the group has no member,
        whatever its member id; otherwise the commit is a member's (see
        ``validate_commit``), so one without a member id gets UNKNOWN_MEMBER_ID, and a known
        member's OffsetCommit below v9 (which cannot carry a member epoch) is
        UNSUPPORTED_VERSION."""
        group = self.groups.get(group_id)
        if group is not None and member_epoch < 0 and not group.members:
            return
        if version is not None and version < 9 and self.member(group_id, member_id):
            raise ClusterError("UNSUPPORTED_VERSION", "OffsetCommit version 9 or above must "
                               "be used by members using the modern group protocol")
        self.validate_commit(group_id, member_id, member_epoch)
