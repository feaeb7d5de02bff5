"""Bad requests get Kafka's answers, at the level Kafka puts them; nothing else is disturbed.
They run on the fake and on Apache Kafka (``--kafka=both``); what needs a second broker or a
fakebroker setting runs on the fake only."""

from __future__ import annotations

import logging
import re
import struct
import threading
import time

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient
from tests.test_wire_transactions import retried
from tests.test_wire_versions import batch, fetch_body, leader_of, produce_body

pytestmark = pytest.mark.fake_kafka(brokers=2, topics={"orders": 2})
TWO_BROKERS = "needs a second broker (the real one has one node)"


def follower_of(kafka, topic: str, partition: int) -> str:
    leader = leader_of(kafka, topic, partition)
    return next(f"{b.host}:{b.port}" for b in kafka.brokers if f"{b.host}:{b.port}" != leader)


def produce_error(client: WireClient, body: dict, version: int = 9) -> int:
    response = client.request("Produce", version, body)
    return response.responses[0].partition_responses[0].error_code


def fetch_partition(client: WireClient, body: dict, version: int = 12):
    return client.request("Fetch", version, body).responses[0].partitions[0]


# -- Produce ----------------------------------------------------------------------------------


@pytest.mark.fake_only(TWO_BROKERS)
def test_produce_to_a_follower_is_not_leader_or_follower_naming_the_leader(kafka):
    with WireClient(follower_of(kafka, "orders", 0)) as client:
        response = client.request("Produce", 10, produce_body("orders", 0, batch([b"x"])))
    partition = response.responses[0].partition_responses[0]
    assert partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    leader_id = kafka.call(lambda: kafka.cluster.state.partition("orders", 0).leader)
    assert partition.current_leader.leader_id == leader_id
    assert [e.node_id for e in response.node_endpoints] == [leader_id]
    assert kafka.offsets("orders", 0) == (0, 0)


def test_produce_to_unknown_topic_partition_or_id(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        assert produce_error(client, produce_body("nope", 0, batch([b"x"]))) == \
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert produce_error(client, produce_body("orders", 7, batch([b"x"]))) == \
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        import uuid
        body = produce_body(None, 0, batch([b"x"]), topic_id=uuid.uuid4())
        assert produce_error(client, body, version=13) == ErrorCode.UNKNOWN_TOPIC_ID


def test_produce_with_a_bad_crc_is_corrupt_message_and_appends_nothing(kafka):
    records = bytearray(batch([b"x"]))
    records[-1] ^= 0xFF
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        assert produce_error(client, produce_body("orders", 0, bytes(records))) == \
            ErrorCode.CORRUPT_MESSAGE
        # The connection stays usable.
        assert produce_error(client, produce_body("orders", 0, batch([b"ok"]))) == 0
    assert [r.value for r in kafka.records("orders", 0)] == [b"ok"]


def test_produce_with_invalid_acks_is_invalid_required_acks(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        body = produce_body("orders", 0, batch([b"x"]), acks=2)
        assert produce_error(client, body) == ErrorCode.INVALID_REQUIRED_ACKS


def test_produce_v3_and_later_needs_one_magic_2_batch(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        legacy = batch([b"x"], magic=1)
        assert produce_error(client, produce_body("orders", 0, legacy)) == \
            ErrorCode.INVALID_RECORD
        two = batch([b"x"]) + batch([b"y"])
        assert produce_error(client, produce_body("orders", 0, two)) == ErrorCode.INVALID_RECORD


def test_zstd_needs_produce_v7(kafka):
    zstd = encode_batch([(None, b"x", [], 0)], compression=4)
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        assert produce_error(client, produce_body("orders", 0, zstd), version=6) == \
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        assert produce_error(client, produce_body("orders", 0, zstd), version=7) == 0


def test_a_batch_over_max_message_bytes_is_message_too_large(kafka):
    kafka.create_topic("small", configs={"max.message.bytes": "200"})
    with WireClient(leader_of(kafka, "small", 0)) as client:
        assert produce_error(client, produce_body("small", 0, batch([b"x" * 300]))) == \
            ErrorCode.MESSAGE_TOO_LARGE


def test_acks_0_gets_no_answer_and_a_failure_closes_the_connection(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        client.send("Produce", 9, produce_body("orders", 0, batch([b"quiet"]), acks=0))
        # The next answer on the connection is the Metadata one: Produce got none.
        assert client.request("Metadata", 9, {"topics": None}).topics
        client.send("Produce", 9, produce_body("nope", 0, batch([b"x"]), acks=0))
        assert client.is_closed_by_peer()
    assert [r.value for r in kafka.records("orders", 0)] == [b"quiet"]


# -- Idempotence ------------------------------------------------------------------------------


def idempotent(values: list[bytes], sequence: int, epoch: int = 0, pid: int = 1000) -> bytes:
    return encode_batch([(None, v, [], 0) for v in values], producer_id=pid,
                        producer_epoch=epoch, base_sequence=sequence)


def test_a_retried_idempotent_batch_is_stored_once_and_answered_with_its_offset(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        # Retried as a producer retries it: Kafka's broker may answer
        # COORDINATOR_LOAD_IN_PROGRESS while it fetches a block of producer ids (seen on a
        # 3-node cluster under load).
        init = retried(client, "InitProducerId", 4, {"transactional_id": None,
                                                     "transaction_timeout_ms": 1000,
                                                     "producer_id": -1, "producer_epoch": -1})
        assert init.error_code == 0
        pid = init.producer_id
        first = client.request("Produce", 9, produce_body(
            "orders", 0, idempotent([b"a", b"b"], 0, pid=pid)))
        retry = client.request("Produce", 9, produce_body(
            "orders", 0, idempotent([b"a", b"b"], 0, pid=pid)))
        assert first.responses[0].partition_responses[0].base_offset == 0
        assert retry.responses[0].partition_responses[0].error_code == 0
        assert retry.responses[0].partition_responses[0].base_offset == 0
        gap = produce_error(client, produce_body("orders", 0, idempotent([b"c"], 5, pid=pid)))
        assert gap == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        # Without a transactional id, InitProducerId always answers a new id at epoch 0, even
        # naming the current id and epoch (KIP-360): the producer bumps its epoch itself,
        # starting again at sequence 0.
        again = client.request("InitProducerId", 4, {"transactional_id": None,
                                                     "transaction_timeout_ms": 1000,
                                                     "producer_id": pid, "producer_epoch": 0})
        assert again.error_code == 0 and again.producer_epoch == 0
        assert again.producer_id not in (-1, pid)
        bumped = produce_error(client, produce_body(
            "orders", 0, idempotent([b"c"], 0, epoch=1, pid=pid)))
        assert bumped == 0
        stale = produce_error(client, produce_body("orders", 0, idempotent([b"d"], 2, pid=pid)))
        assert stale == ErrorCode.INVALID_PRODUCER_EPOCH
    assert [r.value for r in kafka.records("orders", 0)] == [b"a", b"b", b"c"]


# -- Fetch ------------------------------------------------------------------------------------


def test_fetch_outside_the_log_is_offset_out_of_range(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        client.request("Produce", 9, produce_body("orders", 0, batch([b"a", b"b"])))
        assert fetch_partition(client, fetch_body("orders", 0, 2)).error_code == 0
        assert fetch_partition(client, fetch_body("orders", 0, 3)).error_code == \
            ErrorCode.OFFSET_OUT_OF_RANGE
        client.request("DeleteRecords", 2, {"topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "offset": 1}]}], "timeout_ms": 1000})
        below = fetch_partition(client, fetch_body("orders", 0, 0))
        # An error answer carries no offsets: the consumer asks ListOffsets where to reset.
        assert (below.error_code, below.high_watermark, below.log_start_offset) == (
            ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1)
    assert kafka.offsets("orders", 0) == (1, 2)


@pytest.mark.fake_only(TWO_BROKERS)
def test_fetch_from_a_follower_is_not_leader_or_follower(kafka):
    with WireClient(follower_of(kafka, "orders", 1)) as client:
        assert fetch_partition(client, fetch_body("orders", 1, 0)).error_code == \
            ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_fetch_by_unknown_topic_id_is_unknown_topic_id(kafka):
    import uuid
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        partition = fetch_partition(client, fetch_body(None, 0, 0, topic_id=uuid.uuid4()),
                                    version=13)
        assert partition.error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_a_leader_epoch_newer_than_the_leaders_is_unknown(kafka):
    body = fetch_body("orders", 0, 0)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = 5
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        partition = fetch_partition(client, body)
    assert partition.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert (partition.current_leader.leader_id, partition.high_watermark) == (-1, -1)


def test_a_long_poll_fetch_waits_and_wakes_on_append(kafka):
    address = leader_of(kafka, "orders", 0)
    with WireClient(address) as waiting, WireClient(address) as producer:
        started = time.monotonic()
        late_append = threading.Timer(0.3, lambda: producer.request(
            "Produce", 9, produce_body("orders", 0, batch([b"late"]))))
        late_append.start()
        partition = fetch_partition(waiting, fetch_body("orders", 0, 0, max_wait_ms=10_000))
        elapsed = time.monotonic() - started
        late_append.join(timeout=10)  # its answer is read before the socket closes
    assert partition.records and 0.25 < elapsed < 5


def test_an_empty_long_poll_answers_after_max_wait(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        started = time.monotonic()
        partition = fetch_partition(client, fetch_body("orders", 0, 0, max_wait_ms=300))
        assert partition.records == b"" and time.monotonic() - started >= 0.29


def test_answers_keep_request_order_on_a_pipelined_connection(kafka):
    address = leader_of(kafka, "orders", 0)
    with WireClient(address) as client:
        slow = client.send("Fetch", 12, fetch_body("orders", 0, 0, max_wait_ms=300))
        fast = client.send("Metadata", 9, {"topics": None})
        assert client.receive("Fetch", 12)[0] == slow
        assert client.receive("Metadata", 9)[0] == fast


# -- Admin ------------------------------------------------------------------------------------


@pytest.mark.parametrize("topic,error", [
    ({"name": "orders", "num_partitions": 1, "replication_factor": 1}, "TOPIC_ALREADY_EXISTS"),
    ({"name": "bad/name", "num_partitions": 1, "replication_factor": 1},
     "INVALID_TOPIC_EXCEPTION"),
    ({"name": "zero", "num_partitions": 0, "replication_factor": 1}, "INVALID_PARTITIONS"),
    ({"name": "wide", "num_partitions": 1, "replication_factor": 4},  # more than the brokers
     "INVALID_REPLICATION_FACTOR"),
    ({"name": "conf", "num_partitions": 1, "replication_factor": 1,
      "configs": [{"name": "no.such.config", "value": "1"}]}, "INVALID_CONFIG"),
])
def test_create_topics_refusals(kafka, topic, error):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("CreateTopics", 7, {"topics": [topic], "timeout_ms": 1000})
    assert response.topics[0].error_code == ErrorCode[error]
    assert response.topics[0].error_message


def test_create_partitions_must_grow(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("CreatePartitions", 3, {
            "topics": [{"name": "orders", "count": 2, "assignments": None}], "timeout_ms": 5000})
    assert response.results[0].error_code == ErrorCode.INVALID_PARTITIONS


def test_delete_records_above_the_high_watermark_is_offset_out_of_range(kafka):
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        response = client.request("DeleteRecords", 2, {"topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "offset": 5}]}], "timeout_ms": 1000})
    assert response.topics[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


@pytest.mark.fake_only("a fakebroker setting (auto_create_topics; Kafka's is a broker config)")
def test_metadata_without_auto_creation_is_unknown_topic(fake_kafka_factory):
    kafka = fake_kafka_factory(auto_create_topics=False)
    with WireClient(kafka.bootstrap_servers) as client:
        response = client.request("Metadata", 12, {"topics": [{"name": "ghost"}],
                                                   "allow_auto_topic_creation": True})
    assert response.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert response.topics[0].topic_id == ZERO_UUID


# -- Connections ------------------------------------------------------------------------------


def test_api_versions_above_the_supported_range_is_answered_at_v0(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        # A v99 ApiVersions request: header v2 with an empty body.
        header = struct.pack(">hhih", 18, 99, 7, 1) + b"x" + b"\x00"
        client.sock.sendall(struct.pack(">i", len(header)) + header)
        correlation_id, response = client.receive("ApiVersions", 0)
    assert correlation_id == 7
    assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 5)]


def test_an_unknown_api_closes_only_that_connection(kafka):
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as other, WireClient(address) as client:
        header = struct.pack(">hhih", 999, 0, 1, -1)
        client.sock.sendall(struct.pack(">i", len(header)) + header)
        assert client.is_closed_by_peer()
        assert other.request("Metadata", 12, {"topics": None}).brokers


SHORT_FRAMES = pytest.mark.parametrize(
    "frame", [b"", b"\x00\x03", b"\x00\x03\x00\x0c\x00"],
    ids=["zero length", "api key only", "half a header"])


def a_short_frame_closes_only_its_connection(kafka, frame: bytes) -> None:
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as other, WireClient(address) as client:
        client.sock.sendall(struct.pack(">i", len(frame)) + frame)
        assert client.is_closed_by_peer()
        assert other.request("Metadata", 12, {"topics": None}).brokers


@SHORT_FRAMES
def test_a_frame_shorter_than_a_header_closes_only_that_connection(kafka, frame):
    a_short_frame_closes_only_its_connection(kafka, frame)


@SHORT_FRAMES
@pytest.mark.fake_only("fakebroker's own log")
def test_the_fake_logs_one_warning_without_a_traceback_for_a_short_frame(kafka, caplog, frame):
    with caplog.at_level(logging.WARNING, logger="fakebroker"):
        a_short_frame_closes_only_its_connection(kafka, frame)
    closing = [r for r in caplog.records if r.name == "fakebroker"]
    assert [(r.levelname, r.exc_info) for r in closing] == [("WARNING", None)]
    assert "malformed request" in closing[0].getMessage()


@pytest.mark.fake_only("a fakebroker setting (max_request_bytes; Kafka's "
                       "socket.request.max.bytes is a broker config)")
def test_a_frame_over_the_size_limit_closes_the_connection(fake_kafka_factory):
    kafka = fake_kafka_factory(max_request_bytes=1024)
    with WireClient(kafka.bootstrap_servers) as client:
        client.sock.sendall(struct.pack(">i", 4096) + b"\x00" * 16)
        assert client.is_closed_by_peer()


# -- Timestamps -------------------------------------------------------------------------------


def test_log_append_time_topics_stamp_batches_with_the_broker_clock(kafka):
    kafka.create_topic("stamped", configs={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    with WireClient(leader_of(kafka, "stamped", 0)) as client:
        response = client.request("Produce", 9, produce_body("stamped", 0, batch([b"a", b"b"])))
        appended_at = response.responses[0].partition_responses[0].log_append_time_ms
        fetched = fetch_partition(client, fetch_body("stamped", 0, 0))
    assert before <= appended_at <= int(time.time() * 1000)
    from fakebroker.protocol.records import decode_records
    records = decode_records(fetched.records)
    assert [(r.timestamp, r.timestamp_type) for r in records] == [(appended_at, 1)] * 2


def test_a_timestamp_out_of_the_topics_bounds_is_invalid_timestamp(kafka):
    """Kafka's LogValidator: a CreateTime record more than message.timestamp.after.max.ms
    (1 h) ahead of the broker's clock, or more than message.timestamp.before.max.ms behind
    it, rejects its whole batch with INVALID_TIMESTAMP, naming each such record in
    record_errors; LogAppendTime topics take any timestamp (the broker stamps its own)."""
    kafka.create_topic("clocked", configs={"message.timestamp.before.max.ms": "600000"})
    kafka.create_topic("stamped", configs={"message.timestamp.type": "LogAppendTime"})
    now = int(time.time() * 1000)
    hour = 3_600_000
    records = [(b"k", b"now", [], now), (b"k", b"later", [], now + 2 * hour),
               (b"k", b"earlier", [], now - hour)]
    with WireClient(leader_of(kafka, "clocked", 0)) as client:
        answer = client.request("Produce", 9, produce_body("clocked", 0, encode_batch(records)))
        refused = answer.responses[0].partition_responses[0]
    with WireClient(leader_of(kafka, "stamped", 0)) as client:
        stamped = client.request("Produce", 9, produce_body("stamped", 0, encode_batch(
            records))).responses[0].partition_responses[0]
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_TIMESTAMP,
        "One or more records have been rejected due to invalid timestamp")
    assert [e.batch_index for e in refused.record_errors] == [1, 2]
    for error, (_, _, _, timestamp) in zip(refused.record_errors, records[1:], strict=True):
        assert re.fullmatch(
            rf"Timestamp {timestamp} of message with offset \d+ is out of range\. The timestamp "
            r"should be within \[\d+, \d+\]", error.batch_index_error_message)
    assert kafka.offsets("clocked", 0).high_watermark == 0  # nothing appended
    assert stamped.error_code == 0


def test_list_offsets_by_timestamp_finds_the_first_record_at_or_after_it(kafka):
    values = [(None, f"v{i}".encode(), [], 1000 * (i + 1)) for i in range(4)]
    with WireClient(leader_of(kafka, "orders", 0)) as client:
        client.request("Produce", 9, produce_body("orders", 0, encode_batch(values)))

        def lookup(timestamp: int) -> tuple[int, int]:
            response = client.request("ListOffsets", 9, {"replica_id": -1, "topics": [
                {"name": "orders", "partitions": [
                    {"partition_index": 0, "timestamp": timestamp}]}]})
            partition = response.topics[0].partitions[0]
            return partition.offset, partition.timestamp

        assert lookup(2500) == (2, 3000)
        assert lookup(1000) == (0, 1000)
        assert lookup(9000) == (-1, -1)
        assert lookup(-3) == (3, 4000)  # max timestamp
