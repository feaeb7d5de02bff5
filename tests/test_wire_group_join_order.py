"""The order in which a classic group's coordinator checks a JoinGroup, and the pending sync:
Kafka's GroupMetadataManager checks the group's protocols (ClassicGroup.supportsProtocols, by
the group's state) before the member id and instance id (ClassicGroup.validateMember), and
removes the members that have not sent SyncGroup within the group's rebalance timeout after
the join barrier closed (expirePendingSync); a LeaveGroup does not complete a new group's
first rebalance (maybeCompleteJoinPhase). They run on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import threading
import time

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.bodies import join_body, subscription
from tests.test_wire_groups import coordinator

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})


def heartbeat(client: WireClient, joined, group: str = "g") -> int:
    return client.request("Heartbeat", 4, {
        "group_id": group, "generation_id": joined.generation_id,
        "member_id": joined.member_id}).error_code


def sync(client: WireClient, joined, group: str = "g") -> int:
    return client.request("SyncGroup", 5, {
        "group_id": group, "generation_id": joined.generation_id,
        "member_id": joined.member_id, "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": joined.member_id, "assignment": b""}]}).error_code


def emptied_group(client: WireClient) -> None:
    """Group ``g`` exists, Empty: its one member joined (v3: no MEMBER_ID_REQUIRED) and left."""
    joined = client.request("JoinGroup", 3, join_body())
    assert joined.error_code == 0
    left = client.request("LeaveGroup", 0, {"group_id": "g", "member_id": joined.member_id})
    assert left.error_code == 0


def test_an_empty_protocol_type_is_refused_before_the_member_id(kafka):
    with WireClient(coordinator(kafka)) as client:
        emptied_group(client)
        nameless = client.request("JoinGroup", 9, dict(join_body("gone"), protocol_type=""))
        named = client.request("JoinGroup", 9, join_body("gone"))
        new = client.request("JoinGroup", 5, dict(join_body(), protocol_type=""))
        # A member id for a group that does not exist is refused before any protocol check.
        nowhere = client.request("JoinGroup", 9, dict(join_body("gone", group="none"),
                                                      protocol_type=""))
    assert nameless.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert named.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert new.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL  # not MEMBER_ID_REQUIRED
    assert nowhere.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_new_group_refuses_an_empty_protocol_type(kafka):
    with WireClient(coordinator(kafka)) as client:
        nameless = client.request("JoinGroup", 5, dict(join_body(), protocol_type=""))
        named = client.request("JoinGroup", 5, join_body())
    assert nameless.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert named.error_code == ErrorCode.MEMBER_ID_REQUIRED


def test_an_instance_id_the_group_does_not_know_makes_a_member_unknown(kafka):
    with WireClient(coordinator(kafka)) as client:
        joined = client.request("JoinGroup", 3, join_body())
        assert joined.error_code == 0 and sync(client, joined) == 0
        named = client.request("JoinGroup", 5, join_body(joined.member_id, instance="pod-9"))
        assert named.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        assert heartbeat(client, joined) == 0  # still a member


def test_a_member_that_does_not_sync_within_the_rebalance_timeout_leaves(kafka):
    # Sessions of 30 s: a member gone within 5 s left for its rebalance timeout of 300 ms.
    timeouts = {"session_timeout_ms": 30_000, "rebalance_timeout_ms": 300}
    with WireClient(coordinator(kafka)) as client:
        synced = client.request("JoinGroup", 3, dict(join_body(group="synced"), **timeouts))
        assert synced.error_code == 0 and sync(client, synced, "synced") == 0
        silent = client.request("JoinGroup", 3, dict(join_body(), **timeouts))
        assert silent.error_code == 0
        eventually(lambda: heartbeat(client, silent) == ErrorCode.UNKNOWN_MEMBER_ID,
                   "the member that did not sync to leave", timeout=5)
        assert heartbeat(client, synced, "synced") == 0
        # The group is Empty again: a member of another protocol type may join it.
        other = client.request("JoinGroup", 3, dict(join_body(), protocol_type="connect"))
        assert other.error_code == 0


def test_a_negative_rebalance_timeout_counts_as_none(kafka):
    with WireClient(coordinator(kafka)) as client:
        joined = client.request("JoinGroup", 3, dict(join_body(), session_timeout_ms=30_000,
                                                     rebalance_timeout_ms=-1))
        assert joined.error_code == 0
        eventually(lambda: heartbeat(client, joined) == ErrorCode.UNKNOWN_MEMBER_ID,
                   "the member that did not sync to leave at once", timeout=5)
        assert sync(client, joined) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_static_member_replaced_before_it_synced_still_rebalances_the_group(kafka):
    """Kafka's replaceStaticMember leaves the old member id among the members yet to sync,
    so once the rebalance timeout passes the group rebalances for it."""
    timeouts = {"session_timeout_ms": 30_000, "rebalance_timeout_ms": 1000}
    answers = {}
    with WireClient(coordinator(kafka)) as leader_client, \
            WireClient(coordinator(kafka)) as follower_client:
        leader = leader_client.request("JoinGroup", 5, dict(join_body(instance="pod-a"),
                                                            **timeouts))
        assert leader.error_code == 0 and sync(leader_client, leader) == 0
        follower = threading.Thread(target=lambda: answers.update(b=follower_client.request(
            "JoinGroup", 5, dict(join_body(instance="pod-b"), **timeouts))))
        follower.start()
        eventually(lambda: heartbeat(leader_client, leader) == ErrorCode.REBALANCE_IN_PROGRESS,
                   "the follower's join to begin a rebalance", timeout=5)
        leader = leader_client.request("JoinGroup", 5, dict(
            join_body(leader.member_id, instance="pod-a"), **timeouts))
        follower.join(timeout=10)
        assert leader.error_code == answers["b"].error_code == 0
        assert sync(leader_client, leader) == 0  # Stable; pod-b has not synced
        restarted = leader_client.request("JoinGroup", 5, dict(join_body(instance="pod-b"),
                                                               **timeouts))
        assert restarted.error_code == 0 and restarted.generation_id == leader.generation_id
        assert heartbeat(leader_client, leader) == 0
        eventually(lambda: heartbeat(leader_client, leader) == ErrorCode.REBALANCE_IN_PROGRESS,
                   "the group to rebalance for the old member id", timeout=5)


# A broker of its own (an override set no other test uses): the group this test leaves cannot
# be deleted on Kafka, whose group stays PreparingRebalance once its member left (DeleteGroups:
# NON_EMPTY_GROUP; measured), so the reset before the next test on its broker would fail.
@pytest.mark.fake_kafka(topics={"orders": 1}, overrides={"group.initial.rebalance.delay.ms": 0})
def test_a_protocol_listed_twice_holds_the_join_barrier_shut(kafka):
    """Kafka counts a protocol each time a member lists it (ClassicGroup.supportedProtocols):
    a member listing "range" twice makes it listed twice for one member, so the group has no
    protocol every member supports once. Its rebalance cannot choose one (the completion
    fails and is rolled back): the member's JoinGroup waits (for the 5 minutes of Kafka's new
    member join timeout), the group stays PreparingRebalance, and any other member is refused."""
    twice = [{"name": "range", "metadata": subscription("orders")}] * 2
    with WireClient(coordinator(kafka)) as stuck, WireClient(coordinator(kafka)) as client:
        stuck.send("JoinGroup", 3, join_body(protocols=twice, group="twice"))

        def state() -> tuple[str, int]:
            (group,) = client.request("DescribeGroups", 5, {"groups": ["twice"]}).groups
            return group.group_state, len(group.members)

        eventually(lambda: state() == ("PreparingRebalance", 1),
                   "the member listing range twice to join", timeout=5)
        time.sleep(0.5)  # time for a barrier of a new group (no initial delay) to close
        assert state() == ("PreparingRebalance", 1)
        other = client.request("JoinGroup", 3, join_body(group="twice"))
        assert other.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        stuck.sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            stuck.receive_frame()  # the JoinGroup is still unanswered



def described(client: WireClient, group: str) -> tuple[str, list[str]]:
    """The group's state and member ids, as DescribeGroups answers."""
    (found,) = client.request("DescribeGroups", 5, {"groups": [group]}).groups
    return found.group_state, [m.member_id for m in found.members]


def delete(client: WireClient, group: str) -> int:
    (result,) = client.request("DeleteGroups", 2, {"groups_names": [group]}).results
    return result.error_code


# A broker of its own too (the overrides above and one setting at its default: a set no other
# test uses): the group this test leaves behind cannot be deleted on Kafka either.
@pytest.mark.fake_kafka(topics={"orders": 1}, overrides={
    "group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 6000})
def test_a_leave_does_not_end_a_new_groups_first_rebalance(kafka):
    """A LeaveGroup completes a rebalance only if the group was not Empty when it began
    (Kafka's maybeCompleteJoinPhase); a new group's first one ends by its timer, once. So when
    that timer could not end it (a protocol listed twice holds the barrier shut) and the only
    member leaves, the group stays PreparingRebalance with no members, past the rebalance
    timeout: DeleteGroups answers NON_EMPTY_GROUP, and a new member of its protocol type joins
    and waits at the barrier."""
    twice = [{"name": "range", "metadata": subscription("orders")}] * 2
    roundrobin = [{"name": "roundrobin", "metadata": subscription("orders")}]
    timeouts = {"session_timeout_ms": 30_000, "rebalance_timeout_ms": 300}
    with WireClient(coordinator(kafka)) as stuck, WireClient(coordinator(kafka)) as client, \
            WireClient(coordinator(kafka)) as newcomer:
        stuck.send("JoinGroup", 3, dict(join_body(protocols=twice, group="left"), **timeouts))
        eventually(lambda: len(described(client, "left")[1]) == 1,
                   "the member listing range twice to join", timeout=5)
        (member_id,) = described(client, "left")[1]
        left = client.request("LeaveGroup", 0, {"group_id": "left", "member_id": member_id})
        assert left.error_code == 0
        stuck.sock.settimeout(5)
        _, answer = stuck.receive("JoinGroup", 3)  # its JoinGroup is answered, no member id
        assert (answer.error_code, answer.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "")
        assert described(client, "left") == ("PreparingRebalance", [])
        assert delete(client, "left") == ErrorCode.NON_EMPTY_GROUP
        time.sleep(1)  # past the rebalance timeout of 300 ms
        assert described(client, "left") == ("PreparingRebalance", [])
        assert delete(client, "left") == ErrorCode.NON_EMPTY_GROUP
        connect = client.request("JoinGroup", 3, dict(join_body(group="left"),
                                                      protocol_type="connect"))
        assert connect.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        newcomer.send("JoinGroup", 3, dict(join_body(protocols=roundrobin, group="left"),
                                           **timeouts))
        eventually(lambda: len(described(client, "left")[1]) == 1,
                   "the new member to join", timeout=5)
        time.sleep(0.5)  # past its rebalance timeout too
        assert described(client, "left")[0] == "PreparingRebalance"
        newcomer.sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            newcomer.receive_frame()  # its JoinGroup waits
