"""Every served API answers at every version it advertises, with the right fields.

These tests speak the wire protocol directly (fakebroker/wire_client.py) so they can pick
exact versions; the real-client tests cover what clients actually negotiate. They run on the
fake and on Apache Kafka (``--kafka=both``): each broker is asked at the versions it
advertises.
"""

from __future__ import annotations

import pytest

from fakebroker.api import HANDLERS, served_versions
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.records import decode_records
from fakebroker.protocol.specs import api_keys_by_name, api_spec
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
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

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})


def advertised(kafka) -> dict[int, tuple[int, int]]:
    """API key -> (min, max) version, as the broker's ApiVersions answer advertises them."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("ApiVersions", 3, {"client_software_name": "wire",
                                                     "client_software_version": "1.0"})
    assert response.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def versions_of(kafka, name: str) -> list[int]:
    """Every version of API ``name`` the broker advertises (each one our codecs must know)."""
    key = api_keys_by_name()[name]
    low, high = advertised(kafka)[key]
    versions = list(range(low, high + 1))
    assert set(versions) <= api_spec(key).versions, f"{name}: unknown versions advertised"
    return versions


def metadata(kafka, *topics: str, version: int = 12):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        return client.request("Metadata", version, {
            "topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False})


def topic_id(kafka, topic: str):
    """A topic's id, as Metadata v10+ names it."""
    (found,) = metadata(kafka, topic).topics
    assert found.error_code == 0 and found.topic_id != ZERO_UUID
    return found.topic_id


def leader_of(kafka, topic: str, partition: int) -> str:
    """host:port of a partition's leader, as Metadata names it."""
    answer = metadata(kafka, topic)
    leader = next(p.leader_id for p in answer.topics[0].partitions
                  if p.partition_index == partition)
    broker = next(b for b in answer.brokers if b.node_id == leader)
    return f"{broker.host}:{broker.port}"


def test_api_versions_at_every_version_advertises_each_served_api_up_to_its_newest_stable(
        kafka):
    newest_stable = {key: api_spec(key).max_stable_version for key in HANDLERS}
    with WireClient(kafka.bootstrap_servers) as client:
        for version in versions_of(kafka, "ApiVersions"):
            body = {"client_software_name": "wire", "client_software_version": "1.0"}
            response = client.request("ApiVersions", version, body)
            assert response.error_code == 0
            advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            assert {key: advertised[key][1] for key in HANDLERS} == newest_stable
            assert advertised[0] == (0, 13)  # Produce: v0-2 still served (Kafka 4 kept them)
            assert advertised[1][1] == 18 and advertised[22][1] == 5  # InitProducerId v6: unstable


@pytest.mark.fake_only("which APIs and oldest versions fakebroker serves: those of Kafka 3.9 "
                       "(Kafka 4 dropped some old versions, KIP-896, and serves more APIs)")
def test_the_fake_advertises_exactly_the_apis_it_serves_from_kafka_3_9s_oldest_versions(kafka):
    advertised_ = advertised(kafka)
    assert set(advertised_) == set(HANDLERS)
    for key in HANDLERS:
        assert advertised_[key][0] == min(served_versions(key)), api_spec(key).name
    assert advertised_[1] == (0, 18)


def test_metadata_at_every_version_lists_brokers_and_topic_partitions(kafka):
    broker_ids = [b.id for b in kafka.brokers]
    with WireClient(kafka.bootstrap_servers) as client:
        for version in versions_of(kafka, "Metadata"):
            response = client.request("Metadata", version, {"topics": [{"name": "orders"}]})
            assert [b.node_id for b in response.brokers] == broker_ids == [1]
            (topic,) = response.topics
            assert topic.error_code == 0
            assert [p.partition_index for p in topic.partitions] == [0, 1]
            assert all(p.leader_id == 1 for p in topic.partitions)
            if version >= 10:
                assert topic.topic_id != ZERO_UUID


def produce_and_fetch_every_version(kafka, produce_versions: list[int]) -> list[int]:
    """Produce one record at each of ``produce_versions`` (magic 1 below v3), then fetch
    them all at every advertised Fetch version; returns the magic byte of the first entry
    each Fetch version got."""
    orders_id = topic_id(kafka, "orders")
    first_magic = []
    with WireClient(kafka.bootstrap_servers) as client:
        for offset, version in enumerate(produce_versions):
            records = batch([f"p{version}".encode()], magic=2 if version >= 3 else 1)
            response = client.request("Produce", version,
                                      produce_body("orders", 0, records, orders_id))
            (partition,) = response.responses[0].partition_responses
            assert (partition.error_code, partition.base_offset) == (0, offset), f"v{version}"
        for version in versions_of(kafka, "Fetch"):
            response = client.request("Fetch", version, fetch_body("orders", 0, 0, orders_id))
            (partition,) = response.responses[0].partitions
            assert partition.error_code == 0
            assert partition.high_watermark == len(produce_versions)
            values = [r.value for r in decode_records(partition.records)]
            assert values == [f"p{v}".encode() for v in produce_versions], f"Fetch v{version}"
            first_magic.append(partition.records[16])
    return first_magic


def test_produce_from_v3_and_fetch_at_every_version_round_trip_records(kafka):
    produce_versions = [v for v in versions_of(kafka, "Produce") if v >= 3]
    first_magic = produce_and_fetch_every_version(kafka, produce_versions)
    # Fetch v0-1 read magic 0, v2-3 magic 1 (down-converted), v4+ the stored magic 2 batches.
    assert first_magic == [0 if v <= 1 else 1 if v <= 3 else 2
                           for v in versions_of(kafka, "Fetch")]


@pytest.mark.fake_only("Produce v0-2: Kafka 4 advertises them (for librdkafka, KAFKA-18659) "
                       "but refuses them and closes the connection; the fake serves them as "
                       "Kafka 3.9 did")
def test_the_fake_serves_produce_v0_to_v2_with_magic_1_entries(kafka):
    first_magic = produce_and_fetch_every_version(kafka, versions_of(kafka, "Produce"))
    # The log stores magic 2 (the magic-1 entries were up-converted, as Kafka 3.9 does them):
    # Fetch v0-1 read magic 0, v2-3 magic 1, v4+ the stored batches.
    assert first_magic == [0 if v <= 1 else 1 if v <= 3 else 2
                           for v in versions_of(kafka, "Fetch")]


def test_list_offsets_at_every_version_answers_earliest_and_latest(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        client.request("Produce", 9, produce_body("orders", 1, batch([b"a", b"b", b"c"])))
        for version in versions_of(kafka, "ListOffsets"):
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


def describes_the_cluster_metadata_names(response, kafka) -> bool:
    answer = metadata(kafka)
    return (response.cluster_id == answer.cluster_id is not None
            and [b.broker_id for b in response.brokers] == [b.id for b in kafka.brokers])


@pytest.mark.parametrize("api,body,check", [
    ("OffsetForLeaderEpoch", OFFSET_FOR_LEADER_EPOCH,
     lambda r, _: r.topics[0].partitions[0].end_offset == 0),
    ("InitProducerId", INIT_PRODUCER_ID,
     lambda r, _: r.error_code == 0 and r.producer_id >= 0 and r.producer_epoch == 0),
    ("DescribeConfigs", DESCRIBE_TOPIC_CONFIGS,
     lambda r, _: {c.name: c.value for c in r.results[0].configs}["retention.ms"] == "604800000"),
    ("DescribeCluster", DESCRIBE_CLUSTER, describes_the_cluster_metadata_names),
    ("DeleteRecords", DELETE_RECORDS_TO_END,
     lambda r, _: r.topics[0].partitions[0].error_code == 0),
])
def test_admin_and_producer_apis_answer_at_every_version(kafka, api, body, check):
    with WireClient(kafka.bootstrap_servers) as client:
        for version in versions_of(kafka, api):
            assert check(client.request(api, version, body), kafka), f"{api} v{version}"


def create_topics(client: WireClient, *names: str, version: int = 7) -> None:
    response = client.request("CreateTopics", version, {"topics": [
        {"name": name, "num_partitions": 2, "replication_factor": 1} for name in names],
        "timeout_ms": 5000})
    assert [t.error_code for t in response.topics] == [0] * len(names), f"v{version}"


def test_create_topics_create_partitions_and_delete_topics_at_every_version(kafka):
    create_versions = versions_of(kafka, "CreateTopics")
    grow_versions = versions_of(kafka, "CreatePartitions")
    delete_versions = versions_of(kafka, "DeleteTopics")
    with WireClient(kafka.bootstrap_servers) as client:
        for version in create_versions:
            create_topics(client, f"created-{version}", version=version)
        create_topics(client, *(f"grown-{v}" for v in grow_versions),
                      *(f"deleted-{v}" for v in delete_versions))
        for version in grow_versions:
            response = client.request("CreatePartitions", version, {
                "topics": [{"name": f"grown-{version}", "count": 3, "assignments": None}],
                "timeout_ms": 5000})
            assert response.results[0].error_code == 0, f"v{version}"
        for version in delete_versions:
            name = f"deleted-{version}"
            by_id = version >= 6  # from v6 a topic is named by its id
            response = client.request("DeleteTopics", version, {
                "topic_names": [name], "timeout_ms": 5000,
                "topics": [{"name": None if by_id else name,
                            "topic_id": topic_id(kafka, name) if by_id else ZERO_UUID}]})
            assert response.responses[0].error_code == 0, f"v{version}"
    expected = {**{f"created-{v}": 2 for v in create_versions},
                **{f"grown-{v}": 3 for v in grow_versions}, "orders": 2}
    # Kafka's brokers learn of a deletion from the metadata log: soon, not at once.
    eventually(lambda: kafka.topics() == expected, f"the topics to be {expected}")


def features(kafka, version: int) -> tuple[list, list]:
    """(supported, finalized) as an ApiVersions answer at ``version`` lists them, in its order.
    Their epoch is at least a freshly formatted Kafka 4.4 node's, 17: Kafka's is the offset of
    its metadata log, which grows with every metadata change; the fake's stays at 17."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        answer = client.request("ApiVersions", version, {"client_software_name": "wire",
                                                         "client_software_version": "1.0"})
    return ([(f.name, f.min_version, f.max_version) for f in answer.supported_features],
            [(f.name, f.min_version_level, f.max_version_level)
             for f in answer.finalized_features])
    assert answer.finalized_features_epoch >= 17


KAFKA_4_4_FINALIZED = [
    ("group.version", 1, 1), ("kraft.version", 1, 1), ("share.version", 2, 2),
    ("metadata.version", 33, 33), ("streams.version", 1, 1), ("transaction.version", 2, 2),
    ("eligible.leader.replicas.version", 1, 1)]


@pytest.mark.parametrize("version", [4, 5])
def test_api_versions_lists_the_seven_features_of_kafka_4_4(kafka, version):
    assert features(kafka, version) == ([
        ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 33),
        ("share.version", 0, 2), ("streams.version", 0, 1), ("transaction.version", 0, 2),
        ("eligible.leader.replicas.version", 0, 1)], KAFKA_4_4_FINALIZED)


def test_api_versions_v3_leaves_out_supported_features_of_minimum_0(kafka):
    # v3 clients cannot read a supported minimum of 0 (KAFKA-17011)
    assert features(kafka, 3) == ([("metadata.version", 7, 33)], KAFKA_4_4_FINALIZED)
