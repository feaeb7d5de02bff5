"""The trio side: a listener per broker, connections, in-order answers, waking fetches.

Guarantees:

* Each connection's responses go out in request order, while requests are handled
  concurrently (pipelining): a long-polling Fetch does not hold up requests behind it in
  handling, only in answering, exactly as on a Kafka broker.
* A frame larger than ``max_request_bytes`` (socket.request.max.bytes, 100 MiB by default), an
  unknown API key or version, or bytes that do not parse close only that connection, with the
  reason logged. An ApiVersions request above the served range gets UNSUPPORTED_VERSION at v0.
* Requests that need no answer (Produce with acks=0) get none.
* An idle broker parks every waiting fetch on one trio event; appends wake them.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any

import trio

from fakebroker.api import HANDLERS, served_versions
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.protocol.codec import DecodeError
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.framing import (
    API_VERSIONS_KEY,
    decode_request,
    encode_response,
    peek_header,
)
from fakebroker.state.cluster import Broker, Cluster

log = logging.getLogger("fakebroker")

DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024
MAX_IN_FLIGHT = 256
_SIZE = struct.Struct(">i")


@dataclass
class AppendSignal:
    """One trio event per append generation: waiting fetches park on it, appends set it."""

    event: trio.Event = field(default_factory=trio.Event)

    def fire(self) -> None:
        self.event.set()
        self.event = trio.Event()

    async def wait(self, timeout: float) -> None:
        with trio.move_on_after(timeout):
            await self.event.wait()


@dataclass(slots=True)
class Reply:
    """The answer slot of one request on one connection, filled when handled."""

    done: trio.Event = field(default_factory=trio.Event)
    frame: bytes | None = None
    close: str | None = None


class BrokerServer:
    """Serves one broker of a cluster on one listening socket."""

    def __init__(
        self, cluster: Cluster, broker: Broker, signal: AppendSignal,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ):
        self.cluster = cluster
        self.broker = broker
        self.signal = signal
        self.max_request_bytes = max_request_bytes
        self.connections: set[trio.SocketStream] = set()

    async def serve(self, listener: trio.SocketListener) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                stream = await listener.accept()
                nursery.start_soon(self.connection, stream)

    async def connection(self, stream: trio.SocketStream) -> None:
        """Read frames, handle each in its own task, write answers in order.

        No exception leaves the connection's nursery: every way a connection ends (peer gone,
        a reason to close it) is handled inside its task, so one connection cannot disturb
        the listener or any other connection.
        """
        self.connections.add(stream)
        send, receive = trio.open_memory_channel[Reply](MAX_IN_FLIGHT)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write_replies, stream, receive, nursery.cancel_scope)
                await self._read_requests(stream, send, nursery)
        finally:
            self.connections.discard(stream)
            await trio.aclose_forcefully(stream)

    async def _read_requests(
        self, stream: trio.SocketStream, send: trio.MemorySendChannel[Reply],
        nursery: trio.Nursery,
    ) -> None:
        peer_host = "/" + str(stream.socket.getpeername()[0])
        async with send:
            try:
                async for frame in self._frames(stream):
                    reply = Reply()
                    await send.send(reply)
                    nursery.start_soon(self._answer, frame, reply, peer_host)
            except ConnectionClosed as exc:
                self._close(nursery.cancel_scope, str(exc))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                nursery.cancel_scope.cancel()

    def _close(self, scope: trio.CancelScope, reason: str) -> None:
        log.warning("broker %d: closing a connection: %s", self.broker.id, reason)
        scope.cancel()

    async def _frames(self, stream: trio.SocketStream) -> AsyncIterator[bytes]:
        buffer = bytearray()
        while True:
            while len(buffer) >= 4:
                size = _SIZE.unpack_from(buffer)[0]
                if size < 0 or size > self.max_request_bytes:
                    raise ConnectionClosed(
                        f"frame of {size} bytes is over socket.request.max.bytes "
                        f"({self.max_request_bytes})"
                    )
                if len(buffer) < 4 + size:
                    break
                frame = bytes(buffer[4 : 4 + size])
                del buffer[: 4 + size]
                yield frame
            data = await stream.receive_some(1 << 20)
            if not data:
                return
            buffer += data

    async def _write_replies(
        self, stream: trio.SocketStream, receive: trio.MemoryReceiveChannel[Reply],
        scope: trio.CancelScope,
    ) -> None:
        """Send answers in request order; the connection ends when the reader is done."""
        async with receive:
            try:
                async for reply in receive:
                    await reply.done.wait()
                    if reply.close is not None:
                        self._close(scope, reply.close)
                        return
                    if reply.frame is not None:
                        await stream.send_all(reply.frame)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        scope.cancel()

    async def _answer(self, frame: bytes, reply: Reply, peer_host: str) -> None:
        try:
            reply.frame = await self.handle_frame(frame, peer_host)
        except ConnectionClosed as exc:
            reply.close = str(exc)
        except Exception as exc:  # a handler bug must not take the broker down
            log.exception("broker %d: request failed", self.broker.id)
            reply.close = f"internal error: {exc!r}"
        finally:
            reply.done.set()

    async def handle_frame(self, frame: bytes, peer_host: str = "") -> bytes | None:
        """One request frame (without size prefix) in, one response frame (or None) out."""
        api_key, version, correlation_id = peek_header(frame)
        versions = served_versions(api_key)
        if versions is None:
            raise ConnectionClosed(f"unsupported API key {api_key}")
        if version not in versions:
            if api_key == API_VERSIONS_KEY and version > versions.stop - 1:
                return unsupported_api_versions(correlation_id, versions)
            raise ConnectionClosed(f"unsupported version {version} of API key {api_key}")
        try:
            header, request = decode_request(frame)
        except (DecodeError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ConnectionClosed(
                f"malformed request (api {api_key} v{version}): {exc}"
            ) from exc
        context = RequestContext(self.cluster, self.broker, header, self.signal.wait,
                                 peer_host)
        response: Any = HANDLERS[api_key](request, context)
        if isinstance(response, Awaitable):
            response = await response
        if response is None:
            return None
        return encode_response(api_key, version, correlation_id, response)


def unsupported_api_versions(correlation_id: int, versions: range) -> bytes:
    """ApiVersions v0 answer for a request above the served range (KIP-511)."""
    body = {
        "error_code": error_code("UNSUPPORTED_VERSION"),
        "api_keys": [
            {"api_key": API_VERSIONS_KEY, "min_version": versions.start,
             "max_version": versions.stop - 1}
        ],
    }
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)
