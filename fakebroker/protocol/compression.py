"""Kafka compression codecs, as Kafka clients frame them on the wire.

Codec ids are the values of the low three attribute bits of a record batch or legacy
message: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.

Guarantees:

* ``decompress`` reads what Kafka clients write: gzip (several members allowed), snappy both
  xerial-framed (Java, librdkafka, kafka-python) and raw, lz4 frames with or without block
  and content checksums and with either a correct or Kafka's old, wrong header checksum,
  and zstd frames with or without a content size.
* ``compress`` writes what the Java client writes: gzip as ``java.util.zip.GZIPOutputStream``
  (zlib's default level, a header without time or name: byte for byte what Kafka's broker
  writes when it converts records), xerial-framed snappy in 32 KiB blocks and
  lz4 frames of independent 64 KiB blocks without checksums; ``legacy_lz4=True`` gives the
  wrong header checksum that readers of magic-0 messages expect.
* Malformed input raises ``DecompressionError``; an unknown codec id raises ``ValueError``.
"""

import struct
import zlib

import cramjam

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4
CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)


class DecompressionError(ValueError):
    """Compressed bytes that the codec cannot read."""


# GZIPOutputStream's header: deflate, no flags, no time, no extra flags, OS unknown (255).
_JAVA_GZIP_HEADER = bytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
_MASK32 = 0xFFFFFFFF
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version 1, compatible with 1
_XERIAL_BLOCK = 32 * 1024

_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_FLG = 0x60  # version 01, independent blocks, no checksums, no content size
_LZ4_BD = 0x40  # 64 KiB maximum block size
# Header checksum: second byte of xxh32 over the descriptor (FLG, BD). Kafka's magic-0
# writer hashed the 4 magic bytes as well, so old readers expect that value instead.
_LZ4_HC = 0x82
_LZ4_LEGACY_HC = 0x1A
_LZ4_BLOCK = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000
_LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}


def compress(codec: int, data: bytes, *, legacy_lz4: bool = False) -> bytes:
    """Compress ``data`` with ``codec`` as a Kafka client would."""
    if codec == NONE:
        return data
    if codec == GZIP:
        deflater = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -zlib.MAX_WBITS)
        body = deflater.compress(data) + deflater.flush()
        return _JAVA_GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & _MASK32)
    if codec == SNAPPY:
        return _xerial_compress(data)
    if codec == LZ4:
        return _lz4_frame_compress(data, legacy_lz4)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")


def decompress(codec: int, data: bytes) -> bytes:
    """Decompress ``data`` written by any Kafka client with ``codec``."""
    if codec == NONE:
        return data
    if codec not in CODECS:
        raise ValueError(f"unknown compression codec {codec}")
    try:
        if codec == GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return _lz4_frame_decompress(data)
        return bytes(cramjam.zstd.decompress(data))
    except (cramjam.DecompressionError, struct.error) as exc:
        raise DecompressionError(str(exc)) from exc


def _xerial_compress(data: bytes) -> bytes:
    parts = [_XERIAL_HEADER]
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK]))
        parts += (struct.pack(">i", len(block)), block)
    return b"".join(parts)


def _snappy_decompress(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    parts: list[bytes] = []
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise DecompressionError("truncated xerial snappy block")
        parts.append(bytes(cramjam.snappy.decompress_raw(data[pos : pos + size])))
        pos += size
    return b"".join(parts)


def _lz4_frame_compress(data: bytes, legacy: bool) -> bytes:
    hc = _LZ4_LEGACY_HC if legacy else _LZ4_HC
    parts = [_LZ4_MAGIC, bytes((_LZ4_FLG, _LZ4_BD, hc))]
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = data[start : start + _LZ4_BLOCK]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) < len(chunk):
            parts += (struct.pack("<I", len(block)), block)
        else:
            parts += (struct.pack("<I", len(chunk) | _LZ4_UNCOMPRESSED), chunk)
    parts.append(b"\x00\x00\x00\x00")
    return b"".join(parts)


def _lz4_frame_decompress(data: bytes) -> bytes:
    """Read an lz4 frame, ignoring the header checksum (Kafka once wrote it wrongly)."""
    if data[:4] != _LZ4_MAGIC or len(data) < 7:
        raise DecompressionError("not an lz4 frame")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise DecompressionError(f"unsupported lz4 frame version {flg >> 6}")
    if not flg & 0x20:  # linked blocks: never written by Kafka clients, needs a real decoder
        return bytes(cramjam.lz4.decompress(data))
    block_checksum = 4 if flg & 0x10 else 0
    pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1
    max_block = _LZ4_BLOCK_SIZES.get((bd >> 4) & 0x7)
    if max_block is None:
        raise DecompressionError(f"bad lz4 block size id in {bd:#x}")
    buffer = bytearray(max_block)
    parts: list[bytes] = []
    while True:
        (word,) = struct.unpack_from("<I", data, pos)
        pos += 4
        size = word & ~_LZ4_UNCOMPRESSED
        if size == 0:
            return b"".join(parts)
        if size > max_block or pos + size > len(data):
            raise DecompressionError("bad lz4 block size")
        block = data[pos : pos + size]
        if word & _LZ4_UNCOMPRESSED:
            parts.append(block)
        else:
            n = cramjam.lz4.decompress_block_into(block, buffer, output_len=max_block)
            parts.append(bytes(buffer[:n]))
        pos += size + block_checksum
