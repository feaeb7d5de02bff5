"""Fault rules: what they match, what they do, where their errors land, how they count."""

from __future__ import annotations

import socket
import time
import uuid

import pytest
from construct import Container

from fakebroker.api import (
    ERROR_PLACEMENTS,
    REFUSED_ANSWERS,
    heartbeat,
    init_producer_id,
    join_group,
    served_versions,
)
from fakebroker.api.placement import (
    ErrorLayout,
    inject_errors,
    top_level_answer,
    without_arrays,
)
from fakebroker.api.shapes import Level
from fakebroker.api.targets import (
    Target,
    entries_of,
    has_top_level_error,
    request_targets,
    request_transactional_ids,
)
from fakebroker.faults import FaultError, RequestView
from fakebroker.journal import answer_errors
from fakebroker.protocol.codec import request_codec, snake
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.framing import decode_response, encode_response
from fakebroker.protocol.specs import api_spec, parse_range
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import join_body, joined_member
from tests.test_wire_versions import batch, fetch_body, produce_body

pytestmark = pytest.mark.fake_kafka(brokers=1, topics={"orders": 2})
NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER


def two_partition_fetch(offset: int = 0) -> dict:
    body = fetch_body("orders", 0, offset, max_wait_ms=5000)
    body["topics"][0]["partitions"].append(dict(body["topics"][0]["partitions"][0],
                                                partition=1))
    return body


def fetch_errors(client: WireClient, version: int = 12) -> dict[int, int]:
    response = client.request("Fetch", version, two_partition_fetch())
    return {p.partition_index: p.error_code for t in response.responses for p in t.partitions}


def produce(client: WireClient, partition: int = 0, value: bytes = b"v") -> int:
    response = client.request("Produce", 9, produce_body("orders", partition, batch([value])))
    return response.responses[0].partition_responses[0].error_code


def commit_body(group: str = "solo", offset: int = 5) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "committed_offset": offset}]}]}


# -- errors, and where they land -------------------------------------------------------------

def test_an_error_lands_on_the_matched_partition_only_for_count_requests(fake_kafka):
    fault = fake_kafka.faults.add(api="Fetch", topic="orders", partition=0,
                                  error="NOT_LEADER_OR_FOLLOWER", count=2)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        produce(client, 1)
        assert fetch_errors(client) == {0: NOT_LEADER, 1: 0}
        assert fetch_errors(client, version=4) == {0: NOT_LEADER, 1: 0}
        assert fetch_errors(client) == {0: 0, 1: 0}
    assert fault.hits == 2


def test_an_error_answer_keeps_the_partitions_in_request_order(fake_kafka):
    fake_kafka.faults.add(api="Fetch", partition=0, error="NOT_LEADER_OR_FOLLOWER")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        response = client.request("Fetch", 12, two_partition_fetch())
    partitions = response.responses[0].partitions
    assert [p.partition_index for p in partitions] == [0, 1]
    assert partitions[0].high_watermark == -1 and partitions[0].records in (b"", None)


def test_a_rule_without_topic_faults_every_partition_of_the_request(fake_kafka):
    fake_kafka.faults.add(api="Fetch", error="UNKNOWN_TOPIC_OR_PARTITION")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        assert set(fetch_errors(client).values()) == {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


def test_a_faulted_produce_appends_nothing(fake_kafka):
    fake_kafka.faults.add(api="Produce", error="NOT_ENOUGH_REPLICAS")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        assert produce(client) == ErrorCode.NOT_ENOUGH_REPLICAS
        assert fake_kafka.offsets("orders", 0) == (0, 0)
        assert produce(client) == 0
    assert fake_kafka.offsets("orders", 0) == (0, 1)


def test_apply_then_error_appends_and_answers_the_error(fake_kafka):
    fake_kafka.faults.add(api="Produce", error="REQUEST_TIMED_OUT", apply_then=True)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        assert produce(client) == ErrorCode.REQUEST_TIMED_OUT
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"v"]


def test_a_faulted_offset_commit_stores_nothing_and_apply_then_stores(fake_kafka):
    fake_kafka.faults.add(api="OffsetCommit", error="COORDINATOR_LOAD_IN_PROGRESS")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        first = client.request("OffsetCommit", 8, commit_body(offset=5))
        assert first.topics[0].partitions[0].error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert fake_kafka.committed("solo", "orders", 0) is None
        fake_kafka.faults.add(api="OffsetCommit", error="REQUEST_TIMED_OUT", apply_then=True)
        second = client.request("OffsetCommit", 8, commit_body(offset=7))
        assert second.topics[0].partitions[0].error_code == ErrorCode.REQUEST_TIMED_OUT
    assert fake_kafka.committed("solo", "orders", 0) == 7


def test_group_errors_of_offset_fetch_go_at_top_level_and_per_group_from_v8(fake_kafka):
    fake_kafka.faults.add(api="OffsetFetch", group="solo", error="NOT_COORDINATOR", count=2)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        old = client.request("OffsetFetch", 7, {"group_id": "solo", "topics": None})
        assert old.error_code == ErrorCode.NOT_COORDINATOR
        new = client.request("OffsetFetch", 8, {"groups": [
            {"group_id": "solo", "topics": None}, ]})
        assert new.groups[0].group_id == "solo"
        assert new.groups[0].error_code == ErrorCode.NOT_COORDINATOR


def test_errors_of_one_offset_fetch_do_not_reach_another_group_or_request(fake_kafka):
    """A whole-request error (on every group, v8+) and a partition's error in one answer:
    the partition's entry is in its own group only, and the next answer is made afresh."""
    fake_kafka.faults.add(api="OffsetFetch", error="NOT_COORDINATOR", count=2)
    fake_kafka.faults.add(api="OffsetFetch", topic="orders", partition=1,
                          error="UNSTABLE_OFFSET_COMMIT")
    body = {"groups": [
        {"group_id": "a", "topics": [{"name": "orders", "partition_indexes": [0]}]},
        {"group_id": "b", "topics": [{"name": "orders", "partition_indexes": [1]}]}]}

    def groups(answer):
        return [(g.group_id, g.error_code, [(t.name, [(p.partition_index, p.error_code)
                                                      for p in t.partitions])
                                            for t in g.topics]) for g in answer.groups]

    with WireClient(fake_kafka.bootstrap_servers) as client:
        first = groups(client.request("OffsetFetch", 8, body))
        second = groups(client.request("OffsetFetch", 8, body))
    assert first == [("a", ErrorCode.NOT_COORDINATOR, []),
                     ("b", ErrorCode.NOT_COORDINATOR,
                      [("orders", [(1, ErrorCode.UNSTABLE_OFFSET_COMMIT)])])]
    assert second == [("a", ErrorCode.NOT_COORDINATOR, []), ("b", ErrorCode.NOT_COORDINATOR, [])]


def test_find_coordinator_errors_go_at_top_level_to_v3_and_per_key_from_v4(fake_kafka):
    fake_kafka.faults.add(api="FindCoordinator", group="solo",
                          error="COORDINATOR_NOT_AVAILABLE", count=2)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        old = client.request("FindCoordinator", 3, {"key": "solo", "key_type": 0})
        new = client.request("FindCoordinator", 4, {"key_type": 0,
                                                    "coordinator_keys": ["solo", "other"]})
    assert (old.error_code, old.node_id, old.host, old.port) == (
        ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1)
    assert [(c.key, c.error_code, c.node_id, c.host, c.port) for c in new.coordinators] == [
        ("solo", ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1),
        ("other", 0, fake_kafka.brokers[0].id, fake_kafka.brokers[0].host,
         fake_kafka.brokers[0].port)]


def test_a_top_level_error_answer_carries_the_fields_its_api_declares():
    join = Container(member_id="m-1", group_id="g")
    assert top_level_answer(join_group.API_KEY, join) == {
        "generation_id": -1, "leader": "", "members": (), "member_id": "m-1"}
    assert top_level_answer(init_producer_id.API_KEY, Container()) == {
        "producer_id": -1, "producer_epoch": -1}
    assert top_level_answer(heartbeat.API_KEY, join) == {}


def test_an_error_of_a_request_wide_api_is_its_top_level_error(fake_kafka):
    fake_kafka.faults.add(api="Heartbeat", error="REBALANCE_IN_PROGRESS")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        joined = joined_member(client)
        beat = client.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == ErrorCode.REBALANCE_IN_PROGRESS
        beat = client.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == 0


def test_a_join_group_error_answer_carries_the_member_id_as_sent(fake_kafka):
    fake_kafka.faults.add(api="JoinGroup", error="COORDINATOR_LOAD_IN_PROGRESS")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        answer = client.request("JoinGroup", 9, join_body("member-1"))
    assert (answer.error_code, answer.member_id, answer.generation_id) == (
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "member-1", -1)
    assert fake_kafka.group("g") is None  # the handler did not run


def test_metadata_errors_land_on_the_named_topic(fake_kafka):
    fake_kafka.create_topic("other")
    fake_kafka.faults.add(api="Metadata", topic="orders", error="LEADER_NOT_AVAILABLE")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        response = client.request("Metadata", 12, {"topics": [
            {"name": "orders"}, {"name": "other"}], "allow_auto_topic_creation": False})
    assert [(t.name, t.error_code) for t in response.topics] == [
        ("orders", ErrorCode.LEADER_NOT_AVAILABLE), ("other", 0)]


def test_a_topic_id_matches_the_topic_it_names(fake_kafka):
    topic_id = fake_kafka.call(lambda: fake_kafka.cluster.state.topics["orders"].id)
    fake_kafka.faults.add(api="Fetch", topic=str(topic_id), partition=1,
                          error="FENCED_LEADER_EPOCH")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        body = fetch_body("", 1, 0, topic_id=topic_id)
        response = client.request("Fetch", 13, body)
    assert response.responses[0].topic_id == topic_id
    assert response.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH


def request_with_entries(api_key: int, version: int) -> Container:
    """A request of this version, decoded as the broker decodes one, with two entries in
    each of its lists (names and indexes 0 and 1: every entry is a distinct target)."""
    def value(row: list, index: int) -> object:
        kind, extras = row[1], (row[3] if len(row) > 3 else {})
        if kind == "[]struct":
            return [message(extras["fields"], i) for i in range(2)]
        if kind == "struct":
            return message(extras["fields"], index)
        if kind.startswith("[]"):
            return [value([row[0], kind[2:], row[2]], i) for i in range(2)]
        return {"string": f"{snake(row[0])}{index}", "bytes": b"", "records": b"",
                "bool": False, "uuid": uuid.UUID(int=index + 1), "float64": 0.0}.get(kind, index)

    def message(rows: list, index: int) -> dict:
        return {snake(row[0]): value(row, index) for row in rows
                if version in parse_range(row[2])}

    codec = request_codec(api_key, version)
    data = bytearray()
    codec.build_into(message(api_spec(api_key).request["fields"], 0), data)
    return codec.parse_from(bytes(data))[0]


def entry_errors(level: Level, answer: Container) -> list[int]:
    """The error codes of an answer's innermost entries, in order."""
    entries = answer[level.response_list] or []
    if level.child is None:
        return [entry[level.error_field] for entry in entries]
    return [code for entry in entries for code in entry_errors(level.child, entry)]


def decoded(api_key: int, version: int, answer: dict) -> Container:
    return decode_response(api_key, version,
                           encode_response(api_key, version, 7, answer)[4:])[1]


SERVED = sorted(k for k in range(100) if served_versions(k))
# DescribeLogDirs before v3: Kafka's own answer to a whole-request error has no error field
# (an empty list of directories), so the fake's has none either.
NOWHERE = {(35, 0), (35, 1), (35, 2)}
FAILED = ErrorCode.UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize("api_key", SERVED)
def test_every_served_api_version_carries_an_error_on_each_entry_it_names(api_key):
    """An error per entry is encoded on each entry the request names, at every version the
    API declares entries for; other versions have a top-level error_code."""
    for version in served_versions(api_key):
        level = entries_of(api_key, version)
        if level is None:
            assert has_top_level_error(api_key, version) or ERROR_PLACEMENTS[api_key].each \
                or REFUSED_ANSWERS[api_key] or (api_key, version) in NOWHERE, \
                api_spec(api_key).name
            continue
        request = request_with_entries(api_key, version)
        targets = request_targets(api_key, version, request, lambda _: None)
        assert len(targets) >= 2, (api_spec(api_key).name, version)
        layout = ErrorLayout(entries=dict.fromkeys(targets, FAILED))
        answer = inject_errors(api_key, version, request, {}, layout, lambda _: None)
        assert entry_errors(level, decoded(api_key, version, answer)) == [FAILED] * len(
            targets), (api_spec(api_key).name, version)


@pytest.mark.parametrize("api_key", SERVED)
def test_every_served_api_version_carries_a_whole_request_error(api_key):
    """A whole-request error is encoded in the answer made for it: at the top level, on
    every group of a version whose groups are outermost and that has no top-level
    error_code, or on one answer entry per request entry (``each``: CreateAcls)."""
    each = ERROR_PLACEMENTS[api_key].each
    for version in served_versions(api_key):
        level = entries_of(api_key, version)
        on_groups = level is not None and level.kind == "group" and level.entry_error \
            and not has_top_level_error(api_key, version)
        if each is not None:
            request = request_with_entries(api_key, version)
            answer = inject_errors(api_key, version, request, top_level_answer(
                api_key, request), ErrorLayout(top=FAILED), lambda _: None)
            entries = decoded(api_key, version, answer)[each[1]]
            assert [entry.error_code for entry in entries] == [FAILED] * 2
            continue
        if not (has_top_level_error(api_key, version) or on_groups):
            continue  # such a version's whole-request error goes on each entry (above)
        request = request_with_entries(api_key, version)
        answer = inject_errors(api_key, version, request,
                               top_level_answer(api_key, request), ErrorLayout(top=FAILED),
                               lambda _: None)
        if on_groups:
            groups = decoded(api_key, version, answer)[level.response_list]
            assert [group.error_code for group in groups] == [FAILED] * 2
        else:
            assert decoded(api_key, version, answer).error_code == FAILED


# -- whole answers: respond -------------------------------------------------------------------

LEADER_ELSEWHERE = {  # orders/0 led by broker 7, which the cluster does not have
    "brokers": [{"node_id": 1, "host": "127.0.0.1", "port": 9092},
                {"node_id": 7, "host": "elsewhere", "port": 9097}],
    "cluster_id": "scripted", "controller_id": 1,
    "topics": [{"name": "orders", "partitions": [
        {"partition_index": 0, "leader_id": 7, "leader_epoch": 9, "replica_nodes": [7, 1],
         "isr_nodes": [7]}]}]}
METADATA_ORDERS = {"topics": [{"name": "orders"}], "allow_auto_topic_creation": False}


def test_respond_gives_a_metadata_answer_with_a_leader_no_error_could_express(fake_kafka):
    fake_kafka.faults.add(api="Metadata", respond=LEADER_ELSEWHERE)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        scripted = client.request("Metadata", 12, METADATA_ORDERS)
        real = client.request("Metadata", 12, METADATA_ORDERS)
    assert [(b.node_id, b.host, b.port) for b in scripted.brokers] == [
        (1, "127.0.0.1", 9092), (7, "elsewhere", 9097)]
    [partition] = scripted.topics[0].partitions
    assert (partition.leader_id, partition.leader_epoch, partition.replica_nodes) == (
        7, 9, [7, 1])
    assert scripted.cluster_id == "scripted"
    assert real.topics[0].partitions[0].leader_id == 1  # count 1: the broker's own answer
    assert [e.fault for e in fake_kafka.journal(api="Metadata")] == ["#1 respond", None]


def test_respond_from_python_builds_each_answer_from_the_request(fake_kafka):
    def committed_at_42(view: RequestView) -> dict:
        return {"topics": [{"name": topic.name, "partitions": [
            {"partition_index": index, "committed_offset": 42}
            for index in topic.partition_indexes]} for topic in view.request.topics]}

    rule = fake_kafka.faults.add(api="OffsetFetch", versions=(1, 7), respond=committed_at_42)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        answer = client.request("OffsetFetch", 7, {"group_id": "solo", "topics": [
            {"name": "orders", "partition_indexes": [1, 0]}]})
    assert [(p.partition_index, p.committed_offset) for p in answer.topics[0].partitions] == [
        (1, 42), (0, 42)]
    assert fake_kafka.committed("solo", "orders", 0) is None
    assert rule.describe()["respond"] == "committed_at_42"


def test_apply_then_respond_applies_the_request_and_answers_the_given_body(fake_kafka):
    fake_kafka.faults.add(api="Produce", apply_then=True, respond={"responses": [
        {"name": "orders", "partition_responses": [{"index": 0, "base_offset": 1000}]}]})
    with WireClient(fake_kafka.bootstrap_servers) as client:
        answer = client.request("Produce", 9, produce_body("orders", 0, batch([b"v"])))
    assert answer.responses[0].partition_responses[0].base_offset == 1000
    assert [(r.offset, r.value) for r in fake_kafka.records("orders", 0)] == [(0, b"v")]


# -- holding requests: hold ------------------------------------------------------------------

def test_hold_parks_a_produce_until_released_and_the_client_then_gets_its_ack(fake_kafka):
    from confluent_kafka import Producer

    held = fake_kafka.faults.add(api="Produce", hold=True)
    producer = Producer({"bootstrap.servers": fake_kafka.bootstrap_servers, "linger.ms": 0})
    acks: list[tuple[object, int]] = []
    producer.produce("orders", b"held", partition=0,
                     on_delivery=lambda error, message: acks.append((error, message.offset())))
    assert held.wait(1, timeout=10) == 1  # the Produce is held from here on
    producer.poll(0.5)
    assert (acks, held.held, fake_kafka.offsets("orders", 0)) == ([], 1, (0, 0))
    assert held.release() == 1
    assert producer.flush(10) == 0
    assert acks == [(None, 0)]
    [entry] = fake_kafka.journal(api="Produce")
    assert (entry.fault, entry.outcome) == ("#1 hold", "answered")
    assert entry.elapsed_ms >= 500


def test_a_held_request_released_after_the_client_timed_out_is_answered_late_in_order(
        fake_kafka):
    held = fake_kafka.faults.add(api="Produce", hold=True)
    with WireClient(fake_kafka.bootstrap_servers, timeout=0.3) as client:
        client.send("Produce", 9, produce_body("orders", 0, batch([b"late"])))
        client.send("ApiVersions", 3, {"client_software_name": "w",
                                       "client_software_version": "1"})
        held.wait(1, timeout=10)
        with pytest.raises(socket.timeout):
            client.receive_frame()
        assert held.release() == 1
        client.sock.settimeout(10)
        correlation_id, answer = client.receive("Produce", 9)
        assert (correlation_id, answer.responses[0].partition_responses[0].error_code) == (1, 0)
        assert client.receive("ApiVersions", 3)[0] == 2
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"late"]


def test_a_request_pipelined_behind_a_held_one_is_handled_only_after_its_answer(fake_kafka):
    """A Kafka broker mutes a connection from a request until its answer is sent: the second
    Produce of a connection is not appended while the first is held."""
    held = fake_kafka.faults.add(api="Produce", hold=True)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        client.send("Produce", 9, produce_body("orders", 0, batch([b"first"])))
        client.send("Produce", 9, produce_body("orders", 0, batch([b"second"])))
        held.wait(1, timeout=10)
        with WireClient(fake_kafka.bootstrap_servers) as other:  # served meanwhile
            assert other.request("Metadata", 12, {"topics": None}).brokers
        assert (fake_kafka.offsets("orders", 0), fake_kafka.journal(api="Produce")) == (
            (0, 0), [])
        assert held.release() == 1
        assert [client.receive("Produce", 9)[0] for _ in range(2)] == [1, 2]
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"first", b"second"]


def test_a_held_produce_ends_unapplied_when_its_client_gives_up_and_retries(fake_kafka):
    from confluent_kafka import Producer

    held = fake_kafka.faults.add(api="Produce", hold=True)
    producer = Producer({"bootstrap.servers": fake_kafka.bootstrap_servers, "linger.ms": 0,
                         "enable.idempotence": True, "socket.timeout.ms": 1000})
    producer.produce("orders", b"once", partition=0)
    assert held.wait(1, timeout=10) == 1
    assert producer.flush(30) == 0  # timed out, dropped the connection, retried: acked
    deadline = time.monotonic() + 10
    while held.held:  # the broker sees the dropped connection on its own time
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert held.release() == 0
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"once"]
    first, retry = sorted(fake_kafka.journal(api="Produce"), key=lambda e: e.seq)
    assert (first.fault, first.outcome) == ("#1 hold", "held")
    assert (retry.fault, retry.outcome, retry.errors) == (None, "answered", [])


def test_release_lets_the_oldest_go_first_and_removing_the_rule_releases_the_rest(fake_kafka):
    held = fake_kafka.faults.add(api="Metadata", hold=True, count=None)
    address = fake_kafka.bootstrap_servers
    with WireClient(address, client_id="first") as first, \
            WireClient(address, client_id="second") as second:
        first.send("Metadata", 12, METADATA_ORDERS)
        held.wait(1, timeout=10)
        second.send("Metadata", 12, METADATA_ORDERS)
        held.wait(2, timeout=10)
        assert held.release(1) == 1
        assert first.receive("Metadata", 12)[1].topics[0].name == "orders"
        assert held.held == 1
        held.remove()
        assert second.receive("Metadata", 12)[1].topics[0].name == "orders"


# -- matching and counting ---------------------------------------------------------------------

def test_after_lets_the_first_matches_through(fake_kafka):
    fault = fake_kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", after=2)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        assert [produce(client) for _ in range(4)] == [0, 0, NOT_LEADER, 0]
    assert fault.hits == 1


def test_count_none_applies_until_removed(fake_kafka):
    fault = fake_kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=None)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        assert [produce(client) for _ in range(3)] == [NOT_LEADER] * 3
        fault.remove()
        assert produce(client) == 0
    assert fake_kafka.faults.list() == []


def test_probability_draws_from_the_seeded_generator():
    from fakebroker import FakeKafka

    def outcomes(seed: int) -> list[int]:
        with FakeKafka(topics={"orders": 1}, seed=seed) as kafka:
            kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=None,
                             probability=0.5)
            with WireClient(kafka.bootstrap_servers) as client:
                return [produce(client) for _ in range(20)]

    first = outcomes(7)
    assert first == outcomes(7)
    assert 0 < first.count(NOT_LEADER) < 20


def test_client_id_version_and_predicate_criteria(fake_kafka):
    fake_kafka.faults.add(api="Produce", client_id="billing", versions=(8, 9),
                          when=lambda view: "orders" in view.topics,
                          error="NOT_LEADER_OR_FOLLOWER", count=None)
    with WireClient(fake_kafka.bootstrap_servers, client_id="other") as other:
        assert produce(other) == 0
    with WireClient(fake_kafka.bootstrap_servers, client_id="billing") as billing:
        assert produce(billing) == NOT_LEADER
        response = billing.request("Produce", 7, produce_body("orders", 0, batch([b"x"])))
        assert response.responses[0].partition_responses[0].error_code == 0


def test_a_rule_for_a_listener_and_principal_matches_a_real_client_on_plaintext(fake_kafka):
    """Without SASL or TLS a client comes on the PLAINTEXT listener as User:ANONYMOUS."""
    for rule in ({"listener": "SASL_SSL"}, {"principal": "User:alice"},
                 {"listener": "PLAINTEXT"}, {"principal": "User:ANONYMOUS"},
                 {"listener": "PLAINTEXT", "principal": "User:ANONYMOUS"}):
        fake_kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", **rule)
    with WireClient(fake_kafka.bootstrap_servers, client_id="anonymous") as client:
        assert produce(client) == NOT_LEADER
        assert produce(client) == 0  # each rule applied once (count 1)
    assert [(r["hits"], r.get("listener"), r.get("principal"))
            for r in fake_kafka.faults.list()] == [
        (0, "SASL_SSL", None), (0, None, "User:alice"), (1, "PLAINTEXT", None),
        (1, None, "User:ANONYMOUS"), (1, "PLAINTEXT", "User:ANONYMOUS")]
    faulted, plain = fake_kafka.journal(api="Produce", listener="PLAINTEXT",
                                        principal="User:ANONYMOUS")
    assert faulted.fault == ", ".join(f"#{n} NOT_LEADER_OR_FOLLOWER" for n in (3, 4, 5))
    assert plain.fault is None and plain.errors == []


def test_a_fault_handle_waits_for_hits(fake_kafka):
    fault = fake_kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER")
    with pytest.raises(TimeoutError, match="hit 0 time"):
        fault.wait(1, timeout=0.05)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        produce(client)
    assert fault.wait(1, timeout=5) == 1


@pytest.mark.parametrize("fields, message", [
    ({"api": "Fetchh", "error": "NOT_LEADER_OR_FOLLOWER"}, "unknown Kafka API 'Fetchh'"),
    ({"error": "NOT_AN_ERROR"}, "unknown Kafka error"),
    ({"api": "Fetch"}, "needs an action"),
    ({"error": 6, "drop": True}, "cannot be combined"),
    ({"apply_then": True, "delay_ms": 5}, "apply_then needs error, respond or drop"),
    ({"error": 6, "probability": 0}, "probability"),
    ({"error": 6, "count": 0}, "count"),
    ({"error": 6, "colour": "red"}, "unknown fault field"),
    ({"hold": True, "hang": True}, "hold and hang cannot be combined"),
    ({"respond": {"topics": []}}, "respond: needs api"),
    ({"api": "Metadata", "respond": [1]}, "respond: .* is not a mapping"),
    ({"api": "Metadata", "respond": {"brokers": [{"node_id": "one"}]}},
     "respond: not a Metadata v0 answer"),
    ({"api": "Metadata", "respond": {}, "error": 6}, "respond and error cannot be combined"),
    ({"listener": "INTERNAL", "error": 6}, "listener: 'INTERNAL' is not a listener name"),
    ({"principal": "alice", "error": 6}, "principal: 'alice' is not a principal"),
    ({"ignore": "topics"}, "ignore: needs api"),
    ({"api": "ShareFetch", "ignore": "acknowledgements"},
     "ignore: ShareFetch requests have no array 'acknowledgements'; they have "
     "acknowledge_types, acknowledgement_batches, forgotten_topics_data, partitions, topics"),
    ({"api": "ShareFetch", "ignore": "topics", "hang": True}, "ignore needs a request that"),
    ({"api": "ShareFetch", "ignore": [1]}, "ignore: .* is not a request field name"),
])
def test_a_bad_rule_is_refused_naming_the_field(fake_kafka, fields, message):
    with pytest.raises(FaultError, match=message):
        fake_kafka.faults.add(**fields)
    assert fake_kafka.faults.list() == []


def share_fetch_acknowledging(*partitions: int) -> Container:
    """A decoded ShareFetch acknowledging offset 0 of each of ``partitions`` of 'orders'."""
    codec = request_codec(78, 2)
    return codec.parse(codec.build({
        "group_id": "g", "member_id": "m", "share_session_epoch": 1, "max_wait_ms": 0,
        "min_bytes": 1, "max_bytes": 1, "max_records": 1, "batch_size": 1,
        "topics": [{"topic_id": uuid.UUID(int=7), "partitions": [
            {"partition_index": p, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}
            for p in partitions]}],
        "forgotten_topics_data": []}))


def test_ignore_empties_the_named_arrays_in_the_entries_a_rule_covers():
    request = share_fetch_acknowledging(0, 1)

    def acknowledged(emptied) -> dict[int, int]:
        return {p.partition_index: len(p.acknowledgement_batches)
                for t in emptied.topics for p in t.partitions}

    assert acknowledged(without_arrays(78, 2, request, [(("acknowledgement_batches",), [])],
                                       lambda _: "orders")) == {0: 0, 1: 0}
    only_1 = without_arrays(78, 2, request, [(("acknowledgement_batches",),
                                              [Target("orders", uuid.UUID(int=7), 1)])],
                            lambda _: "orders")
    assert acknowledged(only_1) == {0: 1, 1: 0}
    assert acknowledged(request) == {0: 1, 1: 1}  # the request itself is left as it was


def test_an_ignoring_rule_from_data_describes_itself(fake_kafka):
    rule = fake_kafka.call(fake_kafka.cluster.faults.add_data, {
        "api": "ShareFetch", "ignore": ["acknowledgement_batches"]})
    assert rule.describe()["ignore"] == ["acknowledgement_batches"]
    assert rule.action_name() == "ignore=acknowledgement_batches"


def test_a_refused_rule_takes_no_id(fake_kafka):
    for typo in ({"api": "Fetsh"}, {"eror": 6}):
        with pytest.raises(FaultError):
            fake_kafka.faults.add(**typo)
    with pytest.raises(FaultError):
        fake_kafka.call(fake_kafka.cluster.faults.add_data, {"api": "Fetsh"})
    assert fake_kafka.faults.add(api="Fetch", error=6).id == 1


# -- connection-level actions ------------------------------------------------------------------

def test_drop_closes_the_connection_after_earlier_answers(fake_kafka):
    fake_kafka.faults.add(api="Metadata", drop=True)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        client.send("ApiVersions", 3, {"client_software_name": "w",
                                       "client_software_version": "1"})
        client.send("Metadata", 12, {"topics": None})
        assert client.receive("ApiVersions", 3)[1].error_code == 0
        assert client.is_closed_by_peer()
    assert fake_kafka.offsets("orders", 0) == (0, 0)


def test_apply_then_drop_is_the_lost_ack(fake_kafka):
    fake_kafka.faults.add(api="Produce", drop=True, apply_then=True)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        client.send("Produce", 9, produce_body("orders", 0, batch([b"lost-ack"])))
        assert client.is_closed_by_peer()
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"lost-ack"]
    [entry] = fake_kafka.journal(api="Produce")
    assert entry.outcome == "dropped" and "drop" in entry.fault


def test_hang_never_answers_but_other_connections_are_served(fake_kafka):
    fake_kafka.faults.add(api="Metadata", client_id="stuck", hang=True)
    with WireClient(fake_kafka.bootstrap_servers, timeout=0.3, client_id="stuck") as stuck:
        stuck.send("Metadata", 12, {"topics": None})
        with pytest.raises(socket.timeout):
            stuck.receive_frame()
        with WireClient(fake_kafka.bootstrap_servers) as other:
            assert other.request("Metadata", 12, {"topics": None}).brokers
    deadline = time.monotonic() + 5
    while not fake_kafka.journal(api="Metadata", client_id="stuck"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert fake_kafka.journal(api="Metadata", client_id="stuck")[0].outcome == "hung"


def test_delay_makes_the_answer_late_and_keeps_answers_in_order(fake_kafka):
    fake_kafka.faults.add(api="Metadata", delay_ms=300)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        started = time.monotonic()
        client.send("Metadata", 12, {"topics": None})
        client.send("ApiVersions", 3, {"client_software_name": "w",
                                       "client_software_version": "1"})
        assert client.receive("Metadata", 12)[0] == 1
        assert client.receive("ApiVersions", 3)[0] == 2
        assert time.monotonic() - started >= 0.3


def test_throttle_sets_throttle_time_and_holds_the_next_answer(fake_kafka):
    fake_kafka.faults.add(api="Metadata", throttle_ms=400)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        started = time.monotonic()
        assert client.request("Metadata", 12, {"topics": None}).throttle_time_ms == 400
        assert time.monotonic() - started < 0.3
        client.request("Metadata", 12, {"topics": None})
        assert time.monotonic() - started >= 0.4


# -- the journal -------------------------------------------------------------------------------


def test_the_journal_reads_every_error_field_the_answer_version_carries():
    """Error codes at every level (top, topic, partition) are read, in encoded order, once
    each; a field the version does not encode is not reported (Metadata's top-level
    ErrorCode exists from v13 only)."""
    answer = {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "topics": [
        {"error_code": 0, "partitions": [
            {"error_code": ErrorCode.LEADER_NOT_AVAILABLE},
            {"error_code": ErrorCode.LEADER_NOT_AVAILABLE}]},
        {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "partitions": []}]}
    assert answer_errors(3, 12, answer) == ["LEADER_NOT_AVAILABLE",
                                            "UNKNOWN_TOPIC_OR_PARTITION"]
    assert answer_errors(3, 13, answer) == ["CLUSTER_AUTHORIZATION_FAILED",
                                            "LEADER_NOT_AVAILABLE",
                                            "UNKNOWN_TOPIC_OR_PARTITION"]
    assert answer_errors(18, 3, {"error_code": 0, "api_keys": []}) == []

def test_the_journal_records_requests_errors_and_faults(fake_kafka):
    fake_kafka.faults.add(api="Produce", partition=1, error="NOT_LEADER_OR_FOLLOWER")
    with WireClient(fake_kafka.bootstrap_servers, client_id="journaled") as client:
        produce(client, 0)
        produce(client, 1)
    first, second = fake_kafka.journal(api="Produce", client_id="journaled")
    assert (first.version, first.targets, first.errors, first.fault) == (
        9, ["orders/0"], [], None)
    assert (second.targets, second.errors) == (["orders/1"], ["NOT_LEADER_OR_FOLLOWER"])
    assert second.fault == "#1 NOT_LEADER_OR_FOLLOWER"
    assert second.broker == 1 and second.correlation_id == 2 and second.elapsed_ms >= 0
    assert fake_kafka.journal(error="NOT_LEADER_OR_FOLLOWER") == [second]
    coverage = fake_kafka.coverage()
    assert coverage["apis"]["Produce"] == {9: 2}
    assert coverage["errors"] == {"NOT_LEADER_OR_FOLLOWER": 1}


def test_a_rule_for_a_transactional_id_finds_it_in_every_transactional_api():
    """The transactional ids a request names, for every API and version that names one:
    ``transactional_id``, AddPartitionsToTxn's v0-3 field and its v4+ transactions."""
    names = {"AddPartitionsToTxn": ["v3_and_below_transactional_id0"],
             "Produce": ["transactional_id0"]}
    for api in ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn",
                "TxnOffsetCommit", "Produce"):
        key = next(k for k in SERVED if api_spec(k).name == api)
        for version in served_versions(key):
            found = request_transactional_ids(key, request_with_entries(key, version))
            if api == "AddPartitionsToTxn" and version >= 4:
                assert found == {"transactional_id0", "transactional_id1"}
            elif api == "Produce" and version < 3:
                assert found == set()  # no transactional id before v3
            else:
                assert found == set(names.get(api, ["transactional_id0"])), (api, version)
