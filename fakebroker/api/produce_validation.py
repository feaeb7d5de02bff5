"""Kafka's checks of a Produce's record bytes, in Kafka 4.4's order (measured on the real
broker: tests/test_wire_produce_validation.py). Each check raises ``ClusterError`` with the
error, message and ``log_start_offset`` Kafka answers; fakebroker.api.produce calls them in
this order.

1. The whole request, before anything else (KafkaApis): ``first_batch_is_transactional``
   peeks at each partition's first entry. A size below 14 bytes or an unknown magic is
   CORRUPT_MESSAGE for every partition, with Kafka's reason as the message (a size above
   2**31 - 13, which overflows Kafka's int, UNKNOWN_SERVER_ERROR); a transactional
   first batch in a request without a transactional id is TRANSACTIONAL_ID_AUTHORIZATION_
   FAILED for every partition (the peek stops at the first transactional batch, as Kafka's
   does). In v3-6 an unknown codec in a first batch is UNKNOWN_SERVER_ERROR for every
   partition (``unknown_codec_below_v7``).
2. Per partition, once its topic is known: ``whole_entries``, Kafka's iteration of entries (a
   trailing entry cut short ends it: its bytes are dropped, as the log's ``trimInvalidBytes``
   drops them); v3+ must hold exactly one magic-2 batch (INVALID_RECORD, no message), zstd
   needs v7 (UNSUPPORTED_COMPRESSION_TYPE).
   Then ReplicaManager's transaction verification, before anything else of the append
   (before acks, the leader's and the log's checks): ``transactional_producer`` reads the
   producer id and epoch of a whole transactional first batch from its header, unchecked
   (no CRC), as Kafka's ``handleProduceAppend`` does; fakebroker.api.produce verifies it.
3. The log's analysis: ``check_before_crc`` (a magic-2 batch's base offset is 0, else
   INVALID_RECORD; its size within ``max.message.bytes``, else MESSAGE_TOO_LARGE), then the
   CRC (CORRUPT_MESSAGE) and a known codec (``unknown_codec``: UNKNOWN_SERVER_ERROR, as
   Kafka's ``CompressionType.forId`` throws), read with the batch headers.
4. LogValidator's ``validateBatch``: ``check_batch_fields`` (a positive offset range equal to
   the count, no control batch, a sequence for a producer id; else INVALID_RECORD).
5. LogValidator's record iterator: ``check_decompresses`` reads each compressed magic-2
   batch's payload through its codec, as Kafka's iterator does before any record (a stream
   the codec cannot read: UNKNOWN_SERVER_ERROR, the codec's IOException in a KafkaException;
   an empty zstd one, which zstd reads as no bytes: INVALID_RECORD; measured on 4.4 for every
   codec). ``check_records`` reads each record of an uncompressed
   magic-2 batch as Kafka's ``DefaultRecord.readFrom`` does (lengths, varints of at most 5
   or 10 bytes, fields that end where the record's length says, exactly the batch's count of
   records and no byte after them; else INVALID_RECORD, no message), but only where the
   records are decoded anyway for step 6, or where an idempotent batch is not its producer's
   plain next one on the partition (its state checked after: fakebroker.api.produce). What
   is not read, and why: tests/fuzz/differences.toml.
6. ``check_record_fields``: keys of a compacted topic and timestamps, their errors in
   ``record_errors`` as Kafka's processRecordErrors answers them.

The errors of steps 3-6 but MESSAGE_TOO_LARGE and CORRUPT_MESSAGE carry the log's start
offset, as Kafka's ReplicaManager answers an append that failed in the validator.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from fakebroker.protocol.compression import CODECS, NONE, ZSTD, DecompressionError, decompress
from fakebroker.protocol.errors import ClusterError
from fakebroker.protocol.records import (
    BatchHeader,
    CorruptRecordError,
    InvalidRecordError,
    decode_records,
)

INT32_MAX = 2**31 - 1
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest size Kafka iterates
BATCH_HEADER_SIZE = 61
_SIZE_MAGIC = struct.Struct(">i4xb")  # from byte 8: the entry's size, its magic at 16
_PEEKED = struct.Struct(">i4xb4xh")  # from byte 8: size, magic, a batch's attributes at 21
_BASE_OFFSET = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_PRODUCER = struct.Struct(">qh")  # a batch's producer id and epoch, at byte 43
_TRANSACTIONAL = 0x10
_CODEC_MASK = 0x07
INVALID_TIMESTAMP = "One or more records have been rejected due to invalid timestamp"


def _peek(records: bytes, pos: int) -> tuple[int, int] | None:
    """Kafka's ``ByteBufferLogInputStream.nextBatchSize`` at ``pos``: the entry's (end,
    magic), None when too few bytes remain for one; CORRUPT_MESSAGE with Kafka's reason for
    a size below 14 bytes or an unknown magic; UNKNOWN_SERVER_ERROR (no message) for a size
    above 2**31 - 13, whose end overflows Kafka's int (its ``nextBatch`` then throws)."""
    remaining = len(records) - pos
    if remaining < 12:
        return None
    size = _INT32.unpack_from(records, pos + 8)[0]
    if size < MIN_ENTRY_SIZE:
        raise ClusterError("CORRUPT_MESSAGE", f"Record size {size} is less than the minimum "
                           f"record overhead ({MIN_ENTRY_SIZE})")
    if remaining < 17:
        return None
    magic = struct.unpack_from(">b", records, pos + 16)[0]
    if not 0 <= magic <= 2:
        raise ClusterError("CORRUPT_MESSAGE", f"Invalid magic found in record: {magic}")
    if size > INT32_MAX - 12:  # Kafka's size + 12 wraps negative, and slicing it throws
        raise ClusterError("UNKNOWN_SERVER_ERROR")
    return (pos + 12 + size, magic) if remaining >= 12 + size else None


def first_batch_is_transactional(records: bytes | None) -> bool:
    """Kafka's peek at a partition's first entry (``RequestUtils.hasTransactionalRecords``):
    whether it is a transactional batch; raises CORRUPT_MESSAGE as ``_peek`` does."""
    if records is None:
        return False
    if len(records) >= 23:  # a whole batch header's start: one unpack (the common case)
        size, magic, attributes = _PEEKED.unpack_from(records, 8)
        if magic == 2 and MIN_ENTRY_SIZE <= size <= len(records) - 12:
            return bool(attributes & _TRANSACTIONAL)
    entry = _peek(records, 0)
    return entry is not None and entry[1] == 2 \
        and bool(_INT16.unpack_from(records, 21)[0] & _TRANSACTIONAL)


def unknown_codec_below_v7(records: bytes | None) -> bool:
    """Whether ProduceRequest.validateRecords (v3-6) meets a first whole magic-2 batch whose
    codec Kafka does not know: its zstd check asks the codec, which throws outside Kafka's
    per-partition errors, so the whole request is UNKNOWN_SERVER_ERROR (measured). Expects
    ``first_batch_is_transactional`` to have passed the same bytes."""
    entry = _peek(records, 0) if records is not None else None
    return entry is not None and entry[1] == 2 \
        and _INT16.unpack_from(records, 21)[0] & _CODEC_MASK not in CODECS


def whole_entries(version: int, records: bytes) -> bytes:
    """``records`` up to the end of its last whole entry, after ProduceRequest.validateRecords'
    checks of the request's shape (v3+: exactly one magic-2 batch; zstd from v7)."""
    pos = count = 0
    while (entry := _peek(records, pos)) is not None:
        if count == 0:
            if version >= 3 and entry[1] != 2:
                raise ClusterError("INVALID_RECORD")
            if version >= 3 and version < 7 \
                    and _INT16.unpack_from(records, 21)[0] & _CODEC_MASK == ZSTD:
                raise ClusterError("UNSUPPORTED_COMPRESSION_TYPE")
        elif version >= 3:
            raise ClusterError("INVALID_RECORD")  # exactly one batch per partition
        pos, count = entry[0], count + 1
    if version >= 3 and count == 0:
        raise ClusterError("INVALID_RECORD")  # at least one batch per partition
    return records if pos == len(records) else records[:pos]


def transactional_producer(records: bytes) -> tuple[int, int] | None:
    """(producer id, epoch) of ``records``' first entry when it is a transactional magic-2
    batch with a producer id (Kafka's ``hasProducerId && isTransactional``), read from the
    header as ``whole_entries`` left it (whole entries only), before its CRC is checked;
    else None."""
    if len(records) < BATCH_HEADER_SIZE or records[16] != 2 \
            or _INT32.unpack_from(records, 8)[0] + 12 < BATCH_HEADER_SIZE \
            or not _INT16.unpack_from(records, 21)[0] & _TRANSACTIONAL:
        return None
    producer_id, epoch = _PRODUCER.unpack_from(records, 43)
    return (producer_id, epoch) if producer_id >= 0 else None


def check_before_crc(records: bytes, max_message_bytes: int, log_start_offset: int) -> None:
    """The log's analysis before each batch's CRC: a magic-2 batch's base offset must be 0
    (INVALID_RECORD), no entry larger than ``max_message_bytes`` (MESSAGE_TOO_LARGE)."""
    pos = 0
    while pos < len(records):
        size, magic = _SIZE_MAGIC.unpack_from(records, pos + 8)
        if magic == 2 and _BASE_OFFSET.unpack_from(records, pos)[0] != 0:
            raise ClusterError("INVALID_RECORD", log_start_offset=log_start_offset)
        if size + 12 > max_message_bytes:
            raise ClusterError("MESSAGE_TOO_LARGE")
        pos += size + 12


def unknown_codec(records: bytes) -> bool:
    """Whether a magic-2 batch names a codec Kafka does not know (read after its CRC)."""
    pos = 0
    while pos < len(records):
        size, magic = _SIZE_MAGIC.unpack_from(records, pos + 8)
        if magic == 2 and len(records) >= pos + 23 \
                and _INT16.unpack_from(records, pos + 21)[0] & _CODEC_MASK not in CODECS:
            return True
        pos += size + 12
    return False


def check_batch_fields(headers: Sequence[BatchHeader], log_start_offset: int) -> None:
    """LogValidator.validateBatch for a client's magic-2 batches: a positive offset range
    equal to the count, no control batch, a base sequence for a producer id."""
    for h in headers:
        if h.magic == 2 and (h.last_offset_delta < 0 or h.record_count <= 0 or h.is_control
                             or (h.producer_id >= 0 and h.base_sequence < 0)):
            raise ClusterError("INVALID_RECORD", log_start_offset=log_start_offset)


def check_decompresses(records: bytes, headers: Sequence[BatchHeader], log_start_offset: int
                       ) -> None:
    """Each compressed magic-2 batch of ``records`` decompressed by its codec (step 5 of the
    module docstring): UNKNOWN_SERVER_ERROR for a payload the codec cannot read,
    INVALID_RECORD for an empty zstd one. Its records are not read here."""
    pos = 0
    for h in headers:
        end = pos + h.length
        if h.magic == 2 and h.compression != NONE:
            payload = records[pos + BATCH_HEADER_SIZE:end]
            if h.compression == ZSTD and not payload:
                raise ClusterError("INVALID_RECORD", log_start_offset=log_start_offset)
            try:
                decompress(h.compression, payload)
            except DecompressionError:
                raise ClusterError("UNKNOWN_SERVER_ERROR",
                                   log_start_offset=log_start_offset) from None
        pos = end


def check_records(records: bytes, headers: Sequence[BatchHeader], log_start_offset: int
                  ) -> None:
    """Each record of the uncompressed magic-2 batches in ``records`` read as Kafka reads it
    (``DefaultRecord.readFrom``); INVALID_RECORD for the first that does not add up. Called
    only where the records are decoded anyway (``check_record_fields``), or before an
    idempotent producer's state is changed or refused otherwise than by its next batch (a
    rare path; fakebroker.api.produce.validate): the walk costs
    ~2.6 us a record in Python, 24x the in-process produce of a 5,000-record batch and 6 %
    of a one-record request (BENCHMARKS.md), so elsewhere records are stored unread, as the
    produce path's guarantee is (tests/fuzz/differences.toml)."""
    pos = 0
    for h in headers:
        end = pos + h.length
        if h.magic == 2 and h.compression == NONE \
                and not _records_add_up(records, pos + BATCH_HEADER_SIZE, end, h.record_count):
            raise ClusterError("INVALID_RECORD", log_start_offset=log_start_offset)
        pos = end


def check_record_fields(records: bytes, partition: str, log_start_offset: int, *,
                        compacted: bool, bounds: tuple[int, int] | None, create_time: bool
                        ) -> None:
    """LogValidator.validateKey and validateTimestamp over each record, its errors collected
    as Kafka's processRecordErrors answers them: INVALID_TIMESTAMP (Kafka's message) if any
    record's timestamp is refused, else INVALID_RECORD naming the first three; every error in
    ``record_errors``. A record of a compacted topic needs a key (then its timestamp is not
    looked at); a CreateTime record's timestamp (but -1) must lie within ``bounds`` (None:
    the batch headers proved it does); a batch stamped LogAppendTime by the producer is
    refused where the topic is LogAppendTime or the timestamp is -1. A compressed batch's
    records that cannot be read are INVALID_RECORD."""
    no_key = f"Compacted topic cannot accept message without key in topic partition {partition}"
    errors: list[dict[str, object]] = []
    timestamps = False
    try:
        decoded = decode_records(records)
    except (CorruptRecordError, InvalidRecordError):
        raise ClusterError("INVALID_RECORD", log_start_offset=log_start_offset) from None
    for index, r in enumerate(decoded):
        said = None
        if compacted and r.key is None:
            said = no_key
        elif create_time and r.timestamp != -1:
            if bounds is not None and not bounds[0] <= r.timestamp <= bounds[1]:
                said = (f"Timestamp {r.timestamp} of message with offset {r.offset} is out of "
                        f"range. The timestamp should be within [{bounds[0]}, {bounds[1]}]")
        elif r.timestamp_type == 1:
            key, value = len(r.key or b""), len(r.value or b"")
            said = (f"Invalid timestamp type in message DefaultRecord(offset={r.offset}, "
                    f"timestamp={r.timestamp}, key={key} bytes, value={value} bytes). "
                    "Producer should not set timestamp type to LogAppendTime.")
        if said is not None:
            timestamps = timestamps or said is not no_key
            errors.append({"batch_index": index, "batch_index_error_message": said})
    if not errors:
        return
    if timestamps:
        raise ClusterError("INVALID_TIMESTAMP", INVALID_TIMESTAMP, record_errors=errors,
                           log_start_offset=log_start_offset)
    shown = ", ".join(f"RecordError(batchIndex={e['batch_index']}, "
                      f"message='{e['batch_index_error_message']}')" for e in errors[:3])
    raise ClusterError("INVALID_RECORD", "One or more records have been rejected due to "
                       f"{len(errors)} record errors in total, and only showing the first "
                       f"three errors at most: [{shown}]", record_errors=errors,
                       log_start_offset=log_start_offset)


def _records_add_up(data: bytes, pos: int, end: int, count: int) -> bool:
    """Whether ``data[pos:end]`` is exactly ``count`` well-formed records, each field within
    its record and the last ending where the record's length says. A record's length is read
    inline when it is one byte; ``_varint`` reads the rest."""
    for _ in range(count):
        if pos >= end:
            return False
        b = data[pos]
        if b < 0x80:
            length, pos = (b >> 1) ^ -(b & 1), pos + 1
        else:
            length, pos = _varint(data, pos, end, 5)
        body_end = pos + length
        if length < 0 or body_end > end:
            return False
        # attributes, then the timestamp delta (a varlong) and the offset delta
        _, at = _varint(data, pos + 1, body_end, 10)
        _, at = _varint(data, at, body_end, 5)
        for _ in range(2):  # key, value: a length (negative: null), then the bytes
            size, at = _varint(data, at, body_end, 5)
            if size > 0:
                at += size
        headers, at = _varint(data, at, body_end, 5)
        if not 0 <= headers <= body_end - at:
            return False
        for _ in range(headers):
            size, at = _varint(data, at, body_end, 5)
            if size < 0:
                return False
            size, at = _varint(data, at + size, body_end, 5)
            if size > 0:
                at += size
        if at != body_end:
            return False
        pos = body_end
    return pos == end


def _varint(data: bytes, pos: int, end: int, most: int) -> tuple[int, int]:
    """Kafka's zigzag varint (``most`` 5 bytes: an int, 10: a long) at ``pos``, and where it
    ends; a varint past ``end`` or longer than ``most`` bytes ends it at ``end + 1``, which no
    caller accepts. An int's bits beyond 32 are dropped, as Java's are."""
    if pos + 1 < end:  # most varints of a record are one or two bytes long
        b = data[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
        if data[pos + 1] < 0x80:
            value = (b & 0x7F) | data[pos + 1] << 7
            return (value >> 1) ^ -(value & 1), pos + 2
    value = shift = 0
    for at in range(pos, min(pos + most, end)):
        b = data[at]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if most == 5:
                value &= 0xFFFF_FFFF
            return (value >> 1) ^ -(value & 1), at + 1
        shift += 7
    return 0, end + 1
