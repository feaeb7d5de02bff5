"""Fuzzing (tests/fuzz): a short seeded slice of the in-process mode finds no crash, one of the
differential mode no unexplained difference from Kafka, and every crash the fuzzer found is
a regression test here: the broker answers as Kafka does, or closes only that connection
with one line and no traceback."""

from __future__ import annotations

import copy
import logging
import random
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing

from fakebroker.outcomes import Close, Peer
from fakebroker.protocol.errors import error_code
from tests.fuzz.inprocess import run_in_process
from tests.fuzz.mutations import Seed, mutate
from tests.fuzz.socket_check import SocketCheck
from tests.real_kafka import require_real_kafka
from tests.test_pipeline import a_pipeline, decoded, frame

PEER = Peer(1, "/127.0.0.1")


def test_a_seeded_slice_of_the_in_process_fuzzer_finds_no_crash():
    """~20-40 s: the corpus replayed, then 1,500 inputs, every crash candidate checked over
    TCP. The same seed makes the same inputs (``python -m tests.fuzz in-process --seed 1``)."""
    with SocketCheck() as check:
        report = run_in_process(1500, seed=1, check=check)
    assert report.inputs == 1500
    assert report.crashes == [], "\n\n".join(
        f"#{c.index} {c.label} frame={c.frame.hex()}\n{c.problem}" for c in report.crashes)
    assert report.outcomes["answered"] and report.outcomes["closed"]


def test_a_seed_makes_the_same_mutations():
    seed = Seed.of(3, 12, "fuzz", {"topics": [{"name": "orders", "topic_id": uuid.UUID(int=0)}],
                                    "allow_auto_topic_creation": False,
                                    "include_topic_authorized_operations": False})
    rng, replay = random.Random(7), random.Random(7)
    first = [mutate(seed, rng) for _ in range(50)]
    again = [mutate(seed, replay) for _ in range(50)]
    assert first == again and len({m.frame for m in first}) > 1


def test_the_differential_mode_repeats_an_element_at_most_300_times():
    """Kafka reads a keyed array with thousands of equal keys for minutes on a network thread
    (tests/fuzz/differential.py: MAX_REPEAT, measured): three such inputs stalled it."""
    from tests.fuzz.differential import MAX_REPEAT

    seed = Seed.of(0, 9, "fuzz", {"acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": "orders", "partition_data": []}]})
    rng = random.Random(3)
    lengths = {len(m.body["topic_data"]) for m in (mutate(seed, rng, MAX_REPEAT)
                                                   for _ in range(400))
               if m.body is not None and m.mutations == ("topic_data: repeated element",)}
    assert MAX_REPEAT == 300 and max(lengths) == 1 + MAX_REPEAT


def test_a_mutation_leaves_its_parent_as_it_was():
    """Mutants share the values they did not change with their parent (only the mutated
    value's path is copied), so no mutation may change a value in place."""
    body = {"topics": [{"name": "orders", "partitions": [{"index": 0, "records": b"abc"}]},
                       {"name": "zero", "partitions": []}],
            "acks": -1, "timeout_ms": 30000}
    parent = Seed.of(0, 9, "fuzz", body)
    kept = copy.deepcopy(body)
    rng = random.Random(3)
    children = [mutate(parent, rng) for _ in range(200)]
    grandchildren = [mutate(Seed(0, 9, "fuzz", c.body, c.frame), rng)
                     for c in children if c.body is not None]
    assert parent.body == kept and len(grandchildren) > 50
    assert any(m.mutations[0].startswith("topics[0].partitions[0].") for m in children)


def test_a_broker_holding_too_many_partitions_is_replaced_by_a_fresh_one():
    """Past ``max_partitions`` (checked every 100 inputs) the run goes on against a fresh
    broker, the corpus replayed to it: here every 100 inputs, the corpus's 148 being over 0."""
    report = run_in_process(200, seed=1, max_partitions=0)
    assert report.fresh_brokers == 2 and report.inputs == 200 and report.crashes == []


def test_the_socket_check_finds_a_malformed_frame_harmless_to_other_connections():
    with SocketCheck() as check:
        assert check.check(b"\x00\x03\x00\x0c") == []  # Metadata v12, cut after its version
        assert check.check(b"\x7f\xff\x00\x00\x00\x00\x00\x01") == []  # an unknown API key


# -- regressions: what the fuzzer found ----------------------------------------------------


def test_metadata_v10_v11_with_a_topic_by_id_is_invalid_as_kafka_answers_it():
    """Kafka 4.4 (measured): every topic INVALID_REQUEST, named "" when the request gave no
    name, with no brokers, cluster id or controller (the fake encoded a null name before)."""
    wanted = uuid.UUID(int=5)
    for version in (10, 11):
        answer = a_pipeline().answer_now(frame("Metadata", version, {
            "topics": [{"name": None, "topic_id": wanted}], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False,
            "include_cluster_authorized_operations": False}), PEER)
        _, body = decoded("Metadata", version, answer)
        assert (list(body.brokers), body.cluster_id, body.controller_id) == ([], None, -1)
        [topic] = body.topics
        assert (topic.error_code, topic.name, topic.topic_id, list(topic.partitions)) == (
            error_code("INVALID_REQUEST"), "", wanted, [])


def test_create_partitions_beyond_ten_thousand_more_is_a_policy_violation_not_a_hang():
    """Kafka 4.4 (measured): 10,000 more partitions are made, 10,001 refused; the fake
    made 2^31-1 partitions one by one before."""
    answers = []
    for count in (2**31 - 1, 10_003):
        answer = a_pipeline().answer_now(frame("CreatePartitions", 3, {
            "topics": [{"name": "orders", "count": count, "assignments": None}],
            "timeout_ms": 1000, "validate_only": True}), PEER)
        answers.append([(r.error_code, r.error_message)
                        for r in decoded("CreatePartitions", 3, answer)[1].results])
    refused = (error_code("POLICY_VIOLATION"),
               "Excessively large number of additional partitions per request.")
    assert answers == [[refused], [refused]]
    answer = a_pipeline().answer_now(frame("CreatePartitions", 3, {
        "topics": [{"name": "orders", "count": 10_002, "assignments": None}],
        "timeout_ms": 1000, "validate_only": True}), PEER)
    assert [r.error_code for r in decoded("CreatePartitions", 3, answer)[1].results] == [0]


def test_create_topics_of_more_than_ten_thousand_partitions_is_a_policy_violation():
    def created(partitions: int) -> list[tuple[int, str | None]]:
        answer = a_pipeline().answer_now(frame("CreateTopics", 7, {
            "topics": [{"name": "big", "num_partitions": partitions, "replication_factor": 1,
                        "assignments": [], "configs": []}],
            "timeout_ms": 1000, "validate_only": True}), PEER)
        return [(t.error_code, t.error_message)
                for t in decoded("CreateTopics", 7, answer)[1].topics]

    assert created(2**31 - 1) == created(10_001) == [(
        error_code("POLICY_VIOLATION"), "Excessively large number of partitions per request.")]
    assert created(9_999) == [(0, None)]  # the bound itself: tests/test_wire_create_topics_bound


def test_an_unknown_config_operation_on_a_group_fails_as_on_a_topic(caplog):
    answer = a_pipeline().answer_now(frame("IncrementalAlterConfigs", 1, {
        "resources": [{"resource_type": 32, "resource_name": "shared", "configs": [
            {"name": "share.record.lock.duration.ms", "config_operation": -1,
             "value": "1000"}]}], "validate_only": False}), PEER)
    [result] = decoded("IncrementalAlterConfigs", 1, answer)[1].responses
    assert result.error_code == error_code("UNKNOWN_SERVER_ERROR")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_answer_too_large_for_its_version_closes_only_with_a_reason(caplog):
    """A group id of 20,000 bytes that are not UTF-8 (read as 20,000 U+FFFD, as Kafka reads
    them: 60,000 bytes written) cannot be listed by ListGroups v0-2, whose strings' lengths
    are int16: the connection closes, with no traceback. (A longer string is refused as the
    request is read, as Kafka's readers refuse one of more than 32,767 bytes.)"""
    pipeline = a_pipeline()
    heartbeat = frame("ConsumerGroupHeartbeat", 0, {
        "group_id": "g" * 20_000, "member_id": "", "member_epoch": 0, "rack_id": None,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["orders"],
        "server_assignor": None, "topic_partitions": []})

    async def listed() -> object:  # the heartbeat reads trio's clock
        pipeline.answer_now(heartbeat.replace(b"g" * 20_000, b"\xff" * 20_000), PEER)
        return pipeline.answer_now(frame("ListGroups", 0, {}), PEER)

    outcome = trio.run(listed)
    assert isinstance(outcome, Close) and "cannot be encoded" in outcome.reason
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.real_kafka
@pytest.mark.timeout(240)
def test_a_seeded_differential_slice_has_no_unexplained_difference_from_kafka(tmp_path,
                                                                             request):
    """~35 s, with ``--kafka=real`` or ``both``: a Kafka of its own (both brokers start empty),
    the corpus replayed to both, then 300 seeded mutations to both; every difference must be
    one tests/fuzz/differences.toml explains."""
    from tests.fuzz.differential import run_differential

    if request.config.getoption("--kafka") == "fake":
        pytest.skip("the differential slice runs with --kafka=real or both")
    require_real_kafka()
    result = run_differential(tmp_path, 300, seed=1)
    assert result.inputs == 300 and result.stopped is None
    assert not result.unexplained, result.summary()


def test_a_name_that_is_not_utf8_is_read_as_kafka_reads_it():
    """Kafka decodes a malformed UTF-8 sequence to U+FFFD (Java's ``new String``) and answers;
    the fake closed the connection. Measured on Kafka 4.4: INVALID_TOPIC_EXCEPTION."""
    sent = frame("Metadata", 1, {"topics": [{"name": "or\u00e9ers"}]})
    assert b"\xc3\xa9" in sent
    answer = a_pipeline().answer_now(sent.replace(b"\xc3\xa9", b"\xff\xa9"), PEER)
    [topic] = decoded("Metadata", 1, answer)[1].topics
    assert topic.error_code == error_code("INVALID_TOPIC_EXCEPTION")


def test_a_difference_entry_covers_only_its_versions():
    """tests/fuzz/differences.toml's optional ``versions``: "N-M" (or "N"), else all."""
    from tests.fuzz.differential import Explained

    entry = Explained("Produce", ".*", "closed", "answered .*", "why", versions="0-2")
    found = {v: SimpleNamespace(api="Produce", version=v, mutation="m", kafka="closed",
                                fake="answered NONE") for v in (0, 2, 3)}
    assert [entry.covers(found[v]) for v in (0, 2, 3)] == [True, True, False]
    assert Explained("Produce", ".*", "closed", "answered .*", "why").covers(found[3])


def test_an_explained_difference_may_be_limited_to_the_api_keys_sent():
    """tests/fuzz/differences.toml's optional ``sent_keys``: the API key the frame carries (a
    byte-level mutation may have changed the drawn API's), "N-M" (or "N"), else any."""
    from tests.fuzz.differential import Explained

    entry = Explained("*", "bits flipped", "answered.*", "closed", "why", sent_keys="71-72")
    found = {key: SimpleNamespace(api="StreamsGroupHeartbeat", version=0,
                                  mutation="4 bits flipped", kafka="answered NONE",
                                  fake="closed", frame=key.to_bytes(2, "big") + bytes(6))
             for key in (72, 88)}
    assert [entry.covers(found[key]) for key in (72, 88)] == [True, False]


def test_a_stored_batch_whose_records_do_not_parse_is_read_from_its_header(caplog):
    """Found with record batches mutated inside (``tests.fuzz.batches``): Produce reads
    records one by one only where it decodes them anyway, so a batch whose length and CRC
    are right but whose records are not is stored on a delete-policy topic (Kafka's
    LogValidator refuses it: written down in differences.toml); ListOffsets by timestamp then
    raised in the handler. Its readers now answer from the batch's header: ListOffsets gives
    the batch's first offset and maximum timestamp, a down-converting Fetch skips it."""
    import struct as _struct

    import crc32c

    from fakebroker.protocol.records import encode_batch

    good = bytearray(encode_batch([(b"k", b"v" * 20, [], 1_700_000_000_000)] * 3))
    good[61] = 0x7F  # the first record's length varint: 63 bytes, past the batch
    _struct.pack_into(">I", good, 17, crc32c.crc32c(bytes(good[21:])))
    pipeline = a_pipeline()
    produced = pipeline.answer_now(frame("Produce", 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "orders", "partition_data": [{"index": 0, "records": bytes(good)}]}]}),
        PEER)
    [topic] = decoded("Produce", 9, produced)[1].responses
    assert topic.partition_responses[0].error_code == 0  # stored unread (the difference)
    for timestamp in (1_600_000_000_000, -3):  # by timestamp; the largest timestamp (v7+)
        answer = pipeline.answer_now(frame("ListOffsets", 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": "orders", "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp}]}]}),
            PEER)
        [partition] = decoded("ListOffsets", 7, answer)[1].topics[0].partitions
        assert (partition.error_code, partition.timestamp) == (0, 1_700_000_000_000)
        assert partition.offset in (0, 2)
    fetch = frame("Fetch", 3, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "topics": [
            {"topic": "orders", "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})

    async def fetched_now() -> Any:
        return await pipeline.answer(fetch, PEER)

    fetched = trio.run(fetched_now, clock=trio.testing.MockClock(autojump_threshold=0))
    [partition] = decoded("Fetch", 3, fetched)[1].responses[0].partitions
    assert partition.error_code == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_answer_holding_a_string_over_32767_bytes_closes_only_with_a_reason(caplog):
    """Found by the in-process fuzzer (an AddRaftVoter of thousands of listeners: its
    INVALID_REQUEST message names every one, 230,000 bytes): Kafka's generated writers refuse
    a string of more than 32,767 bytes, compact ones too, so the answer is never sent; the
    fake wrote it (and its own reader refused it). Now the connection closes with one line."""
    listeners = [{"name": f"L{i}", "host": "localhost", "port": 9} for i in range(5000)]
    answer = a_pipeline().answer_now(frame("AddRaftVoter", 0, {
        "cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
        "voter_directory_id": uuid.UUID(int=7), "listeners": listeners}), PEER)
    assert isinstance(answer, Close) and "more than 32,767" in answer.reason
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    few = a_pipeline().answer_now(frame("AddRaftVoter", 0, {
        "cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
        "voter_directory_id": uuid.UUID(int=7), "listeners": listeners[:3]}), PEER)
    assert decoded("AddRaftVoter", 0, few)[1].error_code == error_code("INVALID_REQUEST")


def test_the_differential_mode_withholds_an_unregistering_of_kafkas_own_broker():
    """An UnregisterBroker naming Kafka's node leaves Kafka without a broker in its metadata
    for the rest of a run (no leader, no coordinator), where the fake keeps its broker
    (known.toml, unregister-live-broker): such an input is sent to neither side."""
    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import KAFKA_NODE, fells_kafka

    def unregister(broker_id: int) -> bytes:
        return bytes(encode_request(64, 0, 1, "fuzz", {"broker_id": broker_id}))[4:]

    assert fells_kafka(unregister(KAFKA_NODE))
    assert not fells_kafka(unregister(7))
    assert not fells_kafka(unregister(KAFKA_NODE)[:-3])  # does not parse: sent, and closed


def test_the_differential_mode_withholds_a_raft_voter_that_ends_kafkas_process():
    """An AddRaftVoter naming a listener of no name, or of no host, ends Kafka 4.4's process
    (measured: its connection closed, then every connection refused; a 1,000,000-input run
    stopped at seed 1's #411219, a host mutated to ""): sent to neither side."""
    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import fells_kafka

    def adding(name: str, host: str) -> bytes:
        return bytes(encode_request(80, 0, 1, "fuzz", {
            "cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
            "voter_directory_id": uuid.UUID(int=1), "ack_when_committed": True,
            "listeners": [{"name": name, "host": host, "port": 9093}]}))[4:]

    assert fells_kafka(adding("", "localhost")) and fells_kafka(adding("CONTROLLER", ""))
    assert not fells_kafka(adding("CONTROLLER", "localhost"))


def test_the_differential_mode_withholds_a_config_operation_kafkas_controller_fails_on():
    """An IncrementalAlterConfigs with a config operation other than SET, DELETE, APPEND and
    SUBTRACT makes Kafka's quorum controller renounce its leadership (a NullPointerException),
    after which requests for it are NOT_LEADER_OR_FOLLOWER for a while: sent to neither side."""
    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import fells_kafka

    def altering(operation: int) -> bytes:
        return bytes(encode_request(44, 1, 1, "fuzz", {"resources": [
            {"resource_type": 2, "resource_name": "orders", "configs": [
                {"name": "retention.ms", "config_operation": operation, "value": "1"}]}],
            "validate_only": False}))[4:]

    assert fells_kafka(altering(7)) and fells_kafka(altering(-1))
    assert not any(fells_kafka(altering(op)) for op in range(4))


def test_the_differential_mode_withholds_a_produce_kafka_never_answers():
    """A Produce with a partition's records null is never answered by Kafka (a
    NullPointerException while it logs the request), so its connection stays muted and the
    fuzzer's close of it goes unseen: the share session opened on it lived on in Kafka only
    (seed 2, #89124, then four session differences): sent to neither side. A Produce with
    records, or none null as Kafka reads it, is sent."""
    from fakebroker.protocol.framing import encode_request
    from tests.bodies import batch, produce_body
    from tests.fuzz.differential import fells_kafka

    def producing(*records: bytes | None) -> bytes:
        body = produce_body("orders", 0, b"")
        body["topic_data"][0]["partition_data"] = [
            {"index": i, "records": r} for i, r in enumerate(records)]
        return bytes(encode_request(0, 9, 1, "fuzz", body))[4:]

    assert fells_kafka(producing(None)) and fells_kafka(producing(batch([b"a"]), None))
    assert not fells_kafka(producing(batch([b"a"]))) and not fells_kafka(producing(b""))
    assert not fells_kafka(producing(None)[:-3])  # does not parse: sent, and closed


def test_the_differential_mode_withholds_an_alter_configs_kafka_never_answers():
    """An AlterConfigs naming one resource twice is never answered by Kafka (its response,
    collected by resource, fails on the duplicate, and so does its error response): its
    connection stays muted, as for a Produce of null records. Sent to neither side; two
    resources of one name but different types, or of two names, are sent."""
    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import fells_kafka

    def altering(*resources: tuple[int, str]) -> bytes:
        return bytes(encode_request(33, 2, 1, "fuzz", {"resources": [
            {"resource_type": kind, "resource_name": name, "configs": [
                {"name": "retention.ms", "value": "1"}]} for kind, name in resources],
            "validate_only": False}))[4:]

    assert fells_kafka(altering((2, "orders"), (2, "orders")))
    assert fells_kafka(altering((2, "orders"), (4, "1"), (2, "orders")))
    assert not fells_kafka(altering((2, "orders"), (4, "orders")))
    assert not fells_kafka(altering((2, "orders"), (2, "audit")))


def test_the_differential_mode_sets_apart_a_frame_its_ids_make_read_differently():
    """Seed 1, #37320 (OffsetFetch v10, "tagged field 2147483647, 5 bits flipped"): the
    member id's length lost a bit, so both sides read their topic id as the group's tagged
    fields: a varint longer than 5 bytes with the fake's id, two tagged fields with Kafka's.
    Each broker, sent either frame, answers it as the other does
    (tests/test_wire_request_parsing.py): not one input, so not a difference."""
    from tests.fuzz.differential import read_alike

    def frame(topic_id: str) -> bytes:  # the frames as sent, spaced where a field starts
        return bytes.fromhex(
            "0009 000a 00000001 000b 676f6e666f726d616e6365 00"  # header, client id "gonformance"
            " 02 07 6f6578742d31"  # 1 group, "oext-1"
            " 16 41410141414141414141414141414141414141414151"  # member id: 22 bytes, 21 said
            " 00000000 02" + topic_id + " 02 00000000 00"  # epoch 0, 1 topic: its partition 0
            " 00 00 01 ffffffff07 03 463c55")  # group done, not stable, tag 2^31-1

    fakes = frame("57f1b393a7de438c80045175305712b6")  # read: tag 87, size f1b393a7de43
    kafkas = frame("f6600e0c90f04680b0b732d1db05c7d6")  # tag 12406, 14 bytes; tag 0, 0 bytes
    assert not read_alike(kafkas, fakes)
    assert read_alike(kafkas, kafkas) and read_alike(fakes, fakes)


def test_the_differential_mode_sets_apart_an_overwrite_that_kept_one_sides_topic_id():
    """Seed 1, #60246 (Fetch v18, "00 at 58"): byte 58 lies in the topic id, where the fake's
    id already held 00: the fake's id named its topic still (OFFSET_OUT_OF_RANGE) while
    Kafka's named none (UNKNOWN_TOPIC_ID), so not one input. An overwrite changing both ids,
    or neither, is one input."""
    from tests.fuzz.differential import edited_alike

    def fetch(topic_id: str) -> bytes:  # the frame as sent up to its topic, then the rest
        return bytes.fromhex(
            "0001 0012 00000001 000b 636f6e666f726d616e6365 00"  # header, client id
            " 0000000000000001001000000100000000ffffffff02"  # up to: 1 topic
            + topic_id + " 0200000000ffffffff0000000000000000ffffffffffffffffffffffff"
            " 001000000000010100")

    kafkas = fetch("4bce99aa3c7c4b9dabcdd353775e7fad")  # byte 58: 7f, written 00
    fakes = fetch("ffffa62340ce4d40aa66d5286c8400bb")  # byte 58: 00 already

    def written(frame: bytes, byte: int) -> bytes:
        return frame[:58] + bytes([byte]) + frame[59:]

    assert not edited_alike(kafkas, written(kafkas, 0), fakes, written(fakes, 0))
    assert edited_alike(kafkas, written(kafkas, 0x11), fakes, written(fakes, 0x11))
    assert edited_alike(kafkas, kafkas, fakes, fakes)
    # Seed 2, #96062: the same overwrite, then a tagged field appended (both frames longer)
    tagged = bytes.fromhex("0105 00")
    assert not edited_alike(kafkas, written(kafkas, 0) + tagged, fakes, written(fakes, 0) + tagged)
    assert edited_alike(kafkas, written(kafkas, 0x11) + tagged, fakes,
                        written(fakes, 0x11) + tagged)
    # bytes inserted before the id move it on both sides: unlike its seed on both
    assert edited_alike(kafkas, b"\0" + written(kafkas, 0), fakes, b"\0" + written(fakes, 0))


def test_a_fetch_answered_as_each_sides_own_log_range_is_set_apart_as_drift():
    """Seed 2, #64413 (Fetch of orders-1 at offset 100): Kafka's log [100, 120], the fake's
    [101, 124] after a batch the fake stored and Kafka refused (explained), so Kafka answered
    NONE and the fake OFFSET_OUT_OF_RANGE, each as its own log says. Logs alike, a side
    answering against its own range, or another error differing, is a difference still."""
    from tests.fuzz.differential import drift_explains
    from tests.fuzz.outcomes import ANSWERED, CLOSED, Outcome

    none, out = Outcome(ANSWERED), Outcome(ANSWERED, frozenset({"OFFSET_OUT_OF_RANGE"}))
    drifted = [(100, (100, 120), (101, 124))]
    assert drift_explains(none, out, drifted)
    assert not drift_explains(out, none, drifted)  # Kafka's range holds 100, the fake's not
    assert not drift_explains(none, out, [(100, (101, 124), (101, 124))])  # alike logs
    assert not drift_explains(none, Outcome(ANSWERED, frozenset({"OFFSET_OUT_OF_RANGE",
                                                                   "NOT_LEADER_OR_FOLLOWER"})),
                              drifted)
    assert not drift_explains(Outcome(CLOSED), out, drifted)
    assert drift_explains(out, none, [(100, (85, 99), (89, 103))])  # #53995, reversed


def test_a_fetch_reads_a_partition_named_twice_at_its_last_offset():
    """Seed 1, #407772 (Fetch v5 naming orders-0 92 times, once at offset 2^48 + 100): both
    brokers read a repeated partition once, at its last offset (measured on Kafka 4.4), so the
    drift check reads it so too; an unreadable offset leaves the fetch unexplained."""
    from tests.fuzz.differential import fetch_offsets

    def partition(index, offset):
        return {"partition": index, "fetch_offset": offset}

    body = {"topics": [{"topic": "orders", "partitions": [
        partition(0, 2**48 + 100), partition(1, 5), partition(0, 100)]},
        {"topic_id": "id-of-events", "partitions": [partition(0, 7)]}]}
    assert list(fetch_offsets(body, {"id-of-events": "events"}).items()) == [
        (("orders", 0), 100), (("orders", 1), 5), (("events", 0), 7)]
    assert fetch_offsets({"topics": [{"topic": "orders", "partitions": [
        partition(0, None)]}]}, {}) is None


def test_the_differential_mode_withholds_an_add_raft_voter_that_ends_kafkas_process():
    """An AddRaftVoter with a listener named by the empty string ends Kafka's process (its raft
    IO thread's ConfigException is a fatal fault: every later connection refused, measured on
    4.4 at seeds 2 and 3), where the fake answers INVALID_REQUEST: sent to neither side."""
    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import fells_kafka

    def adding(*names: str) -> bytes:
        return bytes(encode_request(80, 1, 1, "fuzz", {
            "cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
            "voter_directory_id": uuid.UUID(int=7), "ack_when_committed": True,
            "listeners": [{"name": name, "host": "127.0.0.1", "port": 9093}
                          for name in names]}))[4:]

    assert fells_kafka(adding("")) and fells_kafka(adding("CONTROLLER", ""))
    assert not fells_kafka(adding("CONTROLLER")) and not fells_kafka(adding())


def test_a_pending_input_is_read_to_its_end_and_its_connection_kept():
    """A ShareFetch pending after ``WAIT`` s holds a share session on its connection until it
    is answered (Kafka sees a close only then): ``settle`` reads its late answer and the
    probe's by the deadline, the connection kept, and the next input is read in step."""
    import socket
    import struct
    import threading
    import time

    from fakebroker.protocol.framing import encode_request
    from tests.fuzz.differential import WAIT, _Connection
    from tests.fuzz.outcomes import PENDING

    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve() -> None:  # ApiVersions v0 answers: the first input's and its probe's late
        conn, _ = listener.accept()
        accepted.append(1)
        with conn:
            held: list[bytes] = []
            for n in range(4):  # an input and its probe, twice
                size = struct.unpack(">i", conn.recv(4, socket.MSG_WAITALL))[0]
                correlation = conn.recv(size, socket.MSG_WAITALL)[4:8]
                held.append(correlation + b"\0\0" + b"\0\0\0\0")  # NONE, no API keys
                if n == 0:
                    continue
                if n == 1:
                    time.sleep(2 * WAIT)
                for answer in held:
                    conn.sendall(struct.pack(">i", len(answer)) + answer)
                held = []

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    connection = _Connection(f"127.0.0.1:{listener.getsockname()[1]}")
    try:
        request = encode_request(18, 0, 1, "t", {})[4:]  # sent without its size
        connection.send(request)
        assert connection.outcome(request).kind == PENDING
        connection.settle(request, time.monotonic() + 4 * WAIT)
        assert connection.sock is not None and connection.unread == 0
        second = encode_request(18, 0, 2, "t", {})[4:]
        connection.send(second)
        assert str(connection.outcome(second)) == "answered NONE"
        assert accepted == [1]  # one connection throughout
    finally:
        connection.close()
        listener.close()
        thread.join(5)


def test_the_differential_mode_watches_topics_by_the_api_the_frame_names():
    """After an input that may create or delete topics the run waits until Kafka, which does
    it a moment later, has done what the fake did. Which API an input is, the frame's header
    says: seed 1's #708881 was a DescribeLogDirs v1 whose flipped bits made it a Metadata v1,
    which auto-created the topic it named on both brokers."""
    from tests.fuzz.differential import watched_topics
    from tests.fuzz.mutations import Mutant

    describe = Seed.of(35, 1, "fuzz", {"topics": [{"topic": "ghost", "partitions": [0]}]})
    as_metadata = describe.frame[:1] + bytes([describe.frame[1] ^ 0x20]) + describe.frame[2:]
    assert watched_topics(Mutant(describe, (), describe.frame, describe.body)) == []
    assert watched_topics(Mutant(describe, ("2 bits flipped",), as_metadata, None)) is None
    metadata = Seed.of(3, 12, "fuzz", {"topics": [{"name": "ghost", "topic_id": None}],
                                       "allow_auto_topic_creation": True,
                                       "include_topic_authorized_operations": False})
    assert watched_topics(Mutant(metadata, (), metadata.frame, metadata.body)) == ["ghost"]
