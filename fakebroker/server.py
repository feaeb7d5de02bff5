"""The trio side: a listener per broker, connections, in-order answers, waking fetches.

Guarantees:

* Each connection's responses go out in request order, while requests are handled
  concurrently (pipelining): a long-polling Fetch does not hold up requests behind it in
  handling, only in answering, exactly as on a Kafka broker. A request that cannot wait (its
  handler is a plain function, no fault rule or latency applies) and has no earlier answer
  pending before it is handled and written by the connection's reader itself: no task, no
  hand-over to the writer, on the common path of one request at a time.
* A frame larger than ``max_request_bytes`` (socket.request.max.bytes, 100 MiB by default), an
  unknown API key or version, or bytes that do not parse close only that connection, with the
  reason logged. An ApiVersions request above the served range gets UNSUPPORTED_VERSION at v0.
* Requests that need no answer (Produce with acks=0) get none.
* An idle broker parks every waiting fetch on one trio event; appends wake them.
* Fault rules (``fakebroker.faults``) apply at one seam, between decoding a request and its
  handler and between the handler and encoding its answer, so every API gets them; the
  broker's latency delays every request before it is handled.
* Every request read is recorded in the journal when it ends (``fakebroker.journal``).
* ``stop()`` takes the broker down: it stops listening at once (a client connecting is
  refused) and drops every connection. On Linux its port stays bound to it while it is down,
  so no other socket, of this process or another, can take the port; ``resume()`` listens on
  the same port again.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import logging
import math
import os
import socket
import struct
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import trio

from fakebroker.api import CACHEABLE, HANDLERS, served_versions
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.faults.placement import (
    TOP_LEVEL_EXTRAS,
    filter_request,
    inject_errors,
    layout_errors,
    request_groups,
    request_targets,
    request_transactional_ids,
)
from fakebroker.faults.rules import FaultPlan, FaultRegistry, RequestView
from fakebroker.journal import Journal, JournalEntry, answer_errors
from fakebroker.options import ClusterSettings
from fakebroker.protocol.codec import DecodeError
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.framing import (
    API_VERSIONS_KEY,
    RequestHeader,
    decode_request,
    encode_response,
    peek_header,
)
from fakebroker.protocol.specs import api_spec
from fakebroker.state.cluster import Broker, Cluster

log = logging.getLogger("fakebroker")

DEFAULT_MAX_REQUEST_BYTES = ClusterSettings.max_request_bytes
MAX_IN_FLIGHT = 256
_SIZE = struct.Struct(">i")
_API_KEY = struct.Struct(">h")
_CORRELATION = struct.Struct(">i")
_HEADER_PEEK = 8  # api key, api version, correlation id: the least a request can be
MAX_KEPT_ANSWERS = 1024  # per broker; all dropped when full (clients repeat few requests)
BACKLOG = 0xFFFF  # as trio's open_tcp_listeners: the system's maximum
# Linux stops a listening socket listening when it is shut down, and keeps its port bound if
# the port was bound explicitly (not as 0); without SO_REUSEADDR no other socket may then bind
# it. Elsewhere a broker going down closes its socket and binds its port again to come up.
KEEPS_PORT_WHILE_DOWN = sys.platform.startswith("linux")
# API key -> whether its handler is a plain function (answers without waiting).
_PLAIN_HANDLERS = {key: not inspect.iscoroutinefunction(handler)
                   for key, handler in HANDLERS.items()}


class AppendSignal:
    """Where waiting fetches park: all woken by the next append, each by its own deadline.

    A wait costs no cancel scope: trio's timeouts are cancellations (an exception raised
    through the waiter's frames), and nearly every long poll of an idle broker expires. One
    task, ``run_deadlines`` (``open_cluster`` starts it), wakes the waiters whose deadline
    passed, earliest first; a wait ends no earlier than its deadline unless an append comes.
    """

    def __init__(self) -> None:
        self._waiting: dict[trio.lowlevel.Task, int] = {}  # parked task -> its ticket
        self._deadlines: list[tuple[float, int, trio.lowlevel.Task]] = []  # a heap
        self._tickets = itertools.count()
        self._timer: trio.CancelScope | None = None  # the deadline task's sleep

    def fire(self) -> None:
        """Wake every waiting fetch (records were appended)."""
        waiting, self._waiting = self._waiting, {}
        self._deadlines.clear()
        for task in waiting:
            trio.lowlevel.reschedule(task)

    async def wait(self, timeout: float) -> None:
        """Return at the next ``fire`` or after ``timeout`` seconds, whichever is first."""
        task = trio.lowlevel.current_task()
        ticket = next(self._tickets)
        deadline = trio.current_time() + timeout
        self._waiting[task] = ticket
        heapq.heappush(self._deadlines, (deadline, ticket, task))
        if self._timer is not None and deadline < self._timer.deadline:
            self._timer.deadline = deadline

        def abort(_: object) -> trio.lowlevel.Abort:
            if self._waiting.get(task) == ticket:
                del self._waiting[task]
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    async def run_deadlines(self) -> None:
        """Wake each waiter at its deadline; runs until cancelled."""
        heap = self._deadlines
        while True:
            now = trio.current_time()
            while heap and heap[0][0] <= now:
                _, ticket, task = heapq.heappop(heap)
                if self._waiting.get(task) == ticket:
                    del self._waiting[task]
                    trio.lowlevel.reschedule(task)
            with trio.CancelScope(deadline=heap[0][0] if heap else math.inf) as self._timer:
                await trio.sleep_forever()
            self._timer = None


@dataclass
class Services:
    """What every broker of one cluster shares besides the cluster state."""

    signal: AppendSignal = field(default_factory=AppendSignal)
    faults: FaultRegistry = field(default_factory=FaultRegistry)
    journal: Journal = field(default_factory=Journal)


@dataclass(slots=True)
class Reply:
    """The answer slot of one request on one connection, filled when handled."""

    done: trio.Event | None = None  # set when handled (None: answered by the reader itself)
    frame: bytes | None = None
    close: str | None = None
    throttle_s: float = 0.0  # the connection's next answers wait this long (KIP-219)
    hangup: trio.Event | None = None  # set when the peer closed the connection


@dataclass(frozen=True, slots=True)
class _Kept:
    """An answer a broker keeps (a ``CACHEABLE`` API's), with what its journal records."""

    frame: bytes  # the whole answer; its correlation id is rewritten per request
    client_id: str | None
    targets: tuple[str, ...]
    errors: tuple[str, ...]


@dataclass(slots=True)
class _Link:
    """One client connection: its stream, and how many answers wait to be written."""

    stream: trio.SocketStream
    fd: int
    hangup: trio.Event  # set when the peer closed the connection
    queued: int = 0  # answers handed to the writer and not yet written

    async def write(self, data: bytes | bytearray) -> None:
        """Write ``data`` whole. Answers are small and the socket's buffer is usually free:
        a direct non-blocking write then takes it all, without a round through trio's
        scheduler; what it does not take goes by ``send_all``."""
        try:
            sent = os.write(self.fd, data)
        except BlockingIOError:
            sent = 0
        if sent < len(data):
            await self.stream.send_all(memoryview(data)[sent:])


class BrokerServer:
    """Serves one broker of a cluster on one listening socket."""

    def __init__(
        self, cluster: Cluster, broker: Broker, services: Services,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ):
        self.cluster = cluster
        self.broker = broker
        self.services = services
        self.max_request_bytes = max_request_bytes
        self.connections: set[trio.SocketStream] = set()
        self._connection_ids = itertools.count(1)
        self._scope: trio.CancelScope | None = None
        self._listener: trio.SocketListener | None = None  # set by serve()
        self._down: trio.Event | None = None  # while down: set when it comes up again
        # Answers of CACHEABLE APIs by request bytes (correlation id left out), valid for
        # the cluster generation ``_kept_generation``.
        self._kept: dict[bytes, _Kept] = {}
        self._kept_generation = -1

    async def serve(self, listener: trio.SocketListener, *,
                    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Accept and serve connections on ``listener`` (from ``open_listener``) until
        cancelled, then close it; nothing is accepted while the broker is down (from
        ``stop()`` to ``resume()``). Started (``nursery.start``) once ``stop()`` can reach
        the listener."""
        self._listener = listener
        if self._down is not None:  # taken down before it started serving
            self._stop_listening(listener)
        task_status.started()
        try:
            while True:
                if self._down is not None:
                    await self._down.wait()
                    continue
                listener = self._listener  # a new one after resume() where no port is kept
                with trio.CancelScope() as self._scope:
                    async with trio.open_nursery() as nursery:
                        while True:
                            try:
                                stream = await listener.accept()
                            except (OSError, trio.ClosedResourceError):
                                if self._down is None:
                                    raise
                                break  # stopped with this accept already scheduled
                            nursery.start_soon(self.connection, stream)
        finally:
            self._scope = None
            await trio.aclose_forcefully(self._listener)

    def stop(self) -> None:
        """Take the broker down: stop listening at once (new connections are refused when
        this returns) and drop every connection, without answering what is pending.

        On Linux the port stays bound to this broker while it is down, so no other socket can
        take it and ``resume()`` listens on it again without a race."""
        if self._down is not None:
            return
        self._down = trio.Event()
        if self._scope is not None:
            self._scope.cancel()  # before the socket changes: the accept ends cancelled
        if self._listener is not None:
            self._stop_listening(self._listener)

    async def resume(self) -> None:
        """Bring the broker back up after ``stop()``: it listens on its port again when this
        returns."""
        if self._down is None:
            return
        if self._listener is not None:
            if KEEPS_PORT_WHILE_DOWN:
                sock = self._listener.socket
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.listen(BACKLOG)
                if sock.getsockname()[1] != self.broker.port:  # a port not bound explicitly
                    raise RuntimeError(f"broker {self.broker.id} lost its port "
                                       f"{self.broker.port}: serve a listener from "
                                       "open_listener")
            else:
                self._listener = await open_listener(self.broker.host, self.broker.port)
        down, self._down = self._down, None
        down.set()

    @staticmethod
    def _stop_listening(listener: trio.SocketListener) -> None:
        """No longer listen on ``listener``'s port; on Linux keep it bound, and to this
        socket alone (connections still waiting to be accepted are reset)."""
        sock = listener.socket
        if KEEPS_PORT_WHILE_DOWN:
            sock.shutdown(socket.SHUT_RDWR)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        else:
            sock.close()

    async def connection(self, stream: trio.SocketStream) -> None:
        """Read frames, handle each in its own task, write answers in order.

        No exception leaves the connection's nursery: every way a connection ends (peer gone,
        a reason to close it) is handled inside its task, so one connection cannot disturb
        the listener or any other connection.
        """
        self.connections.add(stream)
        link = _Link(stream, stream.socket.fileno(), trio.Event())
        send, receive = trio.open_memory_channel[Reply](MAX_IN_FLIGHT)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write_replies, link, receive, nursery.cancel_scope)
                await self._read_requests(link, send, nursery)
        finally:
            self.connections.discard(stream)
            await trio.aclose_forcefully(stream)

    async def _read_requests(
        self, link: _Link, send: trio.MemorySendChannel[Reply], nursery: trio.Nursery,
    ) -> None:
        peer_host = "/" + str(link.stream.socket.getpeername()[0])
        connection_id = next(self._connection_ids)
        buffer = bytearray()
        async with send:
            try:
                while data := await link.stream.receive_some(1 << 20):
                    buffer += data
                    while frames := self._whole_frames(buffer):
                        for frame in frames:
                            if not await self._take(frame, link, send, nursery, peer_host,
                                                    connection_id):
                                return
                link.hangup.set()  # requests read are still handled; hung ones end here
            except ConnectionClosed as exc:
                self._close(nursery.cancel_scope, str(exc))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                nursery.cancel_scope.cancel()

    async def _take(self, frame: bytes, link: _Link, send: trio.MemorySendChannel[Reply],
                    nursery: trio.Nursery, peer_host: str, connection_id: int) -> bool:
        """Handle one request: at once when it cannot wait and no answer is pending before
        it, else in a task of its own with its answer queued for the writer. False when the
        connection is to close."""
        if link.queued == 0 and self._answers_at_once(frame):
            answer = self._answer_now(frame, peer_host, connection_id)
            if answer.close is not None:
                self._close(nursery.cancel_scope, answer.close)
                return False
            if answer.frame is not None:
                await link.write(answer.frame)
            return True
        reply = Reply(trio.Event(), hangup=link.hangup)
        link.queued += 1
        await send.send(reply)
        nursery.start_soon(self._answer, frame, reply, peer_host, connection_id)
        return True

    def _answers_at_once(self, frame: bytes) -> bool:
        """Whether the reader may handle this request itself rather than in a task of its own
        (when no earlier answer is pending): its API's handler is a plain function (it never
        waits: everything but Fetch, JoinGroup and SyncGroup) and no fault rule or broker
        latency can make it wait."""
        if len(frame) < _HEADER_PEEK or self.services.faults.rules or self.broker.latency_ms:
            return False
        return _PLAIN_HANDLERS.get(_API_KEY.unpack_from(frame)[0], False)

    def _close(self, scope: trio.CancelScope, reason: str) -> None:
        log.warning("broker %d: closing a connection: %s", self.broker.id, reason)
        scope.cancel()

    def _whole_frames(self, buffer: bytearray) -> list[bytes]:
        """The whole request frames (without size prefix) at the start of ``buffer``, taken
        out of it; a partial frame stays for the next read. ``ConnectionClosed`` when the
        first frame is over the size limit."""
        frames = []
        while len(buffer) >= 4:
            size = _SIZE.unpack_from(buffer)[0]
            if size < 0 or size > self.max_request_bytes:
                if frames:
                    break  # answered first; the next call refuses it
                raise ConnectionClosed(
                    f"frame of {size} bytes is over socket.request.max.bytes "
                    f"({self.max_request_bytes})"
                )
            if len(buffer) < 4 + size:
                break
            frames.append(bytes(buffer[4 : 4 + size]))
            del buffer[: 4 + size]
        return frames

    async def _write_replies(
        self, link: _Link, receive: trio.MemoryReceiveChannel[Reply], scope: trio.CancelScope,
    ) -> None:
        """Send answers in request order; the connection ends when the reader is done."""
        async with receive:
            try:
                async for reply in receive:
                    assert reply.done is not None
                    await reply.done.wait()
                    if reply.close is not None:
                        self._close(scope, reply.close)
                        return
                    if reply.frame is not None:
                        await link.write(reply.frame)
                    if reply.throttle_s:
                        await trio.sleep(reply.throttle_s)
                    link.queued -= 1
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        scope.cancel()

    async def _answer(self, frame: bytes, reply: Reply, peer_host: str,
                      connection_id: int = 0) -> None:
        try:
            reply.frame = await self.handle_frame(frame, peer_host, connection_id, reply)
        except Exception as exc:  # a handler bug must not take the broker down
            reply.close = self._closing_reason(exc)
        finally:
            if reply.done is not None:
                reply.done.set()

    def _answer_now(self, frame: bytes, peer_host: str, connection_id: int) -> Reply:
        """``_answer`` for a request the reader answers itself (see ``_answers_at_once``)."""
        reply = Reply()
        try:
            reply.frame = self.handle_now(frame, peer_host, connection_id)
        except Exception as exc:  # a handler bug must not take the broker down
            reply.close = self._closing_reason(exc)
        return reply

    def _closing_reason(self, exc: Exception) -> str:
        """Why the connection closes after handling a request raised ``exc`` (a bug is
        logged with its traceback)."""
        if isinstance(exc, ConnectionClosed):
            return str(exc)
        log.exception("broker %d: request failed", self.broker.id, exc_info=exc)
        return f"internal error: {exc!r}"

    async def handle_frame(self, frame: bytes, peer_host: str = "", connection_id: int = 0,
                           reply: Reply | None = None) -> bytes | None:
        """One request frame (without size prefix) in, one response frame (or None) out."""
        read = self._decode(frame)
        if isinstance(read, bytes | bytearray):
            return read
        header, request = read
        entry = self.services.journal.start(
            self.broker.id, connection_id, header.client_id, peer_host,
            api_spec(header.api_key).name, header.api_key, header.api_version,
            header.correlation_id)
        started = time.perf_counter()
        try:
            response = await self._respond(header, request, peer_host, entry, reply)
            if response is None:
                entry.outcome = "no answer"
                return None
            entry.errors = answer_errors(header.api_key, header.api_version, response)
            return encode_response(header.api_key, header.api_version, header.correlation_id,
                                   response)
        except ConnectionClosed as exc:
            if entry.outcome not in ("dropped", "hung"):
                entry.outcome = f"closed: {exc}"
            raise
        except trio.Cancelled:
            if entry.outcome != "hung":
                entry.outcome = "cancelled: connection closed"
            raise
        finally:
            entry.elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
            self.services.journal.record(entry)

    def handle_now(self, frame: bytes, peer_host: str = "", connection_id: int = 0
                   ) -> bytes | None:
        """``handle_frame`` without a coroutine or a journal entry object, for a request
        that cannot wait: its handler is a plain function and no fault rule or broker latency
        applies (the caller checks). The same answer and the same journal record. A
        ``CACHEABLE`` API's answer is kept and given again for the same request bytes until
        the cluster's metadata changes."""
        key = _kept_key(frame) if _API_KEY.unpack_from(frame)[0] in CACHEABLE else None
        if key is not None:
            kept = self._kept_answer(key, frame, peer_host, connection_id)
            if kept is not None:
                return kept
        generation = self.cluster.generation
        read = self._decode(frame)
        if isinstance(read, bytes | bytearray):
            return read
        header, request = read
        journal = self.services.journal
        seq, wall_time = journal.begin()
        started = time.perf_counter()
        api_key, version = header.api_key, header.api_version
        targets: tuple[str, ...] = ()
        errors: tuple[str, ...] = ()
        outcome = "answered"
        try:
            targets = tuple(map(_target_text, request_targets(api_key, version, request,
                                                              self._topic_name)))
            response = HANDLERS[api_key](request, RequestContext(
                self.cluster, self.broker, header, self.services.signal.wait, peer_host))
            if response is None:
                outcome = "no answer"
                return None
            errors = tuple(answer_errors(api_key, version, response))
            answer = encode_response(api_key, version, header.correlation_id, response)
            if key is not None and generation == self.cluster.generation:
                self._keep(key, _Kept(bytes(answer), header.client_id, targets, errors))
            return answer
        except ConnectionClosed as exc:
            outcome = f"closed: {exc}"
            raise
        finally:
            journal.add(seq, wall_time, self.broker.id, connection_id, header.client_id,
                        peer_host, api_spec(api_key).name, api_key, version,
                        header.correlation_id, targets, errors,
                        round((time.perf_counter() - started) * 1000, 3), None, outcome)

    def _kept_answer(self, key: bytes, frame: bytes, peer_host: str, connection_id: int
                     ) -> bytearray | None:
        """The kept answer to this request, journaled as answered; None if none."""
        if self._kept_generation != self.cluster.generation:
            self._kept.clear()
            self._kept_generation = self.cluster.generation
            return None
        kept = self._kept.get(key)
        if kept is None:
            return None
        started = time.perf_counter()
        api_key, version, correlation_id = peek_header(frame)
        answer = bytearray(kept.frame)
        _CORRELATION.pack_into(answer, 4, correlation_id)
        journal = self.services.journal
        seq, wall_time = journal.begin()
        journal.add(seq, wall_time, self.broker.id, connection_id, kept.client_id, peer_host,
                    api_spec(api_key).name, api_key, version, correlation_id, kept.targets,
                    kept.errors,
                    round((time.perf_counter() - started) * 1000, 3), None, "answered")
        return answer

    def _keep(self, key: bytes, kept: _Kept) -> None:
        if len(self._kept) >= MAX_KEPT_ANSWERS:
            self._kept.clear()
        self._kept[key] = kept

    def _decode(self, frame: bytes) -> tuple[RequestHeader, Any] | bytes:
        """A request's header and body; or its answer already (an ApiVersions request above
        the served range); ``ConnectionClosed`` for a request that cannot be served or
        parsed."""
        try:
            api_key, version, correlation_id = peek_header(frame)
        except DecodeError as exc:
            raise ConnectionClosed(f"malformed request ({len(frame)} bytes): {exc}") from None
        versions = served_versions(api_key)
        if versions is None:
            raise ConnectionClosed(f"unsupported API key {api_key}")
        if version not in versions:
            if api_key == API_VERSIONS_KEY and version > versions.stop - 1:
                return unsupported_api_versions(correlation_id, versions)
            raise ConnectionClosed(f"unsupported version {version} of API key {api_key}")
        try:
            return decode_request(frame)
        except (DecodeError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ConnectionClosed(
                f"malformed request (api {api_key} v{version}): {exc}"
            ) from exc

    async def _respond(self, header: RequestHeader, request: Any, peer_host: str,
                       entry: JournalEntry, reply: Reply | None) -> Any:
        """The answer body after latency and faults; raises ``ConnectionClosed`` to drop."""
        api_key, version = header.api_key, header.api_version
        context = RequestContext(self.cluster, self.broker, header,
                                 self.services.signal.wait, peer_host)
        targets = request_targets(api_key, version, request, self._topic_name)
        entry.targets = [_target_text(t) for t in targets]
        plan: FaultPlan | None = None
        if self.services.faults.rules:
            plan = self.services.faults.plan(RequestView(
                api_key, entry.api, version, self.broker.id, header.client_id, request,
                targets, request_groups(api_key, request),
                request_transactional_ids(api_key, request)))
        delay_ms = self.broker.latency_ms + (plan.delay_ms if plan else 0)
        if delay_ms:
            await trio.sleep(delay_ms / 1000)
        if plan is None:
            return await _call(api_key, request, context)
        entry.fault = plan.describe()
        if plan.hang:
            entry.outcome = "hung"
            await (reply.hangup.wait() if reply is not None and reply.hangup is not None
                   else trio.sleep_forever())
            raise ConnectionClosed(f"fault {plan.describe()}: the peer left a hung request")
        if plan.drop and not plan.apply_then:
            entry.outcome = "dropped"
            raise ConnectionClosed(f"fault {plan.describe()}: connection dropped")
        response = await self._faulted_response(api_key, version, request, context, plan,
                                                targets)
        if plan.drop:
            entry.outcome = "dropped"
            raise ConnectionClosed(f"fault {plan.describe()}: applied, connection dropped")
        if plan.throttle_ms and response is not None:
            response["throttle_time_ms"] = plan.throttle_ms
            if reply is not None:
                reply.throttle_s = plan.throttle_ms / 1000
        return response

    async def _faulted_response(self, api_key: int, version: int, request: Any,
                                context: RequestContext, plan: FaultPlan,
                                targets: list[Any]) -> Any:
        if not plan.errors:
            return await _call(api_key, request, context)
        layout = layout_errors(plan, api_key, version, targets)
        if plan.apply_then:
            response = await _call(api_key, request, context)
        elif layout.top is not None:
            response = dict(TOP_LEVEL_EXTRAS.get(api_key, {}))
            if api_key == 11:  # JoinGroup: the member id comes back as sent
                response["member_id"] = request.get("member_id", "")
        else:
            response = await _call(api_key, filter_request(
                api_key, version, request, layout, self._topic_name), context)
        if response is None:  # acks=0: Kafka closes the connection of a failed produce
            raise ConnectionClosed(f"acks=0 produce failed: fault {plan.describe()}")
        return inject_errors(api_key, version, request, dict(response), layout,
                             self._topic_name)

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.cluster.topic_by_id(topic_id)
        return topic.name if topic is not None else None


async def open_listener(host: str, port: int) -> trio.SocketListener:
    """A socket listening on ``host``'s first address and ``port`` (0: a free port the OS
    picks), with SO_REUSEADDR as trio's listeners.

    On Linux the port is bound explicitly even when the OS picks it, so that it stays bound
    when ``BrokerServer.stop`` has the socket stop listening: a first socket takes a free
    port, and holds it until the listening socket is bound to it too (Linux lets two sockets
    with SO_REUSEADDR bind one port while neither listens), so no other can take it between.
    """
    (family, type_, proto, _, address), *_ = await trio.socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    holder = None
    sock = _listening_socket(family, type_, proto)
    try:
        if port == 0 and KEEPS_PORT_WHILE_DOWN:
            holder = _listening_socket(family, type_, proto)
            await holder.bind(address)
            address = (address[0], holder.getsockname()[1], *address[2:])
        await sock.bind(address)
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    finally:
        if holder is not None:
            holder.close()
    return trio.SocketListener(sock)


def _listening_socket(family: int, type_: int, proto: int) -> trio.socket.SocketType:
    """A socket to listen on, set up as trio's ``open_tcp_listeners`` sets its own."""
    sock = trio.socket.socket(family, type_, proto)
    if sys.platform != "win32":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    return sock


async def _call(api_key: int, request: Any, context: RequestContext) -> Any:
    response: Any = HANDLERS[api_key](request, context)
    if not _PLAIN_HANDLERS[api_key]:
        response = await response
    return response


def _kept_key(frame: bytes) -> bytes:
    """A request's bytes without its correlation id: what a kept answer is found by."""
    return frame[:4] + frame[8:]


def _target_text(target: Any) -> str:
    if target.group is not None and target.topic is None:
        return f"group:{target.group}"
    if target.partition is None:
        return str(target.topic)
    return f"{target.topic}/{target.partition}"


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
