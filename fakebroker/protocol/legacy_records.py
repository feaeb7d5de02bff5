"""Legacy message sets (magic 0 and 1), as old clients produce them and old fetchers read them.

A legacy entry is one message: ``offset, size, crc, magic, attributes`` (magic 1 adds a
timestamp), then an int32-length key and value; the CRC (zlib's CRC-32) covers from the magic
byte. A compressed message is a wrapper whose value is a compressed message set of plain
inner messages of the same magic. Guarantees:

* A compressed wrapper is opened to count and check its inner messages; it is one entry.
* Offsets: magic 0 inner messages carry absolute offsets; magic 1 inner offsets are relative,
  and the wrapper carries the offset of its last message. ``assign_offsets`` rewrites a plain
  message, and a magic-1 wrapper whose inner offsets are 0..n-1, in place; any other wrapper is
  recompressed with its new offsets.
* LogAppendTime applies to magic 1 only (magic 0 has no timestamp); on a wrapper it stands for
  every inner message.
* Legacy messages carry no headers, producer state, transactions, control records or zstd.
* Malformed input raises ``CorruptRecordError`` or ``InvalidRecordError`` only, as in
  ``records``.
"""

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from fakebroker.protocol.compression import CODECS, NONE, ZSTD, compress
from fakebroker.protocol.record_entries import (
    CODEC_MASK,
    INT32,
    INT64,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    MAGIC_AT,
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

MAGICS = (0, 1)

# offset, size, crc, magic, attributes; magic 1 adds the timestamp.
_HEADER = struct.Struct(">qiIbb")
_TIMESTAMP_AT = 18
_KEY_AT = {0: 18, 1: 26}  # the key length follows crc, magic, attributes (and timestamp)


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
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & LOG_APPEND_TIME else 0


def read_header(data: bytes, start: int, end: int) -> BatchHeader:
    """The facts of the legacy entry ``data[start:end]``, its CRC and inner messages checked."""
    message = _parse_message(data, start, end)
    if message.codec == NONE:
        ts = message.timestamp
        return _header(message, end - start, message.offset, 1, 0, ts, ts)
    inner = _unwrap(message)
    offsets = _inner_offsets(message, inner)
    if message.attributes & LOG_APPEND_TIME:
        first = latest = message.timestamp
    else:
        first, latest = inner[0].timestamp, max(m.timestamp for m in inner)
    last_delta = offsets[-1] - offsets[0]
    return _header(message, end - start, offsets[0], len(inner), last_delta, first, latest)


def assign_offsets(
    buf: bytearray, start: int, end: int, first_offset: int, log_append_time: int | None
) -> tuple[int, bytes | None]:
    """Give the legacy entry ``buf[start:end]`` offsets from ``first_offset``: in place where
    possible, else as a rebuilt entry. Returns how many offsets it takes and the rebuilt entry
    (None when it was rewritten in place)."""
    message = _parse_message(buf, start, end)
    if message.codec == NONE:
        INT64.pack_into(buf, start, first_offset)
        _stamp(buf, start, end, log_append_time)
        return 1, None
    inner = _unwrap(message)
    if message.magic == 1 and [m.offset for m in inner] == list(range(len(inner))):
        INT64.pack_into(buf, start, first_offset + len(inner) - 1)
        _stamp(buf, start, end, log_append_time)
        return len(inner), None
    wrapper = message
    if log_append_time is not None and message.magic == 1:
        wrapper = replace(
            message,
            attributes=message.attributes | LOG_APPEND_TIME,
            timestamp=log_append_time,
        )
    return len(inner), _wrap(wrapper, inner, first_offset)


def decode(data: bytes, start: int, end: int) -> list[Record]:
    """The records of the legacy entry ``data[start:end]``."""
    message = _parse_message(data, start, end)
    if message.codec == NONE:
        return [_record(message, message.offset)]
    inner = _unwrap(message)
    offsets = _inner_offsets(message, inner)
    if message.timestamp_type == 1:  # the wrapper's log append time stands for every message
        inner = [
            replace(m, attributes=m.attributes | LOG_APPEND_TIME, timestamp=message.timestamp)
            for m in inner
        ]
    return [_record(m, offset) for m, offset in zip(inner, offsets, strict=True)]


def encode(records: Sequence[RecordInput], magic: int, base_offset: int, codec: int) -> bytes:
    """A magic 0 or 1 message set of ``records`` (one compressed wrapper unless ``codec`` is
    NONE), offsets from ``base_offset``; ``ValueError`` for what the format cannot carry."""
    if magic not in MAGICS:
        raise ValueError(f"unknown magic {magic}")
    if any(headers for _, _, headers, _ in records):
        raise ValueError("legacy messages carry no headers")
    return build([(base_offset + i, ts, key, value)
                  for i, (key, value, _, ts) in enumerate(records)], magic, codec)


LegacyInput = tuple[int, int, bytes | None, bytes | None]
"""What ``build`` takes per message: offset, timestamp in ms, key, value."""


def build(messages: Sequence[LegacyInput], magic: int, codec: int,
          log_append_time: int | None = None) -> bytes:
    """Messages as Kafka's ``MemoryRecordsBuilder`` writes them at magic 0 or 1: plain messages
    at their offsets (``codec`` NONE), or one wrapper compressed with ``codec`` that carries the
    last offset, its inner offsets absolute (magic 0) or relative to the first (magic 1). Magic 1
    keeps each timestamp and the wrapper the latest; with ``log_append_time`` every message and
    the wrapper carry that time and the LogAppendTime bit instead. Magic 0 has no timestamp.
    ``ValueError`` for zstd, which needs magic 2."""
    if codec == ZSTD:
        raise ValueError("zstd needs magic 2")
    attributes = LOG_APPEND_TIME if magic == 1 and log_append_time is not None else 0
    plain = [
        _Message(offset, magic, attributes,
                 -1 if magic == 0 else ts if log_append_time is None else log_append_time,
                 key, value)
        for offset, ts, key, value in messages
    ]
    if codec == NONE:
        return b"".join(_encode_message(m) for m in plain)
    first = plain[0].offset
    inner = b"".join(
        _encode_message(replace(m, offset=m.offset - first if magic == 1 else m.offset))
        for m in plain
    )
    wrapper = _Message(plain[-1].offset, magic, codec | attributes,
                       max(m.timestamp for m in plain), None,
                       compress(codec, inner, legacy_lz4=magic == 0))
    return _encode_message(wrapper)


# --- reading ---------------------------------------------------------------------------------


def _parse_message(data: bytes | bytearray, start: int, end: int) -> _Message:
    offset, _, crc, magic, attributes = _HEADER.unpack_from(data, start)
    if zlib.crc32(memoryview(data)[start + MAGIC_AT : end]) != crc:
        raise CorruptRecordError(f"CRC mismatch in message at offset {offset}")
    timestamp = INT64.unpack_from(data, start + _TIMESTAMP_AT)[0] if magic == 1 else -1
    reader = _Int32Reader(data, start + _KEY_AT[magic], end)
    key = reader.nullable_bytes()
    value = reader.nullable_bytes()
    if reader.pos != end:
        raise CorruptRecordError(f"message size disagrees with key and value at offset {offset}")
    return _Message(offset, magic, attributes, timestamp, key, value)


class _Int32Reader(Reader):
    """Cursor over int32-length-prefixed legacy keys and values."""

    __slots__ = ()

    def nullable_bytes(self) -> bytes | None:
        n = INT32.unpack(self.take(4))[0]
        return None if n < 0 else self.take(n)


def _unwrap(wrapper: _Message) -> list[_Message]:
    """The inner messages of a compressed wrapper, checked."""
    if wrapper.codec == ZSTD or wrapper.codec not in CODECS:
        raise InvalidRecordError(f"codec {wrapper.codec} is not allowed with magic {wrapper.magic}")
    if wrapper.value is None:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} has no value")
    data = decompress_payload(wrapper.codec, wrapper.value)
    inner = [_parse_message(data, start, end) for start, end, _ in entries(data)]
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


def _header(
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


def _record(message: _Message, offset: int) -> Record:
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


# --- writing ---------------------------------------------------------------------------------


def _stamp(buf: bytearray, start: int, end: int, log_append_time: int | None) -> None:
    """Set LogAppendTime on a magic-1 message in place and fix its CRC; magic 0 has no time."""
    if log_append_time is None or buf[start + MAGIC_AT] == 0:
        return
    buf[start + MAGIC_AT + 1] |= LOG_APPEND_TIME
    INT64.pack_into(buf, start + _TIMESTAMP_AT, log_append_time)
    crc = zlib.crc32(memoryview(buf)[start + MAGIC_AT : end])
    UINT32.pack_into(buf, start + LOG_OVERHEAD, crc)


def _wrap(wrapper: _Message, inner: Sequence[_Message], first_offset: int) -> bytes:
    """Compress ``inner`` into ``wrapper`` so that they take offsets from ``first_offset``."""
    magic = wrapper.magic
    inner_set = b"".join(
        _encode_message(replace(m, offset=i if magic == 1 else first_offset + i))
        for i, m in enumerate(inner)
    )
    value = compress(wrapper.codec, inner_set, legacy_lz4=magic == 0)
    return _encode_message(replace(wrapper, offset=first_offset + len(inner) - 1, value=value))


def _encode_message(message: _Message) -> bytes:
    body = struct.pack(">bb", message.magic, message.attributes)
    if message.magic == 1:
        body += INT64.pack(message.timestamp)
    body += _int32_bytes(message.key) + _int32_bytes(message.value)
    return struct.pack(">qiI", message.offset, len(body) + 4, zlib.crc32(body)) + body


def _int32_bytes(data: bytes | None) -> bytes:
    return INT32.pack(-1) if data is None else INT32.pack(len(data)) + data
