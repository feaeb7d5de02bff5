"""The classic group protocol on the wire: Kafka's answers at each step, version differences,
and every error a consumer's group code path must handle; KIP-848 groups under the group
admin APIs. They run on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.bodies import join_body, subscription
from tests.test_wire_versions import topic_id

pytestmark = pytest.mark.fake_kafka(brokers=3, topics={"orders": 2})


def coordinator(kafka, group: str = "g") -> str:
    """The address of ``group``'s coordinator once it has loaded the group's
    ``__consumer_offsets`` partition: a Kafka just started answers a group's requests
    COORDINATOR_LOAD_IN_PROGRESS until then (clients retry it)."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        found = client.request("FindCoordinator", 3, {"key": group, "key_type": 0})
    assert found.error_code == 0
    address = f"{found.host}:{found.port}"
    with WireClient(address) as client:
        eventually(lambda: client.request("OffsetFetch", 8, {"groups": [
            {"group_id": group, "topics": None}]}).groups[0].error_code
            != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "the group's coordinator to load",
            timeout=30)
    return address


def not_coordinator(kafka, group: str = "g") -> str:
    home = coordinator(kafka, group)
    return next(a for a in kafka.bootstrap_servers.split(",") if a != home)


def joined_member(client: WireClient, version: int = 9, group: str = "g") -> dict:
    """Join as a lone member (v4+ two steps), sync, and return the join answer."""
    first = client.request("JoinGroup", version, join_body(group=group))
    if first.error_code == ErrorCode.MEMBER_ID_REQUIRED:
        first = client.request("JoinGroup", version, join_body(first.member_id, group=group))
    assert first.error_code == 0
    synced(client, first, group)
    return first


def synced(client: WireClient, joined: dict, group: str = "g") -> None:
    """The leader ``joined`` syncs, assigning itself two zero bytes."""
    sync = client.request("SyncGroup", 5, {
        "group_id": group, "generation_id": joined.generation_id,
        "member_id": joined.member_id, "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": joined.member_id, "assignment": b"\x00\x00"}]})
    assert sync.error_code == 0 and sync.assignment == b"\x00\x00"


def test_find_coordinator_is_deterministic_and_batched_from_v4(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        single = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0})
        again = client.request("FindCoordinator", 0, {"key": "g"})
        batched = client.request("FindCoordinator", 4, {"key_type": 0,
                                                        "coordinator_keys": ["g", "h"]})
    assert single.node_id == again.node_id == batched.coordinators[0].node_id
    assert [c.key for c in batched.coordinators] == ["g", "h"]


def test_group_requests_to_another_broker_get_not_coordinator(kafka):
    with WireClient(not_coordinator(kafka)) as client:
        assert client.request("JoinGroup", 9, join_body()).error_code == \
            ErrorCode.NOT_COORDINATOR
        assert client.request("Heartbeat", 4, {"group_id": "g", "generation_id": 1,
                                               "member_id": "m"}).error_code == \
            ErrorCode.NOT_COORDINATOR
        fetched = client.request("OffsetFetch", 8, {"groups": [{"group_id": "g",
                                                                "topics": None}]})
        assert fetched.groups[0].error_code == ErrorCode.NOT_COORDINATOR


def test_member_id_required_only_from_join_group_v4(kafka):
    with WireClient(coordinator(kafka)) as client:
        old = client.request("JoinGroup", 3, join_body())
    assert old.error_code == 0 and old.member_id
    with WireClient(coordinator(kafka, "g4")) as client:
        new = client.request("JoinGroup", 4, dict(join_body(), group_id="g4"))
    assert new.error_code == ErrorCode.MEMBER_ID_REQUIRED and new.member_id


def test_a_lone_member_joins_syncs_heartbeats_commits_and_leaves(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)
        assert member.leader == member.member_id and member.generation_id == 1
        assert member.protocol_name == "range"
        assert [m.member_id for m in member.members] == [member.member_id]
        assert client.request("Heartbeat", 4, {"group_id": "g", "generation_id": 1,
                                               "member_id": member.member_id}).error_code == 0
        commit = client.request("OffsetCommit", 9, {
            "group_id": "g", "generation_id_or_member_epoch": 1, "member_id": member.member_id,
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 1, "committed_offset": 42, "committed_metadata": "m"}]}]})
        assert commit.topics[0].partitions[0].error_code == 0
        assert kafka.committed("g", "orders", 1) == 42
        view = kafka.group("g")  # its generation is the JoinGroup answer's: Kafka's
        assert (view.state, view.protocol_name) == ("Stable", "range")  # describe omits it
        assert [m.member_id for m in view.members] == [member.member_id]
        left = client.request("LeaveGroup", 5, {"group_id": "g", "members": [
            {"member_id": member.member_id}]})
        assert left.error_code == 0 and left.members[0].error_code == 0
    assert kafka.group("g").state == "Empty"


def test_offset_fetch_answers_committed_offsets_at_every_version(kafka):
    with WireClient(coordinator(kafka)) as client:
        client.request("OffsetCommit", 2, {"group_id": "g", "generation_id_or_member_epoch": -1,
                                           "member_id": "", "topics": [{"name": "orders",
                                           "partitions": [{"partition_index": 0,
                                                           "committed_offset": 7,
                                                           "committed_metadata": "meta"}]}]})
        for version in range(1, 10):
            if version >= 8:
                body = {"groups": [{"group_id": "g", "topics": [
                    {"name": "orders", "partition_indexes": [0, 1]}]}]}
                topics = client.request("OffsetFetch", version, body).groups[0].topics
            else:
                body = {"group_id": "g", "topics": [{"name": "orders",
                                                     "partition_indexes": [0, 1]}]}
                topics = client.request("OffsetFetch", version, body).topics
            partitions = topics[0].partitions
            assert [(p.committed_offset, p.metadata) for p in partitions] == [
                (7, "meta"), (-1, "")], f"v{version}"


def test_commit_errors_as_kafka_answers_them(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)

        def commit(generation: int, member_id: str, metadata: str = "", topic: str = "orders"):
            response = client.request("OffsetCommit", 8, {
                "group_id": "g", "generation_id_or_member_epoch": generation,
                "member_id": member_id, "topics": [{"name": topic, "partitions": [
                    {"partition_index": 0, "committed_offset": 1,
                     "committed_metadata": metadata}]}]})
            return response.topics[0].partitions[0].error_code

        assert commit(7, member.member_id) == ErrorCode.ILLEGAL_GENERATION
        assert commit(1, "stranger") == ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(-1, "") == ErrorCode.UNKNOWN_MEMBER_ID  # the group has members
        assert commit(1, member.member_id, "x" * 5000) == ErrorCode.OFFSET_METADATA_TOO_LARGE
        assert commit(1, member.member_id, topic="nope") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert commit(1, member.member_id) == 0


def test_a_member_commit_to_no_group_is_refused_and_creates_none(kafka):
    """Kafka's OffsetMetadataManager.validateOffsetCommit: only generation -1 (an admin
    client, an assign-only consumer) creates a group by committing; a member's commit to a
    group that does not exist is GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before."""
    with WireClient(coordinator(kafka, "nobody")) as client:
        def commit(version: int, generation: int, member_id: str) -> int:
            response = client.request("OffsetCommit", version, {
                "group_id": "nobody", "generation_id_or_member_epoch": generation,
                "member_id": member_id, "topics": [{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 1}]}]})
            return response.topics[0].partitions[0].error_code

        assert commit(8, 1, "m") == ErrorCode.ILLEGAL_GENERATION
        assert commit(9, 1, "m") == ErrorCode.GROUP_ID_NOT_FOUND
        assert commit(9, 0, "") == ErrorCode.GROUP_ID_NOT_FOUND
        assert kafka.committed("nobody", "orders", 0) is None
        assert commit(9, -1, "") == 0
    assert kafka.committed("nobody", "orders", 0) == 1


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_a_group_a_commit_stored_nothing_in_is_not_described_until_one_does(kafka):
    """Generation -1 makes the group even when every offset is refused (metadata too large):
    a member's commit then finds it (UNKNOWN_MEMBER_ID, not GROUP_ID_NOT_FOUND), but
    DescribeGroups does not see it until a commit stores an offset (Kafka's reads)."""
    with WireClient(coordinator(kafka, "refused")) as client:
        def commit(generation: int, member_id: str, metadata: str = "") -> int:
            response = client.request("OffsetCommit", 9, {
                "group_id": "refused", "generation_id_or_member_epoch": generation,
                "member_id": member_id, "topics": [{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 1,
                     "committed_metadata": metadata}]}]})
            return response.topics[0].partitions[0].error_code

        def described() -> tuple[int, str]:
            (group,) = client.request("DescribeGroups", 6, {"groups": ["refused"]}).groups
            return group.error_code, group.group_state

        assert commit(-1, "", "x" * 5000) == ErrorCode.OFFSET_METADATA_TOO_LARGE
        assert described() == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        assert commit(3, "stranger") == ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(-1, "") == 0
        assert described() == (0, "Empty")


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_a_group_a_commit_stored_nothing_in_is_described_once_its_offsets_partition_is_written(
        kafka):
    """Kafka's reads see its coordinator's state as of the last write committed to the group's
    ``__consumer_offsets`` partition: a group made by a commit that stored nothing is
    described once any commit stores an offset in that partition, for any group
    ("neighbour-75" shares "unwritten-g"'s partition 44, "stranger-0" is in partition 23)."""
    with WireClient(coordinator(kafka, "unwritten-g")) as client:
        def commit(group: str, metadata: str = "") -> int:
            response = client.request("OffsetCommit", 9, {
                "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                "topics": [{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 1,
                     "committed_metadata": metadata}]}]})
            return response.topics[0].partitions[0].error_code

        def described() -> tuple[int, str]:
            (group,) = client.request("DescribeGroups", 6, {"groups": ["unwritten-g"]}).groups
            return group.error_code, group.group_state

        assert commit("unwritten-g", "x" * 5000) == ErrorCode.OFFSET_METADATA_TOO_LARGE
        assert commit("stranger-0") == 0
        assert described() == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        assert commit("neighbour-75") == 0
        assert described() == (0, "Empty")


def refuse_commit(client: WireClient, group: str) -> None:
    """Make ``group`` by a commit from outside that stores nothing (metadata too large)."""
    refused = client.request("OffsetCommit", 9, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "committed_offset": 1, "committed_metadata": "x" * 5000}]}]})
    assert refused.topics[0].partitions[0].error_code == ErrorCode.OFFSET_METADATA_TOO_LARGE


def described(client: WireClient, group: str) -> tuple[int, str]:
    (found,) = client.request("DescribeGroups", 6, {"groups": [group]}).groups
    return found.error_code, found.group_state


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_a_group_a_commit_stored_nothing_in_is_listed_once_a_commit_stores_an_offset(kafka):
    """ListGroups reads as DescribeGroups does: the group a commit stored nothing in is left
    out until its partition is written."""
    with WireClient(coordinator(kafka, "unlisted")) as client:
        def listed() -> list[str]:
            return [g.group_id for g in client.request("ListGroups", 5, {
                "states_filter": [], "types_filter": []}).groups]

        refuse_commit(client, "unlisted")
        assert "unlisted" not in listed()
        stored = client.request("OffsetCommit", 9, {
            "group_id": "unlisted", "generation_id_or_member_epoch": -1, "member_id": "",
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]})
        assert stored.topics[0].partitions[0].error_code == 0
        assert "unlisted" in listed()


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_a_join_that_makes_a_group_writes_its_offsets_partition_even_answered_member_id_required(
        kafka):
    """Kafka appends a group a JoinGroup makes to its ``__consumer_offsets`` partition, but
    answers the JoinGroup without waiting for that write: the group a commit stored nothing
    in is described soon after ("joiner-27" shares "unwritten-j"'s partition 41; measured on
    Kafka 4.4: at the next DescribeGroups, or up to ~230 ms later on a loaded machine)."""
    with WireClient(coordinator(kafka, "unwritten-j")) as client:
        refuse_commit(client, "unwritten-j")
        assert described(client, "unwritten-j") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        first = client.request("JoinGroup", 9, join_body(group="joiner-27"))
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        eventually(lambda: described(client, "unwritten-j") == (0, "Empty"),
                   "the group to be described", timeout=10)


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_joins_of_an_existing_group_write_nothing_until_its_leader_syncs(kafka):
    """A JoinGroup of a group that exists writes nothing, answered MEMBER_ID_REQUIRED or
    starting a generation with members: the group's metadata is written with the leader's
    assignment, before the leader's SyncGroup is answered ("rejoiner-22" shares
    "unwritten-r0"'s partition 35)."""
    with WireClient(coordinator(kafka, "rejoiner-22")) as client:
        joined = joined_member(client, group="rejoiner-22")
        refuse_commit(client, "unwritten-r0")
        assert described(client, "unwritten-r0") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        rejoined = client.request("JoinGroup", 9, join_body(joined.member_id,
                                                            group="rejoiner-22"))
        assert (rejoined.error_code, rejoined.generation_id) == (0, 2)
        newcomer = client.request("JoinGroup", 9, join_body(group="rejoiner-22"))
        assert newcomer.error_code == ErrorCode.MEMBER_ID_REQUIRED
        assert described(client, "unwritten-r0") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        synced(client, rejoined, group="rejoiner-22")
        assert described(client, "unwritten-r0") == (0, "Empty")
        left = client.request("LeaveGroup", 5, {"group_id": "rejoiner-22", "members": [
            {"member_id": joined.member_id}, {"member_id": newcomer.member_id}]})
        assert left.error_code == 0  # Empty: the session's Kafka can delete it


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_a_group_a_commit_stored_nothing_in_is_described_once_its_joined_leader_syncs(kafka):
    """Members joining the group a commit stored nothing in write nothing (the group exists):
    it is not described while its first generation waits for the leader's SyncGroup."""
    with WireClient(coordinator(kafka, "unwritten-s")) as client:
        refuse_commit(client, "unwritten-s")
        first = client.request("JoinGroup", 9, join_body(group="unwritten-s"))
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        assert described(client, "unwritten-s") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        joined = client.request("JoinGroup", 9, join_body(first.member_id, group="unwritten-s"))
        assert (joined.error_code, joined.generation_id) == (0, 1)
        assert described(client, "unwritten-s") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        synced(client, joined, group="unwritten-s")
        assert described(client, "unwritten-s") == (0, "Stable")
        left = client.request("LeaveGroup", 5, {"group_id": "unwritten-s", "members": [
            {"member_id": joined.member_id}]})
        assert left.error_code == 0  # Empty: the session's Kafka can delete it


@pytest.mark.fake_kafka(topics={"orders": 2})  # one broker: runs on the session's Kafka
def test_the_last_member_leaving_and_deletegroups_write_the_offsets_partition(kafka):
    """A generation that starts Empty is written before the LeaveGroup that started it is
    answered, a deleted group's tombstones before DeleteGroups is ("leaver-2" shares
    "unwritten-l65"'s and "unwritten-d45"'s partition 36)."""
    with WireClient(coordinator(kafka, "leaver-2")) as client:
        joined = joined_member(client, group="leaver-2")
        refuse_commit(client, "unwritten-l65")
        assert described(client, "unwritten-l65") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        left = client.request("LeaveGroup", 5, {"group_id": "leaver-2", "members": [
            {"member_id": joined.member_id, "group_instance_id": None}]})
        assert left.error_code == 0
        assert described(client, "unwritten-l65") == (0, "Empty")
        refuse_commit(client, "unwritten-d45")
        assert described(client, "unwritten-d45") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")
        (deleted,) = client.request("DeleteGroups", 2, {"groups_names": ["leaver-2"]}).results
        assert deleted.error_code == 0
        assert described(client, "unwritten-d45") == (0, "Empty")


def test_heartbeat_errors_tell_members_to_rejoin(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)

        def heartbeat(generation: int, member_id: str) -> int:
            return client.request("Heartbeat", 4, {"group_id": "g", "generation_id": generation,
                                                   "member_id": member_id}).error_code

        assert heartbeat(2, member.member_id) == ErrorCode.ILLEGAL_GENERATION
        assert heartbeat(1, "stranger") == ErrorCode.UNKNOWN_MEMBER_ID
        assert heartbeat(1, member.member_id) == 0


@pytest.mark.fake_only("a rebalance forced by the test (FakeKafka.rebalance)")
def test_a_forced_rebalance_answers_heartbeats_rebalance_in_progress(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)
        kafka.rebalance("g")
        assert client.request("Heartbeat", 4, {
            "group_id": "g", "generation_id": 1, "member_id": member.member_id}).error_code == \
            ErrorCode.REBALANCE_IN_PROGRESS


def test_a_second_member_joins_when_the_first_rejoins(kafka):
    address = coordinator(kafka)
    with WireClient(address) as first_client, WireClient(address) as second_client:
        first = joined_member(first_client, version=5)
        answers = {}

        def second_member_joins():
            required = second_client.request("JoinGroup", 5, join_body())
            assert required.error_code == ErrorCode.MEMBER_ID_REQUIRED
            answers["second"] = second_client.request("JoinGroup", 5,
                                                      join_body(required.member_id))

        second = threading.Thread(target=second_member_joins)
        second.start()
        while kafka.group("g").state != "PreparingRebalance":
            pass
        assert first_client.request("Heartbeat", 3, {
            "group_id": "g", "generation_id": 1, "member_id": first.member_id}).error_code == \
            ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = first_client.request("JoinGroup", 5, join_body(first.member_id))
        second.join(timeout=10)
        assert rejoined.generation_id == answers["second"].generation_id == 2
        assert rejoined.leader == first.member_id  # the leader stays
        assert len(rejoined.members) == 2 and answers["second"].members == []


def test_inconsistent_protocols_are_refused(kafka):
    with WireClient(coordinator(kafka)) as client:
        joined_member(client)
        other = client.request("JoinGroup", 9, join_body(protocols=[
            {"name": "roundrobin", "metadata": subscription("orders")}]))
        assert other.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_static_member_with_a_stale_member_id_is_fenced(kafka):
    with WireClient(coordinator(kafka)) as client:
        first = client.request("JoinGroup", 9, join_body(instance="pod-1"))
        assert first.error_code == 0
        restarted = client.request("JoinGroup", 9, join_body(instance="pod-1"))
        assert restarted.member_id != first.member_id
        stale = client.request("Heartbeat", 4, {"group_id": "g", "generation_id": 1,
                                                "member_id": first.member_id,
                                                "group_instance_id": "pod-1"})
        assert stale.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_describe_list_and_delete_groups(kafka):
    with WireClient(coordinator(kafka, "ghost")) as client:  # a group that does not exist
        (ghost,) = client.request("DescribeGroups", 5, {"groups": ["ghost"]}).groups
        (gone,) = client.request("DeleteGroups", 2, {"groups_names": ["ghost"]}).results
    assert (ghost.group_state, gone.error_code) == ("Dead", ErrorCode.GROUP_ID_NOT_FOUND)
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)
        (described,) = client.request("DescribeGroups", 5, {"groups": ["g"]}).groups
        assert (described.group_state, described.protocol_data) == ("Stable", "range")
        assert [(m.member_id, m.client_id) for m in described.members] == [
            (member.member_id, "wire")]
        listed = client.request("ListGroups", 4, {"states_filter": ["Stable"]}).groups
        assert [g.group_id for g in listed] == ["g"]
        assert client.request("ListGroups", 4, {"states_filter": ["Empty"]}).groups == []
        (deleted,) = client.request("DeleteGroups", 2, {"groups_names": ["g"]}).results
        assert deleted.error_code == ErrorCode.NON_EMPTY_GROUP
        refused = client.request("OffsetDelete", 0, {"group_id": "g", "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0}]}]})
        assert refused.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
        client.request("LeaveGroup", 5, {"group_id": "g", "members": [
            {"member_id": member.member_id}]})
        deleted = client.request("DeleteGroups", 2, {"groups_names": ["g"]}).results
        assert deleted[0].error_code == 0
    assert kafka.group("g") is None


def test_offset_delete_refuses_a_group_of_another_protocol_while_it_has_members(kafka):
    """Kafka's ClassicGroup.validateOffsetDelete: offsets of a group whose members use
    another protocol type than "consumer" (Connect, Schema Registry) cannot be read for
    subscriptions, so none are deleted while it has members (NON_EMPTY_GROUP, the whole
    answer); once it is empty they are."""
    body = join_body(protocols=[{"name": "v1", "metadata": b"worker"}], group="workers")
    body["protocol_type"] = "connect"
    with WireClient(coordinator(kafka, "workers")) as client:
        first = client.request("JoinGroup", 9, body)
        joined = client.request("JoinGroup", 9, {**body, "member_id": first.member_id})
        assert joined.error_code == 0
        client.request("OffsetCommit", 9, {
            "group_id": "workers", "generation_id_or_member_epoch": joined.generation_id,
            "member_id": joined.member_id, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": 3}]}]})

        def delete() -> tuple[int, list[int]]:
            answer = client.request("OffsetDelete", 0, {"group_id": "workers", "topics": [
                {"name": "orders", "partitions": [{"partition_index": 0}]}]})
            return answer.error_code, [p.error_code for t in answer.topics
                                       for p in t.partitions]

        assert delete() == (ErrorCode.NON_EMPTY_GROUP, [])
        client.request("LeaveGroup", 5, {"group_id": "workers", "members": [
            {"member_id": joined.member_id}]})
        assert delete() == (0, [0])
    assert kafka.committed("workers", "orders", 0) is None


def test_a_deleted_topic_takes_its_committed_offsets_along(kafka):
    """Kafka's coordinator drops every group's offsets of a deleted topic's partitions
    (GroupCoordinator.onPartitionsDeleted): a topic created again under the same name starts
    with none committed."""
    kafka.create_topic("doomed", partitions=2)  # known to the coordinator too once made
    with WireClient(coordinator(kafka)) as client:
        client.request("OffsetCommit", 9, {
            "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
            "topics": [{"name": "doomed", "partitions": [
                {"partition_index": 0, "committed_offset": 5}]}]})
    assert kafka.committed("g", "doomed", 0) == 5
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as admin:
        deleted = admin.request("DeleteTopics", 5, {"topic_names": ["doomed"],
                                                    "timeout_ms": 5000})
        assert deleted.responses[0].error_code == 0
        eventually(lambda: "doomed" not in kafka.topics(), "the topic to be deleted")
    kafka.create_topic("doomed", partitions=2)
    eventually(lambda: kafka.committed("g", "doomed", 0) is None,
               "the deleted topic's offsets to be gone")


def assigned(client: WireClient, group: str, joined, timeout: float = 30):
    """Heartbeat as a KIP-848 member does until the coordinator assigns it partitions; returns
    (member epoch, topic id -> partitions). Kafka's coordinator learns of a topic created a
    moment ago, and resolves a regex, in the background: a later heartbeat brings them."""
    epoch, deadline = joined.member_epoch, time.monotonic() + timeout
    answer = joined
    while not (answer.assignment and answer.assignment.topic_partitions):
        assert time.monotonic() < deadline, f"no partitions assigned: {answer}"
        time.sleep(0.05)
        answer = client.request("ConsumerGroupHeartbeat", 0, {
            "group_id": group, "member_id": joined.member_id, "member_epoch": epoch})
        assert answer.error_code == 0, answer
        epoch = answer.member_epoch
    return epoch, {t.topic_id: sorted(t.partitions) for t in answer.assignment.topic_partitions}


def test_kip848_groups_are_described_and_listed(kafka):
    orders_id = topic_id(kafka, "orders")
    with WireClient(coordinator(kafka, "g848")) as client:
        joined = client.request("ConsumerGroupHeartbeat", 0, {
            "group_id": "g848", "member_id": "", "member_epoch": 0, "rebalance_timeout_ms": 1000,
            "subscribed_topic_names": ["orders"], "topic_partitions": []})
        assert (joined.error_code, joined.member_epoch) == (0, 2) and joined.member_id
        epoch, assignment = assigned(client, "g848", joined)
        assert assignment == {orders_id: [0, 1]}
        fenced = client.request("ConsumerGroupHeartbeat", 0, {
            "group_id": "g848", "member_id": joined.member_id, "member_epoch": epoch + 5})
        assert fenced.error_code == ErrorCode.FENCED_MEMBER_EPOCH
        described = client.request("ConsumerGroupDescribe", 0, {"group_ids": ["g848"]}).groups
        assert (described[0].group_state, described[0].assignor_name) == ("Stable", "uniform")
        assert described[0].group_epoch == epoch
        listed = client.request("ListGroups", 5, {"types_filter": ["consumer"]}).groups
        assert [(g.group_id, g.group_type) for g in listed] == [("g848", "consumer")]
        stale = client.request("OffsetCommit", 9, {
            "group_id": "g848", "generation_id_or_member_epoch": epoch - 1,
            "member_id": joined.member_id, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": 1}]}]})
        assert stale.topics[0].partitions[0].error_code == ErrorCode.STALE_MEMBER_EPOCH


def test_kip848_groups_under_the_classic_admin_apis(kafka):
    with WireClient(coordinator(kafka, "g848")) as client:
        joined = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": 0, "rebalance_timeout_ms": 1000,
            "subscribed_topic_regex": "ord.*", "topic_partitions": []})
        # A regex new to the group is resolved after this answer: epoch 1, nothing assigned.
        assert (joined.error_code, joined.member_epoch) == (0, 1)
        committed = client.request("OffsetCommit", 9, {
            "group_id": "g848", "generation_id_or_member_epoch": joined.member_epoch,
            "member_id": "m1", "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": 0}]}]})
        assert committed.topics[0].partitions[0].error_code == 0
        v5, v6 = (client.request("DescribeGroups", v, {"groups": ["g848"]}).groups[0]
                  for v in (5, 6))
        assert (v5.error_code, v5.group_state, v5.members) == (0, "Dead", [])
        assert (v6.error_code, v6.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                     "Group g848 is not a classic group.")
        assigned(client, "g848", joined)  # the regex is resolved: the group uses orders
        in_use = client.request("OffsetDelete", 0, {"group_id": "g848", "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0}]}]})
        assert in_use.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
        busy = client.request("DeleteGroups", 2, {"groups_names": ["g848"]}).results[0]
        assert busy.error_code == ErrorCode.NON_EMPTY_GROUP
        assert kafka.committed("g848", "orders", 0) == 0
        left = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": -1})
        assert (left.error_code, left.member_epoch) == (0, -1)
        deleted = client.request("DeleteGroups", 2, {"groups_names": ["g848"]}).results[0]
        assert deleted.error_code == 0
    assert kafka.group("g848") is None and kafka.committed("g848", "orders", 0) is None



def test_a_kip848_member_commits_with_offset_commit_v9_or_later(kafka):
    """Kafka's ConsumerGroup.validateOffsetCommit: a member of a consumer group (KIP-848)
    commits with OffsetCommit v9+ (which carries its member epoch); an older version is
    UNSUPPORTED_VERSION once the member is known, UNKNOWN_MEMBER_ID before that."""
    def commit(client: WireClient, version: int, member_id: str, epoch: int) -> int:
        response = client.request("OffsetCommit", version, {
            "group_id": "g848", "generation_id_or_member_epoch": epoch, "member_id": member_id,
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": 4}]}]})
        return response.topics[0].partitions[0].error_code

    member_id = uuid.uuid4().hex
    with WireClient(coordinator(kafka, "g848")) as client:
        joined = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": member_id, "member_epoch": 0,
            "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["orders"],
            "topic_partitions": []})
        assert joined.error_code == 0
        assert commit(client, 8, "stranger", joined.member_epoch) == \
            ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(client, 8, member_id, joined.member_epoch) == \
            ErrorCode.UNSUPPORTED_VERSION
        assert kafka.committed("g848", "orders", 0) is None
        assert commit(client, 9, member_id, joined.member_epoch) == 0
    assert kafka.committed("g848", "orders", 0) == 4


def test_a_commit_from_outside_a_kip848_group_is_accepted_only_while_it_has_no_member(kafka):
    """Kafka's ConsumerGroup.validateOffsetCommit: generation -1 (an admin client, a consumer
    that assigns itself partitions) may commit only to an empty consumer group. A new group is
    at epoch 1 (Kafka 4.4's ModernGroup): its first member's subscription makes it 2."""
    def commit(client: WireClient, member_id: str, epoch: int, offset: int) -> int:
        response = client.request("OffsetCommit", 9, {
            "group_id": "g848", "generation_id_or_member_epoch": epoch, "member_id": member_id,
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": offset}]}]})
        return response.topics[0].partitions[0].error_code

    with WireClient(coordinator(kafka, "g848")) as client:
        joined = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": 0, "rebalance_timeout_ms": 1000,
            "subscribed_topic_names": ["orders"], "topic_partitions": []})
        assert (joined.error_code, joined.member_epoch) == (0, 2)
        assert commit(client, "", -1, 5) == ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(client, "m1", -1, 5) == ErrorCode.STALE_MEMBER_EPOCH
        assert kafka.committed("g848", "orders", 0) is None
        left = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": -1})
        assert left.error_code == 0 and kafka.group("g848").state == "Empty"
        assert commit(client, "", -1, 5) == 0
        assert commit(client, "m1", -1, 6) == 0  # the member id is not looked at
    assert kafka.committed("g848", "orders", 0) == 6


def test_consumer_group_describe_names_a_classic_group_as_not_a_consumer_group(kafka):
    def described(group: str) -> tuple[int, str]:
        with WireClient(coordinator(kafka, group)) as client:
            found = client.request("ConsumerGroupDescribe", 1, {"group_ids": [group]}).groups
        return found[0].error_code, found[0].error_message

    not_consumer = (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    with WireClient(coordinator(kafka)) as client:
        member = joined_member(client)
        assert described("g") == not_consumer
        client.request("LeaveGroup", 5, {"group_id": "g", "members": [
            {"member_id": member.member_id, "group_instance_id": None, "reason": None}]})
    assert described("g") == not_consumer  # empty, still a classic group
    assert described("nope") == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
