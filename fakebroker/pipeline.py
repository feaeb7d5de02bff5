"""The request path of one broker, with no sockets in it: a request frame in, an outcome out.

The server hands every request frame (without its size prefix) to its broker's ``Pipeline``
and does what the outcome says; the pipeline decodes the request, reads it as its API
prepares it on arrival (``PREPARERS``: Fetch's session), takes it through the
authorization seam (with the cluster's ``authorizer`` on: ``fakebroker.security.enforcement``,
reading each API's ``AUTHORIZES``) and the fault seam (``fakebroker.faults.seam``) to its
handler, encodes the answer and records the request in the journal.

Outcomes (``Outcome``, declared in ``fakebroker.outcomes``):

* ``bytes`` or ``bytearray``: the answer frame, size prefix included, to write;
* ``Throttled(frame, seconds)``: the answer frame, after which the connection's next answers
  wait ``seconds`` (a fault's ``throttle_ms``, or a client over its quota,
  ``fakebroker.api.throttling``: Kafka mutes a throttled channel, KIP-219); an empty frame
  for an acks=0 Produce over its quota;
* ``None``: no answer (Produce with acks=0);
* ``Close(reason)``: close the connection unanswered and log ``reason``: a frame that cannot
  be served (shorter than a header, an unknown API key or version, bytes that do not parse),
  a fault's ``drop``, a hung or held request whose peer left, a failed acks=0 Produce, or a
  handler's bug (logged with its traceback here).
  ``Close(reason, last)``: write ``last`` first, then close (a failed SASL authentication).

Two ways in:

* ``answer_now(frame, peer)``, a plain function: it answers a request that cannot wait — its
  handler is a plain function (all but Fetch, JoinGroup and SyncGroup), no fault rule exists
  and the broker has no latency — without a coroutine; for any other request it returns
  ``WAIT`` at once, having done nothing.
* ``await answer(frame, peer)``: any request. It waits where the request does: a long-polling
  Fetch, a group barrier, the broker's latency, a fault's delay, hold or hang (a hung or held
  request ends when ``peer.gone`` is set).

Guarantees:

* An answer that cannot be encoded at the request's version (a value too large for its
  field) closes the connection with its reason, no traceback.
* Every request decoded is recorded in the journal exactly once, when it ends, by one helper
  (``_journal``) on every path: kept answers, ``answer_now`` and ``answer`` (also when it is
  cancelled because its connection closed). A frame that cannot be decoded is not.
* An ApiVersions request out of the served range (above or below it) whose header parses
  gets UNSUPPORTED_VERSION at v0 with ApiVersions' range (KIP-511; answering as a release
  before 2.4: with no API listed), as Kafka 4.4 answers (measured).
* With an authorizer, what the principal may not do is refused before any fault rule and
  any handler sees the request: a whole-request refusal is answered without either, refused
  entries are taken out of the request (nothing is applied for them) and their errors put
  where the API's ``ERROR_PLACEMENT`` says (``fakebroker.api.placement``). Without one, the
  security package is never imported and the request path is unchanged.
* The SASL gate: a connection of a SASL listener (``Peer.gated``) has every frame seen by its
  ``SaslConnection`` (``fakebroker.security.sasl.connection``) before anything else (fault
  rules included): before authentication only ApiVersions, SaslHandshake and
  SaslAuthenticate are served, and an unframed SASL token (after SaslHandshake v0) is
  answered there; an authenticated connection is gated while its session has a lifetime
  (the expired-session check). A failed exchange is answered, then its connection closed.
  Connections of other listeners only ever read ``peer.gated`` (False) for it.
* Kept answers: a ``CACHEABLE`` API's answer (ApiVersions, Metadata) is kept and given again,
  its correlation id rewritten, to the same request bytes (correlation id aside) on the same
  listener from the same principal (Metadata names the brokers at the connection's listener,
  and lists what its principal may see) until the cluster's metadata changes
  (``Cluster.generation``); it is journaled as the answer it repeats. Only ``answer_now``
  keeps and gives them, so never while a fault rule exists, and
  never with an authorizer (answers depend on the principal's ACLs).
"""

from __future__ import annotations

import functools
import inspect
import logging
import struct
import time
import types
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from fakebroker.api import (
    CACHEABLE,
    HANDLERS,
    PREPARERS,
    REFUSED_ANSWERS,
    ByApiKey,
    versions_as,
)
from fakebroker.api.access import MESSAGES
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.api.placement import (
    ErrorLayout,
    filter_request,
    inject_errors,
    top_level_answer,
    whole_request_answer,
)
from fakebroker.api.targets import Target, request_targets
from fakebroker.faults.rules import FaultRegistry
from fakebroker.faults.seam import Seam
from fakebroker.journal import Journal, answer_errors
from fakebroker.outcomes import WAIT, Close, Outcome, Peer, Throttled, Wait
from fakebroker.protocol.codec import WRITING_ANSWER, DecodeError
from fakebroker.protocol.errors import error_code, error_name
from fakebroker.protocol.framing import (
    API_VERSIONS_KEY,
    RequestHeader,
    decode_request,
    encode_response,
    peek_header,
)
from fakebroker.protocol.specs import api_spec
from fakebroker.state.cluster import Broker, Cluster

if TYPE_CHECKING:
    from fakebroker.security.enforcement import Enforcement

log = logging.getLogger("fakebroker")

MAX_KEPT_ANSWERS = 1024  # per broker; all dropped when full (clients repeat few requests)
_API_KEY = struct.Struct(">h")
_CORRELATION = struct.Struct(">i")
_HEADER_PEEK = 8  # api key, api version, correlation id: the least a request can be
KIP_511 = "2.4"  # the release whose too-new ApiVersions answer lists ApiVersions' range
# API key -> whether its handler is a plain function (answers without waiting).
_PLAIN_HANDLERS = ByApiKey(lambda module: not inspect.iscoroutinefunction(module.handle))


@dataclass(frozen=True, slots=True)
class _Kept:
    """A kept answer (a ``CACHEABLE`` API's), with what its journal entries record."""

    frame: bytes  # the whole answer; its correlation id is rewritten per request
    client_id: str | None
    targets: tuple[str, ...]
    errors: tuple[str, ...]


class Pipeline:
    """The request path of one broker of a cluster."""

    def __init__(self, cluster: Cluster, broker: Broker, faults: FaultRegistry,
                 journal: Journal, wait_for_append: Callable[[float], Awaitable[None]]
                 ) -> None:
        self.cluster = cluster
        self.broker = broker
        self.faults = faults
        self.journal = journal
        self.wait_for_append = wait_for_append
        # Kept answers by listener, principal and request bytes without the correlation id,
        # valid for the cluster generation ``_kept_generation``.
        self._kept: dict[tuple[str, str, bytes], _Kept] = {}
        self._kept_generation = -1
        # The authorization seam, with the cluster's ``authorizer`` on (imported only then).
        self._enforcement: Enforcement | None = None
        if cluster.settings.authorizer:
            from fakebroker.security.authorizer import Authorizer
            from fakebroker.security.enforcement import Enforcement

            settings = cluster.settings
            self._enforcement = Enforcement(Authorizer(
                cluster.acls, settings.super_users, settings.allow_everyone_if_no_acl_found))

    def answer_now(self, frame: bytes, peer: Peer) -> Outcome | Wait:
        """The outcome of a request that cannot wait; ``WAIT`` for any other request."""
        if peer.gated and (refused := self._gate(frame, peer)) is not None:
            return refused
        if self.faults.rules or self.broker.latency_ms:
            return WAIT
        key = None
        if len(frame) >= _HEADER_PEEK:
            api_key = _API_KEY.unpack_from(frame)[0]
            if not _PLAIN_HANDLERS.get(api_key, True):  # an unknown key is refused here
                return WAIT
            if (api_key in CACHEABLE and self._enforcement is None and not peer.gated
                    and not self.cluster.throttling):
                key = (peer.listener, peer.principal, frame[:4] + frame[8:])
                if self._kept_generation != self.cluster.generation:
                    self._kept.clear()
                    self._kept_generation = self.cluster.generation
                elif (kept := self._kept.get(key)) is not None:
                    return self._give_kept(kept, frame, peer)
        started = time.perf_counter()
        generation = self.cluster.generation
        try:
            read = self._read(frame)
        except ConnectionClosed as exc:
            return Close(str(exc))
        if isinstance(read, bytearray):
            return read
        header, request = read
        api_key, version = header.api_key, header.api_version
        seq, wall_time = self.journal.begin()
        targets: tuple[str, ...] = ()
        errors: tuple[str, ...] = ()
        outcome = "answered"
        try:
            found = request_targets(api_key, version, request, self._topic_name)
            targets = tuple(map(_target_text, found))
            context = self._context(header, peer)
            refused = self._refusals(api_key, version, request, found, peer)
            if refused is None:
                response = HANDLERS[api_key](request, context)
            elif refused.top is not None:
                response = self._refused(api_key, version, request, refused, None)
            else:
                response = self._refused(api_key, version, request, refused, HANDLERS[api_key](
                    filter_request(api_key, version, request, refused, self._topic_name),
                    context))
            throttle_ms = 0
            if self.cluster.throttling:
                response, throttle_ms = self._charge(
                    header, peer, request, len(frame), response,
                    round((time.perf_counter() - started) * 1e9))
            if response is None:
                outcome = "no answer"
                return Throttled(b"", throttle_ms / 1000) if throttle_ms else None
            errors = tuple(answer_errors(api_key, version, response))
            answer = _encoded(api_key, version, header.correlation_id, response)
            if peer.gated and (reason := self._answered(peer, api_key, response)):
                outcome = f"answered, then closed: {reason}"
                return Close(reason, answer)
            if key is not None and generation == self.cluster.generation:
                self._keep(key, _Kept(bytes(answer), header.client_id, targets, errors))
            return Throttled(answer, throttle_ms / 1000) if throttle_ms else answer
        except Exception as exc:  # a handler's ConnectionClosed, or a bug
            reason = self._closing_reason(exc)
            outcome = f"closed: {reason}"
            return Close(reason)
        finally:
            self._journal(seq, wall_time, started, peer, api_key, version,
                          header.correlation_id, header.client_id, targets, errors, None,
                          outcome)

    async def answer(self, frame: bytes, peer: Peer) -> Outcome:
        """The outcome of any request, once it is handled."""
        if peer.gated and (refused := self._gate(frame, peer)) is not None:
            return refused
        started = time.perf_counter()
        try:
            read = self._read(frame)
        except ConnectionClosed as exc:
            return Close(str(exc))
        if isinstance(read, bytearray):
            return read
        header, request = read
        api_key, version = header.api_key, header.api_version
        seq, wall_time = self.journal.begin()
        seam = Seam(self.faults, self._topic_name, peer)
        targets: tuple[str, ...] = ()
        errors: tuple[str, ...] = ()
        outcome = "answered"
        try:
            context = self._context(header, peer)
            if (prepare := PREPARERS[api_key]) is not None:
                request = prepare(request, context)
            found = request_targets(api_key, version, request, self._topic_name)
            targets = tuple(map(_target_text, found))
            refused = self._refusals(api_key, version, request, found, peer)
            if self.broker.latency_ms:
                await trio.sleep(self.broker.latency_ms / 1000)
            busy = [0]  # ns its plain handler took (request_percentage quotas)
            handle = functools.partial(_handle, context, busy)
            if refused is None:
                response = await seam.respond(api_key, version, self.broker.id,
                                              header.client_id, request, found, handle)
            elif refused.top is not None:  # refused as a whole: no fault, no handler
                response = self._refused(api_key, version, request, refused, None)
            else:  # the fault rules see what is left of the request
                allowed = filter_request(api_key, version, request, refused, self._topic_name)
                response = self._refused(api_key, version, request, refused, await seam.respond(
                    api_key, version, self.broker.id, header.client_id, allowed,
                    request_targets(api_key, version, allowed, self._topic_name), handle))
            throttle_ms = seam.throttle_ms
            if self.cluster.throttling:
                response, charged = self._charge(header, peer, request, len(frame), response,
                                                 busy[0])
                throttle_ms = max(throttle_ms, charged)
            if response is None:
                outcome = "no answer"
                return Throttled(b"", throttle_ms / 1000) if throttle_ms else None
            errors = tuple(answer_errors(api_key, version, response))
            answer = _encoded(api_key, version, header.correlation_id, response)
            if peer.gated and (reason := self._answered(peer, api_key, response)):
                outcome = f"answered, then closed: {reason}"
                return Close(reason, answer)
            return Throttled(answer, throttle_ms / 1000) if throttle_ms else answer
        except trio.Cancelled:
            outcome = seam.outcome or "cancelled: connection closed"
            raise
        except Exception as exc:  # ConnectionClosed (a fault's or a handler's), or a bug
            reason = self._closing_reason(exc)
            outcome = seam.outcome or f"closed: {reason}"
            return Close(reason)
        finally:
            self._journal(seq, wall_time, started, peer, api_key, version,
                          header.correlation_id, header.client_id, targets, errors,
                          seam.fault, outcome)

    # -- the steps ------------------------------------------------------------------------

    def _gate(self, frame: bytes, peer: Peer) -> Outcome | None:
        """The SASL gate of a connection of a SASL listener (``peer.gated``): None to serve
        the request; else its outcome: the raw answer to an unframed SASL token, or the
        connection closed (a request other than ApiVersions, SaslHandshake and
        SaslAuthenticate before authentication, an expired session: Kafka's rules in
        ``fakebroker.security.sasl.connection``), a refused request decoded and journaled."""
        sasl = peer.sasl
        if sasl is None:
            from fakebroker.security.sasl.connection import SaslConnection

            sasl = peer.sasl = SaslConnection(peer, self.cluster)
        verdict = sasl.admit(frame, RequestContext.now_ms())
        if verdict is None or isinstance(verdict, bytes):
            return verdict
        started = time.perf_counter()
        try:
            read = self._read(frame)
        except ConnectionClosed:
            return Close(verdict.reason)
        if isinstance(read, bytearray):
            return Close(verdict.reason)
        header, request = read
        answer = None
        if verdict.illegal_state:
            answer = encode_response(header.api_key, header.api_version, header.correlation_id,
                                     self._error_answer(header, request, "ILLEGAL_SASL_STATE"))
        seq, wall_time = self.journal.begin()
        self._journal(seq, wall_time, started, peer, header.api_key, header.api_version,
                      header.correlation_id, header.client_id, (),
                      ("ILLEGAL_SASL_STATE",) if answer else (), None,
                      f"{'answered, then ' if answer else ''}closed: {verdict.reason}")
        return Close(verdict.reason, answer)

    def _answered(self, peer: Peer, api_key: int, response: Any) -> str | None:
        """Tell the connection's SASL exchange the answer to one of its requests; the reason
        to close the connection after it, if it must close."""
        assert peer.sasl is not None
        return peer.sasl.answered(api_key, response)

    def _error_answer(self, header: RequestHeader, request: Any, error: str) -> Any:
        """The answer putting ``error`` wherever the request's API puts an error for the
        whole request (Kafka's ``getErrorResponse``)."""
        return whole_request_answer(header.api_key, header.api_version, request,
                                    error_code(error), self._topic_name)

    def _read(self, frame: bytes) -> tuple[RequestHeader, Any] | bytearray:
        """A request's header and body; or its answer already (an ApiVersions request out of
        the served range); ``ConnectionClosed`` for a request that cannot be served or
        parsed."""
        try:
            api_key, version, correlation_id = peek_header(frame)
        except DecodeError as exc:
            raise ConnectionClosed(f"malformed request ({len(frame)} bytes): {exc}") from None
        versions = versions_as(api_key, self.cluster.settings.kafka_version)
        if versions is None:
            raise ConnectionClosed(f"unsupported API key {api_key}")
        if version not in versions:
            if api_key == API_VERSIONS_KEY:
                try:
                    read_unsupported_header(frame)
                except (DecodeError, IndexError, struct.error) as exc:
                    raise ConnectionClosed(f"malformed request header (ApiVersions "
                                           f"v{version}): {exc}") from None
                return unsupported_api_versions(correlation_id, versions,
                                                self.cluster.settings.kafka_version)
            raise ConnectionClosed(f"unsupported version {version} of API key {api_key}")
        try:
            return decode_request(frame)
        except (DecodeError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ConnectionClosed(
                f"malformed request (api {api_key} v{version}): {exc}"
            ) from exc

    def _context(self, header: RequestHeader, peer: Peer) -> RequestContext:
        return RequestContext(self.cluster, self.broker, header, self.wait_for_append,
                              peer.host, peer.listener, peer.principal, peer.sasl,
                              self._enforcement.authorizer if self._enforcement else None,
                              peer.connection_id)

    def _charge(self, header: RequestHeader, peer: Peer, request: Any, size: int,
                response: Any, busy_ns: int) -> tuple[Any, int]:
        """Charge a request to its client's quotas (``fakebroker.api.throttling``), on
        trio's clock (the one the connection's mute waits on): the answer to send and the ms
        to throttle the connection. A SASL connection's requests before it is authenticated
        are not charged: Kafka's authenticator answers them, not its request handlers."""
        from fakebroker.api.throttling import throttle

        if peer.gated and (peer.sasl is None or not peer.sasl.authenticated):
            return response, 0

        return throttle(self.cluster, header.api_key, header.api_version, peer.principal,
                        header.client_id, request, size, response, busy_ns,
                        int(trio.current_time() * 1000))

    def _refusals(self, api_key: int, version: int, request: Any, targets: list[Target],
                  peer: Peer) -> ErrorLayout | None:
        """What the authorizer refuses of the request (None: all of it allowed, or no
        authorizer): the authorization seam, before the fault rules and the handler."""
        if self._enforcement is None:
            return None
        return self._enforcement.refusals(api_key, version, request, targets, peer.principal,
                                          peer.host)

    def _refused(self, api_key: int, version: int, request: Any, refused: ErrorLayout,
                 response: Any) -> dict[str, Any]:
        """The answer to a request with refusals: the handler's ``response`` to the rest of
        it (None: refused as a whole) with the refusals put where Kafka puts them."""
        if refused.top is not None and (made := REFUSED_ANSWERS[api_key]) is not None:
            return made(request, version, error_name(refused.top))
        if refused.top is not None:
            response = top_level_answer(api_key, request)
            # with Kafka's default message, where the answer has a top-level one
            response["error_message"] = MESSAGES.get(error_name(refused.top))
        elif response is None:  # acks=0: Kafka closes the connection of a failed produce
            raise ConnectionClosed("acks=0 produce refused by the authorizer")
        return inject_errors(api_key, version, request, dict(response), refused,
                             self._topic_name)

    def _give_kept(self, kept: _Kept, frame: bytes, peer: Peer) -> bytearray:
        """A kept answer to this request, its correlation id rewritten."""
        started = time.perf_counter()
        api_key, version, correlation_id = peek_header(frame)
        answer = bytearray(kept.frame)
        _CORRELATION.pack_into(answer, 4, correlation_id)
        seq, wall_time = self.journal.begin()
        self._journal(seq, wall_time, started, peer, api_key, version, correlation_id,
                      kept.client_id, kept.targets, kept.errors, None, "answered")
        return answer

    def _keep(self, key: tuple[str, str, bytes], kept: _Kept) -> None:
        if len(self._kept) >= MAX_KEPT_ANSWERS:
            self._kept.clear()
        self._kept[key] = kept

    def connection_closed(self, peer: Peer) -> None:
        """What a connection's end changes in the cluster: the share sessions it opened end,
        their members' acquired records released (Kafka's share session cache forgets a
        disconnected client's sessions)."""
        self.cluster.groups.share.connection_closed((self.broker.id, peer.connection_id))

    def _journal(self, seq: int, wall_time: float, started: float, peer: Peer,
                 api_key: int, version: int, correlation_id: int, client_id: str | None,
                 targets: tuple[str, ...], errors: tuple[str, ...], fault: str | None,
                 outcome: str) -> None:
        """Record a request that ended: the one journal write of every path (``seq`` and
        ``wall_time`` from ``Journal.begin`` when it was read, ``started`` from
        ``time.perf_counter``)."""
        self.journal.add(seq, wall_time, self.broker.id, peer.connection_id, client_id,
                         peer.host, peer.listener, peer.principal, api_spec(api_key).name,
                         api_key, version, correlation_id, targets, errors,
                         round((time.perf_counter() - started) * 1000, 3), fault, outcome)

    def _closing_reason(self, exc: Exception) -> str:
        """Why the connection closes after handling a request raised ``exc`` (a bug is
        logged with its traceback)."""
        if isinstance(exc, ConnectionClosed):
            return str(exc)
        log.exception("broker %d: request failed", self.broker.id, exc_info=exc)
        return f"internal error: {exc!r}"

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.cluster.topic_by_id(topic_id)
        return topic.name if topic is not None else None


async def _handle(context: RequestContext, busy: list[int], request: Any) -> Any:
    """Run the request's handler on ``request``: its answer body (awaited if it waits). The
    ns the handler works before it first parks (all of it, if it never does) are added to
    ``busy[0]``: what Kafka charges a request's ``request_percentage`` quota with, its
    handler thread's time up to handing a waiting request to purgatory (a long-polling
    Fetch, a JoinGroup at the barrier, a SyncGroup waiting for the leader), not its wait."""
    started = time.perf_counter_ns()
    response: Any = HANDLERS[context.header.api_key](request, context)
    if inspect.iscoroutine(response):
        return await _parked_after(response, busy, started)
    busy[0] += time.perf_counter_ns() - started
    return response


@types.coroutine
def _parked_after(handler: Coroutine[Any, Any, Any], busy: list[int], started: int
                  ) -> Generator[Any, Any, Any]:
    """Await ``handler`` (as ``await handler`` would), adding to ``busy[0]`` the ns from
    ``started`` until it first yields to trio (parks) or returns."""
    try:
        trap = handler.send(None)
    except StopIteration as done:
        return done.value
    finally:
        busy[0] += time.perf_counter_ns() - started
    while True:
        try:
            sent = yield trap
        except GeneratorExit:
            handler.close()
            raise
        except BaseException as exc:  # trio throws in what the coroutine must raise
            try:
                trap = handler.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                trap = handler.send(sent)
            except StopIteration as done:
                return done.value


def _encoded(api_key: int, version: int, correlation_id: int, response: Any) -> bytearray:
    """The answer frame; ``ConnectionClosed`` when a value cannot be put in the version's
    fields (a string of more than 32,767 bytes, as an error message naming thousands of a
    request's listeners; a group id too long for a version whose strings' lengths are
    int16): Kafka's serializer refuses such an answer too."""
    writing = WRITING_ANSWER.set(True)
    try:
        return encode_response(api_key, version, correlation_id, response)
    except (struct.error, OverflowError) as exc:
        raise ConnectionClosed(f"the answer (api {api_key} v{version}) cannot be encoded: "
                               f"{exc}") from None
    finally:
        WRITING_ANSWER.reset(writing)


def _target_text(target: Target) -> str:
    if target.group is not None and target.topic is None:
        return f"group:{target.group}"
    if target.partition is None:
        return str(target.topic)
    return f"{target.topic}/{target.partition}"


def read_unsupported_header(frame: bytes) -> None:
    """Read the header of an ApiVersions request out of the served range as Kafka does before
    answering it (its body is never read): v2 (tagged fields after the client id) for a
    version at or past the first flexible one, v1 below it (negative versions too);
    ``DecodeError``, ``IndexError`` or ``struct.error`` if it does not parse."""
    from fakebroker.protocol.codec import header_codec

    version = peek_header(frame)[1]
    flexible = version >= min(api_spec(API_VERSIONS_KEY).flexible)
    header_codec("RequestHeader", 2 if flexible else 1).compiled_parser()(bytes(frame), 0)


def unsupported_api_versions(correlation_id: int, versions: range,
                             release: str | None = None) -> bytearray:
    """ApiVersions v0 answer for a request out of the served range: with ApiVersions' own
    range (KIP-511, Kafka 2.4 on), or no API at all for a ``release`` before 2.4 (its
    ``ApiVersionsRequest.getErrorResponse``)."""
    from fakebroker.protocol.releases import before

    listed = [] if release is not None and before(release, KIP_511) else [
        {"api_key": API_VERSIONS_KEY, "min_version": versions.start,
         "max_version": versions.stop - 1}]
    body = {"error_code": error_code("UNSUPPORTED_VERSION"), "api_keys": listed}
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)
