"""Frame splitting: the bytes a connection reads in, whole request frames out."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakebroker.protocol.frames import FrameReader, FrameTooLarge


def sized(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


@given(st.lists(st.binary(max_size=40), max_size=6), st.data())
def test_frames_come_out_whole_and_in_order_however_the_reads_split_them(bodies, data):
    stream = b"".join(map(sized, bodies))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    frames = FrameReader(max_frame_bytes=40)
    taken = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        frames.feed(stream[start:end])
        while (frame := frames.next_frame()) is not None:
            taken.append(frame)
    assert taken == bodies


def test_a_partial_frame_waits_for_the_rest():
    frames = FrameReader(max_frame_bytes=100)
    frames.feed(sized(b"abcdef")[:7])
    assert frames.next_frame() is None
    frames.feed(b"def")
    assert frames.next_frame() == b"abcdef"
    assert frames.next_frame() is None


def test_a_size_over_the_limit_is_refused_after_the_frames_before_it_before_its_bytes_come():
    frames = FrameReader(max_frame_bytes=8)
    frames.feed(sized(b"ok") + struct.pack(">i", 9))
    assert frames.next_frame() == b"ok"
    with pytest.raises(FrameTooLarge, match=r"frame of 9 bytes is over .*\(8\)"):
        frames.next_frame()


def test_a_negative_size_is_refused():
    frames = FrameReader(max_frame_bytes=8)
    frames.feed(struct.pack(">i", -1))
    with pytest.raises(FrameTooLarge, match="frame of -1 bytes"):
        frames.next_frame()


def test_frames_are_bytes_whatever_the_reads_are():
    frames = FrameReader(max_frame_bytes=100)
    stream = sized(b"abc") + sized(b"defgh")
    frames.feed(bytearray(stream[:2]))
    frames.feed(memoryview(stream)[2:9])
    frames.feed(bytearray(stream[9:]))
    taken = [frames.next_frame(), frames.next_frame()]
    assert taken == [b"abc", b"defgh"]
    assert all(type(frame) is bytes for frame in taken)
    assert frames.next_frame() is None
