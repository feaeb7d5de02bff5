"""Produce's checks in Kafka's order, per record as Kafka's LogValidator checks, measured on
Apache Kafka 4.4 (``--kafka=both``), with raw record batches over the wire client.

Kafka's order: the first batch of every partition is peeked at for the whole request (a size
below 14 bytes or an unknown magic: CORRUPT_MESSAGE, with the reason, for every partition);
then per partition the topic, the request's shape (v3+: exactly one magic-2 batch), a
transactional batch's producer asked about at its coordinator (tests/test_wire_transactions.py),
acks, and the append: the batch's base offset (0), size, CRC, then the batch's fields (offset
range, count, control, sequence), then each record (its structure, key, timestamp).
"""

from __future__ import annotations

import struct
from typing import Any

import crc32c
import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient
from tests.bodies import batch

pytestmark = pytest.mark.fake_kafka(topics={"checked": 2})


def resealed(records: bytes | bytearray) -> bytes:
    """``records`` (one magic-2 batch) with its CRC-32C recomputed: a client's own mistake,
    not a corruption on the way."""
    data = bytearray(records)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


def edited(records: bytes, at: int, fmt: str, value: int) -> bytes:
    data = bytearray(records)
    struct.pack_into(fmt, data, at, value)
    return resealed(data)


def produce(client: WireClient, partitions: dict[int, bytes | None], version: int = 9,
            acks: int = -1, topic: str = "checked", transactional_id: str | None = None
            ) -> dict[int, Any]:
    response = client.request("Produce", version, {
        "acks": acks, "timeout_ms": 5000, "transactional_id": transactional_id,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": p, "records": r} for p, r in partitions.items()]}]})
    return {p.index: p for p in response.responses[0].partition_responses}


def answer(partition: Any) -> tuple[str, str | None, int]:
    return (ErrorCode(partition.error_code).name, partition.error_message,
            partition.log_start_offset)


def test_an_unknown_magic_in_a_first_batch_is_corrupt_message_for_every_partition(kafka):
    bad = bytearray(batch([b"x"]))
    bad[16] = 0x80
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]), 1: bytes(bad), 9: batch([b"x"])})
    assert {p: answer(a) for p, a in answers.items()} == {
        p: ("CORRUPT_MESSAGE", "Invalid magic found in record: -128", -1) for p in (0, 1, 9)}
    assert kafka.offsets("checked", 0) == (0, 0)


def test_with_acks_0_an_unknown_magic_closes_the_connection(kafka):
    bad = bytearray(batch([b"x"]))
    bad[16] = 7
    with WireClient(kafka.bootstrap_servers) as client:
        client.send("Produce", 9, {"acks": 0, "timeout_ms": 5000, "topic_data": [
            {"name": "checked", "partition_data": [{"index": 0, "records": bytes(bad)}]}]})
        assert client.is_closed_by_peer()


def test_a_first_batch_smaller_than_any_record_is_corrupt_message_for_every_partition(kafka):
    tiny = edited(batch([b"x"]), 8, ">i", 13)
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]), 1: tiny})
    assert {p: answer(a) for p, a in answers.items()} == {p: (
        "CORRUPT_MESSAGE", "Record size 13 is less than the minimum record overhead (14)", -1)
        for p in (0, 1)}


def test_a_transactional_batch_without_a_transactional_id_is_refused_for_every_partition(kafka):
    records = batch([b"x"])
    transactional = edited(records, 21, ">h", 0x10)
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: records, 1: transactional, 9: records})
    assert {p: answer(a) for p, a in answers.items()} == {
        p: ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", None, -1) for p in (0, 1, 9)}
    assert kafka.offsets("checked", 0) == (0, 0)


def test_a_truncated_batch_is_no_batch_at_all(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"])[:-1], 1: edited(batch([b"x"]), 8, ">i", 4154)})
    assert {p: answer(a) for p, a in answers.items()} == {
        p: ("INVALID_RECORD", None, -1) for p in (0, 1)}


def test_bytes_after_a_whole_batch_too_few_for_another_are_dropped(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]) + batch([b"y"])[:30]})
    assert answer(answers[0])[0] == "NONE"
    assert [r.value for r in kafka.records("checked", 0)] == [b"x"]


def test_invalid_acks_is_answered_only_where_the_records_were_valid(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]), 1: batch([b"x"]) + batch([b"y"]),
                                   9: batch([b"x"])}, acks=2)
    assert {p: answer(a)[0] for p, a in answers.items()} == {
        0: "INVALID_REQUIRED_ACKS", 1: "INVALID_RECORD", 9: "UNKNOWN_TOPIC_OR_PARTITION"}


def test_a_base_offset_other_than_0_is_invalid_record_before_the_crc(kafka):
    records = bytearray(batch([b"x"]))
    records[7] = 1  # baseOffset lies outside the CRC
    corrupt = bytearray(records)
    corrupt[-1] ^= 1
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: bytes(records), 1: bytes(corrupt)})
    assert {p: answer(a) for p, a in answers.items()} == {
        p: ("INVALID_RECORD", None, 0) for p in (0, 1)}


def test_a_crc_mismatch_is_corrupt_message_before_the_batch_fields(kafka):
    records = bytearray(edited(batch([b"x"]), 57, ">i", 2))  # count 2 for one record
    records[-1] ^= 1
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: bytes(records)})
    assert answer(answers[0]) == ("CORRUPT_MESSAGE", None, -1)


def with_timestamp_delta(varlong: bytes) -> bytes:
    """One record ``k``/``x`` whose timestamp delta is written as ``varlong``."""
    grown = bytearray(batch([b"x"])[:63] + varlong + batch([b"x"])[64:])
    struct.pack_into(">i", grown, 8, len(grown) - 12)
    grown[61] = 2 * (len(grown) - 62)  # the record's length, a one-byte zigzag varint
    return resealed(grown)


BATCH_OUT_OF_SHAPE = {
    "count 0": edited(edited(batch([b"x"]), 57, ">i", 0), 23, ">i", -1),
    "count above the offsets' range": edited(batch([b"x"]), 57, ">i", 2),
    "a control batch": edited(batch([b"x"]), 21, ">h", 0x20),
    "a producer id without a sequence": edited(batch([b"x"]), 43, ">q", 5),
}
RECORDS_OUT_OF_SHAPE = {
    "a record's length one byte long": edited(batch([b"x"]), 61, ">b", 2 * 9),
    "no record where one is counted": resealed(struct.pack(">i", 49).join(
        (batch([b"x"])[:8], batch([b"x"])[12:61]))),
    "one record more than counted": edited(edited(batch([b"x", b"y"]), 57, ">i", 1), 23,
                                           ">i", 0),
    "a key longer than its record": edited(batch([b"x"]), 65, ">b", 2 * 9),
    "a header count beyond its record": edited(batch([b"x"]), 69, ">b", 2 * 60),
    "a timestamp delta of 11 bytes": with_timestamp_delta(b"\xff" * 10 + b"\x00"),
}


@pytest.mark.parametrize("why", BATCH_OUT_OF_SHAPE)
def test_a_batch_out_of_shape_is_invalid_record(kafka, why):
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: BATCH_OUT_OF_SHAPE[why]})
    assert answer(answers[0]) == ("INVALID_RECORD", None, 0)
    assert kafka.offsets("checked", 0) == (0, 0)


@pytest.mark.parametrize("why", RECORDS_OUT_OF_SHAPE)
def test_records_out_of_shape_are_invalid_record_where_they_are_read(kafka, why):
    """Records are read one by one where their keys are (a compacted topic) or their
    timestamps may be out of range; elsewhere the fake stores them unread
    (tests/fuzz/differences.toml: the cost)."""
    topic = kafka.name("keyed")
    kafka.create_topic(topic, configs={"cleanup.policy": "compact"})
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: RECORDS_OUT_OF_SHAPE[why]}, topic=topic)
    assert answer(answers[0]) == ("INVALID_RECORD", None, 0)
    assert kafka.offsets(topic, 0) == (0, 0)


def test_an_unknown_compression_codec(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: edited(batch([b"x"]), 21, ">h", 5)})
    assert answer(answers[0]) == ("UNKNOWN_SERVER_ERROR", None, 0)


def with_payload(records: bytes, codec: int, payload: bytes) -> bytes:
    """``records`` (one magic-2 batch) marked compressed by ``codec`` around ``payload``."""
    data = bytearray(records[:61] + payload)
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">h", data, 21, codec)
    return resealed(data)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])  # gzip, snappy, lz4, zstd
@pytest.mark.parametrize("payload", ["plain records", "zeros", "a gzip header", "nothing"])
def test_a_compressed_batch_its_codec_cannot_read_is_refused_before_its_records(
        kafka, codec, payload):
    """Kafka reads a compressed batch through its codec's stream before any record: an
    IOException of the stream is UNKNOWN_SERVER_ERROR; zstd reads no bytes as none, so an
    empty zstd batch is short of records (INVALID_RECORD)."""
    plain = batch([b"v" * 50, b"w" * 50])
    body = {"plain records": plain[61:], "zeros": bytes(40),
            "a gzip header": b"\x1f\x8b\x08\x00" + b"\x01" * 30, "nothing": b""}[payload]
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: with_payload(plain, codec, body)})
    refused = "INVALID_RECORD" if (codec, payload) == (4, "nothing") else "UNKNOWN_SERVER_ERROR"
    assert answer(answers[0]) == (refused, None, 0)
    assert kafka.records("checked", 0) == []


def test_well_formed_records_are_appended(kafka):
    records = encode_batch([(b"k", b"v", [("h", b"1"), ("i", None)], 1_700_000_000_000),
                            (None, None, [], 1_700_000_000_001)])
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: records, 1: with_timestamp_delta(b"\x80" * 9 + b"\x00")})
    assert {p: answer(a)[0] for p, a in answers.items()} == {0: "NONE", 1: "NONE"}
    assert [(r.key, r.headers) for r in kafka.records("checked", 0)] == [
        (b"k", (("h", b"1"), ("i", None))), (None, ())]


def test_a_compacted_topics_records_are_read_each(kafka):
    """A compacted topic's keys are read, so each record is: the second of three whose key
    runs past it makes the batch INVALID_RECORD; a record without a key is named in
    ``record_errors`` (the batch's other records read too)."""
    topic = kafka.name("keyed")
    kafka.create_topic(topic, configs={"cleanup.policy": "compact"})
    three = encode_batch([(b"a", b"x", [], 1_700_000_000_000)] * 3)
    second_key = 61 + 9 + 4  # the second record's key length
    assert three[second_key] == 2
    keyless = encode_batch([(b"a", b"x", [], 1_700_000_000_000), (None, b"y", [], 1)])
    with WireClient(kafka.bootstrap_servers) as client:
        broken = produce(client, {0: edited(three, second_key, ">b", 2 * 9)}, topic=topic)[0]
        refused = produce(client, {0: keyless}, topic=topic)[0]
    assert answer(broken) == ("INVALID_RECORD", None, 0)
    assert (answer(refused)[0], answer(refused)[2]) == ("INVALID_RECORD", 0)
    assert [e.batch_index for e in refused.record_errors] == [1]
    assert kafka.offsets(topic, 0) == (0, 0)


def test_a_producer_stamping_log_append_time_is_refused_where_the_topic_stamps_it(kafka):
    topic = kafka.name("stamped")
    kafka.create_topic(topic, configs={"message.timestamp.type": "LogAppendTime"})
    stamped = edited(batch([b"x"]), 21, ">h", 0x08)
    with WireClient(kafka.bootstrap_servers) as client:
        refused = produce(client, {0: stamped}, topic=topic)[0]
    assert answer(refused) == ("INVALID_TIMESTAMP",
                               "One or more records have been rejected due to invalid timestamp",
                               0)
    assert [(e.batch_index, e.batch_index_error_message) for e in refused.record_errors] == [
        (0, "Invalid timestamp type in message DefaultRecord(offset=0, timestamp="
            "1700000000000, key=1 bytes, value=1 bytes). Producer should not set timestamp "
            "type to LogAppendTime.")]


def test_key_and_timestamp_errors_of_one_batch_are_answered_together(kafka):
    """A record without a key is not looked at further; one with a timestamp out of range
    makes the whole answer INVALID_TIMESTAMP, the key's error listed beside it."""
    topic = kafka.name("keyed-recent")
    kafka.create_topic(topic, configs={"cleanup.policy": "compact",
                                       "message.timestamp.before.max.ms": "3600000"})
    records = encode_batch([(None, b"x", [], 1), (b"k", b"y", [], 2)])
    with WireClient(kafka.bootstrap_servers) as client:
        refused = produce(client, {0: records}, topic=topic)[0]
    assert answer(refused)[0] == "INVALID_TIMESTAMP"
    assert [(e.batch_index, e.batch_index_error_message[:24]) for e in refused.record_errors] \
        == [(0, "Compacted topic cannot a"), (1, "Timestamp 2 of message w")]


def test_an_unknown_codec_below_v7_is_an_unknown_server_error_for_the_whole_request(kafka):
    """Kafka's zstd check of v3-6 asks the batch's codec before its CRC is read: an unknown
    one throws outside the per-partition errors, so nothing is appended."""
    unknown = bytearray(batch([b"x"]))
    unknown[22] |= 6  # the codec bits, CRC left as it was
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]), 1: bytes(unknown)}, version=5)
        at_v7 = produce(client, {1: bytes(unknown)}, version=7)
    assert {p: answer(a) for p, a in answers.items()} == {
        p: ("UNKNOWN_SERVER_ERROR", None, -1) for p in (0, 1)}
    assert answer(at_v7[1]) == ("CORRUPT_MESSAGE", None, -1)
    assert kafka.offsets("checked", 0) == (0, 0)


def produce_repeated(client: WireClient, partitions: list[tuple[str, int, bytes]]) -> list[
        tuple[str, list[tuple[int, str, int]]]]:
    """A Produce v9 naming each (topic, partition, records) in its own topic entry, repeats
    too: per topic entry answered, its partitions' (index, error, base offset), sorted (Kafka
    builds the answer from a hash map keyed by topic id: its order varies from run to run)."""
    response = client.request("Produce", 9, {
        "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": t, "partition_data": [{"index": p, "records": r}]}
            for t, p, r in partitions]})
    return sorted((t.name, sorted((p.index, ErrorCode(p.error_code).name, p.base_offset)
                                  for p in t.partition_responses)) for t in response.responses)


def test_a_partition_named_twice_is_appended_once_with_its_last_records(kafka):
    # KafkaApis keeps a request's partitions in maps: each is appended once, with the last
    # records that passed its checks, and answered once, in one entry per topic.
    corrupt = bytearray(batch([b"x"]))
    corrupt[17] ^= 0xFF
    two_batches = batch([b"b"]) + batch([b"c"])  # v3+: INVALID_RECORD before the append
    with WireClient(kafka.bootstrap_servers) as client:
        def appended(partitions: list[tuple[str, int, bytes]], answers: list[Any]) -> int:
            start = kafka.offsets("checked", 0)[1]
            assert produce_repeated(client, partitions) == answers
            return kafka.offsets("checked", 0)[1] - start

        assert appended([("checked", 0, batch([b"a"])), ("checked", 1, batch([b"b"])),
                         ("checked", 0, batch([b"c", b"d", b"e"]))],
                        [("checked", [(0, "NONE", 0), (1, "NONE", 0)])]) == 3
        # A refused entry's answer wins, but the partition's other records are appended.
        assert appended([("checked", 0, batch([b"a"])), ("checked", 0, two_batches)],
                        [("checked", [(0, "INVALID_RECORD", -1)])]) == 1
        assert appended([("checked", 0, two_batches), ("checked", 0, batch([b"a"]))],
                        [("checked", [(0, "INVALID_RECORD", -1)])]) == 1
        # Refused in the append: only the last records were appended, or not.
        assert appended([("checked", 0, batch([b"a"])), ("checked", 0, bytes(corrupt))],
                        [("checked", [(0, "CORRUPT_MESSAGE", -1)])]) == 0
        assert appended([("checked", 0, bytes(corrupt)), ("checked", 0, batch([b"a", b"b"]))],
                        [("checked", [(0, "NONE", 5)])]) == 2
        # A refused entry's answer wins over the append's refusal too.
        assert appended([("checked", 0, two_batches), ("checked", 0, bytes(corrupt))],
                        [("checked", [(0, "INVALID_RECORD", -1)])]) == 0
        unknown = ("UNKNOWN_TOPIC_OR_PARTITION", -1)
        assert appended([("checked", 0, batch([b"a"])), ("ghost", 0, batch([b"a"])),
                         ("ghost", 0, batch([b"a"])), ("checked", 9, batch([b"a"])),
                         ("checked", 9, batch([b"a"]))],
                        [("checked", [(0, "NONE", 7), (9, *unknown)]),
                         ("ghost", [(0, *unknown)])]) == 1


def test_a_records_timestamp_is_its_batchs_base_plus_its_delta_whatever_the_max_says(kafka):
    """Kafka checks each record's timestamp (the batch's base timestamp plus the record's
    delta), not the batch header's max timestamp: a base timestamp beyond
    message.timestamp.after.max.ms (1 h) under a max timestamp within it is refused."""
    future = edited(batch([b"x"]), 27, ">q", 2_199_023_255_552)  # the base timestamp
    with WireClient(kafka.bootstrap_servers) as client:
        refused = produce(client, {0: future})[0]
    assert answer(refused) == ("INVALID_TIMESTAMP",
                               "One or more records have been rejected due to invalid timestamp",
                               0)
    assert [e.batch_index for e in refused.record_errors] == [0]
    assert kafka.offsets("checked", 0) == (0, 0)


def test_an_entry_size_that_overflows_javas_int_is_an_unknown_server_error_for_all(kafka):
    """Kafka adds the 12 bytes before an entry to its size in an int: a size above
    2**31 - 13 wraps negative, passes as whole, and the slice of it throws, outside the
    per-partition errors (the first peek at the request's records), so every partition of
    the request is UNKNOWN_SERVER_ERROR, a partition that does not exist too."""
    overflowing = edited(batch([b"x"]), 8, ">i", 2**31 - 12)
    with WireClient(kafka.bootstrap_servers) as client:
        answers = produce(client, {0: batch([b"x"]), 1: overflowing, 9: batch([b"x"])})
    assert {p: answer(a)[:2] for p, a in answers.items()} == {
        p: ("UNKNOWN_SERVER_ERROR", None) for p in (0, 1, 9)}
    assert kafka.offsets("checked", 0) == (0, 0)
