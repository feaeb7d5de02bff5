"""How Fetch answers the partitions a request names, measured on Apache Kafka 4.4
(``--kafka=both``): each partition once, grouped by topic, in Kafka's order.

Some clients (@platformatic/kafka) name the same topic id in several topic entries, one
partition each; Kafka answers the topic once, with all its partitions.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body

pytestmark = pytest.mark.fake_kafka(topics={"orders": 3})


def topic_id(kafka: Any, name: str) -> uuid.UUID:
    with WireClient(kafka.bootstrap_servers) as client:
        (topic,) = client.request("Metadata", 12, {"topics": [{"name": name}],
                                                   "allow_auto_topic_creation": False}).topics
    return topic.topic_id


def partition(index: int) -> dict[str, Any]:
    return {"partition": index, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
            "current_leader_epoch": -1, "log_start_offset": -1, "last_fetched_epoch": -1}


def fetch(client: WireClient, version: int, entries: list[tuple[Any, Any, list[int]]]):
    """Fetch at ``version`` with one topic entry per (name, id, partitions)."""
    return client.request("Fetch", version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
        "forgotten_topics_data": [], "topics": [
            {"topic": name, "topic_id": tid, "partitions": [partition(p) for p in ps]}
            for name, tid, ps in entries]})


def answered(response: Any, version: int) -> list[tuple[Any, list[tuple[int, int, bool]]]]:
    """Each topic entry: (its name, or id from v13), [(partition, error, has records)]."""
    return [(t.topic_id if version >= 13 else t.topic,
             [(p.partition_index, p.error_code, bool(bytes(p.records or b"")))
              for p in t.partitions]) for t in response.responses]


@pytest.mark.parametrize("version", [12, 13, 17])
def test_one_topic_named_in_several_entries_is_answered_in_one_entry_in_kafkas_order(
        kafka, version: int) -> None:
    orders = topic_id(kafka, "orders")
    missing, other_missing = uuid.uuid4(), uuid.uuid4()
    with WireClient(kafka.bootstrap_servers) as client:
        for p in range(3):
            client.request("Produce", 9, produce_body("orders", p, batch([b"v"])))
        response = fetch(client, version, [
            ("nope", missing, [0]), ("orders", orders, [2]), ("orders", orders, [0, 9]),
            ("nope2", other_missing, [0]), ("orders", orders, [1, 2])])
    name = orders if version >= 13 else "orders"
    read = (name, [(2, 0, True), (0, 0, True), (1, 0, True)])
    if version >= 13:  # the unknown ids come before the unknown partition
        assert answered(response, version) == [
            read, (missing, [(0, 100, False)]), (other_missing, [(0, 100, False)]),
            (name, [(9, 3, False)])]
    else:
        assert answered(response, version) == [
            read, ("nope", [(0, 3, False)]), (name, [(9, 3, False)]),
            ("nope2", [(0, 3, False)])]


@pytest.mark.parametrize("version", [12, 17])
def test_a_last_fetched_epoch_is_checked_before_the_read(kafka, version: int) -> None:
    """Partition.readRecords, given a last fetched epoch (v12+): one newer than the log knows
    is OFFSET_OUT_OF_RANGE, one whose end is before the fetch offset answers no records but
    the diverging epoch (found by the differential fuzzer: the fake read on)."""
    orders = topic_id(kafka, "orders")
    with WireClient(kafka.bootstrap_servers) as client:
        client.request("Produce", 9, produce_body("orders", 0, batch([b"a", b"b"])))

        def read(index: int, offset: int, last_fetched_epoch: int) -> tuple[Any, ...]:
            (topic,) = client.request("Fetch", version, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                "forgotten_topics_data": [], "topics": [
                    {"topic": "orders", "topic_id": orders, "partitions": [dict(
                        partition(index), fetch_offset=offset,
                        last_fetched_epoch=last_fetched_epoch)]}]}).responses
            (answer,) = topic.partitions
            return (answer.error_code, bool(bytes(answer.records or b"")),
                    answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset)

        assert read(0, 1, 0) == (0, True, -1, -1)  # the log's latest epoch: read on
        assert read(0, 1, -5) == (0, True, -1, -1)  # a negative one is none
        assert read(0, 1, 5) == (ErrorCode.OFFSET_OUT_OF_RANGE, False, -1, -1)
        assert read(0, 3, 0) == (0, False, 0, 2)  # epoch 0 ends at 2 here: diverging
        assert read(1, 0, 0) == (0, False, -1, -1)  # an empty log's epoch: nothing to read
        assert read(1, 0, 1) == (ErrorCode.OFFSET_OUT_OF_RANGE, False, -1, -1)
