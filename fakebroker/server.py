"""The trio side: a broker's listeners, connections, in-order answers, waking fetches.

I/O only: what a request gets — its decoding, faults, handler, answer and journal entry — is
the pipeline's business (``fakebroker.pipeline``); the server reads frames, hands each to its
broker's pipeline and does what the outcome says.

Guarantees:

* A broker serves each of its listeners (``serve``, once per listening socket) under the
  listener's name, its security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL): a
  connection's ``Peer.listener`` is that name. An SSL or SASL_SSL listener (served with an
  ``ssl.SSLContext``) runs TLS over trio's ``SSLStream``: a connection whose TLS handshake
  fails (a client without the certificate the listener requires, one that does not trust the
  broker's) is closed with one warning line, and no other connection notices; on an SSL
  listener a client certificate's subject is the connection's principal
  (``User:CN=...``, ``fakebroker.security.tls.principal``). A connection that has not
  finished its handshake within ``TLS_HANDSHAKE_TIMEOUT`` (10 minutes: Kafka closes a
  connection idle for ``connections.max.idle.ms``, 10 minutes by default, handshake or not) is
  closed likewise. What a SASL listener asks before
  any other request is the pipeline's business: the peer says which listener it came on.
* Each connection's requests are handled one at a time, in request order, and none is
  handled before the answer of the one before it was written: a Kafka broker mutes a
  connection from reading a request until its answer is sent. So a long-polling Fetch, a
  held, delayed or hung request holds up the requests pipelined behind it on its connection
  (a client's second Produce is not appended before its first), and answers go out in
  request order. The connection is still read meanwhile (up to ``MAX_IN_FLIGHT`` frames), so
  a peer that leaves is seen at once. A request that cannot wait (``Pipeline.answer_now``
  answers it) and has no earlier request pending before it is handled and written by the
  connection's reader itself: no hand-over to the answering task, on the common path of one
  request at a time.
* A frame larger than ``max_request_bytes`` (socket.request.max.bytes, 100 MiB by default),
  and every request the pipeline closes the connection for (an unknown API key or version,
  bytes that do not parse, a fault's drop, a handler's bug), close only that connection,
  with one warning line naming the reason.
* Requests that need no answer (Produce with acks=0) get none.
* A throttled answer (a fault's ``throttle_ms``) mutes the connection: its next answers wait
  that long after it (KIP-219).
* A connection from an IP over its ``connection_creation_rate`` (KIP-612; the cluster's
  ``connection_throttle_ms`` decides) is held unread for the throttle time, then closed
  before any TLS handshake, as Kafka's acceptor closes a throttled connection; nothing of it
  is journaled.
* When the peer closes its side, requests already read are still handled, and hung or held
  ones end (``Peer.gone``). When a connection ends, however it ends, the pipeline is told
  (``Pipeline.connection_closed``).
* An idle broker parks every waiting fetch on one trio event; appends wake them.
* ``stop()`` takes the broker down: it stops listening at once on every listener (a client
  connecting is refused) and drops every connection. On Linux its ports stay bound to it while
  it is down, so no other socket, of this process or another, can take them; ``resume()``
  listens on the same ports again.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import math
import os
import socket
import ssl  # trio imports it already: no cost to a cluster without TLS
import sys
from typing import TYPE_CHECKING, TextIO

import trio

from fakebroker.options import ClusterSettings
from fakebroker.outcomes import WAIT, Close, Outcome, Peer, Throttled
from fakebroker.protocol.frames import FrameReader, FrameTooLarge

if TYPE_CHECKING:
    from fakebroker.faults.rules import FaultRegistry
    from fakebroker.journal import Journal
    from fakebroker.pipeline import Pipeline
    from fakebroker.state.cluster import Broker, Cluster

log = logging.getLogger("fakebroker")

DEFAULT_MAX_REQUEST_BYTES = ClusterSettings.max_request_bytes
MAX_IN_FLIGHT = 256
# Seconds a TLS connection may take to finish its handshake: Kafka's connections.max.idle.ms
# default (Kafka closes a connection idle that long whether or not its handshake is done).
TLS_HANDSHAKE_TIMEOUT = 600
BACKLOG = 0xFFFF  # as trio's open_tcp_listeners: the system's maximum
# Linux stops a listening socket listening when it is shut down, and keeps its port bound if
# the port was bound explicitly (not as 0); without SO_REUSEADDR no other socket may then bind
# it. Elsewhere a broker going down closes its socket and binds its port again to come up.
KEEPS_PORT_WHILE_DOWN = sys.platform.startswith("linux")


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


class Services:
    """What every broker of one cluster shares besides the cluster state: the append signal,
    the fault rules (seeded with ``settings.seed``) and the journal (``journal_capacity``
    entries, each also written to ``journal_sink`` when given).

    The rules and the journal are made on first use (a broker's first request, a rule added,
    the journal read): a cluster starts serving without importing them."""

    def __init__(self, settings: ClusterSettings | None = None,
                 journal_sink: TextIO | None = None) -> None:
        self.signal = AppendSignal()
        self._settings = settings or ClusterSettings()
        self._journal_sink = journal_sink

    @functools.cached_property
    def faults(self) -> FaultRegistry:
        from fakebroker.faults.rules import FaultRegistry

        return FaultRegistry(self._settings.seed)

    @functools.cached_property
    def journal(self) -> Journal:
        from fakebroker.journal import Journal

        return Journal(self._settings.journal_capacity, self._journal_sink)


class _Link:
    """One client connection: its stream, its peer, how many requests wait for their answer
    to be written."""

    __slots__ = ("stream", "fd", "peer", "queued")

    def __init__(self, stream: trio.abc.Stream, fd: int | None, peer: Peer) -> None:
        self.stream = stream
        self.fd = fd  # the socket's, for direct writes; None over TLS
        self.peer = peer
        self.queued = 0  # requests handed to the answering task and not yet answered

    async def write(self, data: bytes | bytearray) -> None:
        """Write ``data`` whole. Answers are small and the socket's buffer is usually free:
        a direct non-blocking write then takes it all, without a round through trio's
        scheduler; what it does not take goes by ``send_all`` (all of it over TLS)."""
        sent = 0
        if self.fd is not None:
            try:
                sent = os.write(self.fd, data)
            except BlockingIOError:
                pass
        if sent < len(data):
            await self.stream.send_all(memoryview(data)[sent:])


class _Endpoint:
    """One listening socket of a broker: its listener's name (its security protocol), its
    TLS context (None without TLS), its port, and the cancel scope of its connections while
    it accepts them."""

    __slots__ = ("name", "tls", "socket", "port", "scope")

    def __init__(self, name: str, tls: ssl.SSLContext | None,
                 listener: trio.SocketListener) -> None:
        self.name = name
        self.tls = tls
        self.socket = listener
        self.port: int = listener.socket.getsockname()[1]
        self.scope: trio.CancelScope | None = None


class BrokerServer:
    """Serves one broker of a cluster on its listening sockets, one per listener."""

    def __init__(
        self, cluster: Cluster, broker: Broker, services: Services,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ):
        self.broker = broker
        self.max_request_bytes = max_request_bytes
        self._cluster = cluster
        self._services = services
        self._connection_ids = itertools.count(1)
        self._endpoints: list[_Endpoint] = []  # one per serve() call
        self._down: trio.Event | None = None  # while down: set when it comes up again

    @functools.cached_property
    def pipeline(self) -> Pipeline:
        """The broker's request path, made for its first request: the modules it needs
        (decoding, faults, handlers, the answers' encoding) are imported then, or before by
        ``serve``'s import-ahead thread, not while the broker starts."""
        from fakebroker.pipeline import Pipeline

        services = self._services
        return Pipeline(self._cluster, self.broker, services.faults, services.journal,
                        services.signal.wait)

    async def serve(self, listener: trio.SocketListener, *, name: str = "PLAINTEXT",
                    tls: ssl.SSLContext | None = None,
                    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Accept and serve connections on ``listener`` (from ``open_listener``), the broker's
        listener ``name`` (TLS with ``tls``), until cancelled, then close it; nothing is
        accepted while the broker is down (from ``stop()`` to ``resume()``). Started
        (``nursery.start``) once ``stop()`` can reach the listener."""
        endpoint = _Endpoint(name, tls, listener)
        self._endpoints.append(endpoint)
        if self._down is not None:  # taken down before it started serving
            self._stop_listening(listener)
        task_status.started()
        try:
            while True:
                if self._down is not None:
                    await self._down.wait()
                    continue
                listener = endpoint.socket  # a new one after resume() where no port is kept
                with trio.CancelScope() as endpoint.scope:
                    async with trio.open_nursery() as nursery:
                        while True:
                            try:
                                stream = await listener.accept()
                            except (OSError, trio.ClosedResourceError):
                                if self._down is None:
                                    raise
                                break  # stopped with this accept already scheduled
                            nursery.start_soon(self.connection, stream, endpoint)
        finally:
            endpoint.scope = None
            endpoint.socket.socket.close()  # no await: see connection()

    def stop(self) -> None:
        """Take the broker down: stop listening at once on every listener (new connections
        are refused when this returns) and drop every connection, without answering what is
        pending.

        On Linux the ports stay bound to this broker while it is down, so no other socket can
        take them and ``resume()`` listens on them again without a race."""
        if self._down is not None:
            return
        self._down = trio.Event()
        for endpoint in self._endpoints:
            if endpoint.scope is not None:
                endpoint.scope.cancel()  # before the socket changes: the accept ends cancelled
            self._stop_listening(endpoint.socket)

    async def resume(self) -> None:
        """Bring the broker back up after ``stop()``: it listens on its ports again when this
        returns."""
        if self._down is None:
            return
        for endpoint in self._endpoints:
            if KEEPS_PORT_WHILE_DOWN:
                sock = endpoint.socket.socket
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.listen(BACKLOG)
                if sock.getsockname()[1] != endpoint.port:  # a port not bound explicitly
                    raise RuntimeError(f"broker {self.broker.id} lost its {endpoint.name} "
                                       f"port {endpoint.port}: serve a listener from "
                                       "open_listener")
            else:
                endpoint.socket = await open_listener(self.broker.host, endpoint.port)
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

    async def connection(self, stream: trio.SocketStream, endpoint: _Endpoint) -> None:
        """Read frames; answer each in turn, the next once the answer before it is written;
        over TLS once the handshake is done when ``endpoint``'s listener has TLS.

        No exception leaves the connection's nursery: every way a connection ends (peer gone,
        a failed TLS handshake, a reason to close it) is handled inside its task, so one
        connection cannot disturb the listener or any other connection. An error that does
        leave it (a bug, a journal sink that fails) ends the cluster: nothing awaits on its
        way out, since an await in a cancelled scope (the cluster stopping meanwhile) would
        raise ``Cancelled`` over it and lose it.
        """
        peer = None
        try:
            try:
                host = stream.socket.getpeername()[0]
            except OSError:  # the peer is gone already
                return
            throttle_ms = self._cluster.connection_throttle_ms(
                self.broker.id, host, int(trio.current_time() * 1000))
            if throttle_ms:  # over its IP's connection_creation_rate: held, closed unserved
                log.debug("broker %d: closing a connection from %s after %d ms: its IP is over "
                          "its connection_creation_rate", self.broker.id, host, throttle_ms)
                await trio.sleep(throttle_ms / 1000)
                return
            peer = Peer(next(self._connection_ids), f"/{host}", endpoint.name)
            if endpoint.tls is None:
                link = _Link(stream, stream.socket.fileno(), peer)
            else:
                secured = await self._handshake(stream, endpoint, peer)
                if secured is None:
                    return
                link = _Link(secured, None, peer)
            send, receive = trio.open_memory_channel[bytes](MAX_IN_FLIGHT)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._answer_in_turn, link, receive, nursery.cancel_scope)
                await self._read_requests(link, send, nursery)
        finally:
            stream.socket.close()
            if peer is not None and "pipeline" in self.__dict__:  # it served a request
                self.pipeline.connection_closed(peer)

    async def _handshake(self, stream: trio.SocketStream, endpoint: _Endpoint, peer: Peer
                         ) -> trio.SSLStream[trio.SocketStream] | None:
        """The connection's TLS stream once its handshake is done, with the client
        certificate's principal set on ``peer`` (SSL listener); None (one warning line) when
        the handshake fails."""
        from fakebroker.security.tls import principal

        assert endpoint.tls is not None
        secured = trio.SSLStream(stream, endpoint.tls, server_side=True)
        try:
            with trio.move_on_after(TLS_HANDSHAKE_TIMEOUT) as waiting:
                await secured.do_handshake()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            reason = exc.__cause__ or exc
            log.warning("broker %d: closing a connection from %s on its %s listener: TLS "
                        "handshake failed: %s", self.broker.id, peer.host[1:], endpoint.name,
                        reason or "the peer closed it")
            await _send_alert(secured, stream)
            return None
        if waiting.cancelled_caught:
            log.warning("broker %d: closing a connection from %s on its %s listener: no TLS "
                        "handshake within %d s", self.broker.id, peer.host[1:], endpoint.name,
                        TLS_HANDSHAKE_TIMEOUT)
            return None
        if endpoint.name == "SSL":
            try:
                peer.principal = principal(secured.getpeercert(binary_form=True))
            except ValueError as exc:
                log.warning("broker %d: closing a connection from %s on its SSL listener: "
                            "its certificate has no principal: %s", self.broker.id,
                            peer.host[1:], exc)
                return None
        return secured

    async def _read_requests(
        self, link: _Link, send: trio.MemorySendChannel[bytes], nursery: trio.Nursery,
    ) -> None:
        frames = FrameReader(self.max_request_bytes)
        with send:
            try:
                while data := await link.stream.receive_some(1 << 20):
                    frames.feed(data)
                    while (frame := frames.next_frame()) is not None:
                        if not await self._take(frame, link, send, nursery):
                            return
                link.peer.gone.set()  # requests read are still handled; hung ones end here
            except FrameTooLarge as exc:
                self._close(nursery.cancel_scope, str(exc))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                nursery.cancel_scope.cancel()

    async def _take(self, frame: bytes, link: _Link, send: trio.MemorySendChannel[bytes],
                    nursery: trio.Nursery) -> bool:
        """Answer one request: at once when it cannot wait and no request is pending before
        it, else by the answering task, in turn. False when the connection is to close."""
        if link.queued == 0:
            outcome = self.pipeline.answer_now(frame, link.peer)
            if outcome is not WAIT:
                return await self._deliver(outcome, link, nursery.cancel_scope)
        link.queued += 1
        await send.send(frame)
        return True

    async def _answer_in_turn(
        self, link: _Link, receive: trio.MemoryReceiveChannel[bytes], scope: trio.CancelScope,
    ) -> None:
        """Handle the requests handed over one at a time, each once the answer before it is
        written, and write their answers; the connection ends when the reader is done."""
        with receive:
            try:
                async for frame in receive:
                    outcome = await self.pipeline.answer(frame, link.peer)
                    if not await self._deliver(outcome, link, scope):
                        return
                    link.queued -= 1
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        scope.cancel()

    async def _deliver(self, outcome: Outcome, link: _Link, scope: trio.CancelScope) -> bool:
        """Do what a request's outcome says: write its answer (then mute the connection if
        throttled), nothing, or close the connection (False)."""
        if outcome is None:
            return True
        if isinstance(outcome, Close):
            if outcome.last is not None:
                await link.write(outcome.last)
            self._close(scope, outcome.reason)
            return False
        if isinstance(outcome, Throttled):
            await link.write(outcome.frame)
            await trio.sleep(outcome.seconds)
            return True
        await link.write(outcome)
        return True

    def _close(self, scope: trio.CancelScope, reason: str) -> None:
        log.warning("broker %d: closing a connection: %s", self.broker.id, reason)
        scope.cancel()


async def _send_alert(secured: trio.SSLStream[trio.SocketStream],
                      stream: trio.SocketStream) -> None:
    """Send the TLS alert a failed handshake left unsent (the client learns why it was
    refused: certificate_required, bad_certificate ...), within a second at most.

    trio's ``SSLStream`` raises on a failed handshake before sending what OpenSSL wrote
    last, the alert; it is still in the stream's outgoing memory BIO (``_outgoing``, a
    private name: without it the connection closes with no alert, as before)."""
    outgoing = getattr(secured, "_outgoing", None)
    alert = outgoing.read() if isinstance(outgoing, ssl.MemoryBIO) else b""
    if alert:
        with trio.move_on_after(1):
            try:
                await stream.send_all(alert)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass


async def open_listener(host: str, port: int) -> trio.SocketListener:
    """A socket listening on ``host``'s first address and ``port`` (0: a free port the OS
    picks), with SO_REUSEADDR as trio's listeners.

    On Linux the port is bound explicitly even when the OS picks it, so that it stays bound
    when ``BrokerServer.stop`` has the socket stop listening: a first socket takes a free
    port, and holds it until the listening socket is bound to it too (Linux lets two sockets
    with SO_REUSEADDR bind one port while neither listens), so no other can take it between.
    """
    # An ASCII host goes as bytes: a str makes Python load its IDNA codec on the first call.
    name = host.encode("ascii") if host.isascii() else host
    (family, type_, proto, _, address), *_ = await trio.socket.getaddrinfo(
        name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
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
