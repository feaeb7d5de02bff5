"""Boundary values the differential fuzzer found answered otherwise than Kafka answers them
(tests/fuzz, ``python -m tests.fuzz differential``): each rule as Kafka 4.4 applies it, on the
fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, produce_body
from tests.test_wire_versions import leader_of, topic_id, versions_of

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})


def list_offsets(client: WireClient, version: int, *partitions: tuple[int, int, int],
                 topic: str = "orders") -> list[tuple[int, int]]:
    """ListOffsets of ``partitions`` (index, timestamp, current leader epoch) of ``topic``:
    (partition, error) of each partition answered, sorted (Kafka answers from a map)."""
    answer = client.request("ListOffsets", version, {
        "replica_id": -1, "isolation_level": 0, "timeout_ms": 0, "topics": [
            {"name": topic, "partitions": [
                {"partition_index": p, "timestamp": t, "current_leader_epoch": e,
                 "max_num_offsets": 1} for p, t, e in partitions]}]})
    return sorted((p.partition_index, p.error_code) for t in answer.topics
                  for p in t.partitions)


# -- ListOffsets ------------------------------------------------------------------------------


def v1_on(kafka) -> list[int]:
    """ListOffsets' versions from v1 (Kafka 4 serves no v0; the fake serves 3.9's v0, whose
    path checks none of this)."""
    return [v for v in versions_of(kafka, "ListOffsets") if v >= 1]


def test_list_offsets_answers_a_partition_named_twice_once_as_an_invalid_request(kafka):
    """ReplicaManager.fetchOffset: a partition the request names more than once (in one
    topic entry or in two) is INVALID_REQUEST, answered once; the others are answered."""
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        for version in v1_on(kafka):
            assert list_offsets(client, version, (0, -1, -1), (0, -1, -1), (1, -1, -1)) == [
                (0, ErrorCode.INVALID_REQUEST), (1, 0)], version
        answer = client.request("ListOffsets", 7, {
            "replica_id": -1, "isolation_level": 0, "timeout_ms": 0, "topics": [
                {"name": "orders", "partitions": [{"partition_index": 1, "timestamp": -2,
                                                   "current_leader_epoch": -1}]}] * 2})
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
                for t in answer.topics] == [("orders", [(1, ErrorCode.INVALID_REQUEST)])]


def test_list_offsets_of_a_negative_timestamp_its_version_does_not_know_is_unsupported(kafka):
    """-1 and -2 from v1, -3 (max timestamp) from v7, -4 (earliest local) from v8, -5 (latest
    tiered) from v9, -6 (earliest pending upload) from v11; any other negative timestamp
    never: UNSUPPORTED_VERSION, decided before the partition is looked up (an unknown topic
    too)."""
    since = {-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        for version in v1_on(kafka):
            for timestamp in (-1, -2, -3, -4, -5, -6, -7, -2**31, -2**63):
                wanted = 0 if version >= since.get(timestamp, 99) \
                    else ErrorCode.UNSUPPORTED_VERSION
                assert list_offsets(client, version, (0, timestamp, -1)) == [(0, wanted)], \
                    (version, timestamp)
            assert list_offsets(client, version, (0, -7, -1), topic="ghost") == [
                (0, ErrorCode.UNSUPPORTED_VERSION)]
            assert list_offsets(client, version, (9, -7, -1)) == [
                (9, ErrorCode.UNSUPPORTED_VERSION)]


def test_list_offsets_takes_any_negative_leader_epoch_but_minus_one_as_the_clients(kafka):
    """ListOffsets reads current_leader_epoch -1 as "none"; -89 is an epoch older than the
    leader's: FENCED_LEADER_EPOCH (Fetch, by contrast, reads every negative epoch as none)."""
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        for version in (v for v in v1_on(kafka) if v >= 4):
            assert list_offsets(client, version, (0, -1, -1)) == [(0, 0)]
            assert list_offsets(client, version, (0, -1, -89), (1, -2, -2**31)) == [
                (0, ErrorCode.FENCED_LEADER_EPOCH), (1, ErrorCode.FENCED_LEADER_EPOCH)]


# -- InitProducerId ---------------------------------------------------------------------------


def init_producer_id(client: WireClient, version: int, transactional_id: str | None,
                     producer_id: int, epoch: int, timeout_ms: int = 60_000) -> int:
    return client.request("InitProducerId", version, {
        "transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms,
        "producer_id": producer_id, "producer_epoch": epoch}).error_code


def test_init_producer_id_naming_only_one_of_producer_id_and_epoch_is_invalid(kafka):
    """KafkaApis.handleInitProducerIdRequest (v3+): a producer id without an epoch, or an
    epoch without a producer id, is INVALID_REQUEST before anything else is checked (the
    transaction timeout too); both or neither are the coordinator's to judge."""
    with WireClient(kafka.bootstrap_servers) as client:
        for version in (v for v in versions_of(kafka, "InitProducerId") if v >= 3):
            for producer_id, epoch in ((7, -1), (-1, 0), (-2**32, -1), (-1, 1000)):
                assert init_producer_id(client, version, None, producer_id, epoch) == \
                    ErrorCode.INVALID_REQUEST
                assert init_producer_id(client, version, "etx", producer_id, epoch,
                                        timeout_ms=900_001) == ErrorCode.INVALID_REQUEST
            assert init_producer_id(client, version, None, -1, -1) == 0
            assert init_producer_id(client, version, "etx", -1, -1, timeout_ms=900_001) == \
                ErrorCode.INVALID_TRANSACTION_TIMEOUT


# -- Fetch ------------------------------------------------------------------------------------


def follower_fetch(client: WireClient, version: int, replica_id: int, offset: int,
                   orders_id: Any, epoch: int = -1) -> int:
    body = fetch_body("orders", 0, offset, topic_id=orders_id)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = epoch
    body["replica_id"] = replica_id
    body["replica_state"] = {"replica_id": replica_id, "replica_epoch": -1}
    return client.request("Fetch", version, body).responses[0].partitions[0].error_code


def test_a_fetch_from_a_replica_id_not_following_the_partition_is_refused_before_reading(
        kafka):
    """Partition.fetchRecords: a fetch naming a replica id (>= 0; in replica_state from v15)
    is a follower's; a replica that is not one of the partition's followers (the leader
    itself too) gets NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when the fetch names
    the leader's epoch, before its offset is checked."""
    leader = leader_of(kafka, "orders", 0)
    leader_id = next(b.id for b in kafka.brokers if f"{b.host}:{b.port}" == leader)
    orders_id = topic_id(kafka, "orders")
    with WireClient(leader) as client:
        client.request("Produce", 9, produce_body("orders", 0, batch([b"a"])))
        for version in (v for v in versions_of(kafka, "Fetch") if v >= 4):
            for replica_id in (65_536, 32_767, leader_id):
                for offset in (0, 100):
                    assert follower_fetch(client, version, replica_id, offset, orders_id) == \
                        ErrorCode.NOT_LEADER_OR_FOLLOWER, (version, replica_id, offset)
                if version >= 9:
                    assert follower_fetch(client, version, replica_id, 100, orders_id, epoch=0) == \
                        ErrorCode.UNKNOWN_LEADER_EPOCH
            assert follower_fetch(client, version, -1, 100, orders_id) == \
                ErrorCode.OFFSET_OUT_OF_RANGE


@pytest.mark.fake_only("needs a second broker (the real one has one node)")
@pytest.mark.fake_kafka(brokers=2, topics={})
def test_a_fetch_from_a_follower_of_the_partition_reads_it(kafka):
    kafka.create_topic("mirrored", 1, replication_factor=2)
    partition = kafka.call(lambda: kafka.cluster.state.partition("mirrored", 0))
    (follower,) = [r for r in partition.replicas if r != partition.leader]
    with WireClient(leader_of(kafka, "mirrored", 0)) as client:
        client.request("Produce", 9, produce_body("mirrored", 0, batch([b"a"])))
        body = dict(fetch_body("mirrored", 0, 0), replica_id=follower)
        (answer,) = client.request("Fetch", 12, body).responses[0].partitions
    assert (answer.error_code, answer.high_watermark) == (0, 1) and answer.records


# -- DeleteTopics -----------------------------------------------------------------------------


def test_delete_topics_answers_a_name_given_twice_once_as_an_invalid_request(kafka):
    """ControllerApis.deleteTopics, at every version: each name given more than once is
    answered once, INVALID_REQUEST "Duplicate topic name." (v6: an id, "Duplicate topic id."),
    and not deleted."""
    with WireClient(kafka.bootstrap_servers) as client:
        for version in versions_of(kafka, "DeleteTopics"):
            names = ["orders", "ghost", "orders", "ghost", "ghost"]
            answer = client.request("DeleteTopics", version, {
                "topic_names": names, "topics": [{"name": n} for n in names],
                "timeout_ms": 5000})
            answered = sorted((r.name, r.error_code, r.error_message if version >= 5 else None)
                              for r in answer.responses)
            message = "Duplicate topic name." if version >= 5 else None
            assert answered == [("ghost", ErrorCode.INVALID_REQUEST, message),
                                ("orders", ErrorCode.INVALID_REQUEST, message)], version
        orders_id = topic_id(kafka, "orders")
        answer = client.request("DeleteTopics", 6, {"topics": [
            {"name": None, "topic_id": orders_id}] * 3, "timeout_ms": 5000})
        assert [(r.name, r.topic_id, r.error_code, r.error_message) for r in answer.responses] \
            == [(None, orders_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")]
        assert topic_id(kafka, "orders") == orders_id  # not deleted


def test_delete_topics_whose_every_entry_is_refused_is_answered_past_its_deadline(kafka):
    """Entries refused before any lookup (neither name nor id, both, a duplicate) leave the
    controller nothing to do: the request is answered with its refusals even with no time
    left, where one entry left to look up times the whole request out."""
    zero = ZERO_UUID
    with WireClient(kafka.bootstrap_servers) as client:
        orders_id = topic_id(kafka, "orders")
        for entries, expected in (
                ([{"name": None, "topic_id": zero}],
                 [(None, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.")]),
                ([{"name": "ghost", "topic_id": orders_id}],
                 [("ghost", ErrorCode.INVALID_REQUEST,
                   "You may not specify both topic name and topic id.")]),
                ([{"name": "ghost", "topic_id": zero}] * 2,
                 [("ghost", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]),
                ([{"name": "ghost", "topic_id": zero}, {"name": None, "topic_id": zero}],
                 [("ghost", ErrorCode.REQUEST_TIMED_OUT, None),
                  (None, ErrorCode.REQUEST_TIMED_OUT, None)])):
            answer = client.request("DeleteTopics", 6, {"topics": entries, "timeout_ms": 0})
            assert sorted(((r.name, r.error_code, r.error_message) for r in answer.responses),
                          key=str) == sorted(expected, key=str), entries
        answer = client.request("DeleteTopics", 4, {"topic_names": ["ghost"] * 2,
                                                    "timeout_ms": -1})
        assert [(r.name, r.error_code) for r in answer.responses] == [
            ("ghost", ErrorCode.INVALID_REQUEST)]
    assert topic_id(kafka, "orders") == orders_id


# -- WriteTxnMarkers --------------------------------------------------------------------------


def write_marker(client: WireClient, coordinator_epoch: int, partitions: list[int],
                 producer_id: int = 4242) -> list[tuple[int, int]]:
    answer = client.request("WriteTxnMarkers", 1, {"markers": [{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": False,
        "topics": [{"name": "orders", "partition_indexes": partitions}],
        "coordinator_epoch": coordinator_epoch}]})
    return sorted((p.partition_index, p.error_code)
                  for t in answer.markers[0].topics for p in t.partitions)


def test_a_marker_from_an_older_coordinator_epoch_than_the_partitions_is_fenced(kafka):
    """ProducerAppendInfo.checkCoordinatorEpoch: a marker whose coordinator epoch is below
    the one the partition last took for that producer (-1 for a producer it has not seen) is
    TRANSACTION_COORDINATOR_FENCED; an equal or newer one is written."""
    fenced = ErrorCode.TRANSACTION_COORDINATOR_FENCED
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        assert write_marker(client, -2, [0, 9]) == [
            (0, fenced), (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
        assert write_marker(client, -1, [0]) == [(0, 0)]
        assert write_marker(client, 3, [0]) == [(0, 0)]
        assert write_marker(client, 2, [0]) == [(0, fenced)]
        assert write_marker(client, 3, [0]) == [(0, 0)]


# -- ApiVersions ------------------------------------------------------------------------------


def test_api_versions_v5_names_a_cluster_id_and_a_node_id_together_or_neither(kafka):
    """ApiVersionsRequest.isValid (v5+): a cluster id without a node id, or a node id without
    a cluster id, is INVALID_REQUEST ("" is a cluster id); both, naming another cluster,
    REBOOTSTRAP_REQUIRED."""
    with WireClient(kafka.bootstrap_servers) as client:
        def error(cluster_id: str | None, node_id: int) -> int:
            return client.request("ApiVersions", 5, {
                "client_software_name": "wire", "client_software_version": "1.0",
                "cluster_id": cluster_id, "node_id": node_id}).error_code

        assert error("", -1) == error("other", -1) == error(None, 1) == \
            ErrorCode.INVALID_REQUEST
        assert error("", 12345) == error("other", 12345) == ErrorCode.REBOOTSTRAP_REQUIRED
        assert error(None, -1) == 0


# -- FindCoordinator --------------------------------------------------------------------------


def test_find_coordinator_answers_an_empty_key_as_any_other(kafka):
    """KafkaApis.getCoordinator checks no key: "" of a group or a transactional id has its
    coordinator found, at every version (Kafka answers COORDINATOR_NOT_AVAILABLE while it
    makes the coordinator's topic first: retried)."""
    with WireClient(kafka.bootstrap_servers) as client:
        for version in versions_of(kafka, "FindCoordinator"):
            for key_type in (0, 1) if version >= 1 else (0,):
                deadline = time.monotonic() + 30
                while True:
                    answer = client.request("FindCoordinator", version, {
                        "key": "", "key_type": key_type, "coordinator_keys": [""]})
                    found = answer.coordinators[0] if version >= 4 else answer
                    if found.error_code != ErrorCode.COORDINATOR_NOT_AVAILABLE \
                            or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                assert (found.error_code, found.node_id) in {
                    (0, b.id) for b in kafka.brokers}, (version, key_type)


# -- ElectLeaders ----------------------------------------------------------------------------


def test_elect_leaders_of_an_unknown_type_is_invalid_unless_it_names_no_topic(kafka):
    """Measured on Kafka 4.4: an election type other than 0 and 1 is INVALID_REQUEST for the
    request and each partition it names ("Unknown election type 5"), a topic of no
    partitions too; an empty topic list is answered NONE, with no results."""
    with WireClient(kafka.bootstrap_servers) as client:
        def elected(topics: list[dict[str, Any]]) -> tuple[int, list[Any]]:
            answer = client.request("ElectLeaders", 2, {
                "election_type": 5, "topic_partitions": topics, "timeout_ms": 30_000})
            return answer.error_code, [
                (t.topic, [(p.partition_id, p.error_code, p.error_message)
                           for p in t.partition_result])
                for t in answer.replica_election_results]

        invalid = ErrorCode.INVALID_REQUEST
        assert elected([]) == (0, [])
        assert elected([{"topic": "orders", "partitions": []}]) == (invalid, [("orders", [])])
        assert elected([{"topic": "orders", "partitions": [0]}]) == (invalid, [
            ("orders", [(0, invalid, "Unknown election type 5")])])


# -- the controller's deadline ----------------------------------------------------------------


def timed_out_answers(client: WireClient, timeout_ms: int) -> dict[str, Any]:
    """Each controller request of ``timeout_ms``: its answer's (name, error) entries."""
    delete = ["ghost", "ghost", "orders"]
    electing = {"election_type": 0, "topic_partitions": [{"topic": "orders", "partitions": [0]}]}
    reassign = {"topics": [{"name": n, "partitions": [{"partition_index": 0, "replicas": None}]}
                           for n in ("orders", "ghost")]}
    return {
        "CreateTopics": [(t.name, t.error_code) for only in (True, False)
                         for t in client.request("CreateTopics", 7, {
            "topics": [{"name": "fresh", "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": timeout_ms, "validate_only": only}).topics],
        "CreatePartitions": [(r.name, r.error_code) for r in client.request(
            "CreatePartitions", 3, {"topics": [{"name": "orders", "count": 3,
                                                "assignments": None}],
                                    "timeout_ms": timeout_ms, "validate_only": False}).results],
        "DeleteTopics": [(r.name, r.error_code) for v in (1, 6) for r in client.request(
            "DeleteTopics", v, {"topic_names": delete, "topics": [{"name": n} for n in delete],
                                "timeout_ms": timeout_ms}).responses],
        "AlterPartitionReassignments": (lambda a: (a.error_code, [
            (t.name, p.error_code) for t in a.responses for p in t.partitions]))(
            client.request("AlterPartitionReassignments", 0, dict(reassign,
                                                                  timeout_ms=timeout_ms))),
        "ElectLeaders": (lambda a: (a.error_code, [
            (t.topic, p.error_code) for t in a.replica_election_results
            for p in t.partition_result]))(
            client.request("ElectLeaders", 2, dict(electing, timeout_ms=timeout_ms))),
    }


def test_a_controller_request_of_no_time_left_times_out_whole_and_applies_nothing(kafka):
    """KRaft's ControllerApis give the controller a deadline of now + timeout_ms: a timeout of
    0 or less is past it, so every entry the request names is REQUEST_TIMED_OUT (duplicates
    too: Kafka's getErrorResponse), and nothing is created, grown or deleted."""
    timed_out = ErrorCode.REQUEST_TIMED_OUT
    with WireClient(kafka.bootstrap_servers) as client:
        for timeout_ms in (0, -1, -2**31):
            assert timed_out_answers(client, timeout_ms) == {
                "CreateTopics": [("fresh", timed_out)] * 2,  # validate_only too
                "CreatePartitions": [("orders", timed_out)],
                "DeleteTopics": [("ghost", timed_out), ("ghost", timed_out),
                                 ("orders", timed_out)] * 2,
                "AlterPartitionReassignments": (timed_out, [("orders", timed_out),
                                                            ("ghost", timed_out)]),
                "ElectLeaders": (timed_out, [("orders", timed_out)]),
            }, timeout_ms
        (orders, fresh) = client.request("Metadata", 12, {"topics": [
            {"name": "orders"}, {"name": "fresh"}], "allow_auto_topic_creation": False}).topics
    assert (orders.error_code, len(orders.partitions)) == (0, 2)
    assert fresh.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("timeout_ms", [0, -65536])
def test_an_election_of_no_partitions_is_answered_whatever_its_deadline(kafka, timeout_ms):
    """An ElectLeaders naming an empty list of partitions is answered NONE with no result by
    Kafka 4.4's broker, which never sends it to its controller, so no deadline applies; a
    null list (every partition) past its deadline is REQUEST_TIMED_OUT (measured; found by
    the differential fuzzer, seed 1's #166117)."""
    with WireClient(kafka.bootstrap_servers) as client:
        answers = [client.request("ElectLeaders", 1, {
            "election_type": kind, "topic_partitions": partitions, "timeout_ms": timeout_ms})
            for kind in (0, 1) for partitions in ([], None)]
    assert [(a.error_code, len(a.replica_election_results)) for a in answers] == [
        (0, 0), (ErrorCode.REQUEST_TIMED_OUT, 0)] * 2


def test_a_reassignment_of_no_topics_is_answered_whatever_its_deadline(kafka):
    """QuorumController.alterPartitionReassignments answers a request naming no topic at once,
    before it queues anything with the request's deadline: NONE, even past it (found by the
    differential fuzzer)."""
    with WireClient(kafka.bootstrap_servers) as client:
        for timeout_ms in (-65536, 0, 10_000):
            answer = client.request("AlterPartitionReassignments", 0, {
                "timeout_ms": timeout_ms, "topics": []})
            assert (answer.error_code, answer.responses) == (0, []), timeout_ms


# -- DeleteRecords ----------------------------------------------------------------------------


def test_delete_records_answers_a_partition_named_twice_once_for_the_last_offset(kafka):
    """KafkaApis.handleDeleteRecordsRequest reads the request into a map keyed by partition:
    the offset named last wins, and the partition is answered once (found by the
    differential fuzzer: an out-of-range offset named first is not answered)."""
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        answer = client.request("DeleteRecords", 2, {"topics": [
            {"name": "orders", "partitions": [{"partition_index": 0, "offset": 99_999}]},
            {"name": "orders", "partitions": [{"partition_index": 0, "offset": -1}]}],
            "timeout_ms": 5000})
    assert [(t.name, p.partition_index, p.error_code, p.low_watermark)
            for t in answer.topics for p in t.partitions] == [("orders", 0, 0, 0)]


# -- DescribeCluster --------------------------------------------------------------------------


def test_describe_cluster_for_other_endpoints_than_brokers_is_refused_with_kafkas_error(kafka):
    """A broker's listener serves brokers' endpoints (1) only: controllers' (2) is
    MISMATCHED_ENDPOINT_TYPE, any other value UNSUPPORTED_ENDPOINT_TYPE, with no cluster id,
    no controller and no brokers; asked for, no authorized operations either."""
    with WireClient(kafka.bootstrap_servers) as client:
        for version in (v for v in versions_of(kafka, "DescribeCluster") if v >= 1):
            for endpoint_type, error, message in (
                    (2, ErrorCode.MISMATCHED_ENDPOINT_TYPE, "The request was sent to an endpoint"
                     " of type BROKER, but we wanted an endpoint of type CONTROLLER"),
                    (0, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 0"),
                    (-1, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type -1")):
                answer = client.request("DescribeCluster", version, {
                    "include_cluster_authorized_operations": True,
                    "endpoint_type": endpoint_type})
                assert (answer.error_code, answer.error_message, answer.cluster_id,
                        answer.controller_id, list(answer.brokers),
                        answer.cluster_authorized_operations) == (
                    error, message, "", -1, [], -2**31), (version, endpoint_type)


# -- current leader epochs ----------------------------------------------------------------------


def test_a_current_leader_epoch_below_minus_one_is_fenced_except_in_a_fetch(kafka):
    """ListOffsets (v4+) and OffsetForLeaderEpoch (v2+): -1 alone means "no epoch", any
    other negative current_leader_epoch is older than every leader's
    (Partition.checkCurrentLeaderEpoch): FENCED_LEADER_EPOCH. Fetch (v9+) reads every negative
    epoch as none (FetchRequest's optionalEpoch)."""
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        for epoch in (-2, -32768):
            fetch = fetch_body("orders", 0, 0)
            fetch["topics"][0]["partitions"][0]["current_leader_epoch"] = epoch
            [topic] = client.request("Fetch", 12, fetch).responses
            assert topic.partitions[0].error_code == 0, epoch
            assert list_offsets(client, 7, (0, -1, epoch)) == [
                (0, ErrorCode.FENCED_LEADER_EPOCH)], epoch
            [topic] = client.request("OffsetForLeaderEpoch", 4, {
                "replica_id": -1, "topics": [{"topic": "orders", "partitions": [
                    {"partition": 0, "current_leader_epoch": epoch,
                     "leader_epoch": 0}]}]}).topics
            assert topic.partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH, epoch
        assert list_offsets(client, 7, (0, -1, -1)) == [(0, 0)]
