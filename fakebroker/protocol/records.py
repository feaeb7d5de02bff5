"""Kafka record batches as the broker sees them: validate, assign offsets, decode, build.

Records stay bytes. Guarantees:

* Produce and fetch paths never decompress magic-2 batches. ``read_batch_headers`` reads each
  batch's fixed 61-byte header and checks its CRC-32C; ``assign_offsets`` rewrites baseOffset and
  partitionLeaderEpoch in place (both lie outside the CRC) and recomputes the CRC only when it
  stamps LogAppendTime. Neither does any per-record work.
* Legacy magic 0/1 message sets are accepted too. A compressed wrapper is opened to count and
  check its inner messages; a magic-0 wrapper (absolute inner offsets) or a magic-1 wrapper whose
  inner offsets are not 0..n-1 is recompressed when it gets its offsets.
* Malformed input raises ``CorruptRecordError`` when bytes are missing or do not add up (bad CRC,
  truncation, sizes that disagree) and ``InvalidRecordError`` when they add up but mean something
  unsupported or inconsistent (unknown magic or codec, bad record count, undecompressable
  payload). Nothing else escapes: no ``struct.error`` or ``IndexError``.
* ``decode_records`` reads every format and codec and ignores a partial trailing batch, as fetch
  responses may carry one; ``encode_batch`` builds batches as Kafka clients do; ``down_convert``
  turns stored batches into uncompressed magic 0/1 message sets for Fetch v0-v3.
"""

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import crc32c

from fakebroker.protocol.compression import (
    CODECS,
    NONE,
    ZSTD,
    DecompressionError,
    compress,
    decompress,
)


class CorruptRecordError(ValueError):
    """Record bytes that are truncated, fail their CRC or whose sizes disagree."""


class InvalidRecordError(ValueError):
    """Record bytes that are intact but unsupported or inconsistent."""


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """Facts about one batch (magic 2) or one legacy entry (magic 0/1), read without
    decompressing a magic-2 batch."""

    magic: int
    base_offset: int
    length: int
    record_count: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    compression: int
    timestamp_type: int
    is_transactional: bool
    is_control: bool


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record with the facts of the batch it came from."""

    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    producer_id: int
    producer_epoch: int
    sequence: int
    is_transactional: bool
    is_control: bool
    leader_epoch: int


RecordInput = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]], int]
"""What ``encode_batch`` takes per record: key, value, headers, timestamp in ms."""

# Offset and size fields that start every batch and legacy entry; the magic byte follows at 16.
_LOG_OVERHEAD = 12
_MAGIC_AT = 16

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

# Legacy: offset, size, crc, magic, attributes; magic 1 adds timestamp. The CRC covers from magic.
_LEGACY_HEADER = struct.Struct(">qiIbb")
_LEGACY_TIMESTAMP_AT = 18
_LEGACY_KEY_AT = {0: 18, 1: 26}  # key length follows crc, magic, attributes (and timestamp)

_CODEC_MASK = 0x07
_LOG_APPEND_TIME = 0x08
_TRANSACTIONAL = 0x10
_CONTROL = 0x20

_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")


def read_batch_headers(data: bytes) -> list[BatchHeader]:
    """Split complete produce input or stored log bytes into validated batch headers."""
    return [_read_entry(data, start, end, magic) for start, end, magic in _entries(data)]


def assign_offsets(
    data: bytes, base_offset: int, leader_epoch: int, log_append_time_ms: int | None
) -> bytes:
    """Return ``data`` as it is to be stored: consecutive offsets from ``base_offset``, the leader
    epoch on magic-2 batches, and LogAppendTime stamped when ``log_append_time_ms`` is given.

    Expects input that ``read_batch_headers`` accepted. Magic-2 input without LogAppendTime
    (what every current client sends) is copied once: new 16-byte prefixes spliced around
    views of the rest.
    """
    entries = list(_entries(data))
    if log_append_time_ms is None and all(magic == 2 for _, _, magic in entries):
        view = memoryview(data)
        pieces: list[bytes | memoryview] = []
        next_offset = base_offset
        for start, end, _ in entries:
            pieces += (_V2_OFFSET_EPOCH.pack(next_offset, _INT32.unpack_from(data, start + 8)[0],
                                             leader_epoch), view[start + 16 : end])
            next_offset += _INT32.unpack_from(data, start + _V2_LAST_DELTA_AT)[0] + 1
        return b"".join(pieces)
    buf = bytearray(data)
    replacements: list[tuple[int, int, bytes]] = []
    next_offset = base_offset
    for start, end, magic in entries:
        if magic == 2:
            next_offset += _assign_v2(
                buf, start, end, next_offset, leader_epoch, log_append_time_ms
            )
            continue
        used, rebuilt = _assign_legacy(buf, start, end, next_offset, log_append_time_ms)
        next_offset += used
        if rebuilt is not None:
            replacements.append((start, end, rebuilt))
    for start, end, rebuilt in reversed(replacements):
        buf[start:end] = rebuilt
    return bytes(buf)


def decode_records(data: bytes) -> list[Record]:
    """Decode every record of every batch or legacy entry; a partial trailing one is ignored."""
    records: list[Record] = []
    for start, end, magic in _entries(data, allow_partial=True):
        if magic == 2:
            records += _decode_v2(data, start, end)
        else:
            records += _decode_legacy(data, start, end)
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
        attributes |= _TRANSACTIONAL if transactional else 0
        attributes |= _CONTROL if control else 0
        producer = (producer_id, producer_epoch, base_sequence)
        return _encode_v2(records, base_offset, attributes, producer)
    if magic not in _LEGACY_KEY_AT:
        raise ValueError(f"unknown magic {magic}")
    if (producer_id, producer_epoch, base_sequence) != (-1, -1, -1) or transactional or control:
        raise ValueError("legacy messages carry no producer state")
    if any(headers for _, _, headers, _ in records):
        raise ValueError("legacy messages carry no headers")
    if compression == ZSTD:
        raise ValueError("zstd needs magic 2")
    return _encode_legacy(records, magic, base_offset, compression)


def down_convert(data: bytes, magic: int) -> bytes:
    """Rewrite stored batches as an uncompressed magic 0 or 1 message set for old fetchers:
    offsets, keys and values kept, timestamps kept for magic 1, headers and control records
    dropped."""
    if magic not in _LEGACY_KEY_AT:
        raise ValueError(f"cannot down-convert to magic {magic}")
    return b"".join(
        _encode_message(
            _Message(
                offset=record.offset,
                magic=magic,
                attributes=_LOG_APPEND_TIME if magic == 1 and record.timestamp_type else 0,
                timestamp=record.timestamp if magic == 1 else -1,
                key=record.key,
                value=record.value,
            )
        )
        for record in decode_records(data)
        if not record.is_control
    )


# --- splitting -------------------------------------------------------------------------------


def _entries(data: bytes, *, allow_partial: bool = False) -> Iterator[tuple[int, int, int]]:
    """Yield (start, end, magic) of each batch or legacy entry, checking only its framing."""
    pos = 0
    while pos < len(data):
        end = _entry_end(data, pos)
        if end is None:
            if allow_partial:
                return
            raise CorruptRecordError(f"truncated batch at byte {pos}")
        magic = data[pos + _MAGIC_AT]
        if magic > 2:
            raise InvalidRecordError(f"unknown magic {magic} at byte {pos}")
        if end < pos + (_V2_HEADER_SIZE if magic == 2 else _LEGACY_KEY_AT[magic] + 8):
            raise CorruptRecordError(f"magic {magic} batch at byte {pos} is too small")
        yield pos, end, magic
        pos = end


def _entry_end(data: bytes, pos: int) -> int | None:
    """Where the entry at ``pos`` ends, or None if ``data`` stops before that or its magic."""
    if len(data) - pos <= _MAGIC_AT:
        return None
    end = pos + _LOG_OVERHEAD + _INT32.unpack_from(data, pos + 8)[0]
    return end if end <= len(data) else None


def _read_entry(data: bytes, start: int, end: int, magic: int) -> BatchHeader:
    if magic == 2:
        return _read_v2(data, start, end)
    message = _parse_message(data, start, end)
    if message.codec == NONE:
        ts = message.timestamp
        return _legacy_header(message, end - start, message.offset, 1, 0, ts, ts)
    inner = _unwrap(message)
    offsets = _inner_offsets(message, inner)
    if message.attributes & _LOG_APPEND_TIME:
        first = latest = message.timestamp
    else:
        first, latest = inner[0].timestamp, max(m.timestamp for m in inner)
    last_delta = offsets[-1] - offsets[0]
    return _legacy_header(message, end - start, offsets[0], len(inner), last_delta, first, latest)


class _Reader:
    """Cursor over ``data[pos:end]`` that raises CorruptRecordError instead of overrunning."""

    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes | bytearray, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise CorruptRecordError("record field runs past its record")
        self.pos += n
        return bytes(self.data[self.pos - n : self.pos])

    def varint(self) -> int:
        z = shift = 0
        for _ in range(10):
            byte = self.take(1)[0]
            z |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (z >> 1) ^ -(z & 1)
            shift += 7
        raise CorruptRecordError("varint longer than 10 bytes")

    def nullable_bytes(self) -> bytes | None:
        n = self.varint()
        return None if n < 0 else self.take(n)

    def count(self) -> int:
        n = self.varint()
        if n < 0:
            raise InvalidRecordError(f"negative count {n}")
        return n


# --- magic 2 ---------------------------------------------------------------------------------


def _read_v2(data: bytes, start: int, end: int) -> BatchHeader:
    base_offset, _, _, magic, crc = _V2_PREFIX.unpack_from(data, start)
    covered = _V2_COVERED.unpack_from(data, start + _V2_PREFIX.size)
    attributes, last_delta, first_ts, max_ts, producer_id, producer_epoch, base_sequence, count = (
        covered
    )
    if crc32c.crc32c(memoryview(data)[start + _V2_ATTRIBUTES_AT : end]) != crc:
        raise CorruptRecordError(f"CRC mismatch in batch at offset {base_offset}")
    codec = attributes & _CODEC_MASK
    if codec not in CODECS:
        raise InvalidRecordError(f"unknown compression codec {codec}")
    if count < 0 or count != last_delta + 1:
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
        timestamp_type=1 if attributes & _LOG_APPEND_TIME else 0,
        is_transactional=bool(attributes & _TRANSACTIONAL),
        is_control=bool(attributes & _CONTROL),
    )


def _assign_v2(
    buf: bytearray, start: int, end: int, offset: int, epoch: int, log_append_time: int | None
) -> int:
    """Rewrite one batch in place; return how many offsets it takes."""
    _INT64.pack_into(buf, start, offset)
    _INT32.pack_into(buf, start + _V2_EPOCH_AT, epoch)
    if log_append_time is not None:
        buf[start + _V2_ATTRIBUTES_AT + 1] |= _LOG_APPEND_TIME  # low byte of the int16
        _INT64.pack_into(buf, start + _V2_MAX_TIMESTAMP_AT, log_append_time)
        crc = crc32c.crc32c(memoryview(buf)[start + _V2_ATTRIBUTES_AT : end])
        _UINT32.pack_into(buf, start + _V2_CRC_AT, crc)
    last_offset_delta: int = _INT32.unpack_from(buf, start + _V2_LAST_DELTA_AT)[0]
    return last_offset_delta + 1


def _decode_v2(data: bytes, start: int, end: int) -> list[Record]:
    header = _read_v2(data, start, end)
    epoch = _INT32.unpack_from(data, start + _V2_EPOCH_AT)[0]
    payload = _decompress(header.compression, data[start + _V2_HEADER_SIZE : end])
    reader = _Reader(payload, 0, len(payload))
    records = [_read_record(reader, header, epoch) for _ in range(header.record_count)]
    if reader.pos != len(payload):
        raise CorruptRecordError(f"bytes left after the records of batch {header.base_offset}")
    return records


def _read_record(reader: _Reader, header: BatchHeader, epoch: int) -> Record:
    length = reader.varint()
    if length < 0 or reader.pos + length > reader.end:
        raise CorruptRecordError(f"bad record length {length}")
    body = _Reader(reader.data, reader.pos, reader.pos + length)
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


def _read_record_header(reader: _Reader) -> tuple[str, bytes | None]:
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
    ) + compress(attributes & _CODEC_MASK, body)
    length = _V2_PREFIX.size - _LOG_OVERHEAD + len(covered)
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


# --- legacy magic 0/1 ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Message:
    """One legacy message: a plain record or a compressed wrapper around a message set."""

    offset: int
    magic: int
    attributes: int
    timestamp: int  # -1 for magic 0
    key: bytes | None
    value: bytes | None

    @property
    def codec(self) -> int:
        return self.attributes & _CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & _LOG_APPEND_TIME else 0


def _parse_message(data: bytes | bytearray, start: int, end: int) -> _Message:
    offset, _, crc, magic, attributes = _LEGACY_HEADER.unpack_from(data, start)
    if zlib.crc32(memoryview(data)[start + _MAGIC_AT : end]) != crc:
        raise CorruptRecordError(f"CRC mismatch in message at offset {offset}")
    timestamp = _INT64.unpack_from(data, start + _LEGACY_TIMESTAMP_AT)[0] if magic == 1 else -1
    reader = _LegacyReader(data, start + _LEGACY_KEY_AT[magic], end)
    key = reader.nullable_bytes()
    value = reader.nullable_bytes()
    if reader.pos != end:
        raise CorruptRecordError(f"message size disagrees with key and value at offset {offset}")
    return _Message(offset, magic, attributes, timestamp, key, value)


class _LegacyReader(_Reader):
    """Cursor over int32-length-prefixed legacy keys and values."""

    __slots__ = ()

    def nullable_bytes(self) -> bytes | None:
        n = _INT32.unpack(self.take(4))[0]
        return None if n < 0 else self.take(n)


def _unwrap(wrapper: _Message) -> list[_Message]:
    """The inner messages of a compressed wrapper, checked."""
    if wrapper.codec == ZSTD or wrapper.codec not in CODECS:
        raise InvalidRecordError(f"codec {wrapper.codec} is not allowed with magic {wrapper.magic}")
    if wrapper.value is None:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} has no value")
    data = _decompress(wrapper.codec, wrapper.value)
    inner = [_parse_message(data, start, end) for start, end, _ in _entries(data)]
    if not inner:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} is empty")
    if any(m.magic != wrapper.magic or m.codec != NONE for m in inner):
        raise InvalidRecordError(f"bad inner message in wrapper at offset {wrapper.offset}")
    return inner


def _inner_offsets(wrapper: _Message, inner: Sequence[_Message]) -> list[int]:
    """Absolute offsets: magic 0 stores them; magic 1 stores them relative to the wrapper's
    offset, which is that of the last inner message."""
    if wrapper.magic == 0:
        return [m.offset for m in inner]
    shift = wrapper.offset - inner[-1].offset
    return [shift + m.offset for m in inner]


def _legacy_header(
    message: _Message,
    length: int,
    base_offset: int,
    count: int,
    last_delta: int,
    first_ts: int,
    max_ts: int,
) -> BatchHeader:
    return BatchHeader(
        magic=message.magic,
        base_offset=base_offset,
        length=length,
        record_count=count,
        last_offset_delta=last_delta,
        first_timestamp=first_ts,
        max_timestamp=max_ts,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        compression=message.codec,
        timestamp_type=message.timestamp_type,
        is_transactional=False,
        is_control=False,
    )


def _assign_legacy(
    buf: bytearray, start: int, end: int, first_offset: int, log_append_time: int | None
) -> tuple[int, bytes | None]:
    """Give one legacy entry offsets from ``first_offset``: in place where possible, else return
    a rebuilt entry. Returns how many offsets it takes and the rebuilt entry or None."""
    message = _parse_message(buf, start, end)
    if message.codec == NONE:
        _INT64.pack_into(buf, start, first_offset)
        _stamp_legacy(buf, start, end, log_append_time)
        return 1, None
    inner = _unwrap(message)
    if message.magic == 1 and [m.offset for m in inner] == list(range(len(inner))):
        _INT64.pack_into(buf, start, first_offset + len(inner) - 1)
        _stamp_legacy(buf, start, end, log_append_time)
        return len(inner), None
    wrapper = message
    if log_append_time is not None and message.magic == 1:
        wrapper = replace(
            message,
            attributes=message.attributes | _LOG_APPEND_TIME,
            timestamp=log_append_time,
        )
    return len(inner), _wrap(wrapper, inner, first_offset)


def _stamp_legacy(buf: bytearray, start: int, end: int, log_append_time: int | None) -> None:
    """Set LogAppendTime on a magic-1 message in place and fix its CRC; magic 0 has no time."""
    if log_append_time is None or buf[start + _MAGIC_AT] == 0:
        return
    buf[start + _MAGIC_AT + 1] |= _LOG_APPEND_TIME
    _INT64.pack_into(buf, start + _LEGACY_TIMESTAMP_AT, log_append_time)
    crc = zlib.crc32(memoryview(buf)[start + _MAGIC_AT : end])
    _UINT32.pack_into(buf, start + _LOG_OVERHEAD, crc)


def _wrap(wrapper: _Message, inner: Sequence[_Message], first_offset: int) -> bytes:
    """Compress ``inner`` into ``wrapper`` so that they take offsets from ``first_offset``."""
    magic = wrapper.magic
    inner_set = b"".join(
        _encode_message(replace(m, offset=i if magic == 1 else first_offset + i))
        for i, m in enumerate(inner)
    )
    value = compress(wrapper.codec, inner_set, legacy_lz4=magic == 0)
    return _encode_message(replace(wrapper, offset=first_offset + len(inner) - 1, value=value))


def _encode_legacy(
    records: Sequence[RecordInput], magic: int, base_offset: int, codec: int
) -> bytes:
    messages = [
        _Message(base_offset + i, magic, 0, ts if magic == 1 else -1, key, value)
        for i, (key, value, _, ts) in enumerate(records)
    ]
    if codec == NONE:
        return b"".join(_encode_message(m) for m in messages)
    latest = max(m.timestamp for m in messages)
    return _wrap(_Message(0, magic, codec, latest, None, None), messages, base_offset)


def _encode_message(message: _Message) -> bytes:
    body = struct.pack(">bb", message.magic, message.attributes)
    if message.magic == 1:
        body += _INT64.pack(message.timestamp)
    body += _int32_bytes(message.key) + _int32_bytes(message.value)
    return struct.pack(">qiI", message.offset, len(body) + 4, zlib.crc32(body)) + body


def _int32_bytes(data: bytes | None) -> bytes:
    return _INT32.pack(-1) if data is None else _INT32.pack(len(data)) + data


def _decode_legacy(data: bytes, start: int, end: int) -> list[Record]:
    message = _parse_message(data, start, end)
    if message.codec == NONE:
        return [_legacy_record(message, message.offset)]
    inner = _unwrap(message)
    offsets = _inner_offsets(message, inner)
    if message.timestamp_type == 1:  # the wrapper's log append time stands for every message
        inner = [
            replace(m, attributes=m.attributes | _LOG_APPEND_TIME, timestamp=message.timestamp)
            for m in inner
        ]
    return [_legacy_record(m, offset) for m, offset in zip(inner, offsets, strict=True)]


def _legacy_record(message: _Message, offset: int) -> Record:
    return Record(
        offset=offset,
        timestamp=message.timestamp,
        timestamp_type=message.timestamp_type,
        key=message.key,
        value=message.value,
        headers=(),
        producer_id=-1,
        producer_epoch=-1,
        sequence=-1,
        is_transactional=False,
        is_control=False,
        leader_epoch=-1,
    )


def _decompress(codec: int, data: bytes) -> bytes:
    try:
        return decompress(codec, data)
    except DecompressionError as exc:
        raise InvalidRecordError(f"cannot decompress codec {codec} payload: {exc}") from exc
