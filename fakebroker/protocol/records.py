"""Kafka record batches as the broker sees them: validate, assign offsets, decode, build.

This module is the way in for every record format: it reads magic-2 record batches itself and
hands legacy magic 0/1 entries to ``legacy_records``. Records stay bytes. Guarantees:

* Produce and fetch paths never decompress magic-2 batches. ``read_batch_headers`` reads each
  batch's fixed 61-byte header and checks its CRC-32C; ``assign_offsets`` rewrites baseOffset and
  partitionLeaderEpoch in place (both lie outside the CRC) and recomputes the CRC only when it
  stamps LogAppendTime. Neither does any per-record work.
* Legacy magic 0/1 message sets are accepted too (see ``legacy_records`` for their rules).
* Malformed input raises ``CorruptRecordError`` when bytes are missing or do not add up (bad CRC,
  truncation, sizes that disagree) and ``InvalidRecordError`` when they add up but mean something
  unsupported or inconsistent (unknown magic or codec, bad record count, undecompressable
  payload). Nothing else escapes: no ``struct.error`` or ``IndexError``.
* ``decode_records`` reads every format and codec and ignores a partial trailing batch, as fetch
  responses may carry one; ``encode_batch`` builds batches as Kafka clients do. Conversions
  between formats (produce into a log's format, fetch for an old fetcher) live in
  ``conversion``.
"""

import struct
from collections.abc import Sequence

import crc32c

from fakebroker.protocol import legacy_records
from fakebroker.protocol.compression import CODECS, NONE, compress
from fakebroker.protocol.record_entries import (
    CODEC_MASK,
    CONTROL,
    INT32,
    INT64,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    TRANSACTIONAL,
    UINT32,
    BatchHeader,
    CorruptRecordError,
    InvalidRecordError,
    Reader,
    Record,
    RecordInput,
    decompress_payload,
    entries,
)

__all__ = [
    "BatchHeader",
    "CorruptRecordError",
    "InvalidRecordError",
    "Record",
    "RecordInput",
    "assign_offsets",
    "decode_records",
    "encode_batch",
    "encode_marker",
    "next_offset",
    "read_batch_headers",
]

# Magic 2 header: baseOffset, batchLength, partitionLeaderEpoch, magic, crc lie outside the CRC;
# attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
# baseSequence, recordsCount lie inside it, as do the records that follow.
_V2_PREFIX = struct.Struct(">qiibI")
_V2_COVERED = struct.Struct(">hiqqqhii")
_V2_HEADER_SIZE = _V2_PREFIX.size + _V2_COVERED.size
_V2_EPOCH_AT = 12
_V2_CRC_AT = 17
_V2_ATTRIBUTES_AT = 21  # the CRC covers from here to the end
_V2_LAST_DELTA_AT = 23
_V2_MAX_TIMESTAMP_AT = 35
_V2_OFFSET_EPOCH = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch


def read_batch_headers(data: bytes, stored: bool = False) -> list[BatchHeader]:
    """Split complete produce input, or stored log bytes (``stored``: a cleaned batch holds
    fewer records than its offsets span, or none), into validated batch headers."""
    return [
        _read_v2(data, start, end, compacted=stored) if magic == 2
        else legacy_records.read_header(data, start, end)
        for start, end, magic in entries(data)
    ]


def assign_offsets(
    data: bytes, base_offset: int, leader_epoch: int, log_append_time_ms: int | None
) -> bytes:
    """Return ``data`` as it is to be stored: consecutive offsets from ``base_offset``, the leader
    epoch on magic-2 batches, and LogAppendTime stamped when ``log_append_time_ms`` is given.

    Expects input that ``read_batch_headers`` accepted. Magic-2 input without LogAppendTime
    (what every current client sends) is copied once: new 16-byte prefixes spliced around
    views of the rest.
    """
    spans = list(entries(data))
    if log_append_time_ms is None and all(magic == 2 for _, _, magic in spans):
        view = memoryview(data)
        pieces: list[bytes | memoryview] = []
        next_offset = base_offset
        for start, end, _ in spans:
            pieces += (_V2_OFFSET_EPOCH.pack(next_offset, INT32.unpack_from(data, start + 8)[0],
                                             leader_epoch), view[start + 16 : end])
            next_offset += INT32.unpack_from(data, start + _V2_LAST_DELTA_AT)[0] + 1
        return b"".join(pieces)
    buf = bytearray(data)
    replacements: list[tuple[int, int, bytes]] = []
    next_offset = base_offset
    for start, end, magic in spans:
        if magic == 2:
            next_offset += _assign_v2(
                buf, start, end, next_offset, leader_epoch, log_append_time_ms
            )
            continue
        used, rebuilt = legacy_records.assign_offsets(
            buf, start, end, next_offset, log_append_time_ms
        )
        next_offset += used
        if rebuilt is not None:
            replacements.append((start, end, rebuilt))
    for start, end, rebuilt in reversed(replacements):
        buf[start:end] = rebuilt
    return bytes(buf)


def decode_records(data: bytes) -> list[Record]:
    """Decode every record of every batch or legacy entry; a partial trailing one is ignored."""
    records: list[Record] = []
    for start, end, magic in entries(data, allow_partial=True):
        if magic == 2:
            records += _decode_v2(data, start, end)
        else:
            records += legacy_records.decode(data, start, end)
    return records


def encode_batch(
    records: Sequence[RecordInput],
    *,
    base_offset: int = 0,
    compression: int = NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    magic: int = 2,
) -> bytes:
    """Build one magic-2 batch, or a legacy magic 0/1 message set, from (key, value, headers,
    timestamp_ms) tuples. Legacy formats cannot carry headers, producer state or zstd."""
    if not records:
        raise ValueError("a batch needs at least one record")
    if compression not in CODECS:
        raise ValueError(f"unknown compression codec {compression}")
    if magic == 2:
        attributes = compression
        attributes |= TRANSACTIONAL if transactional else 0
        attributes |= CONTROL if control else 0
        producer = (producer_id, producer_epoch, base_sequence)
        return _encode_v2(records, base_offset, attributes, producer)
    if (producer_id, producer_epoch, base_sequence) != (-1, -1, -1) or transactional or control:
        raise ValueError("legacy messages carry no producer state")
    return legacy_records.encode(records, magic, base_offset, compression)


# A control record's key: version 0, then its type (ControlRecordType: 0 abort, 1 commit);
# an end-transaction marker's value: version 0, then the coordinator epoch (EndTxnMarker).
_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")
ABORT_MARKER, COMMIT_MARKER = 0, 1


def encode_marker(producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                  timestamp_ms: int) -> bytes:
    """The control batch a transaction's end writes to each of its partitions, as Kafka
    writes it: transactional and control bits set, no sequence, one record whose key is the
    marker type and whose value carries the coordinator epoch."""
    key = _CONTROL_KEY.pack(0, COMMIT_MARKER if commit else ABORT_MARKER)
    value = _MARKER_VALUE.pack(0, coordinator_epoch)
    return encode_batch([(key, value, (), timestamp_ms)], producer_id=producer_id,
                        producer_epoch=producer_epoch, transactional=True, control=True)


def next_offset(data: bytes) -> int | None:
    """The offset after the last complete magic-2 batch of ``data`` (a fetch's records),
    counting its last offset even where compaction left no record there; None without one."""
    found = None
    for start, end, magic in entries(data, allow_partial=True):
        if magic == 2:
            base, = INT64.unpack_from(data, start)
            found = base + INT32.unpack_from(data, start + _V2_LAST_DELTA_AT)[0] + 1
        else:
            found = max((r.offset + 1 for r in legacy_records.decode(data, start, end)),
                        default=found)
    return found


DELETE_HORIZON = 0x40  # attribute: the base timestamp is the batch's delete horizon


def delete_horizon(data: bytes) -> int | None:
    """The delete horizon a cleaning set on a stored magic-2 batch (its base timestamp), or
    None (not set)."""
    attributes, = struct.unpack_from(">h", data, _V2_ATTRIBUTES_AT)
    return INT64.unpack_from(data, _V2_ATTRIBUTES_AT + 6)[0] \
        if attributes & DELETE_HORIZON else None


def rebuild_batch(data: bytes, kept: Sequence[Record], horizon: int | None) -> bytes:
    """A stored magic-2 batch with only the records ``kept`` (decoded from it), as Kafka's
    cleaner writes it (``MemoryRecords.filterTo``): the same base offset, last offset,
    producer fields, leader epoch, codec and attributes; the base timestamp the delete
    horizon when ``horizon`` is set (with its attribute); no record left, an empty batch of
    the header alone (``DefaultRecordBatch.writeEmptyHeader``)."""
    base_offset, _, epoch, _, _ = _V2_PREFIX.unpack_from(data, 0)
    attributes, last_delta, first_ts, max_ts, producer_id, producer_epoch, base_sequence, _ = (
        _V2_COVERED.unpack_from(data, _V2_PREFIX.size))
    if not kept:
        attributes &= ~CODEC_MASK & ~DELETE_HORIZON
        covered = _V2_COVERED.pack(attributes, last_delta, max_ts, max_ts, producer_id,
                                   producer_epoch, base_sequence, 0)
    else:
        if horizon is not None:
            attributes |= DELETE_HORIZON
        base_ts = horizon if horizon is not None else kept[0].timestamp
        log_append = attributes & LOG_APPEND_TIME
        body = b"".join(
            _encode_record(r.offset - base_offset, 0 if log_append else r.timestamp - base_ts,
                           r.key, r.value, r.headers) for r in kept)
        kept_max = max_ts if log_append else max(r.timestamp for r in kept)
        covered = _V2_COVERED.pack(attributes, last_delta, base_ts, kept_max, producer_id,
                                   producer_epoch, base_sequence, len(kept)) \
            + compress(attributes & CODEC_MASK, body)
    length = _V2_PREFIX.size - LOG_OVERHEAD + len(covered)
    return _V2_PREFIX.pack(base_offset, length, epoch, 2, crc32c.crc32c(covered)) + covered


# --- magic 2 ---------------------------------------------------------------------------------


def _read_v2(data: bytes, start: int, end: int, compacted: bool = False) -> BatchHeader:
    base_offset, _, _, magic, crc = _V2_PREFIX.unpack_from(data, start)
    covered = _V2_COVERED.unpack_from(data, start + _V2_PREFIX.size)
    attributes, last_delta, first_ts, max_ts, producer_id, producer_epoch, base_sequence, count = (
        covered
    )
    if crc32c.crc32c(memoryview(data)[start + _V2_ATTRIBUTES_AT : end]) != crc:
        raise CorruptRecordError(f"CRC mismatch in batch at offset {base_offset}")
    codec = attributes & CODEC_MASK
    if codec not in CODECS:
        raise InvalidRecordError(f"unknown compression codec {codec}")
    if count < 0 or count > last_delta + 1 or (count != last_delta + 1 and not compacted):
        raise InvalidRecordError(f"record count {count} disagrees with last offset delta")
    return BatchHeader(
        magic=magic,
        base_offset=base_offset,
        length=end - start,
        record_count=count,
        last_offset_delta=last_delta,
        first_timestamp=first_ts,
        max_timestamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        compression=codec,
        timestamp_type=1 if attributes & LOG_APPEND_TIME else 0,
        is_transactional=bool(attributes & TRANSACTIONAL),
        is_control=bool(attributes & CONTROL),
    )


def _assign_v2(
    buf: bytearray, start: int, end: int, offset: int, epoch: int, log_append_time: int | None
) -> int:
    """Rewrite one batch in place; return how many offsets it takes."""
    INT64.pack_into(buf, start, offset)
    INT32.pack_into(buf, start + _V2_EPOCH_AT, epoch)
    if log_append_time is not None:
        buf[start + _V2_ATTRIBUTES_AT + 1] |= LOG_APPEND_TIME  # low byte of the int16
        INT64.pack_into(buf, start + _V2_MAX_TIMESTAMP_AT, log_append_time)
        crc = crc32c.crc32c(memoryview(buf)[start + _V2_ATTRIBUTES_AT : end])
        UINT32.pack_into(buf, start + _V2_CRC_AT, crc)
    last_offset_delta: int = INT32.unpack_from(buf, start + _V2_LAST_DELTA_AT)[0]
    return last_offset_delta + 1


def _decode_v2(data: bytes, start: int, end: int) -> list[Record]:
    header = _read_v2(data, start, end, compacted=True)  # stored: compaction leaves gaps
    epoch = INT32.unpack_from(data, start + _V2_EPOCH_AT)[0]
    payload = decompress_payload(header.compression, data[start + _V2_HEADER_SIZE : end])
    reader = Reader(payload, 0, len(payload))
    records = [_read_record(reader, header, epoch) for _ in range(header.record_count)]
    if reader.pos != len(payload):
        raise CorruptRecordError(f"bytes left after the records of batch {header.base_offset}")
    return records


def _read_record(reader: Reader, header: BatchHeader, epoch: int) -> Record:
    length = reader.varint()
    if length < 0 or reader.pos + length > reader.end:
        raise CorruptRecordError(f"bad record length {length}")
    body = Reader(reader.data, reader.pos, reader.pos + length)
    reader.pos = body.end
    body.take(1)  # record attributes: unused
    timestamp_delta = body.varint()
    offset_delta = body.varint()
    key = body.nullable_bytes()
    value = body.nullable_bytes()
    headers = tuple(_read_record_header(body) for _ in range(body.count()))
    if body.pos != body.end:
        raise CorruptRecordError("record length disagrees with its fields")
    log_append = header.timestamp_type == 1
    return Record(
        offset=header.base_offset + offset_delta,
        timestamp=header.max_timestamp if log_append else header.first_timestamp + timestamp_delta,
        timestamp_type=header.timestamp_type,
        key=key,
        value=value,
        headers=headers,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        sequence=_sequence(header.base_sequence, offset_delta),
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        leader_epoch=epoch,
    )


def _read_record_header(reader: Reader) -> tuple[str, bytes | None]:
    name = reader.nullable_bytes()
    if name is None:
        raise InvalidRecordError("record header with a null key")
    try:
        return name.decode(), reader.nullable_bytes()
    except UnicodeDecodeError as exc:
        raise InvalidRecordError("record header key is not UTF-8") from exc


def _sequence(base_sequence: int, offset_delta: int) -> int:
    """Sequence numbers wrap from 2**31 - 1 to 0."""
    return -1 if base_sequence < 0 else (base_sequence + offset_delta) % 2**31


def _encode_v2(
    records: Sequence[RecordInput],
    base_offset: int,
    attributes: int,
    producer: tuple[int, int, int],
) -> bytes:
    first_ts = records[0][3]
    body = b"".join(
        _encode_record(delta, ts - first_ts, key, value, headers)
        for delta, (key, value, headers, ts) in enumerate(records)
    )
    last_delta = len(records) - 1
    max_ts = max(ts for _, _, _, ts in records)
    covered = _V2_COVERED.pack(
        attributes, last_delta, first_ts, max_ts, *producer, len(records)
    ) + compress(attributes & CODEC_MASK, body)
    length = _V2_PREFIX.size - LOG_OVERHEAD + len(covered)
    epoch = -1  # producers leave the leader epoch unset
    return _V2_PREFIX.pack(base_offset, length, epoch, 2, crc32c.crc32c(covered)) + covered


def _encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]],
) -> bytes:
    parts = [b"\x00", _varint(timestamp_delta), _varint(offset_delta)]
    parts += (_varint_bytes(key), _varint_bytes(value), _varint(len(headers)))
    for name, header_value in headers:
        parts += (_varint_bytes(name.encode()), _varint_bytes(header_value))
    body = b"".join(parts)
    return _varint(len(body)) + body


def _varint(n: int) -> bytes:
    """Zigzag-encode ``n`` as Kafka's signed varint/varlong."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _varint_bytes(data: bytes | None) -> bytes:
    return _varint(-1) if data is None else _varint(len(data)) + data
