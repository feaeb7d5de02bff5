"""Kafka's group coordinator deletes every empty group holding no committed offset, once per
``offsets.retention.check.interval.ms`` (10 minutes; GroupCoordinatorShard's
cleanupGroupMetadata): a classic group left Empty, a KIP-848 consumer group or a streams group
whose members all left. A group with members, or with an offset committed, stays, and so does
a share group. On the fake and on Apache Kafka (``--kafka=both``), with the check every half
second."""

from __future__ import annotations

import time
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import coordinator, described, joined_member
from tests.test_wire_streams_groups import word_count

CHECK_EVERY_HALF_SECOND = {"offsets.retention.check.interval.ms": "500"}
pytestmark = [pytest.mark.fake_kafka(topics={"orders": 1}, overrides=CHECK_EVERY_HALF_SECOND),
              pytest.mark.timeout(120)]


def listed(client: WireClient) -> set[str]:
    """The group ids ListGroups names (every state, every type)."""
    answer = client.request("ListGroups", 5, {"states_filter": [], "types_filter": []})
    assert answer.error_code == 0
    return {g.group_id for g in answer.groups}


def leave(client: WireClient, group: str, member_id: str) -> None:
    left = client.request("LeaveGroup", 5, {"group_id": group, "members": [
        {"member_id": member_id, "group_instance_id": None}]})
    assert left.error_code == 0


def test_a_classic_group_left_empty_without_offsets_is_deleted_at_the_next_check(kafka):
    with WireClient(coordinator(kafka, "left-empty")) as client:
        joined = joined_member(client, group="left-empty")
        leave(client, "left-empty", joined.member_id)
        eventually(lambda: "left-empty" not in listed(client), "the empty group's deletion",
                   timeout=15)
        assert described(client, "left-empty") == (ErrorCode.GROUP_ID_NOT_FOUND, "Dead")


def test_an_empty_group_holding_a_committed_offset_is_kept(kafka):
    with WireClient(coordinator(kafka, "committed")) as client:
        joined = joined_member(client, group="committed")
        committed = client.request("OffsetCommit", 8, {
            "group_id": "committed", "generation_id_or_member_epoch": joined.generation_id,
            "member_id": joined.member_id, "group_instance_id": None, "topics": [
                {"name": "orders", "partitions": [{"partition_index": 0,
                                                   "committed_offset": 0,
                                                   "committed_leader_epoch": -1,
                                                   "committed_metadata": ""}]}]})
        assert committed.topics[0].partitions[0].error_code == 0
        leave(client, "committed", joined.member_id)
        time.sleep(2)  # four checks
        assert described(client, "committed") == (0, "Empty")


def test_a_group_with_a_member_is_kept(kafka):
    with WireClient(coordinator(kafka, "stable")) as client:
        joined_member(client, group="stable")
        time.sleep(2)
        assert described(client, "stable") == (0, "Stable")


def test_a_consumer_group_all_of_whose_members_left_is_deleted(kafka):
    with WireClient(coordinator(kafka, "kip848-left")) as client:
        member_id = str(uuid.uuid4())
        joined = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "kip848-left", "member_id": member_id, "member_epoch": 0,
            "rebalance_timeout_ms": 300_000, "subscribed_topic_names": ["orders"],
            "topic_partitions": []})
        assert joined.error_code == 0
        left = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "kip848-left", "member_id": member_id, "member_epoch": -1})
        assert left.error_code == 0
        eventually(lambda: "kip848-left" not in listed(client),
                   "the empty consumer group's deletion", timeout=15)


def share_or_streams_group_left_by_its_member(client: WireClient, api: str, group: str,
                                              **fields) -> None:
    member_id = str(uuid.uuid4())
    joined = client.request(api, 1 if api == "ShareGroupHeartbeat" else 0, {
        "group_id": group, "member_id": member_id, "member_epoch": 0, **fields})
    assert joined.error_code == 0
    left = client.request(api, 1 if api == "ShareGroupHeartbeat" else 0, {
        "group_id": group, "member_id": member_id, "member_epoch": -1,
        **{k: None if k in ("subscribed_topic_names", "topology") else v
           for k, v in fields.items()}})
    assert left.error_code == 0


def test_a_share_group_whose_members_left_is_kept(kafka):
    with WireClient(coordinator(kafka, "share-left")) as client:
        share_or_streams_group_left_by_its_member(
            client, "ShareGroupHeartbeat", "share-left", rack_id=None,
            subscribed_topic_names=["orders"])
        time.sleep(2)
        assert "share-left" in listed(client)


@pytest.mark.fake_kafka(topics={"orders": 1, "lines": 1}, overrides=CHECK_EVERY_HALF_SECOND)
def test_a_streams_group_whose_members_left_is_deleted(kafka):
    with WireClient(coordinator(kafka, "streams-left")) as client:
        share_or_streams_group_left_by_its_member(
            client, "StreamsGroupHeartbeat", "streams-left", endpoint_information_epoch=0,
            instance_id=None, rack_id=None, rebalance_timeout_ms=30_000,
            topology=word_count("streams-left"), active_tasks=[], standby_tasks=[],
            warmup_tasks=[], process_id="p", user_endpoint=None, client_tags=[],
            task_offsets=[], task_end_offsets=[], shutdown_application=False)
        eventually(lambda: "streams-left" not in listed(client),
                   "the empty streams group's deletion", timeout=15)
