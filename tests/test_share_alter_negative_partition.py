"""AlterShareGroupOffsets naming a negative partition of a known topic fails as a whole on
Kafka 4.4: UNKNOWN_SERVER_ERROR "Initialize share group parameters has invalid partitionId -
<group> <topic id> <partition>" (its InitializeShareGroupStateParameters refuses the index),
no partition answered and none altered, a valid partition beside it included; a partition
past the topic's is UNKNOWN_TOPIC_OR_PARTITION as before. Kafka keeps the negative partition
all the same: the group's next DeleteGroups fails on it (UNKNOWN_SERVER_ERROR, its share-state
persister refusing the index), the group kept, and the one after deletes the group.

Found by the differential fuzzer (python -m tests.fuzz differential, #26990: a partition
index of -65536, then #27688: the group's DeleteGroups failing on Kafka only); runs on the
fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import base64

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_groups import new_group
from tests.test_share_start_state import two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]


def alter(client: WireClient, group: str, partitions: list[int]):
    return client.request("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [
        {"topic_name": "orphans", "partitions": [
            {"partition_index": p, "start_offset": 1} for p in partitions]}]})


def start_offsets(client: WireClient, group: str) -> list[tuple[int, int]]:
    answer = client.request("DescribeShareGroupOffsets", 1, {
        "groups": [{"group_id": group, "topics": None}]})
    return [(p.partition_index, p.start_offset)
            for g in answer.groups for t in g.topics for p in t.partitions]


@pytest.mark.parametrize("partitions", [[-1], [-65536], [0, -2], [-3, 0]])
def test_a_negative_partition_fails_the_whole_alter(kafka, partitions):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        answer = alter(client, group, partitions)
        topic = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
        negative = next(p for p in partitions if p < 0)
        assert (answer.error_code, answer.error_message, answer.responses) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, "Initialize share group parameters has invalid "
            f"partitionId - {group} {topic} {negative}", [])
        assert start_offsets(client, group) == []
        answer = alter(client, group, [7, 0])
        assert [(p.partition_index, p.error_code) for t in answer.responses
                for p in t.partitions] == [(7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, 0)]
        assert start_offsets(client, group) == [(0, 1)]


def delete(client: WireClient, group: str) -> int:
    return client.request("DeleteGroups", 2, {"groups_names": [group]}).results[0].error_code


def test_the_next_delete_of_a_group_altered_at_a_negative_partition_fails(kafka):
    address, _ = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        assert alter(client, group, [-1]).error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert [delete(client, group) for _ in range(3)] == [
            ErrorCode.UNKNOWN_SERVER_ERROR, 0, ErrorCode.GROUP_ID_NOT_FOUND]
