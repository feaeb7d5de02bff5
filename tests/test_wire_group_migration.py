"""Online migration between classic and KIP-848 consumer groups on the wire, as Kafka 4.4 runs
it with group.consumer.migration.policy (bidirectional by default): a classic group upgraded
for a joining ConsumerGroupHeartbeat, classic members inside a consumer group, and the
downgrade when its last KIP-848 member leaves. The rules are in
fakebroker/state/mixed_groups.py; these tests run on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.state.views import assigned_partitions
from fakebroker.wire_client import WireClient
from tests.bodies import assignment, join_body
from tests.test_wire_consumer_groups import Member
from tests.test_wire_transactions import retried

pytestmark = pytest.mark.fake_kafka(brokers=1, topics={"orders": 2})
CLASSIC, CONSUMER = 0, 1  # ConsumerGroupDescribe's member types


class ClassicMember:
    """A classic consumer of ``orders`` (range assignor, eager: it owns nothing when it
    rejoins) speaking JoinGroup v9, SyncGroup v5, Heartbeat v4 to group ``group``."""

    def __init__(self, client: WireClient, group: str = "g", instance: str | None = None):
        self.client, self.group, self.instance = client, group, instance
        self.member_id, self.generation = "", -1

    def join(self):
        """JoinGroup, with the MEMBER_ID_REQUIRED round, retried while a fresh Kafka's
        coordinator loads (as a client retries); the answer."""
        def join_group():
            return retried(self.client, "JoinGroup", 9, join_body(
                self.member_id, self.instance, group=self.group))

        answer = join_group()
        if answer.error_code == ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = answer.member_id
            answer = join_group()
        assert answer.error_code == 0, answer
        self.member_id, self.generation = answer.member_id, answer.generation_id
        return answer

    def sync(self, *partitions_to_give: int):
        """SyncGroup (as the leader, giving itself ``partitions_to_give``); the answer."""
        return self.client.request("SyncGroup", 5, {
            "group_id": self.group, "generation_id": self.generation,
            "member_id": self.member_id, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": self.member_id,
                             "assignment": assignment("orders", *partitions_to_give)}]})

    def heartbeat(self) -> int:
        return self.client.request("Heartbeat", 4, {
            "group_id": self.group, "generation_id": self.generation,
            "member_id": self.member_id}).error_code

    def commit(self, offset: int, version: int = 8) -> int:
        return self.client.request("OffsetCommit", version, {
            "group_id": self.group, "generation_id_or_member_epoch": self.generation,
            "member_id": self.member_id, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": offset,
                 "committed_metadata": ""}]}]}).topics[0].partitions[0].error_code


def listed(client: WireClient, group: str = "g") -> tuple[str, str]:
    """ListGroups v5: (type, state) of ``group``."""
    return next((g.group_type, g.group_state)
                for g in client.request("ListGroups", 5, {}).groups if g.group_id == group)


def member_types(client: WireClient, group: str = "g") -> dict[str, int]:
    """ConsumerGroupDescribe v1: member id -> member type."""
    (described,) = client.request("ConsumerGroupDescribe", 1, {"group_ids": [group]}).groups
    assert described.error_code == 0, described
    return {m.member_id: m.member_type for m in described.members}


def decoded(assigned: bytes) -> list[int]:
    """The partitions of orders in a ConsumerProtocolAssignment."""
    return assigned_partitions(assigned).get("orders", [])


def upgraded_group(kafka, client: WireClient) -> tuple[ClassicMember, Member]:
    """A classic member owning both partitions at generation 1, then a KIP-848 member
    joining: the group is upgraded (the new member waits for a partition)."""
    classic = ClassicMember(client)
    assert classic.join().generation_id == 1
    assert classic.sync(0, 1).error_code == 0
    kip848 = Member(kafka, client)
    joined = kip848.join()
    assert (joined.member_epoch, kip848.assigned) == (2, {})
    return classic, kip848


def test_a_classic_group_is_upgraded_for_a_joining_kip848_member(kafka):
    """Kafka's convertToConsumerGroup: the classic member keeps its member id and, at its
    generation as its epoch, its partitions until it rejoins; the group epoch moves on, so
    its heartbeat says REBALANCE_IN_PROGRESS; its rejoin is answered at once (no leader, no
    members) at the new epoch, its sync brings its share, and the other share goes to the
    KIP-848 member."""
    with WireClient(kafka.bootstrap_servers) as client:
        classic, kip848 = upgraded_group(kafka, client)
        assert listed(client) == ("consumer", "Reconciling")
        assert member_types(client) == {classic.member_id: CLASSIC, kip848.member_id: CONSUMER}
        assert classic.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = classic.join()
        assert (rejoined.generation_id, rejoined.protocol_name, rejoined.leader,
                rejoined.members, rejoined.member_id) == (2, "range", "", [], classic.member_id)
        synced = classic.sync()
        assert (synced.error_code, synced.protocol_type, synced.protocol_name) == (
            0, "consumer", "range")
        kept = decoded(synced.assignment)
        assert len(kept) == 1 and classic.heartbeat() == 0
        kip848.heartbeat()
        assert kip848.assigned == {"orders": {1 - kept[0]}}
        assert listed(client) == ("consumer", "Stable")


def test_a_classic_member_joins_a_kip848_group_and_commits_at_its_epoch(kafka):
    """Kafka's classicGroupJoinToConsumerGroup: MEMBER_ID_REQUIRED first (JoinGroup v4+),
    then a member of the consumer group at once; it commits at its epoch with any
    OffsetCommit version, another generation is ILLEGAL_GENERATION; it leaves by LeaveGroup
    and the group stays a consumer group."""
    with WireClient(kafka.bootstrap_servers) as client:
        kip848 = Member(kafka, client)
        kip848.join()
        classic = ClassicMember(client)
        joined = classic.join()
        assert (joined.protocol_type, joined.protocol_name, joined.leader, joined.members) == (
            "consumer", "range", "", [])
        assert classic.sync().error_code == 0
        assert member_types(client) == {classic.member_id: CLASSIC, kip848.member_id: CONSUMER}
        assert classic.commit(5) == 0
        assert classic.commit(6, version=9) == 0
        classic.generation += 1
        assert classic.commit(7) == ErrorCode.ILLEGAL_GENERATION
        left = client.request("LeaveGroup", 5, {"group_id": "g", "members": [
            {"member_id": classic.member_id}, {"member_id": "stranger"}]})
        assert [m.error_code for m in left.members] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
        assert list(member_types(client)) == [kip848.member_id]
        assert kafka.committed("g", "orders", 0) == 6


@pytest.mark.parametrize("session_timeout_ms", [1, 5999, 1_800_001])
def test_a_join_to_a_kip848_group_has_its_session_timeout_checked_first(
        kafka, session_timeout_ms):
    """Kafka's GroupCoordinatorService.joinGroup checks the classic session timeout bounds
    before it looks the group up, whatever kind of group the id names."""
    with WireClient(kafka.bootstrap_servers) as client:
        Member(kafka, client).join()
        for version in (1, 9):
            answer = client.request("JoinGroup", version, dict(
                join_body("someone"), session_timeout_ms=session_timeout_ms))
            assert (answer.error_code, answer.member_id, answer.generation_id) == (
                ErrorCode.INVALID_SESSION_TIMEOUT, "someone", -1)
        assert list(member_types(client)) and listed(client) == ("consumer", "Stable")


def test_the_last_kip848_member_leaving_downgrades_the_group_and_its_offsets_stay(kafka):
    """Kafka's convertToClassicGroup: only classic members remain, so the group is a classic
    group again at the group epoch as its generation, rebalancing: the member rejoins at the
    next generation as its leader."""
    with WireClient(kafka.bootstrap_servers) as client:
        classic, kip848 = upgraded_group(kafka, client)
        classic.join()
        classic.sync()
        assert classic.commit(3) == 0
        left = kip848.leave()
        assert (left.member_epoch, listed(client)) == (-1, ("classic", "PreparingRebalance"))
        assert classic.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = classic.join()
        assert (rejoined.generation_id, rejoined.leader) == (3, classic.member_id)
        assert [m.member_id for m in rejoined.members] == [classic.member_id]
        assert classic.sync(0, 1).error_code == 0
        assert listed(client) == ("classic", "Stable")
    assert kafka.committed("g", "orders", 0) == 3


def test_a_heartbeat_that_is_not_a_join_never_upgrades(kafka):
    """Kafka's getOrMaybeCreateConsumerGroup: only a join converts a classic group."""
    with WireClient(kafka.bootstrap_servers) as client:
        ClassicMember(client).join()
        refused = Member(kafka, client).send(3)
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
        assert listed(client) == ("classic", "CompletingRebalance")


def test_a_kip848_member_replaces_a_classic_static_member_of_its_instance_id(kafka):
    """Kafka's getOrMaybeSubscribeStaticConsumerGroupMember: a static member of the classic
    protocol is replaced at once by a KIP-848 member joining with its instance id (two
    KIP-848 members would need the first to have left: UNRELEASED_INSTANCE_ID); the new
    member takes its partitions, the classic member is gone."""
    with WireClient(kafka.bootstrap_servers) as client:
        classic = ClassicMember(client, instance="i1")
        classic.join()
        assert classic.sync(0, 1).error_code == 0
        kip848 = Member(kafka, client, instance_id="i1")
        kip848.join()
        assert kip848.assigned == {"orders": {0, 1}}
        assert member_types(client) == {kip848.member_id: CONSUMER}
        assert classic.heartbeat() == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_refused_join_leaves_the_classic_group_as_it_was(kafka):
    """Kafka converts the group inside the heartbeat's write, so a join it refuses (here
    an unsupported assignor) discards the conversion: the group stays classic and Stable,
    its member in place."""
    with WireClient(kafka.bootstrap_servers) as client:
        classic = ClassicMember(client)
        classic.join()
        assert classic.sync(0, 1).error_code == 0
        refused = Member(kafka, client).send(
            0, rebalance_timeout_ms=30_000, topic_partitions=[],
            subscribed_topic_names=["orders"], server_assignor="nosuch")
        assert refused.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR, refused
        assert listed(client) == ("classic", "Stable")
        assert classic.heartbeat() == 0


def test_a_group_of_another_protocol_type_is_not_upgraded(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        connect = dict(join_body(), protocol_type="connect")
        assert client.request("JoinGroup", 3, connect).error_code == 0
        refused = Member(kafka, client).send(0, rebalance_timeout_ms=1000, topic_partitions=[],
                                             subscribed_topic_names=["orders"])
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Cannot upgrade classic group g to consumer group "
            "because the group does not use the consumer embedded protocol.")


POLICIES = {  # policy -> (upgrades, classic members may join, downgrades)
    "bidirectional": (True, True, True),
    "upgrade": (True, True, False),
    "downgrade": (False, True, True),
    "disabled": (False, False, False),
}


@pytest.mark.parametrize("policy", [
    pytest.param(policy, marks=pytest.mark.fake_kafka(
        brokers=1, topics={"orders": 2},
        overrides={"group.consumer.migration.policy": policy})) for policy in POLICIES])
def test_the_migration_policy_decides_which_conversions_run(kafka, policy):
    """``fakebroker serve --override group.consumer.migration.policy=...``: a KIP-848 join
    to a classic group with members upgrades it or is refused; a classic JoinGroup to a
    consumer group with members joins it unless migration is disabled
    (INCONSISTENT_GROUP_PROTOCOL); the last KIP-848 member leaving downgrades the group or
    leaves it a consumer group."""
    upgrades, joins, downgrades = POLICIES[policy]
    with WireClient(kafka.bootstrap_servers) as client:
        ClassicMember(client, "old").join()
        upgrade = Member(kafka, client, "old").send(
            0, rebalance_timeout_ms=1000, topic_partitions=[], subscribed_topic_names=["orders"])
        assert (upgrade.error_code, upgrade.error_message) == ((0, None) if upgrades else (
            ErrorCode.GROUP_ID_NOT_FOUND, "Cannot upgrade classic group old to consumer group "
            "because online upgrade is disabled."))
        kip848 = Member(kafka, client, "new")
        kip848.join()
        join = client.request("JoinGroup", 3, join_body(group="new"))
        assert join.error_code == (0 if joins else ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if joins:
            kip848.leave()
            assert listed(client, "new")[0] == ("classic" if downgrades else "consumer")


@pytest.mark.parametrize(("synced", "why"), [
    (assignment("orders", 0)[:-4] + b"\x00\x00\x00\x01u",
     "an unsupported custom assignor is in use. Please refer to the documentation or switch "
     "to a default assignor before re-attempting the upgrade"),
    (b"\x00\x00\x00", "the embedded consumer protocol is malformed"),
], ids=["custom assignor's user data", "malformed"])
def test_a_group_whose_assignment_an_upgrade_cannot_read_or_would_lose_stays_classic(
        kafka, synced, why):
    """Kafka's ConsumerGroup.fromClassicGroup: an assignment that does not parse, or one
    carrying user data (which the consumer protocol has no place for), refuses the upgrade."""
    with WireClient(kafka.bootstrap_servers) as client:
        classic = ClassicMember(client)
        classic.join()
        assert client.request("SyncGroup", 5, {
            "group_id": "g", "generation_id": classic.generation,
            "member_id": classic.member_id, "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [{"member_id": classic.member_id,
                             "assignment": synced}]}).error_code == 0
        refused = Member(kafka, client).send(0, rebalance_timeout_ms=1000, topic_partitions=[],
                                             subscribed_topic_names=["orders"])
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            f"Cannot upgrade classic group g to consumer group because {why}.")
        assert listed(client) == ("classic", "Stable")
