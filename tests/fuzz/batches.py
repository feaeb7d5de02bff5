"""Mutations inside a magic-2 record batch that keep it well framed: the batch's length and
CRC are made right again after the change, so the broker gets past the batch's framing and
CRC check and meets the mutated header fields and records themselves (record-level
validation, keys of a compacted topic, timestamps, decompression, the cleaner's reads).

A byte mutation of a ``records`` field almost always breaks the CRC (which covers everything
from the attributes on) or the batch length, and is refused before any of that is reached;
these are the mutations that reach it. Every choice comes from the ``random.Random`` given.
"""

from __future__ import annotations

import random
import struct

import crc32c

_PREFIX = struct.Struct(">qiibI")  # baseOffset, batchLength, partitionLeaderEpoch, magic, crc
_LENGTH_AT, _MAGIC_AT, _CRC_AT, _ATTRIBUTES_AT, _RECORDS_AT = 8, 16, 17, 21, 61
# The header fields under the CRC: (name, offset, struct format).
_FIELDS = (("attributes", 21, ">h"), ("lastOffsetDelta", 23, ">i"),
           ("baseTimestamp", 27, ">q"), ("maxTimestamp", 35, ">q"), ("producerId", 43, ">q"),
           ("producerEpoch", 51, ">h"), ("baseSequence", 53, ">i"), ("recordCount", 57, ">i"))
_VALUES = {">h": (0, -1, 1, 2**15 - 1, -(2**15), 0x07, 0x08, 0x10, 0x20, 0x30, 0x40, 0x44),
           ">i": (0, -1, 1, 2, 2**31 - 1, -(2**31), 10_000),
           ">q": (0, -1, 1, 2**63 - 1, -(2**63), 2**41, 4_102_444_800_000)}


def first_batch(data: bytes) -> tuple[int, int] | None:
    """The start and end of the first magic-2 batch in ``data``, or None if there is none
    whole (a legacy message set, a truncated batch)."""
    if len(data) < _RECORDS_AT or data[_MAGIC_AT] != 2:
        return None
    end = 12 + _PREFIX.unpack_from(data)[1]
    return (0, end) if _RECORDS_AT <= end <= len(data) else None


def mutate_batch(data: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    """``data`` (a records field) with its first batch mutated inside and framed again,
    and what was done; None if ``data`` holds no whole magic-2 batch."""
    found = first_batch(data)
    if found is None:
        return None
    start, end = found
    batch = bytearray(data[start:end])
    choice = rng.randrange(3)
    if choice == 0:
        name, at, form = rng.choice(_FIELDS)
        value = rng.choice(_VALUES[form])
        struct.pack_into(form, batch, at, value)
        what = f"batch {name} {value}"
    elif choice == 1 and len(batch) > _RECORDS_AT:
        records = bytearray(batch[_RECORDS_AT:])
        count = rng.randint(1, 4)
        for _ in range(count):
            records[rng.randrange(len(records))] ^= 1 << rng.randrange(8)
        batch[_RECORDS_AT:] = records
        what = f"batch records, {count} bits flipped"
    else:
        records = bytes(batch[_RECORDS_AT:])
        cut = rng.randrange(len(records) + 1)
        extra = rng.choice((b"", rng.randbytes(rng.randint(1, 8)), records[:cut]))
        batch[_RECORDS_AT:] = records[:cut] + extra
        what = f"batch records cut to {cut} bytes, {len(extra)} appended"
    struct.pack_into(">i", batch, _LENGTH_AT, len(batch) - 12)
    struct.pack_into(">I", batch, _CRC_AT, crc32c.crc32c(bytes(batch[_ATTRIBUTES_AT:])))
    return data[:start] + bytes(batch) + data[end:], what
