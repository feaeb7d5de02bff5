"""Three brokers, one test body: the fake's ``brokers=3`` and, with ``--kafka=real
--kafka-nodes 3``, a real KRaft cluster of three nodes the plugin starts (``local_kafka``):
replication factor 3, ``acks=all``, a partition's leader taken down and brought back, a
partition left without a leader and what DescribeTopicPartitions says of it (KIP-966's
eligible leader replicas).

With fewer real nodes (``--kafka-nodes`` left at 1) the real side cannot have the marker's
three brokers, and these tests skip there saying so (tests/dual.py); CI's 3-node step runs
them.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient

THREE = pytest.mark.fake_kafka(brokers=3)


def partition(kafka, topic: str):
    """Partition 0 of ``topic`` as Metadata (v12) describes it, asked of the first broker up,
    once that broker knows the topic (Kafka's brokers learn a new topic from the controller's
    metadata log, each in its own time)."""
    def described():
        for address in kafka.bootstrap_servers.split(","):
            try:
                client = WireClient(address)
            except ConnectionRefusedError:
                continue  # the broker taken down
            with client:
                answer = client.request("Metadata", 12, {"topics": [{"name": topic}],
                                                         "allow_auto_topic_creation": False})
            (found,) = answer.topics
            return found.partitions[0] if found.error_code == 0 and found.partitions else None
        raise AssertionError(f"no broker of {kafka.bootstrap_servers} takes a connection")
    return wait_for(described, f"a broker's metadata of {topic}")


def described(kafka, topic: str):
    """Partition 0 of ``topic`` as DescribeTopicPartitions (v0) describes it, asked of the
    first broker up."""
    for address in kafka.bootstrap_servers.split(","):
        try:
            client = WireClient(address)
        except ConnectionRefusedError:
            continue  # the broker taken down
        with client:
            answer = client.request("DescribeTopicPartitions", 0, {
                "topics": [{"name": topic}], "response_partition_limit": 10, "cursor": None})
        (found,) = answer.topics
        assert found.error_code == 0, found
        return found.partitions[0]
    raise AssertionError(f"no broker of {kafka.bootstrap_servers} takes a connection")


def three_replicas(kafka, base: str) -> str:
    """A new one-partition topic on all three brokers (made once the test knows there are
    three: the marker's topics are made before it starts); its name."""
    topic = kafka.name(base)
    kafka.create_topic(topic, partitions=1, replication_factor=3)
    return topic


def produce_all(kafka, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True, "log_level": 0})
    producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0


@THREE
def test_the_cluster_has_three_brokers_and_a_topic_on_all_three_in_sync(kafka):
    assert [b.id for b in kafka.brokers] == [1, 2, 3]
    orders = partition(kafka, three_replicas(kafka, "orders"))
    assert sorted(orders.replica_nodes) == [1, 2, 3]
    assert sorted(orders.isr_nodes) == [1, 2, 3]


@THREE
def test_acks_all_goes_on_through_a_leader_taken_down_and_back(kafka):
    orders = three_replicas(kafka, "orders")
    produce_all(kafka, orders, b"before")
    leader = partition(kafka, orders).leader_id
    kafka.broker_down(leader)
    try:
        moved = wait_for(lambda: (p := partition(kafka, orders)).leader_id not in (leader, -1)
                         and p, "a new leader")
        assert leader not in moved.isr_nodes
        produce_all(kafka, orders, b"after")
        assert [r.value for r in kafka.records(orders, 0)] == [b"before", b"after"]
    finally:
        kafka.broker_up(leader)
    assert leader in [b.id for b in kafka.brokers]


@THREE
def test_a_partition_whose_only_replica_is_down_has_no_leader_in_a_new_epoch(kafka):
    """Its Metadata: LEADER_NOT_AVAILABLE, leader -1, no ISR, the replica offline, and the
    leader epoch bumped (Kafka's controller records the leaderless partition in an epoch of
    its own); the replica back, it leads again in the epoch after that."""
    lonely = kafka.name("lonely")
    kafka.create_topic(lonely, partitions=1, replication_factor=1)
    before = partition(kafka, lonely)
    (replica,) = before.replica_nodes
    kafka.broker_down(replica)
    try:
        down = wait_for(lambda: (p := partition(kafka, lonely)).leader_id == -1 and p,
                        "the partition without a leader")
        assert (down.error_code, list(down.isr_nodes), list(down.offline_replicas)) == (
            5, [], [replica])  # LEADER_NOT_AVAILABLE
        assert down.leader_epoch == before.leader_epoch + 1
    finally:
        kafka.broker_up(replica)
    back = wait_for(lambda: (p := partition(kafka, lonely)).leader_id == replica and p,
                    "the replica leading again")
    assert (back.error_code, back.leader_epoch) == (0, before.leader_epoch + 2)


@THREE
def test_a_leaderless_partition_keeps_its_last_leader_as_eligible_leader_replica(kafka):
    """KIP-966, on by default in Kafka 4.4 (eligible.leader.replicas.version 1): the only
    in-sync replica shut down cleanly is the partition's eligible leader replica and last
    known ELR, so it may lead again when it returns; once it does, both are empty."""
    lonely = kafka.name("lonely")
    kafka.create_topic(lonely, partitions=1, replication_factor=1)
    (replica,) = partition(kafka, lonely).replica_nodes
    assert (list(described(kafka, lonely).eligible_leader_replicas),
            list(described(kafka, lonely).last_known_elr)) == ([], [])
    kafka.broker_down(replica)
    try:
        down = wait_for(lambda: (p := described(kafka, lonely)).leader_id == -1 and p,
                        "the partition without a leader")
        assert (list(down.isr_nodes), list(down.eligible_leader_replicas),
                list(down.last_known_elr)) == ([], [replica], [replica])
    finally:
        kafka.broker_up(replica)
    back = wait_for(lambda: (p := described(kafka, lonely)).leader_id == replica and p,
                    "the replica leading again")
    assert (list(back.isr_nodes), list(back.eligible_leader_replicas),
            list(back.last_known_elr)) == ([replica], [], [])
