"""Groups of both kinds, classic and KIP-848: both coordinators take the clock and answer at
once or with a ``Pending``, one timer drives both, a group id is of one kind at a time (an
empty group gives way to the other protocol's), and one offset store keeps committed offsets by
group id, topic and partition, whatever protocol the group runs. The wire tests take the
``kafka`` fixture: they run on Apache Kafka 4.4 too (``--kafka=both``; CI's real step)."""

from __future__ import annotations

import struct

import pytest
import trio
import trio.testing

from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.state.consumer_groups import Heartbeat
from fakebroker.state.groups import GroupKind, Groups
from fakebroker.state.mixed_groups import ClassicJoin
from fakebroker.state.pending import Pending
from fakebroker.timers import run_timers
from fakebroker.wire_client import WireClient
from tests.bodies import subscription

pytestmark = pytest.mark.fake_kafka(brokers=1, topics={"orders": 2})


PROTOCOLS = [("range", b"meta")]


def join(groups: Groups, member_id: str, now: float, session_ms: int = 10_000):
    """A classic JoinGroup to group g (v3-style: no MEMBER_ID_REQUIRED round)."""
    return groups.classic.join("g", member_id, None, "c", "/h", session_ms, 30_000, "consumer",
                               PROTOCOLS, require_known_member_id=False, now=now)


def test_a_pending_answer_is_settled_once_and_calls_back_in_order():
    pending: Pending[int] = Pending()
    called: list[str] = []
    pending.on_settled(lambda: called.append("first"))
    pending.on_settled(lambda: called.append("second"))
    pending.resolve(7)
    pending.on_settled(lambda: called.append("late"))
    assert (pending.result(), called) == (7, ["first", "second", "late"])
    with pytest.raises(RuntimeError):
        pending.fail(ValueError())


def test_a_join_at_the_barrier_waits_as_a_pending_answer_until_the_rebalance_timeout():
    """No trio here: the coordinator is told the time, and answers the waiting join when the
    rebalance timeout (30 s) has passed without the other member rejoining."""
    groups = Groups()
    first = join(groups, "", now=0.0)
    assert first["generation_id"] == 1  # alone: the barrier closes at once
    assert groups.classic.sync("g", 1, first["member_id"], None, None, None, {}, 0.0) == b""
    second = join(groups, "", now=1.0)
    assert isinstance(second, Pending) and not second.settled
    for now in (9.0, 18.0, 27.0):  # the first member heartbeats (its session stays alive)
        with pytest.raises(ClusterError, match="REBALANCE_IN_PROGRESS"):
            groups.classic.heartbeat("g", 1, first["member_id"], None, now)
    assert groups.next_deadline() == 31.0
    groups.expire(30.999)
    assert not second.settled
    groups.expire(31.0)
    answer = second.result()
    assert (answer["generation_id"], [m["member_id"] for m in answer["members"]]) == (
        2, [answer["member_id"]])
    assert first["member_id"] not in groups.classic_group("g").members


def test_a_follower_sync_waits_for_the_leader_or_fails_when_a_rebalance_starts():
    groups = Groups()
    leader = join(groups, "", now=0.0)["member_id"]
    follower_join = join(groups, "", now=0.0)
    leader_join = join(groups, leader, now=0.0)  # the leader rejoins: generation 2
    follower = follower_join.result()["member_id"]
    assert leader_join["generation_id"] == 2
    waiting = groups.classic.sync("g", 2, follower, None, None, None, {}, 0.0)
    assert isinstance(waiting, Pending) and not waiting.settled
    groups.classic.sync("g", 2, leader, None, None, None, {follower: b"f"}, 0.0)
    assert waiting.result() == b"f"
    groups.classic.force_rebalance("g", 1.0)
    join(groups, follower, now=1.0)
    assert join(groups, leader, now=1.0)["generation_id"] == 3
    waiting = groups.classic.sync("g", 3, follower, None, None, None, {}, 1.0)
    assert isinstance(waiting, Pending) and not waiting.settled
    groups.classic.force_rebalance("g", 2.0)  # before the leader's SyncGroup
    with pytest.raises(ClusterError, match="REBALANCE_IN_PROGRESS"):
        waiting.result()


def test_one_timer_expires_classic_and_kip848_members_on_trios_clock():
    """``run_timers`` drives both coordinators, and each tells it of its new deadlines:
    a KIP-848 member's 45 s session, then a classic member's 10 s one, end on time under
    MockClock, without real sleeping (the timer sleeps for good in between)."""
    async def main():
        groups = Groups()
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            await trio.sleep_until(start + 1)
            groups.consumer.heartbeat(Heartbeat(
                "k", "m1", 0, rebalance_timeout_ms=300_000, subscribed_topic_names=["orders"],
                owned={}), trio.current_time())  # its session ends at 46
            await trio.sleep_until(start + 45.999)
            assert "m1" in groups.consumer_group("k").members
            await trio.sleep_until(start + 46.001)
            assert "m1" not in groups.consumer_group("k").members
            await trio.sleep_until(start + 50)
            classic = join(groups, "", now=trio.current_time())["member_id"]  # ends at 60
            await trio.sleep_until(start + 59.999)
            assert classic in groups.classic_group("g").members
            await trio.sleep_until(start + 60.001)
            assert classic not in groups.classic_group("g").members
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def mixed_group(now: float = 0.0) -> tuple[Groups, str]:
    """A consumer group g of KIP-848 member m1 (silent from ``now``: its 45 s session runs)
    and a classic member (10 s session, 30 s rebalance timeout) that joined; its member id."""
    groups = Groups()
    groups.consumer.partitions_of = lambda: {"orders": 2}
    groups.consumer.heartbeat(Heartbeat("g", "m1", 0, rebalance_timeout_ms=30_000,
                                        subscribed_topic_names=["orders"], owned={}), now)
    joined = groups.join("g", ClassicJoin("", None, "c", "/h", 10_000, 30_000, "consumer",
                                          [("range", subscription("orders"))], False), now)
    assert not isinstance(joined, Pending)
    return groups, joined["member_id"]


def test_a_classic_member_of_a_consumer_group_that_never_syncs_is_removed():
    """Kafka's sync timeout: a classic member must sync within its rebalance timeout after
    its join, heartbeats or not."""
    groups, member = mixed_group()
    for now in (9.0, 18.0, 27.0):
        groups.heartbeat("g", groups.consumer_group("g").members[member].epoch, member, None,
                         now)
    groups.expire(29.999)
    assert member in groups.consumer_group("g").members
    groups.expire(30.0)
    assert list(groups.consumer_group("g").members) == ["m1"]


def test_a_classic_member_keeps_its_own_session_and_outlives_the_last_kip848_member():
    """A classic member's session is its own (10 s, not the group's 45 s); when the silent
    KIP-848 member's session ends, only the classic member remains: the group is downgraded
    to a classic group, which rebalances."""
    groups, member = mixed_group()
    epoch = groups.consumer_group("g").members[member].epoch
    assert groups.sync("g", epoch, member, None, "consumer", "range", {}, 1.0)
    for now in (10.0, 20.0, 30.0, 40.0):
        groups.heartbeat("g", epoch, member, None, now)
    group_epoch = groups.consumer_group("g").group_epoch
    groups.expire(45.0)
    assert groups.kind("g") is GroupKind.CLASSIC
    group = groups.classic_group("g")
    assert (group.state.value, group.generation_id, list(group.members)) == (
        "PreparingRebalance", group_epoch, [member])
    groups.expire(54.999)
    assert list(group.members) == [member]
    groups.expire(55.0)  # its session, restarted by the downgrade, runs out in turn
    assert (group.state.value, list(group.members)) == ("Empty", [])


def classic_join(client: WireClient, group: str):
    """A classic member joins ``group`` alone (JoinGroup v3: no MEMBER_ID_REQUIRED round)."""
    metadata = struct.pack(">hih", 0, 1, 6) + b"orders" + struct.pack(">i", -1)
    return client.request("JoinGroup", 3, {
        "group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000,
        "member_id": "", "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": metadata}]})


def listed(client: WireClient) -> list[tuple[str, str, str]]:
    """ListGroups v5: (group id, type, state) of every group."""
    return [(g.group_id, g.group_type, g.group_state)
            for g in client.request("ListGroups", 5, {}).groups]


def consumer_join(client: WireClient, group: str, member_id: str = "m1") -> int:
    """A KIP-848 member joins ``group`` subscribed to orders; returns its epoch."""
    joined = client.request("ConsumerGroupHeartbeat", 1, {
        "group_id": group, "member_id": member_id, "member_epoch": 0,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["orders"],
        "topic_partitions": []})
    assert joined.error_code == 0
    return joined.member_epoch


def commit(client: WireClient, group: str, offset: int, epoch: int = -1, member_id: str = ""
           ) -> int:
    answer = client.request("OffsetCommit", 9, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member_id,
        "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_metadata": "m"}]}]})
    return answer.topics[0].partitions[0].error_code


def fetch(client: WireClient, group: str) -> list[tuple[str, int, int, str]]:
    """Every committed offset of ``group``: (topic, partition, offset, metadata)."""
    answer = client.request("OffsetFetch", 8, {"groups": [{"group_id": group, "topics": None}]})
    return [(t.name, p.partition_index, p.committed_offset, p.metadata)
            for t in answer.groups[0].topics for p in t.partitions]


def test_a_kip848_group_that_never_committed_has_offsets_to_delete(kafka):
    """OffsetDelete asks the group, not a record of its offsets: a consumer group with no
    offset yet answers per partition (Kafka: GROUP_SUBSCRIBED_TO_TOPIC for its topics)."""
    kafka.create_topic("audit")
    with WireClient(kafka.bootstrap_servers) as client:
        consumer_join(client, "g848")
        answer = client.request("OffsetDelete", 0, {"group_id": "g848", "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0}]},
            {"name": "audit", "partitions": [{"partition_index": 0}]}]})
    assert answer.error_code == 0
    assert [t.partitions[0].error_code for t in answer.topics] == [
        ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, 0]


def test_a_kip848_members_commits_are_fetched_and_go_with_the_group(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        epoch = consumer_join(client, "g848")
        assert commit(client, "g848", 5, epoch, "m1") == 0
        assert fetch(client, "g848") == [("orders", 0, 5, "m")]
        assert kafka.committed("g848", "orders", 0) == 5
        client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": -1})
        assert client.request("DeleteGroups", 2, {"groups_names": ["g848"]}).results[
            0].error_code == 0
        assert fetch(client, "g848") == []
    assert kafka.committed("g848", "orders", 0) is None


def test_an_empty_classic_group_gives_way_to_a_kip848_group_and_its_offsets_stay(kafka):
    """As Kafka 4.4 answers (maybeDeleteEmptyClassicGroup): a commit from outside any group
    makes an Empty classic group; a KIP-848 member joining replaces it."""
    with WireClient(kafka.bootstrap_servers) as client:
        assert commit(client, "g", 3) == 0
        assert listed(client) == [("g", "classic", "Empty")]
        consumer_join(client, "g")
        assert listed(client) == [("g", "consumer", "Stable")]
        assert fetch(client, "g") == [("orders", 0, 3, "m")]
    assert kafka.group("g").protocol_type == "consumer"


def test_an_empty_kip848_group_gives_way_to_a_classic_group_and_its_offsets_stay(kafka):
    """As Kafka 4.4 answers (maybeDeleteEmptyConsumerGroup)."""
    with WireClient(kafka.bootstrap_servers) as client:
        epoch = consumer_join(client, "g")
        assert commit(client, "g", 4, epoch, "m1") == 0
        client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g", "member_id": "m1", "member_epoch": -1})
        assert listed(client) == [("g", "consumer", "Empty")]
        joined = classic_join(client, "g")
        assert (joined.error_code, joined.generation_id) == (0, 1)
        assert listed(client) == [("g", "classic", "CompletingRebalance")]
        assert fetch(client, "g") == [("orders", 0, 4, "m")]


def test_offset_fetch_checks_the_member_of_a_kip848_group_only(kafka):
    """OffsetFetch v9+ names the member: a consumer group checks it (Kafka's
    ConsumerGroup.validateOffsetFetch); a classic group, or no group, does not (Kafka's
    ClassicGroup.validateOffsetFetch)."""
    def fetch_as(client: WireClient, group: str, member_id: str, epoch: int) -> int:
        return client.request("OffsetFetch", 9, {"groups": [{
            "group_id": group, "member_id": member_id, "member_epoch": epoch,
            "topics": None}]}).groups[0].error_code

    with WireClient(kafka.bootstrap_servers) as client:
        epoch = consumer_join(client, "kip848")
        assert fetch_as(client, "kip848", "m1", epoch) == 0
        assert fetch_as(client, "kip848", "m1", epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
        assert fetch_as(client, "kip848", "stranger", epoch) == ErrorCode.UNKNOWN_MEMBER_ID
        member = classic_join(client, "classic")
        assert fetch_as(client, "classic", member.member_id, member.generation_id) == 0
        assert fetch_as(client, "classic", "stranger", 7) == 0
        assert fetch_as(client, "nobody", "stranger", 7) == 0
