"""Workload 4: small-request round trips over one connection, p50 and p99.

One blocking TCP client (Nagle off) sends a request frame, reads the whole size-prefixed
answer, and only then sends the next: ApiVersions v3 (what every modern client sends first)
and Metadata v8 for one existing topic (the newest Metadata version nafka serves; every peer
serves it). The trio echo server gets the same frames and echoes them, which is the floor of a
Python server: a round trip with no framing, parsing or handling at all.

A broker may keep the answer to a request it saw before (fakebroker does, for ApiVersions and
Metadata, until the metadata changes), so Metadata is also timed with every request new: the
same request from a different client id each time, which no kept answer fits.
"""

from __future__ import annotations

import socket
import statistics
import time
from dataclasses import dataclass

from fakebroker.bench.clients import create_topics, unique
from fakebroker.bench.systems import Running
from fakebroker.protocol.framing import encode_request

API_VERSIONS = (18, 3)
METADATA = (3, 8)


@dataclass(frozen=True)
class RoundTrips:
    """Round-trip times in microseconds, per request kind: (p50, p99)."""

    api_versions: tuple[float, float]
    metadata: tuple[float, float]
    metadata_new: tuple[float, float]  # a different client id each time


def request_frames(topic: str) -> dict[str, bytes]:
    """The two request frames, size prefix included."""
    api_versions = encode_request(*API_VERSIONS, 1, "bench", {
        "client_software_name": "fakebroker-bench", "client_software_version": "0.1"})
    return {"api_versions": api_versions, "metadata": metadata_frame(topic, "bench")}


def metadata_frame(topic: str, client_id: str) -> bytes:
    """The Metadata v8 request frame for ``topic`` from ``client_id``."""
    return encode_request(*METADATA, 2, client_id, {
        "topics": [{"name": topic}], "allow_auto_topic_creation": False})


def _receive_exactly(sock: socket.socket, view: memoryview) -> None:
    while view:
        n = sock.recv_into(view)
        if not n:
            raise ConnectionError("the server closed the connection")
        view = view[n:]


def round_trips(sock: socket.socket, frames: bytes | list[bytes], count: int, check: bool
                ) -> list[float]:
    """``count`` sequential round trips of ``frames`` (one frame, or a list taken in turn);
    microseconds each. With ``check`` the answer must carry the request's correlation id."""
    sequence = [frames] if isinstance(frames, bytes) else frames
    size = bytearray(4)
    body = bytearray(1 << 16)
    times: list[float] = []
    clock = time.perf_counter_ns
    for n in range(count):
        frame = sequence[n % len(sequence)]
        correlation = frame[8:12]
        begin = clock()
        sock.sendall(frame)
        _receive_exactly(sock, memoryview(size))
        length = int.from_bytes(size, "big")
        if length > len(body):
            body = bytearray(length)
        _receive_exactly(sock, memoryview(body)[:length])
        times.append((clock() - begin) / 1000)
        if check and body[:4] != correlation:
            raise ConnectionError("answer with the wrong correlation id")
    return times


def percentiles(times: list[float]) -> tuple[float, float]:
    """(p50, p99) of ``times``."""
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return statistics.median(times), cuts[98]


def run(system: Running, count: int, warmup: int = 200) -> RoundTrips:
    """``warmup`` then ``count`` round trips of each request on one connection."""
    is_broker = system.name != "trio-echo"
    topic = unique("latency")
    if is_broker:
        create_topics(system, [topic])
    frames: dict[str, bytes | list[bytes]] = dict(request_frames(topic))
    frames["metadata_new"] = [metadata_frame(topic, f"bench-{n:06d}")
                              for n in range(warmup + count)]
    host, _, port = system.bootstrap.split(",")[0].rpartition(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        results = {}
        for kind, frame in frames.items():
            if isinstance(frame, list):  # the warm-up takes the first, the timing the rest
                round_trips(sock, frame[:warmup], warmup, is_broker)
                frame = frame[warmup:]
            else:
                round_trips(sock, frame, warmup, is_broker)
            results[kind] = percentiles(round_trips(sock, frame, count, is_broker))
    return RoundTrips(results["api_versions"], results["metadata"], results["metadata_new"])
