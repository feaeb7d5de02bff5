"""Size-prefixed frames out of a connection's bytes: ``FrameReader``.

A module of its own, without the codec: a broker's connections read frames from their first
byte, and the codec comes with the request path (``fakebroker.pipeline``), imported for the
first request or ahead of it, not while the broker starts.

``FrameReader`` splits the bytes a connection reads into whole request frames, whatever the
reads' sizes; a frame whose size is over the limit is refused before its bytes come.
"""

from __future__ import annotations

import struct
from collections import deque

_SIZE = struct.Struct(">i")


class FrameTooLarge(ValueError):
    """A frame's size prefix is over the reader's limit (or negative); the message names both."""


class FrameReader:
    """An incremental splitter of size-prefixed frames: ``feed`` it the bytes read, take the
    whole frames with ``next_frame``.

    Guarantees: frames come out whole, in order, without their size prefix, however the bytes
    were split across reads; a partial frame waits for more bytes. A size over
    ``max_frame_bytes`` (``socket.request.max.bytes``) or below zero raises ``FrameTooLarge``
    when that frame is next, after every whole frame before it was taken.

    A frame's bytes are copied once, from the reads into the frame: the reads are kept as
    they came (no buffer they are appended to), and a frame is sliced out of the read that
    holds it, or joined from the reads it spans (a produced batch is megabytes).
    """

    __slots__ = ("max_frame_bytes", "_reads", "_pos", "_held")

    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._reads: deque[bytes] = deque()  # bytes read and not yet taken, in order
        self._pos = 0  # where the first read's untaken bytes begin
        self._held = 0  # untaken bytes in all

    def feed(self, data: bytes | bytearray) -> None:
        """Add bytes read from the connection."""
        if data:
            self._reads.append(data if type(data) is bytes else bytes(data))
            self._held += len(data)

    def next_frame(self) -> bytes | None:
        """The next whole frame (without its size prefix), taken out of the reads; None until
        one is whole. ``FrameTooLarge`` when the next frame's size is over the limit."""
        if self._held < 4:
            return None
        reads, pos = self._reads, self._pos
        first = reads[0]
        if len(first) - pos >= 4:
            size = _SIZE.unpack_from(first, pos)[0]
        else:  # the size prefix spans reads
            size = _SIZE.unpack(self._peek(4))[0]
        if size < 0 or size > self.max_frame_bytes:
            raise FrameTooLarge(f"frame of {size} bytes is over socket.request.max.bytes "
                                f"({self.max_frame_bytes})")
        if self._held < 4 + size:
            return None
        self._held -= 4 + size
        end = pos + 4 + size
        if end <= len(first):  # the frame lies in one read
            frame = first[pos + 4 : end]
            if end == len(first):
                reads.popleft()
                end = 0
            self._pos = end
            return frame
        pieces: list[memoryview] = []
        skip, left = 4, size  # the size prefix, then the frame's bytes
        while True:
            read = reads[0]
            view = memoryview(read)[pos:]
            if skip:
                dropped = min(skip, len(view))
                view, skip = view[dropped:], skip - dropped
            if len(view) > left:
                pieces.append(view[:left])
                self._pos = len(read) - len(view) + left
                return b"".join(pieces)
            pieces.append(view)
            left -= len(view)
            reads.popleft()
            pos = 0
            if not left and not skip:
                self._pos = 0
                return b"".join(pieces)

    def _peek(self, count: int) -> bytes:
        """The first ``count`` untaken bytes (as many are held)."""
        out = bytearray()
        pos = self._pos
        for read in self._reads:
            out += read[pos : pos + count - len(out)]
            pos = 0
            if len(out) == count:
                break
        return bytes(out)
