"""Kafka's internal topics as Kafka 4.4 lists and guards them, on both brokers
(``--kafka=both``): ``__consumer_offsets`` once a group coordinator was looked up,
``__transaction_state`` once a transaction coordinator was; 50 partitions each, internal,
with the configs Kafka sets; clients may not write them.

The session's real broker has made both topics by the time most tests run, so each test
looks a coordinator up first (as every client does): from then on both brokers agree.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body

pytestmark = pytest.mark.fake_kafka(topics={"events": 1})
OFFSETS, TRANSACTIONS = "__consumer_offsets", "__transaction_state"
SHARE_STATE = "__share_group_state"
COMPACTED = {"cleanup.policy": "compact", "segment.bytes": "104857600"}


def client(kafka: Any) -> WireClient:
    return WireClient(kafka.bootstrap_servers.split(",")[0])


def coordinators_looked_up(kafka: Any) -> None:
    """FindCoordinator for a group and a transactional id, until both answer (Kafka answers
    COORDINATOR_NOT_AVAILABLE while it makes the topic)."""
    with client(kafka) as wire:
        for key_type in (0, 1):
            wait_for(lambda key_type=key_type: wire.request("FindCoordinator", 4, {
                "key_type": key_type, "coordinator_keys": ["internal-topics"]}
            ).coordinators[0].error_code == 0, "a coordinator")


def all_topics(kafka: Any) -> dict[str, tuple[bool, int]]:
    """Name -> (is_internal, partitions) of an all-topics Metadata v12 answer."""
    with client(kafka) as wire:
        answer = wire.request("Metadata", 12, {"topics": None,
                                               "allow_auto_topic_creation": False})
    return {t.name: (t.is_internal, len(t.partitions)) for t in answer.topics}


def test_metadata_and_describe_topic_partitions_list_both_as_internal(kafka) -> None:
    coordinators_looked_up(kafka)
    internal = {OFFSETS: (True, 50), TRANSACTIONS: (True, 50)}
    wait_for(lambda: internal.items() <= all_topics(kafka).items(), "both internal topics")
    # A shared Kafka keeps the share coordinator's topic an earlier test's share group made
    # (internal topics outlive the reset): it is not this test's.
    assert {name: listed for name, listed in all_topics(kafka).items()
            if name != SHARE_STATE} == dict(internal, events=(False, 1))
    with client(kafka) as wire:
        paged = wire.request("DescribeTopicPartitions", 0, {
            "topics": [], "response_partition_limit": 2000, "cursor": None})
    assert [(t.name, t.is_internal, len(t.partitions)) for t in paged.topics
            if t.name != SHARE_STATE] == [
        (OFFSETS, True, 50), (TRANSACTIONS, True, 50), ("events", False, 1)]


def test_their_configs_are_the_ones_kafka_sets(kafka) -> None:
    coordinators_looked_up(kafka)
    with client(kafka) as wire:
        answer = wire.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 2, "resource_name": name, "configuration_keys": None}
            for name in (OFFSETS, TRANSACTIONS)],
            "include_synonyms": False, "include_documentation": False})
    set_on = {r.resource_name: {c.name: c.value for c in r.configs if c.config_source == 1}
              for r in answer.results}  # DYNAMIC_TOPIC_CONFIG
    assert set_on == {
        OFFSETS: dict(COMPACTED, **{"compression.type": "producer"}),
        TRANSACTIONS: dict(COMPACTED, **{"compression.type": "uncompressed",
                                         "min.insync.replicas": "1",
                                         "unclean.leader.election.enable": "false"})}


def test_a_client_may_not_produce_to_them_nor_delete_their_records(kafka) -> None:
    coordinators_looked_up(kafka)
    with client(kafka) as wire:
        produced = wire.request("Produce", 9, produce_body(OFFSETS, 0, batch([b"x"])))
        deleted = wire.request("DeleteRecords", 2, {"timeout_ms": 5000, "topics": [
            {"name": OFFSETS, "partitions": [{"partition_index": 0, "offset": 0}]}]})
    (partition,) = produced.responses[0].partition_responses
    assert (partition.error_code, partition.error_message, partition.base_offset) == (
        17, None, -1)  # INVALID_TOPIC_EXCEPTION
    (partition,) = deleted.topics[0].partitions
    assert (partition.error_code, partition.low_watermark) == (17, -1)


def test_create_topics_finds_them_existing_and_create_partitions_may_grow_them(kafka) -> None:
    coordinators_looked_up(kafka)
    with client(kafka) as wire:
        created = wire.request("CreateTopics", 7, {"timeout_ms": 5000, "validate_only": True,
                                                   "topics": [{
            "name": OFFSETS, "num_partitions": 1, "replication_factor": 1,
            "assignments": [], "configs": []}]})
        grown = wire.request("CreatePartitions", 3, {"timeout_ms": 5000, "validate_only": True,
                                                     "topics": [{
            "name": OFFSETS, "count": 60, "assignments": None}]})
    assert [(t.error_code, t.error_message) for t in created.topics] == [
        (36, f"Topic '{OFFSETS}' already exists.")]  # TOPIC_ALREADY_EXISTS
    assert [(t.error_code, t.error_message) for t in grown.results] == [(0, None)]


def test_a_consumer_may_read_the_offsets_topic(kafka) -> None:
    coordinators_looked_up(kafka)
    with client(kafka) as wire:
        answer = wire.request("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
            "forgotten_topics_data": [], "topics": [{"topic": OFFSETS, "partitions": [{
                "partition": 49, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
                "current_leader_epoch": -1, "log_start_offset": -1,
                "last_fetched_epoch": -1}]}]})
    (partition,) = answer.responses[0].partitions
    assert partition.error_code == 0 and partition.high_watermark >= 0


@pytest.mark.fake_only("a fresh cluster: the session's real broker has made both topics")
def test_a_fresh_cluster_lists_no_internal_topic_until_a_coordinator_is_looked_up(
        kafka) -> None:
    assert all_topics(kafka) == {"events": (False, 1)}
    with client(kafka) as wire:
        found = wire.request("FindCoordinator", 4, {
            "key_type": 0, "coordinator_keys": [f"group-{uuid.uuid4().hex}"]})
    assert found.coordinators[0].error_code == 0  # Kafka: COORDINATOR_NOT_AVAILABLE first
    assert all_topics(kafka) == {"events": (False, 1), OFFSETS: (True, 50)}


@pytest.mark.fake_only("a fresh cluster: the session's real broker has made both topics")
def test_metadata_naming_one_with_auto_creation_makes_it_as_its_coordinator_would(
        kafka) -> None:
    with client(kafka) as wire:
        first = wire.request("Metadata", 12, {"topics": [{"name": TRANSACTIONS}],
                                              "allow_auto_topic_creation": True})
    assert [(t.name, t.error_code) for t in first.topics] == [(TRANSACTIONS, 3)]
    assert all_topics(kafka)[TRANSACTIONS] == (True, 50)
