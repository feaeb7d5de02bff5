"""Which group a group request finds, by kind, as Kafka 4.4's group coordinator answers: the
classic group APIs meeting a group of another kind. They run on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import coordinator

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})


def commit(client: WireClient, version: int, group: str, generation: int) -> int:
    response = client.request("OffsetCommit", version, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": "",
        "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]})
    return response.topics[0].partitions[0].error_code


def test_an_offset_commit_to_a_share_group_finds_no_group(kafka):
    with WireClient(coordinator(kafka)) as client:
        joined = client.request("ShareGroupHeartbeat", 1, {
            "group_id": "shared", "member_id": str(uuid.uuid4()), "member_epoch": 0,
            "subscribed_topic_names": ["orders"]})
        assert joined.error_code == 0
        answers = {(version, generation): commit(client, version, "shared", generation)
                   for version in (2, 5, 8, 9) for generation in (-1, 0, 1)}
    assert set(answers.values()) == {ErrorCode.GROUP_ID_NOT_FOUND}


def test_offset_delete_does_not_find_a_share_group(kafka):
    """A share group holds no committed offsets: OffsetDelete answers it GROUP_ID_NOT_FOUND,
    as Kafka 4.4's ShareGroup.validateOffsetDelete, whatever the partitions named."""
    with WireClient(coordinator(kafka)) as client:
        def join() -> bool:  # Kafka's share coordinator may still be loading
            answer = client.request("ShareGroupHeartbeat", 1, {
                "group_id": "sharers", "member_id": "m1", "member_epoch": 0,
                "subscribed_topic_names": ["orders"]})
            assert answer.error_code in (0, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            return answer.error_code == 0

        eventually(join, "the share group joined")
        for topics in ([{"name": "orders", "partitions": [{"partition_index": 0}]}],
                       [{"name": "orders", "partitions": [{"partition_index": 7}]}], []):
            answer = client.request("OffsetDelete", 0, {"group_id": "sharers",
                                                        "topics": topics})
            assert (answer.error_code, answer.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])


def test_a_group_named_twice_in_delete_groups_is_answered_once(kafka):
    with WireClient(coordinator(kafka)) as client:
        assert commit(client, 5, "emptied", -1) == 0  # an Empty group, made by a commit
        deleted = client.request("DeleteGroups", 2, {
            "groups_names": ["emptied", "emptied", "emptied", "none", "none"]})
    assert sorted((r.group_id, r.error_code) for r in deleted.results) == [
        ("emptied", 0), ("none", ErrorCode.GROUP_ID_NOT_FOUND)]
