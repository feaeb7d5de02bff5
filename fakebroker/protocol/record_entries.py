"""What every record format shares: the facts read from records, their errors, and the framing
of an entry (a magic-2 batch or a legacy magic 0/1 message) in a buffer of them.

Every entry starts with ``int64 offset, int32 size`` (the size counts the bytes after these
12) and has its magic byte at 16. ``entries`` splits a buffer by these fields alone and
guarantees each entry it yields is whole, has a known magic and is at least as long as that
format's fixed header, so format readers may unpack their headers without bounds checks.
"""

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from fakebroker.protocol.compression import DecompressionError, decompress


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
    # Set by inspection (``FakeKafka.records``) for transactional records: "committed",
    # "aborted" or "open" (a marker: the outcome it wrote); None otherwise.
    transaction: str | None = None


RecordInput = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]], int]
"""What ``encode_batch`` takes per record: key, value, headers, timestamp in ms."""

LOG_OVERHEAD = 12  # the offset and size that start every entry
MAGIC_AT = 16

# The smallest entry of each magic: a legacy message's header up to its key, then the key and
# value lengths (magic 1 adds an 8-byte timestamp); a batch's 61-byte header.
_MIN_SIZE = {0: 18 + 8, 1: 26 + 8, 2: 61}

# Attribute bits, the same in both formats (magic 2 keeps them in an int16, legacy in an int8).
CODEC_MASK = 0x07
LOG_APPEND_TIME = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20

INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT32 = struct.Struct(">I")


def entries(data: bytes, *, allow_partial: bool = False) -> Iterator[tuple[int, int, int]]:
    """Yield (start, end, magic) of each entry, checking only its framing: a truncated entry
    is ``CorruptRecordError`` (or ends the iteration with ``allow_partial``), an unknown magic
    ``InvalidRecordError``."""
    pos = 0
    while pos < len(data):
        end = _entry_end(data, pos)
        if end is None:
            if allow_partial:
                return
            raise CorruptRecordError(f"truncated batch at byte {pos}")
        magic = data[pos + MAGIC_AT]
        if magic > 2:
            raise InvalidRecordError(f"unknown magic {magic} at byte {pos}")
        if end < pos + _MIN_SIZE[magic]:
            raise CorruptRecordError(f"magic {magic} batch at byte {pos} is too small")
        yield pos, end, magic
        pos = end


def _entry_end(data: bytes, pos: int) -> int | None:
    """Where the entry at ``pos`` ends, or None if ``data`` stops before that or its magic."""
    if len(data) - pos <= MAGIC_AT:
        return None
    end = pos + LOG_OVERHEAD + INT32.unpack_from(data, pos + 8)[0]
    return end if end <= len(data) else None


class Reader:
    """Cursor over ``data[pos:end]`` that raises CorruptRecordError instead of overrunning;
    lengths and counts are Kafka's zigzag varints."""

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


def decompress_payload(codec: int, data: bytes) -> bytes:
    """``data`` decompressed; ``InvalidRecordError`` when it does not decompress."""
    try:
        return decompress(codec, data)
    except DecompressionError as exc:
        raise InvalidRecordError(f"cannot decompress codec {codec} payload: {exc}") from exc
