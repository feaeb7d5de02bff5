"""Every served API answers at every version it advertises, with the right fields.

These tests speak the wire protocol directly (tests/wire.py) so they can pick exact versions;
the real-client tests cover what clients actually negotiate.
"""

from __future__ import annotations

import pytest

from fakebroker.api import HANDLERS, served_versions
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.records import decode_records
from fakebroker.protocol.specs import api_spec
from tests.bodies import (
    DELETE_RECORDS_TO_END,
    DESCRIBE_CLUSTER,
    DESCRIBE_TOPIC_CONFIGS,
    INIT_PRODUCER_ID,
    OFFSET_FOR_LEADER_EPOCH,
    batch,
    fetch_body,
    produce_body,
)
from tests.wire import WireClient

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})


def versions_of(name: str) -> list[int]:
    key = next(k for k in HANDLERS if api_spec(k).name == name)
    served = served_versions(key)
    assert served is not None
    return list(served)


def test_api_versions_lists_every_served_api_at_its_newest_stable_version(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        for version in versions_of("ApiVersions"):
            body = {"client_software_name": "wire", "client_software_version": "1.0"}
            response = client.request("ApiVersions", version, body)
            assert response.error_code == 0
            advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            assert advertised[0] == (0, 13)  # Produce: v0-2 still served, as 3.9 did
            assert advertised[1] == (0, 18)
            assert advertised[22] == (0, 5)  # InitProducerId v6 is unstable: held back
            assert set(advertised) == set(HANDLERS)


def test_metadata_at_every_version_lists_brokers_and_topic_partitions(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        for version in versions_of("Metadata"):
            response = client.request("Metadata", version, {"topics": [{"name": "orders"}]})
            assert [b.node_id for b in response.brokers] == [1]
            (topic,) = response.topics
            assert topic.error_code == 0
            assert [p.partition_index for p in topic.partitions] == [0, 1]
            assert all(p.leader_id == 1 for p in topic.partitions)
            if version >= 10:
                assert topic.topic_id != ZERO_UUID


def test_produce_and_fetch_at_every_version_round_trip_records(fake_kafka):
    topic_id = fake_kafka.call(lambda: fake_kafka.cluster.state.topics["orders"].id)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        expected_offset = 0
        for version in versions_of("Produce"):
            magic = 2 if version >= 3 else 1
            records = batch([f"p{version}".encode()], magic=magic)
            response = client.request("Produce", version,
                                      produce_body("orders", 0, records, topic_id))
            (partition,) = response.responses[0].partition_responses
            assert (partition.error_code, partition.base_offset) == (0, expected_offset)
            expected_offset += 1
        for version in versions_of("Fetch"):
            response = client.request("Fetch", version, fetch_body("orders", 0, 0, topic_id))
            (partition,) = response.responses[0].partitions
            assert partition.error_code == 0
            assert partition.high_watermark == expected_offset
            values = [r.value for r in decode_records(partition.records)]
            assert values == [f"p{v}".encode() for v in versions_of("Produce")]
            # v0-1 get magic 0, v2+ get the stored bytes (the first entry is magic 1 here).
            assert partition.records[16] == (0 if version <= 1 else 1)


def test_list_offsets_at_every_version_answers_earliest_and_latest(fake_kafka):
    fake_kafka.call(lambda: None)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        client.request("Produce", 9, produce_body("orders", 1, batch([b"a", b"b", b"c"])))
        for version in versions_of("ListOffsets"):
            answers = []
            for timestamp in (-2, -1):
                response = client.request("ListOffsets", version, {
                    "replica_id": -1, "topics": [{"name": "orders", "partitions": [
                        {"partition_index": 1, "timestamp": timestamp,
                         "max_num_offsets": 1}]}]})
                (partition,) = response.topics[0].partitions
                assert partition.error_code == 0
                answers.append(partition.old_style_offsets[0] if version == 0
                               else partition.offset)
            assert answers == [0, 3]


@pytest.mark.parametrize("api,body,check", [
    ("OffsetForLeaderEpoch", OFFSET_FOR_LEADER_EPOCH,
     lambda r: r.topics[0].partitions[0].end_offset == 0),
    ("InitProducerId", INIT_PRODUCER_ID,
     lambda r: r.error_code == 0 and r.producer_id >= 0 and r.producer_epoch == 0),
    ("DescribeConfigs", DESCRIBE_TOPIC_CONFIGS,
     lambda r: {c.name: c.value for c in r.results[0].configs}["retention.ms"] == "604800000"),
    ("DescribeCluster", DESCRIBE_CLUSTER,
     lambda r: r.cluster_id == "fakebroker-cluster" and [b.broker_id for b in r.brokers] == [1]),
    ("DeleteRecords", DELETE_RECORDS_TO_END,
     lambda r: r.topics[0].partitions[0].error_code == 0),
])
def test_admin_and_producer_apis_answer_at_every_version(fake_kafka, api, body, check):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        for version in versions_of(api):
            assert check(client.request(api, version, body)), f"{api} v{version}"


def test_create_partitions_and_delete_topics_at_every_version(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        for version in versions_of("CreateTopics"):
            name = f"created-{version}"
            response = client.request("CreateTopics", version, {
                "topics": [{"name": name, "num_partitions": 2, "replication_factor": 1}],
                "timeout_ms": 1000})
            assert response.topics[0].error_code == 0
        for version in versions_of("CreatePartitions"):
            response = client.request("CreatePartitions", version, {
                "topics": [{"name": f"created-{version + 2}", "count": 3, "assignments": None}],
                "timeout_ms": 1000})
            assert response.results[0].error_code == 0
        for version in versions_of("DeleteTopics"):
            name = f"created-{version + 1}"
            topic_id = fake_kafka.call(lambda n=name: fake_kafka.cluster.state.topics[n].id)
            response = client.request("DeleteTopics", version, {
                "topic_names": [name], "topics": [{"name": None, "topic_id": topic_id}],
                "timeout_ms": 1000})
            assert response.responses[0].error_code == 0
    assert "created-3" not in fake_kafka.topics()
