"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments through real admin
clients and the wire: what one node answers on both brokers, leaders moved over several
brokers on the fake alone."""

from __future__ import annotations

import contextlib
import time

import pytest

from fakebroker.wire_client import WireClient

TIMEOUT = 10


def admin(kafka):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka.bootstrap_servers})


def elect(kafka, election_type, partitions):
    from confluent_kafka import TopicPartition

    client = admin(kafka)  # kept until the answer comes: a destroyed client fails its futures
    future = client.elect_leaders(election_type, [TopicPartition(t, p) for t, p in partitions])
    return {(tp.topic, tp.partition): error
            for tp, error in future.result(timeout=TIMEOUT).items()}


def reassign(kafka, topic, partition, replicas):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("AlterPartitionReassignments", 0, {
            "timeout_ms": 10000, "topics": [{"name": topic, "partitions": [
                {"partition_index": partition, "replicas": replicas}]}]})
    assert response.error_code == 0
    answered = response.responses[0].partitions[0]
    return answered.error_code, answered.error_message


def reassigning(kafka, topics=None, broker_id=None):
    """The reassignments in progress, asked of ``broker_id`` (default: the first broker)."""
    at = kafka.bootstrap_servers.split(",")[0] if broker_id is None \
        else address_of(kafka, broker_id)
    with WireClient(at) as client:
        response = client.request("ListPartitionReassignments", 0,
                                  {"timeout_ms": 10000, "topics": topics})
    assert response.error_code == 0
    return {(t.name, p.partition_index): (list(p.replicas), list(p.adding_replicas),
                                          list(p.removing_replicas))
            for t in response.topics for p in t.partitions}


def leader_of(kafka, topic, partition):
    described = admin(kafka).list_topics(topic, timeout=TIMEOUT).topics[topic]
    return described.partitions[partition].leader


# -- one node: the same answers from both brokers ----------------------------------------------


@pytest.mark.fake_kafka(topics={"orders": 2})
def test_electing_the_preferred_leader_that_already_leads_is_not_needed(kafka):
    from confluent_kafka import ElectionType, KafkaError

    errors = elect(kafka, ElectionType.PREFERRED, [("orders", 0), ("orders", 1)])
    assert {key: e.code() for key, e in errors.items()} == {
        ("orders", 0): KafkaError.ELECTION_NOT_NEEDED,
        ("orders", 1): KafkaError.ELECTION_NOT_NEEDED}
    errors = elect(kafka, ElectionType.UNCLEAN, [("orders", 0)])
    assert errors[("orders", 0)].code() == KafkaError.ELECTION_NOT_NEEDED


def elect_on_the_wire(kafka, election_type, topic_partitions):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("ElectLeaders", 2, {
            "election_type": election_type, "timeout_ms": 10000,
            "topic_partitions": topic_partitions})
    return response.error_code, {
        (t.topic, p.partition_id): (p.error_code, p.error_message)
        for t in response.replica_election_results for p in t.partition_result}


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_electing_an_unknown_partition_is_unknown_topic_or_partition(kafka):
    assert elect_on_the_wire(kafka, 0, [{"topic": "nope", "partitions": [0]},
                                        {"topic": "orders", "partitions": [5, 0]}]) == (0, {
        ("nope", 0): (3, "No such topic as nope"),
        ("orders", 5): (3, "No such partition as orders-5"),
        ("orders", 0): (84, "Leader election not needed for topic partition.")})


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_an_unknown_election_type_is_an_invalid_request(kafka):
    assert elect_on_the_wire(kafka, 5, [{"topic": "orders", "partitions": [0]}]) == (42, {
        ("orders", 0): (42, "Unknown election type 5")})


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_electing_every_partition_leaves_out_those_needing_no_election(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("ElectLeaders", 2, {
            "election_type": 0, "timeout_ms": 10000, "topic_partitions": None})
    assert response.error_code == 0
    orders = [t for t in response.replica_election_results if t.topic == "orders"]
    assert [list(t.partition_result) for t in orders] == [[]]


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_reassigning_to_the_replicas_it_has_completes_at_once(kafka):
    only = kafka.brokers[0].id
    assert reassign(kafka, "orders", 0, [only]) == (0, None)
    assert reassigning(kafka) == {}
    assert reassigning(kafka, [{"name": "orders", "partition_indexes": [0]}]) == {}
    assert leader_of(kafka, "orders", 0) == only


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_reassigning_to_unknown_or_repeated_brokers_is_an_invalid_replica_assignment(kafka):
    only = kafka.brokers[0].id
    assert reassign(kafka, "orders", 0, [only, 4242]) == (
        39, "The manual partition assignment includes broker 4242, but no such broker is "
            "registered.")
    assert reassign(kafka, "orders", 0, [only, only]) == (
        39, f"The manual partition assignment includes the broker {only} more than once.")
    assert reassign(kafka, "orders", 0, []) == (
        39, "The manual partition assignment includes an empty replica list.")


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_cancelling_no_reassignment_or_an_unknown_partition(kafka):
    assert reassign(kafka, "orders", 0, None) == (85, None)
    assert reassign(kafka, "nope", 0, None) == (3, "Unable to find a topic named nope.")
    assert reassign(kafka, "orders", 3, None) == (3, "Unable to find partition orders:3.")


# -- several brokers: the fake alone ------------------------------------------------------------


@contextlib.contextmanager
def consumer_of(kafka, topic):
    """A confluent-kafka group member of ``topic`` reading from the start (no periodic
    metadata refresh to lean on: it learns a moved leader from the brokers' answers)."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "follow",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        yield consumer
    finally:
        consumer.close()


def read(consumer, count):
    """The values of the next ``count`` records (fewer if 20 s pass without them)."""
    seen = []
    deadline = time.monotonic() + 20
    while len(seen) < count and time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            seen.append(message.value())
    return seen


def consume(kafka, topic, count):
    with consumer_of(kafka, topic) as consumer:
        return read(consumer, count)


def produce(kafka, topic, values):
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for value in values:
        producer.produce(topic, value=value, partition=0)
    assert producer.flush(TIMEOUT) == 0


@pytest.mark.fake_only("three brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 2}})
def test_a_reassignment_moves_the_leader_and_clients_follow_it(kafka):
    partition = kafka.call(lambda: kafka.cluster.state.partition("orders", 0))
    old_leader, epoch = partition.leader, partition.leader_epoch
    produce(kafka, "orders", [b"before"])
    elsewhere = next(b.id for b in kafka.brokers if b.id not in partition.replicas)
    with consumer_of(kafka, "orders") as consumer:
        assert read(consumer, 1) == [b"before"]
        assert reassign(kafka, "orders", 0, [elsewhere]) == (0, None)
        assert reassigning(kafka) == {}
        assert leader_of(kafka, "orders", 0) == elsewhere
        moved = kafka.call(lambda: kafka.cluster.state.partition("orders", 0))
        assert (moved.replicas, moved.isr, moved.leader_epoch) == ([elsewhere], [elsewhere],
                                                                    epoch + 1)
        assert old_leader != elsewhere
        produce(kafka, "orders", [b"after"])
        assert read(consumer, 1) == [b"after"]
    assert kafka.journal(api="Fetch", broker=elsewhere)  # it fetched from the new leader


@pytest.mark.fake_only("three brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 3}})
def test_the_preferred_leader_is_elected_back_after_the_leader_moved(kafka):
    from confluent_kafka import ElectionType, KafkaError

    preferred = kafka.call(lambda: kafka.cluster.state.partition("orders", 0).replicas[0])
    moved_to = kafka.move_leader("orders", 0)
    assert leader_of(kafka, "orders", 0) == moved_to != preferred
    errors = elect(kafka, ElectionType.PREFERRED, [("orders", 0)])
    assert errors[("orders", 0)] is None
    assert leader_of(kafka, "orders", 0) == preferred
    errors = elect(kafka, ElectionType.PREFERRED, [("orders", 0)])
    assert errors[("orders", 0)].code() == KafkaError.ELECTION_NOT_NEEDED
    produce(kafka, "orders", [b"x"])
    assert consume(kafka, "orders", 1) == [b"x"]


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_a_reassignment_to_a_broker_that_is_down_waits_for_it(kafka):
    leader = kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader)
    other = next(b.id for b in kafka.brokers if b.id != leader)
    kafka.broker_down(other)
    assert reassign(kafka, "orders", 0, [other]) == (0, None)
    assert reassigning(kafka) == {("orders", 0): ([other, leader], [other], [leader])}
    kafka.broker_up(other)
    assert reassigning(kafka) == {}
    assert kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader) == other
    assert reassign(kafka, "orders", 0, None)[0] == 85


# -- the Java AdminClient: alterPartitionReassignments, listPartitionReassignments ---------------


def java_reassign(kafka, topic, partition, replicas):
    from tests.clients.java import run_harness

    (line,) = run_harness("admin-reassign", "--bootstrap", kafka.bootstrap_servers,
                          "--topic", topic, "--partition", str(partition),
                          "--replicas", replicas)
    return line


@pytest.mark.java
@pytest.mark.fake_kafka(topics={"orders": 1})
def test_java_admin_reassigns_to_the_only_broker_and_refuses_what_kafka_refuses(kafka):
    only = kafka.brokers[0].id
    assert java_reassign(kafka, "orders", 0, str(only)) == {"error": None, "reassigning": []}
    assert java_reassign(kafka, "orders", 0, f"{only},4242")["error"] == \
        "InvalidReplicaAssignmentException"
    assert java_reassign(kafka, "orders", 0, "cancel")["error"] == \
        "NoReassignmentInProgressException"
    assert java_reassign(kafka, "nope", 0, str(only))["error"] == \
        "UnknownTopicOrPartitionException"


@pytest.mark.java
@pytest.mark.fake_only("three brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_java_admin_moves_a_partition_to_other_brokers(kafka):
    leader = kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader)
    others = [b.id for b in kafka.brokers if b.id != leader]
    moved = java_reassign(kafka, "orders", 0, ",".join(map(str, others)))
    assert moved == {"error": None, "reassigning": []}
    assert leader_of(kafka, "orders", 0) == others[0]
    produce(kafka, "orders", [b"moved"])
    assert consume(kafka, "orders", 1) == [b"moved"]


# -- elections after natural failures, on the fake ----------------------------------------------


def partition_state(kafka, topic="orders", index=0):
    return kafka.call(lambda: (lambda p: (p.leader, list(p.replicas), list(p.isr)))(
        kafka.cluster.state.partition(topic, index)))


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 2}})
def test_the_preferred_leader_down_is_not_available_and_the_leader_stays(kafka):
    first, second = partition_state(kafka)[1]
    kafka.broker_down(first)
    assert partition_state(kafka)[0] == second
    assert elect_on_the_wire_at(kafka, second, 0) == (0, {
        ("orders", 0): (80, "The preferred leader was not available.")})
    assert partition_state(kafka)[0] == second
    kafka.broker_up(first)
    assert elect_on_the_wire_at(kafka, second, 0) == (0, {("orders", 0): (0, None)})
    assert partition_state(kafka)[0] == first


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_an_offline_partition_without_a_live_replica_has_no_eligible_leader(kafka):
    (only,) = partition_state(kafka)[1]
    asking = next(b.id for b in kafka.brokers if b.id != only)
    kafka.broker_down(only)
    assert elect_on_the_wire_at(kafka, asking, 1) == (0, {
        ("orders", 0): (83, "Eligible topic partition leaders are not available.")})
    assert elect_on_the_wire_at(kafka, asking, 0) == (0, {
        ("orders", 0): (80, "The preferred leader was not available.")})


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 2}})
def test_an_unclean_election_gives_an_offline_partition_a_live_replica(kafka):
    leader, replicas, _ = partition_state(kafka)
    follower = next(r for r in replicas if r != leader)
    outsider = next(b.id for b in kafka.brokers if b.id not in replicas)
    kafka.broker_down(follower)  # leaves the ISR
    kafka.broker_down(leader)  # no live in-sync replica: offline
    kafka.broker_up(follower)
    assert elect_on_the_wire_at(kafka, outsider, 1) == (0, {("orders", 0): (0, None)})
    assert partition_state(kafka)[0] == follower
    assert elect_on_the_wire_at(kafka, outsider, 1) == (0, {
        ("orders", 0): (84, "Leader election not needed for topic partition.")})


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_cancelling_a_reassignment_in_progress_puts_the_replicas_back(kafka):
    leader, replicas, _ = partition_state(kafka)
    other = next(b.id for b in kafka.brokers if b.id != leader)
    kafka.broker_down(other)
    epoch = kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader_epoch)
    assert reassign_at(kafka, leader, [other]) == (0, None)
    assert reassign_at(kafka, leader, None) == (0, None)
    assert partition_state(kafka) == (leader, replicas, [leader])
    # the replica it was adding is fenced by a new epoch
    assert kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader_epoch) == \
        epoch + 1
    kafka.broker_up(other)
    assert partition_state(kafka) == (leader, replicas, [leader])


@pytest.mark.fake_only("three brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_a_fetch_parked_on_the_old_leader_answers_when_a_reassignment_moves_it(kafka):
    from tests.bodies import fetch_body

    leader = partition_state(kafka)[0]
    other = next(b.id for b in kafka.brokers if b.id != leader)
    started = time.monotonic()
    with WireClient(address_of(kafka, leader)) as waiting:
        waiting.send("Fetch", 12, fetch_body("orders", 0, 0, max_wait_ms=30_000))
        assert reassign_at(kafka, other, [other]) == (0, None)
        _, response = waiting.receive("Fetch", 12)
    assert response.responses[0].partitions[0].error_code == 6  # NOT_LEADER_OR_FOLLOWER
    assert time.monotonic() - started < 10


def address_of(kafka, broker_id):
    return next(f"{b.host}:{b.port}" for b in kafka.brokers if b.id == broker_id)


def elect_on_the_wire_at(kafka, broker_id, election_type):
    with WireClient(address_of(kafka, broker_id)) as client:
        response = client.request("ElectLeaders", 2, {
            "election_type": election_type, "timeout_ms": 10000,
            "topic_partitions": [{"topic": "orders", "partitions": [0]}]})
    return response.error_code, {
        (t.topic, p.partition_id): (p.error_code, p.error_message)
        for t in response.replica_election_results for p in t.partition_result}


def reassign_at(kafka, broker_id, replicas):
    with WireClient(address_of(kafka, broker_id)) as client:
        response = client.request("AlterPartitionReassignments", 0, {
            "timeout_ms": 10000, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "replicas": replicas}]}]})
    answered = response.responses[0].partitions[0]
    return answered.error_code, answered.error_message


@pytest.mark.fake_only("two brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_a_replication_factor_change_is_refused_when_not_allowed(kafka):
    leader, replicas, _ = partition_state(kafka)
    with WireClient(address_of(kafka, leader)) as client:
        response = client.request("AlterPartitionReassignments", 1, {
            "timeout_ms": 10000, "allow_replication_factor_change": False,
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "replicas": [1, 2]}]}]})
    answered = response.responses[0].partitions[0]
    assert (answered.error_code, answered.error_message) == (
        38, "The replication factor is changed from 1 to 2")
    assert response.allow_replication_factor_change is False
    assert partition_state(kafka)[1] == replicas


@pytest.mark.fake_only("broker_down, a natural failure of the fake")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_an_offline_partition_reassigned_waits_for_a_leader_to_catch_up_from(kafka):
    leader, _, _ = partition_state(kafka)
    other = next(b.id for b in kafka.brokers if b.id != leader)
    kafka.broker_down(leader)
    assert reassign_at(kafka, other, [other]) == (0, None)
    assert reassigning(kafka, broker_id=other) == {
        ("orders", 0): ([other, leader], [other], [leader])}
    kafka.broker_up(leader)
    assert reassigning(kafka) == {}
    assert partition_state(kafka) == (other, [other], [other])


# -- kafka-python's admin client ----------------------------------------------------------------


def kafka_python_admin(kafka):
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers,
                            request_timeout_ms=TIMEOUT * 1000)


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_kafka_python_admin_reassigns_lists_and_elects_on_one_node(kafka):
    from kafka import TopicPartition
    from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError

    only = kafka.brokers[0].id
    tp = TopicPartition("orders", 0)
    client = kafka_python_admin(kafka)
    try:
        assert client.alter_partition_reassignments({tp: [only]}) == {tp: None}
        assert client.alter_partition_reassignments({tp: [only, 4242]}) == {
            tp: InvalidReplicationAssignmentError}
        assert client.alter_partition_reassignments({tp: None}) == {
            tp: NoReassignmentInProgressError}
        assert client.list_partition_reassignments() == {}
        response = client.elect_leaders(0, {"orders": [0]}, raise_errors=False)
        assert [(p[0], p[1]) for t in response.replica_election_results for p in t[1]] == [
            (0, 84)]
    finally:
        client.close()


@pytest.mark.fake_only("three brokers (the real one has one node)")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": {"partitions": 1, "replication_factor": 1}})
def test_kafka_python_admin_moves_a_partition_and_lists_one_waiting_for_a_broker(kafka):
    from kafka import TopicPartition

    tp = TopicPartition("orders", 0)
    leader = partition_state(kafka)[0]
    up, down = [b.id for b in kafka.brokers if b.id != leader]
    kafka.broker_down(down)
    client = kafka_python_admin(kafka)
    try:
        assert client.alter_partition_reassignments({tp: [up]}) == {tp: None}
        assert partition_state(kafka) == (up, [up], [up])
        assert client.alter_partition_reassignments({tp: [down]}) == {tp: None}
        assert client.list_partition_reassignments() == {tp: {
            "replicas": [down, up], "adding_replicas": [down], "removing_replicas": [up]}}
    finally:
        client.close()


# -- a refusal of the whole request ------------------------------------------------------------


@pytest.mark.fake_only("fault rules")
@pytest.mark.fake_kafka(topics={"orders": 2})
def test_a_whole_request_error_goes_at_the_top_and_on_every_partition(kafka):
    """As the getErrorResponse of each puts an error its controller raised (NOT_CONTROLLER,
    REQUEST_TIMED_OUT, a cluster authorization refusal)."""
    kafka.faults.add(api="ElectLeaders", error="REQUEST_TIMED_OUT", count=1)
    assert elect_on_the_wire(kafka, 0, [{"topic": "orders", "partitions": [0, 1]}]) == (7, {
        ("orders", 0): (7, None), ("orders", 1): (7, None)})
    kafka.faults.add(api="AlterPartitionReassignments", error="REQUEST_TIMED_OUT", count=1)
    with WireClient(kafka.bootstrap_servers) as client:
        response = client.request("AlterPartitionReassignments", 0, {
            "timeout_ms": 10000, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "replicas": [1]}]}]})
    assert response.error_code == 7
    assert [(p.error_code, p.error_message) for t in response.responses
            for p in t.partitions] == [(7, None)]
