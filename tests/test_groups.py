"""Groups of both kinds, classic and KIP-848, and their committed offsets: one offset store
keyed by group id, topic and partition, whatever protocol the group runs."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from tests.wire import WireClient

pytestmark = pytest.mark.fake_kafka(brokers=1, topics={"orders": 2})


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


def test_a_kip848_group_that_never_committed_has_offsets_to_delete(fake_kafka):
    """OffsetDelete asks the group, not a record of its offsets: a consumer group with no
    offset yet answers per partition (Kafka: GROUP_SUBSCRIBED_TO_TOPIC for its topics)."""
    with WireClient(fake_kafka.bootstrap_servers) as client:
        consumer_join(client, "g848")
        answer = client.request("OffsetDelete", 0, {"group_id": "g848", "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0}]},
            {"name": "audit", "partitions": [{"partition_index": 0}]}]})
    assert answer.error_code == 0
    assert [t.partitions[0].error_code for t in answer.topics] == [
        ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, 0]


def test_a_kip848_members_commits_are_fetched_and_go_with_the_group(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        epoch = consumer_join(client, "g848")
        assert commit(client, "g848", 5, epoch, "m1") == 0
        assert fetch(client, "g848") == [("orders", 0, 5, "m")]
        assert fake_kafka.committed("g848", "orders", 0) == 5
        client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": "m1", "member_epoch": -1})
        assert client.request("DeleteGroups", 2, {"groups_names": ["g848"]}).results[
            0].error_code == 0
        assert fetch(client, "g848") == []
    assert fake_kafka.committed("g848", "orders", 0) is None
