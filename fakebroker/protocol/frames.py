"""Size-prefixed frames out of a connection's bytes: ``FrameReader``.

A module of its own, without the codec: a broker's connections read frames from their first
byte, and the codec comes with the request path (``fakebroker.pipeline``), imported for the
first request or ahead of it, not while the broker starts.

``FrameReader`` splits the bytes a connection reads into whole request frames, whatever the
reads' sizes; a frame whose size is over the limit is refused before its bytes come.
"""

from __future__ import annotations

import struct

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
    """

    __slots__ = ("max_frame_bytes", "_buffer")

    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        """Add bytes read from the connection."""
        self._buffer += data

    def next_frame(self) -> bytes | None:
        """The next whole frame (without its size prefix), taken out of the buffer; None until
        one is whole. ``FrameTooLarge`` when the next frame's size is over the limit."""
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        size = _SIZE.unpack_from(buffer)[0]
        if size < 0 or size > self.max_frame_bytes:
            raise FrameTooLarge(f"frame of {size} bytes is over socket.request.max.bytes "
                                f"({self.max_frame_bytes})")
        end = 4 + size
        if len(buffer) < end:
            return None
        frame = bytes(buffer[4:end])
        del buffer[:end]
        return frame
