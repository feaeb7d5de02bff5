"""Specification of the record-batch layer (fakebroker.protocol.records)."""

import contextlib
import struct
import zlib

import cramjam
import crc32c
import kafka.codec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from fakebroker.protocol import compression
from fakebroker.protocol.conversion import (
    SendFailed,
    UnsupportedCompressionError,
    down_converted,
)
from fakebroker.protocol.records import (
    BatchHeader,
    CorruptRecordError,
    InvalidRecordError,
    Record,
    RecordInput,
    assign_offsets,
    decode_records,
    encode_batch,
    read_batch_headers,
)
from tests.absent import absent

NONE, GZIP, SNAPPY, LZ4, ZSTD = compression.CODECS
FORMATS = [(magic, codec) for magic in (0, 1, 2) for codec in compression.CODECS]
ENCODABLE = [(magic, codec) for magic, codec in FORMATS if magic == 2 or codec != ZSTD]
LEGACY_FORMATS = [(magic, codec) for magic, codec in ENCODABLE if magic < 2]
T0 = 1_700_000_000_000

RECORDS: list[RecordInput] = [
    (b"k1", b"v1", [("h1", b"x"), ("h2", None)], T0),
    (None, b"value without key", [], T0 + 5),
    (b"key without value", None, [("only", b"")], T0 + 2),
    (b"", b"", [], T0 - 3),
    (b"big", b"abc" * 30_000, [], T0 + 1),
]


def sample(magic: int) -> list[RecordInput]:
    """RECORDS as the format can carry them: no headers before magic 2."""
    return RECORDS if magic == 2 else [(k, v, [], ts) for k, v, _, ts in RECORDS]


def expected_timestamp(magic: int, ts: int) -> int:
    return -1 if magic == 0 else ts


def fix_v2_crc(batch: bytes | bytearray) -> bytes:
    buf = bytearray(batch)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def split_entries(data: bytes) -> list[bytes]:
    """Batches or legacy messages, by their size fields."""
    batches: list[bytes] = []
    pos = 0
    while pos < len(data):
        end = pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]
        batches.append(data[pos:end])
        pos = end
    return batches


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize(("magic", "codec"), ENCODABLE)
def test_encode_then_decode_gives_back_every_field(magic: int, codec: int) -> None:
    data = encode_batch(sample(magic), base_offset=100, compression=codec, magic=magic)

    records = decode_records(data)

    assert [r.offset for r in records] == list(range(100, 105))
    assert [(r.key, r.value) for r in records] == [(k, v) for k, v, _, _ in RECORDS]
    assert [r.timestamp for r in records] == [expected_timestamp(magic, ts) for *_, ts in RECORDS]
    assert all(r.timestamp_type == 0 for r in records)
    if magic == 2:
        assert [list(r.headers) for r in records] == [h for _, _, h, _ in RECORDS]


def test_records_carry_their_batch_producer_state() -> None:
    data = encode_batch(
        RECORDS[:3], producer_id=7, producer_epoch=2, base_sequence=10, transactional=True
    )

    records = decode_records(data)

    assert [r.sequence for r in records] == [10, 11, 12]
    assert {(r.producer_id, r.producer_epoch, r.is_transactional) for r in records} == {
        (7, 2, True)
    }
    assert {(r.is_control, r.leader_epoch) for r in records} == {(False, -1)}


def test_sequence_numbers_wrap_past_int32_max() -> None:
    data = encode_batch(RECORDS[:3], producer_id=1, producer_epoch=0, base_sequence=2**31 - 2)

    assert [r.sequence for r in decode_records(data)] == [2**31 - 2, 2**31 - 1, 0]


def test_records_without_sequence_have_sequence_minus_one() -> None:
    assert {r.sequence for r in decode_records(encode_batch(RECORDS))} == {-1}


def test_legacy_formats_refuse_what_they_cannot_carry() -> None:
    with pytest.raises(ValueError, match="headers"):
        encode_batch(RECORDS, magic=1)
    with pytest.raises(ValueError, match="zstd"):
        encode_batch(sample(1), magic=1, compression=ZSTD)
    with pytest.raises(ValueError, match="producer"):
        encode_batch(sample(0), magic=0, producer_id=3)


def test_encode_refuses_empty_batches_and_unknown_formats() -> None:
    with pytest.raises(ValueError):
        encode_batch([])
    with pytest.raises(ValueError):
        encode_batch(RECORDS, magic=3)
    with pytest.raises(ValueError):
        encode_batch(RECORDS, compression=5)


record_strategy = st.tuples(
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=300),
    st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=16)), max_size=3),
    st.integers(min_value=0, max_value=2**42),
)


@settings(max_examples=150, deadline=None)
@given(
    records=st.lists(record_strategy, min_size=1, max_size=12),
    fmt=st.sampled_from(ENCODABLE),
    base_offset=st.integers(min_value=0, max_value=2**40),
)
def test_any_records_round_trip(
    records: list[RecordInput], fmt: tuple[int, int], base_offset: int
) -> None:
    magic, codec = fmt
    if magic < 2:
        records = [(k, v, [], ts) for k, v, _, ts in records]
    data = encode_batch(records, base_offset=base_offset, compression=codec, magic=magic)

    decoded = decode_records(data)

    assert [(r.offset, r.key, r.value) for r in decoded] == [
        (base_offset + i, k, v) for i, (k, v, _, _) in enumerate(records)
    ]
    assert [r.timestamp for r in decoded] == [expected_timestamp(magic, r[3]) for r in records]
    assert [list(r.headers) for r in decoded] == [h for _, _, h, _ in records]
    assert sum(h.record_count for h in read_batch_headers(data)) == len(records)


# --- read_batch_headers ----------------------------------------------------------------------


def test_header_facts_of_a_magic_2_batch() -> None:
    data = encode_batch(
        RECORDS,
        base_offset=5,
        compression=LZ4,
        producer_id=42,
        producer_epoch=3,
        base_sequence=17,
        transactional=True,
    )

    assert read_batch_headers(data) == [
        BatchHeader(
            magic=2,
            base_offset=5,
            length=len(data),
            record_count=5,
            last_offset_delta=4,
            first_timestamp=T0,
            max_timestamp=T0 + 5,
            producer_id=42,
            producer_epoch=3,
            base_sequence=17,
            compression=LZ4,
            timestamp_type=0,
            is_transactional=True,
            is_control=False,
        )
    ]


def test_header_facts_of_several_batches_in_one_buffer() -> None:
    first = encode_batch(RECORDS[:2])
    second = encode_batch(RECORDS[2:], compression=GZIP)

    headers = read_batch_headers(first + second)

    assert [(h.length, h.record_count, h.compression) for h in headers] == [
        (len(first), 2, NONE),
        (len(second), 3, GZIP),
    ]


def test_control_batches_are_flagged() -> None:
    commit_key = struct.pack(">hh", 0, 1)  # ControlRecordType v0: COMMIT
    marker = struct.pack(">hi", 0, 5)  # EndTxnMarker v0, coordinator epoch 5
    data = encode_batch(
        [(commit_key, marker, [], T0)],
        producer_id=9,
        producer_epoch=1,
        transactional=True,
        control=True,
    )

    [header] = read_batch_headers(data)
    [record] = decode_records(data)

    assert header.is_control and header.is_transactional
    assert (record.is_control, record.key, record.value) == (True, commit_key, marker)


def test_header_facts_of_legacy_messages() -> None:
    data = encode_batch(sample(1)[:2], base_offset=3, magic=1)

    headers = read_batch_headers(data)

    assert [(h.magic, h.base_offset, h.record_count, h.max_timestamp) for h in headers] == [
        (1, 3, 1, T0),
        (1, 4, 1, T0 + 5),
    ]
    assert {(h.producer_id, h.producer_epoch, h.base_sequence) for h in headers} == {(-1, -1, -1)}


@pytest.mark.parametrize(("magic", "codec"), [f for f in LEGACY_FORMATS if f[1] != NONE])
def test_a_compressed_legacy_wrapper_is_one_entry_counting_its_messages(
    magic: int, codec: int
) -> None:
    data = encode_batch(sample(magic), base_offset=10, compression=codec, magic=magic)

    [header] = read_batch_headers(data)

    assert (header.length, header.compression) == (len(data), codec)
    assert (header.base_offset, header.record_count, header.last_offset_delta) == (10, 5, 4)
    assert header.max_timestamp == expected_timestamp(magic, T0 + 5)


def test_empty_input_has_no_batches() -> None:
    assert read_batch_headers(b"") == []
    assert decode_records(b"") == []


# --- corruption ------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_a_flipped_bit_under_the_crc_is_corrupt(magic: int) -> None:
    data = encode_batch(sample(magic)[: 2 if magic == 2 else 1], magic=magic)
    covered_from = 21 if magic == 2 else 17  # from attributes, leaving the CRC field itself

    for pos in range(covered_from, len(data), 7):
        damaged = bytearray(data)
        damaged[pos] ^= 0x10
        with pytest.raises(CorruptRecordError):
            read_batch_headers(bytes(damaged))
        with pytest.raises(CorruptRecordError):
            decode_records(bytes(damaged))


def test_a_wrong_crc_field_is_corrupt() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[17] ^= 1

    with pytest.raises(CorruptRecordError, match="CRC"):
        read_batch_headers(bytes(damaged))


def test_bytes_outside_the_v2_crc_are_not_checked() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[0:8] = struct.pack(">q", 999)
    damaged[12:16] = struct.pack(">i", 77)

    assert read_batch_headers(bytes(damaged))[0].base_offset == 999


@pytest.mark.parametrize(("magic", "codec"), [(0, NONE), (1, GZIP), (2, NONE), (2, SNAPPY)])
def test_truncated_input_is_corrupt(magic: int, codec: int) -> None:
    count = 1 if codec == NONE and magic < 2 else 3  # one entry, so no cut falls between two
    data = encode_batch(sample(magic)[:count], compression=codec, magic=magic)

    for cut in range(1, len(data), 3):
        with pytest.raises(CorruptRecordError):
            read_batch_headers(data[:cut])


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_decode_ignores_a_partial_trailing_batch(magic: int) -> None:
    first = encode_batch(sample(magic)[:2], magic=magic, compression=GZIP)
    second = encode_batch(sample(magic)[2:3], base_offset=2, magic=magic)

    for cut in range(0, len(second), 5):
        assert [r.offset for r in decode_records(first + second[:cut])] == [0, 1]


def test_unknown_magic_is_invalid() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[16] = 3

    with pytest.raises(InvalidRecordError, match="magic"):
        read_batch_headers(bytes(damaged))


def test_a_batch_length_too_small_for_a_header_is_corrupt() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[8:12] = struct.pack(">i", 20)

    with pytest.raises(CorruptRecordError, match="too small"):
        read_batch_headers(bytes(damaged))


def test_a_legacy_message_whose_size_disagrees_with_key_and_value_is_corrupt() -> None:
    message = bytearray(encode_batch([(b"k", b"v", [], T0)], magic=1))
    message[26:30] = struct.pack(">i", 2)  # key length 1 -> 2
    message[12:16] = struct.pack(">I", zlib.crc32(bytes(message[16:])))

    with pytest.raises(CorruptRecordError):
        read_batch_headers(bytes(message))


@pytest.mark.parametrize("count", [-1, 4, 6])
def test_a_record_count_disagreeing_with_the_last_offset_delta_is_invalid(count: int) -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[57:61] = struct.pack(">i", count)

    with pytest.raises(InvalidRecordError, match="count"):
        read_batch_headers(fix_v2_crc(damaged))


def test_an_unknown_codec_is_invalid() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[22] |= 0x07

    with pytest.raises(InvalidRecordError, match="codec"):
        read_batch_headers(fix_v2_crc(damaged))


def test_records_overrunning_their_batch_are_corrupt() -> None:
    damaged = bytearray(encode_batch(RECORDS))
    damaged[23:27] = struct.pack(">i", 5)  # claim 6 records where there are 5
    damaged[57:61] = struct.pack(">i", 6)

    with pytest.raises(CorruptRecordError):
        decode_records(fix_v2_crc(damaged))


def test_an_undecompressable_payload_is_invalid() -> None:
    batch = encode_batch(RECORDS, compression=GZIP)
    damaged = batch[:61] + b"\x1f\x8b" + b"not gzip at all"
    damaged = struct.pack(">qi", 0, len(damaged) - 12) + damaged[12:]

    with pytest.raises(InvalidRecordError, match="decompress"):
        decode_records(fix_v2_crc(damaged))


def with_fixed_crc(data: bytes) -> bytes:
    """``data`` (one batch or message) with its CRC made to match its bytes again."""
    buf = bytearray(data)
    if len(buf) >= 61 and buf[16] == 2:
        return fix_v2_crc(buf)
    if len(buf) >= 17 and buf[16] < 2:
        struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16:])))
    return bytes(buf)


MUTATION_SEEDS = [
    encode_batch(sample(magic)[:3], compression=codec, magic=magic) for magic, codec in ENCODABLE
]


@settings(max_examples=300, deadline=None)
@given(
    seed=st.sampled_from(MUTATION_SEEDS),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.integers(0, 10**6),
    fix_crc=st.booleans(),
)
def test_damaged_input_raises_only_record_errors(
    seed: bytes, edits: list[tuple[int, int]], cut: int, fix_crc: bool
) -> None:
    buf = bytearray(seed)
    for pos, byte in edits:
        buf[pos % len(buf)] = byte
    data = bytes(buf[: len(buf) - cut % 8])
    if fix_crc:
        data = with_fixed_crc(data)

    for read in (
        read_batch_headers,
        decode_records,
        lambda d: assign_offsets(d, 0, 0, T0),
        lambda d: down_converted(d, 1, 0),
    ):
        with contextlib.suppress(CorruptRecordError, InvalidRecordError,
                                 UnsupportedCompressionError, SendFailed):
            read(data)


# --- assign_offsets ---------------------------------------------------------------------------


def test_assign_offsets_numbers_batches_consecutively_and_sets_the_leader_epoch() -> None:
    data = b"".join(
        encode_batch(RECORDS[:n], compression=codec)
        for n, codec in ((2, NONE), (3, ZSTD), (1, LZ4))
    )

    stored = assign_offsets(data, base_offset=1000, leader_epoch=7, log_append_time_ms=None)

    assert [h.base_offset for h in read_batch_headers(stored)] == [1000, 1002, 1005]
    records = decode_records(stored)
    assert [r.offset for r in records] == list(range(1000, 1006))
    assert {r.leader_epoch for r in records} == {7}


def test_assign_offsets_leaves_the_crc_and_everything_under_it_alone() -> None:
    data = encode_batch(RECORDS[:2]) + encode_batch(RECORDS[2:], compression=SNAPPY)

    stored = assign_offsets(data, base_offset=50, leader_epoch=3, log_append_time_ms=None)

    assert len(stored) == len(data)
    for before, after in zip(split_entries(data), split_entries(stored), strict=True):
        assert after[8:12] == before[8:12]  # batchLength
        assert after[16:] == before[16:]  # magic, crc, attributes .. records


def test_log_append_time_stamps_the_batch_and_keeps_it_crc_valid() -> None:
    data = encode_batch(RECORDS, compression=GZIP)

    stored = assign_offsets(data, base_offset=0, leader_epoch=0, log_append_time_ms=T0 + 999)

    [header] = read_batch_headers(stored)  # checks the recomputed CRC
    assert (header.timestamp_type, header.max_timestamp) == (1, T0 + 999)
    assert header.first_timestamp == T0
    assert {(r.timestamp, r.timestamp_type) for r in decode_records(stored)} == {(T0 + 999, 1)}


def test_uncompressed_legacy_messages_get_absolute_offsets() -> None:
    data = encode_batch(sample(0)[:3], magic=0) + encode_batch(sample(1)[:2], magic=1)

    stored = assign_offsets(data, base_offset=20, leader_epoch=5, log_append_time_ms=None)

    for before, after in zip(split_entries(data), split_entries(stored), strict=True):
        assert after[8:] == before[8:]
    assert [r.offset for r in decode_records(stored)] == [20, 21, 22, 23, 24]
    assert [h.base_offset for h in read_batch_headers(stored)] == [20, 21, 22, 23, 24]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_a_compressed_v1_wrapper_takes_the_offset_of_its_last_message_in_place(
    codec: int,
) -> None:
    data = encode_batch(sample(1), compression=codec, magic=1)

    stored = assign_offsets(data, base_offset=300, leader_epoch=0, log_append_time_ms=None)

    assert struct.unpack_from(">q", stored)[0] == 304
    assert stored[8:] == data[8:]  # inner offsets stay relative: nothing recompressed
    assert [r.offset for r in decode_records(stored)] == [300, 301, 302, 303, 304]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_a_compressed_v0_wrapper_is_recompressed_with_absolute_inner_offsets(codec: int) -> None:
    data = encode_batch(sample(0), compression=codec, magic=0)

    stored = assign_offsets(data, base_offset=300, leader_epoch=0, log_append_time_ms=None)

    [header] = read_batch_headers(stored)
    assert (header.base_offset, header.record_count, header.compression) == (300, 5, codec)
    assert struct.unpack_from(">q", stored)[0] == 304
    assert [r.offset for r in decode_records(stored)] == [300, 301, 302, 303, 304]
    assert [r.value for r in decode_records(stored)] == [v for _, v, _, _ in RECORDS]


def test_a_v1_wrapper_with_unusual_inner_offsets_is_renumbered() -> None:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=GZIP, batch_size=1 << 20)
    for offset in (5, 6, 9):  # not 0..n-1
        builder.append(offset, timestamp=T0, key=None, value=b"v%d" % offset)
    data = bytes(builder.build())

    stored = assign_offsets(data, base_offset=40, leader_epoch=0, log_append_time_ms=None)

    assert [(r.offset, r.value) for r in decode_records(stored)] == [
        (40, b"v5"),
        (41, b"v6"),
        (42, b"v9"),
    ]


@pytest.mark.parametrize("codec", [NONE, GZIP])
def test_log_append_time_on_v1_messages(codec: int) -> None:
    data = encode_batch(sample(1)[:3], compression=codec, magic=1)

    stored = assign_offsets(data, base_offset=0, leader_epoch=0, log_append_time_ms=T0 + 77)

    headers = read_batch_headers(stored)  # checks the recomputed CRCs
    assert {(h.timestamp_type, h.max_timestamp) for h in headers} == {(1, T0 + 77)}
    assert {(r.timestamp, r.timestamp_type) for r in decode_records(stored)} == {(T0 + 77, 1)}


def test_log_append_time_does_not_apply_to_v0_messages() -> None:
    data = encode_batch(sample(0)[:2], magic=0)

    stored = assign_offsets(data, base_offset=0, leader_epoch=0, log_append_time_ms=T0)

    assert {(r.timestamp, r.timestamp_type) for r in decode_records(stored)} == {(-1, 0)}


# --- compression framing ----------------------------------------------------------------------


def test_lz4_frames_written_pass_a_strict_lz4_frame_decoder() -> None:
    payload = b"kafka " * 50_000  # more than one 64 KiB block

    assert bytes(cramjam.lz4.decompress(compression.compress(LZ4, payload))) == payload


def test_lz4_frames_with_any_header_checksum_are_read() -> None:
    frame = bytearray(compression.compress(LZ4, b"payload" * 100))
    frame[6] ^= 0xFF  # header checksum byte

    assert compression.decompress(LZ4, bytes(frame)) == b"payload" * 100


def test_lz4_header_checksum_is_kafkas_old_wrong_one_only_for_magic_0() -> None:
    try:
        import xxhash
    except ImportError:
        absent("needs xxhash (the test extra)")
    correct = compression.compress(LZ4, b"x")
    legacy = compression.compress(LZ4, b"x", legacy_lz4=True)

    assert correct[6] == (xxhash.xxh32(correct[4:6]).intdigest() >> 8) & 0xFF
    assert legacy[6] == (xxhash.xxh32(legacy[0:6]).intdigest() >> 8) & 0xFF  # includes magic


def test_snappy_is_read_both_xerial_framed_and_raw() -> None:
    payload = b"snappy " * 20_000
    framed = compression.compress(SNAPPY, payload)

    assert framed.startswith(b"\x82SNAPPY\x00")
    assert compression.decompress(SNAPPY, framed) == payload
    assert compression.decompress(SNAPPY, bytes(cramjam.snappy.compress_raw(payload))) == payload


# --- interoperability with kafka-python's own encoders and readers -----------------------------


def kafka_python_can(codec: int, magic: int) -> bool:
    if codec == LZ4 and magic == 0 and kafka.codec.xxhash is None:
        return False
    available = {
        NONE: True,
        GZIP: kafka.codec.has_gzip(),
        SNAPPY: kafka.codec.has_snappy(),
        LZ4: kafka.codec.has_lz4(),
        ZSTD: kafka.codec.has_zstd(),
    }
    return available[codec]


def skip_unless_kafka_python_can(codec: int, magic: int) -> None:
    """kafka-python (with its codec libraries, the test extra) can encode ``codec`` at
    ``magic``: a skip without it, a failure under CI."""
    if not kafka_python_can(codec, magic):
        absent(f"kafka-python lacks codec {codec} for magic {magic} here")


@pytest.mark.parametrize("codec", compression.CODECS)
def test_decode_reads_kafka_python_v2_batches(codec: int) -> None:
    skip_unless_kafka_python_can(codec, 2)
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=11,
        producer_epoch=1,
        base_sequence=0,
        batch_size=1 << 22,
    )
    for i, (key, value, headers, ts) in enumerate(RECORDS):
        builder.append(i, timestamp=ts, key=key, value=value, headers=headers)
    data = bytes(builder.build())

    [header] = read_batch_headers(data)
    records = decode_records(assign_offsets(data, 7, 2, None))

    assert (header.compression, header.record_count, header.producer_id) == (codec, 5, 11)
    assert [(r.offset, r.key, r.value) for r in records] == [
        (7 + i, k, v) for i, (k, v, _, _) in enumerate(RECORDS)
    ]
    assert [list(r.headers) for r in records] == [h for _, _, h, _ in RECORDS]
    assert [r.timestamp for r in records] == [ts for *_, ts in RECORDS]


@pytest.mark.parametrize(("magic", "codec"), LEGACY_FORMATS)
def test_decode_reads_kafka_python_legacy_message_sets(magic: int, codec: int) -> None:
    skip_unless_kafka_python_can(codec, magic)
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 22)
    for i, (key, value, _, ts) in enumerate(RECORDS):
        builder.append(i, timestamp=ts, key=key, value=value)
    data = bytes(builder.build())

    assert sum(h.record_count for h in read_batch_headers(data)) == 5
    records = decode_records(assign_offsets(data, 60, 0, None))

    assert [(r.offset, r.key, r.value) for r in records] == [
        (60 + i, k, v) for i, (k, v, _, _) in enumerate(RECORDS)
    ]
    assert [r.timestamp for r in records] == [expected_timestamp(magic, r[3]) for r in RECORDS]


def read_with_kafka_python(data: bytes) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = []
    for batch in MemoryRecords(data):
        if batch.magic == 2:
            assert batch.validate_crc()
        for record in batch:
            assert record.validate_crc()
            headers = [tuple(h) for h in record.headers]
            found.append((record.offset, record.timestamp, record.key, record.value, headers))
    return found


@pytest.mark.parametrize(("magic", "codec"), ENCODABLE)
def test_kafka_python_reads_what_we_encode_and_store(magic: int, codec: int) -> None:
    skip_unless_kafka_python_can(codec, magic)
    data = encode_batch(sample(magic), compression=codec, magic=magic)
    stored = assign_offsets(data, base_offset=500, leader_epoch=4, log_append_time_ms=None)

    assert read_with_kafka_python(stored) == [
        (500 + i, None if magic == 0 else ts, k, v, list(h))
        for i, (k, v, h, ts) in enumerate(sample(magic))
    ]


def test_kafka_python_reads_log_append_time_batches() -> None:
    stored = assign_offsets(encode_batch(RECORDS, compression=GZIP), 0, 0, T0 + 5000)

    assert {ts for _, ts, *_ in read_with_kafka_python(stored)} == {T0 + 5000}


@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_reads_down_converted_data(magic: int) -> None:
    stored = assign_offsets(encode_batch(RECORDS, compression=LZ4), 30, 0, None)

    legacy = down_converted(stored, magic, 30)

    assert [(o, k, v) for o, _, k, v, _ in read_with_kafka_python(legacy)] == [
        (30 + i, k, v) for i, (k, v, _, _) in enumerate(RECORDS)
    ]


def test_decoded_records_are_plain_values() -> None:
    [record] = decode_records(encode_batch([(b"k", b"v", [("h", b"1")], T0)], base_offset=3))

    assert record == Record(
        offset=3,
        timestamp=T0,
        timestamp_type=0,
        key=b"k",
        value=b"v",
        headers=(("h", b"1"),),
        producer_id=-1,
        producer_epoch=-1,
        sequence=-1,
        is_transactional=False,
        is_control=False,
        leader_epoch=-1,
    )
