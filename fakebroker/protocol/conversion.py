"""Kafka's conversions between record formats: a produce's records rebuilt in the format and
codec its log stores, and a fetch's read down-converted for a fetcher of an older format.

Guarantees (each from the Kafka source named):

* ``rebuilt`` is what ``LogValidator.buildRecordsAndAssignOffsets`` and
  ``convertAndAssignOffsetsNonCompressed`` store when a produce cannot be appended in place:
  every record of the request in one batch (magic 2: the first entry's producer id, epoch,
  sequence and transactional bit, each record's key, value, headers and timestamp; a magic-0
  record's timestamp is -1), or at magic 0/1 one wrapper (compressed) or one message per
  record, offsets from 0 (``records.assign_offsets`` gives the log's). With LogAppendTime a
  legacy set carries the time in every message, as ``MemoryRecordsBuilder`` writes it; a
  magic-2 batch gets it from ``assign_offsets``.
* ``down_converted`` is the ``records`` field Kafka sends a fetcher of magic 0 or 1
  (``LazyDownConversionRecords`` and its send, over ``RecordsUtil.downConvert``): control
  batches dropped; batches of that magic or older as stored; newer ones rebuilt with their
  codec, offsets and timestamps (and timestamp type) kept, headers and producer state lost,
  an uncompressed batch losing its records before the fetch offset. Its length is the
  stored read's, or the first converted batch's when longer: a longer conversion is cut
  short there, a shorter one filled with an overflow entry (offset -1, a size past the end)
  that clients skip. A zstd batch cannot be down-converted: ``UnsupportedCompressionError``
  when it comes before any batch that converts to something (Kafka's
  UNSUPPORTED_COMPRESSION_TYPE for the partition); after one, its whole chunk (the batches
  converted together: up to 128 KiB of them) becomes an overflow entry, and when one entry
  cannot fill the rest (more than 128 KiB) Kafka's send fails and the broker closes the
  connection: ``SendFailed``.
  Kafka's send re-reads from the read's second batch after the first converted one: when
  the first batch converts to nothing (a transaction marker), the batch that did convert is
  sent twice, and so here.
"""

from __future__ import annotations

import struct

from fakebroker.protocol import legacy_records
from fakebroker.protocol.compression import NONE, ZSTD
from fakebroker.protocol.record_entries import LOG_OVERHEAD, entries
from fakebroker.protocol.records import (
    BatchHeader,
    decode_records,
    encode_batch,
    read_batch_headers,
)

# LazyDownConversionRecordsSend: the stored bytes converted at a time, and the overflow
# entry's shortest size (an entry's offset and size) and least declared size (a batch header).
MAX_READ_SIZE = 128 * 1024
MIN_OVERFLOW_SIZE = LOG_OVERHEAD
BATCH_OVERHEAD = 61


class UnsupportedCompressionError(ValueError):
    """Stored records whose codec (zstd) an older format cannot carry."""


class SendFailed(ValueError):
    """Kafka's send of a down-converted answer fails part-way (its converter, failed once,
    is asked for more): the broker closes the connection."""


def rebuilt(data: bytes, magic: int, codec: int, log_append_time: int | None) -> bytes:
    """Produce input ``data`` (accepted by ``read_batch_headers``) as Kafka's log validator
    rebuilds it in ``magic`` with ``codec``, offsets from 0. ``ValueError`` for headers in a
    legacy format (Kafka's builder refuses them) and for zstd below magic 2."""
    first = read_batch_headers(data)[0]
    records = decode_records(data)
    if magic == 2:
        return encode_batch([(r.key, r.value, r.headers, r.timestamp) for r in records],
                            compression=codec, producer_id=first.producer_id,
                            producer_epoch=first.producer_epoch,
                            base_sequence=first.base_sequence,
                            transactional=first.is_transactional)
    if any(r.headers for r in records):
        raise ValueError(f"magic {magic} does not support record headers")
    return legacy_records.build([(i, r.timestamp, r.key, r.value)
                                 for i, r in enumerate(records)], magic, codec,
                                log_append_time)


def down_converted(data: bytes, magic: int, fetch_offset: int) -> bytes:
    """The stored read ``data`` (whole batches, perhaps the head of one more) as Kafka sends
    it to a fetcher of ``magic`` (0 or 1) that asked from ``fetch_offset``."""
    spans = [(start, end) for start, end, _ in entries(data, allow_partial=True)]
    first: bytes = b""
    for span in spans:  # Kafka's constructor: a batch at a time
        first = _convert(data, [span], magic, fetch_offset)
        if first:
            break
    if not first:
        return _overflow(MIN_OVERFLOW_SIZE) if spans else b""
    size = max(len(data), len(first))
    sent = first
    for chunk in _chunks(spans[1:]):
        if len(sent) >= size:
            break
        try:
            sent += _convert(data, chunk, magic, fetch_offset)
        except UnsupportedCompressionError:
            if size - len(sent) > MAX_READ_SIZE:  # the one overflow entry cannot fill it
                raise SendFailed("down-conversion failed part-way through the answer") from None
            break  # Kafka sends the overflow entry in its place
    while len(sent) < size:
        sent += _overflow(size - len(sent))
    return sent[:size]


def _convert(data: bytes, spans: list[tuple[int, int]], magic: int, fetch_offset: int
             ) -> bytes:
    """``RecordsUtil.downConvert`` of the batches at ``spans``."""
    kept: list[tuple[bytes, BatchHeader]] = []
    for start, end in spans:
        [header] = read_batch_headers(data[start:end], stored=True)
        if header.is_control:
            continue
        if header.compression == ZSTD:
            raise UnsupportedCompressionError("Down-conversion of zstandard-compressed "
                                              "batches is not supported")
        kept.append((data[start:end], header))
    out = []
    for stored, header in kept:
        if header.magic <= magic:
            out.append(stored)
            continue
        compressed = header.compression != NONE
        try:
            records = [(r.offset, r.timestamp, r.key, r.value) for r in decode_records(stored)
                       if compressed or r.offset >= fetch_offset]
        except ValueError:  # stored unread and not parsable (state.log.readable_records)
            continue  # converts to nothing, as a marker does: the fetcher skips it
        if records:
            append_time = header.max_timestamp if header.timestamp_type else None
            out.append(legacy_records.build(records, magic, header.compression, append_time))
    return b"".join(out)


def _chunks(spans: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Batches grouped as Kafka's iterator converts them: at least one, then as many as fit
    in ``MAX_READ_SIZE`` stored bytes."""
    chunks: list[list[tuple[int, int]]] = []
    size = 0
    for start, end in spans:
        if chunks and size + end - start <= MAX_READ_SIZE:
            chunks[-1].append((start, end))
            size += end - start
        else:
            chunks.append([(start, end)])
            size = end - start
    return chunks


def _overflow(remaining: int) -> bytes:
    """``buildOverflowBatch(remaining)``: offset -1 and a size past the response's end, as
    much of it as Kafka writes (its buffer, at most ``remaining`` bytes)."""
    length = max(MIN_OVERFLOW_SIZE, min(remaining + 1, MAX_READ_SIZE))
    entry = struct.pack(">qi", -1, max(remaining + 1, BATCH_OVERHEAD)).ljust(length, b"\0")
    return entry[:remaining]
