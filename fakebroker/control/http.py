"""The HTTP/JSON control API of ``fakebroker serve --control-port P`` (h11 on trio).

Routes (JSON bodies and answers):

==========================  ================================================================
GET /health                 ``{"status": "ok"}``
GET /cluster                brokers (up, latency), topics with partitions (leader, epoch,
                            replicas, ISR, log start, high watermark, last stable
                            offset), groups, transactions
POST /topics                ``{"name", "partitions", "replication_factor", "configs"}`` -> 201
POST /faults                a fault rule's fields -> 201 the rule (with its ``id``)
GET /faults                 every rule, with ``hits`` and ``active`` (``held`` for hold rules)
GET /faults/{id}            one rule (404 if unknown)
DELETE /faults/{id}         remove one rule, releasing what it holds (``DELETE /faults``: all)
POST /faults/{id}/release   let what a ``hold`` rule holds go on: ``{"count": n}`` the n
                            oldest, no body all; answers the rule with ``released``
POST /actions/{name}        move-leader, move-coordinator, broker-down, broker-up,
                            delete-records, truncate, rebalance, kick-member,
                            expire-share-locks, set-latency, abort-transaction,
                            release-fault (see
                            ``fakebroker.control.actions``)
GET /journal                journal entries; query: api, broker, client_id, listener,
                            principal, error, faulted, since, limit
GET /coverage               API versions, error codes and faults seen since start
==========================  ================================================================

Access (``fakebroker.control.access``): with a token (``serve_control``'s ``token``), every
request without ``Authorization: Bearer <token>`` gets 401 with ``{"error": "UNAUTHORIZED",
"message": ...}`` and ``WWW-Authenticate: Bearer``, whatever its route, and changes nothing.

Guarantees: bad input (unparsable JSON, an unknown field, a bad value, an operation the
cluster refuses) gets 400 with ``{"error": ..., "message": ...}`` and changes nothing; an
unknown route gets 404, a wrong method 405. Everything runs on the cluster's trio thread.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

import h11
import trio

from fakebroker.control.access import CHALLENGE, authorized
from fakebroker.control.actions import ActionError, run_action
from fakebroker.faults.rules import FaultError
from fakebroker.journal import FILTERS
from fakebroker.protocol.errors import ClusterError
from fakebroker.runtime import FakeCluster
from fakebroker.state.views import MemberView

log = logging.getLogger("fakebroker.control")
MAX_BODY = 1 << 20


class HttpError(Exception):
    def __init__(self, status: int, error: str, message: str,
                 headers: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.status = status
        self.error = error
        self.headers = headers  # added to the answer's


def member_data(member: MemberView, streams: bool) -> dict[str, Any]:
    """A group member in the cluster view: its epoch when it has one (KIP-848, streams); a
    streams member's assignment (its active tasks) with its standby and warm-up tasks and
    its process id."""
    data: dict[str, Any] = {"member_id": member.member_id, "instance_id": member.instance_id,
                            "client_id": member.client_id, "assignment": member.assignment}
    if member.member_epoch is not None:
        data["member_epoch"] = member.member_epoch
    if streams:
        data.update(standby=member.standby, warmup=member.warmup,
                    process_id=member.process_id)
    return data


def cluster_view(cluster: FakeCluster) -> dict[str, Any]:
    """The cluster as data: brokers, topics and their partitions, groups, transactions."""
    state = cluster.state
    topics = {}
    for name, topic in sorted(state.topics.items()):
        topics[name] = {"id": str(topic.id), "partitions": [
            {"partition": p.index, "leader": p.leader, "leader_epoch": p.leader_epoch,
             "replicas": p.replicas, "isr": p.isr, "log_start_offset": p.log.log_start_offset,
             "high_watermark": p.log.high_watermark,
             "last_stable_offset": p.log.last_stable_offset} for p in topic.partitions]}
    groups = {group_id: cluster.group(group_id) for group_id in sorted(state.groups.ids())}
    return {
        "cluster_id": state.cluster_id,
        "kafka_version": cluster.settings.kafka_version,
        "bootstrap_servers": cluster.bootstrap_servers,
        "brokers": [{"id": b.id, "host": b.host, "port": b.port, "up": b.up,
                     "latency_ms": b.latency_ms} for b in state.brokers.values()],
        "topics": topics,
        "groups": {g: {"state": v.state, "generation": v.generation_id,
                       "members": [member_data(m, streams=v.protocol_type == "streams")
                                   for m in v.members]}
                   for g, v in groups.items() if v is not None},
        "transactions": {t: {"state": v.state, "producer_id": v.producer_id,
                             "producer_epoch": v.producer_epoch,
                             "partitions": [list(tp) for tp in v.partitions],
                             "groups": list(v.groups), "start_time_ms": v.start_time_ms,
                             "timeout_ms": v.timeout_ms}
                         for t, v in cluster.transactions().items()},
    }


class ControlApi:
    """Routes HTTP requests to a running cluster; with a ``token``, only the requests that
    carry it."""

    def __init__(self, cluster: FakeCluster, token: str | None = None):
        self.cluster = cluster
        self.token = token

    async def serve(self, request: h11.Request, body: bytes) -> tuple[int, Any]:
        """The status and JSON answer to one request; ``HttpError`` for an error answer."""
        if not authorized(request.headers, self.token):
            raise HttpError(401, "UNAUTHORIZED", "this control API requires its token: "
                            "Authorization: Bearer <token>", (("www-authenticate", CHALLENGE),))
        return await self.route(request.method.decode(), request.target.decode(), body)

    async def route(self, method: str, target: str, body: bytes) -> tuple[int, Any]:
        url = urllib.parse.urlsplit(target)
        parts = [p for p in url.path.split("/") if p]
        query = dict(urllib.parse.parse_qsl(url.query))
        routes: dict[tuple[str, ...], dict[str, Callable[[], Any]]] = {
            ("health",): {"GET": lambda: {"status": "ok"}},
            ("cluster",): {"GET": lambda: cluster_view(self.cluster)},
            ("topics",): {"POST": lambda: self.create_topic(_json(body))},
            ("faults",): {"GET": lambda: [r.describe() for r in self.cluster.faults],
                          "POST": lambda: self.add_fault(_json(body)),
                          "DELETE": self.clear_faults},
            ("journal",): {"GET": lambda: self.journal(query)},
            ("coverage",): {"GET": self.cluster.coverage},
        }
        if len(parts) == 2 and parts[0] == "faults":
            fault_id = _fault_id(parts[1])
            routes[tuple(parts)] = {"GET": lambda: self.fault(fault_id).describe(),
                                    "DELETE": lambda: self.remove_fault(fault_id)}
        if len(parts) == 3 and parts[0] == "faults" and parts[2] == "release":
            fault_id = _fault_id(parts[1])
            routes[tuple(parts)] = {"POST": lambda: self.release_fault(
                fault_id, _json(body) if body.strip() else {})}
        if len(parts) == 2 and parts[0] == "actions":
            routes[tuple(parts)] = {"POST": lambda: run_action(
                self.cluster, parts[1], _json(body) if body.strip() else {})}
        methods = routes.get(tuple(parts))
        if methods is None:
            raise HttpError(404, "NOT_FOUND", f"no route {url.path}")
        if method not in methods:
            raise HttpError(405, "METHOD_NOT_ALLOWED",
                            f"{method} {url.path}: use {', '.join(methods)}")
        try:
            result = methods[method]()
            if isinstance(result, Awaitable):
                result = await result
        except (FaultError, ActionError) as exc:
            raise HttpError(400, "BAD_REQUEST", str(exc)) from None
        except ClusterError as exc:
            raise HttpError(400, exc.error, str(exc)) from None
        status = 201 if method == "POST" and parts in (["topics"], ["faults"]) else 200
        return status, result

    def create_topic(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise ActionError("a topic needs a name")
        unknown = set(data) - {"name", "partitions", "replication_factor", "configs"}
        if unknown:
            raise ActionError(f"unknown topic field(s): {', '.join(sorted(unknown))}")
        partitions = data.get("partitions", 1)
        factor = data.get("replication_factor", 1)
        configs = data.get("configs") or {}
        if not isinstance(partitions, int) or not isinstance(factor, int) \
                or not isinstance(configs, dict):
            raise ActionError("partitions and replication_factor must be integers, configs "
                              "an object")
        topic = self.cluster.create_topic(data["name"], partitions, factor, configs)
        return {"name": topic.name, "id": str(topic.id), "partitions": len(topic.partitions)}

    def add_fault(self, data: Any) -> dict[str, Any]:
        return self.cluster.faults.add_data(data).describe()

    def fault(self, fault_id: int):
        try:
            return self.cluster.faults.get(fault_id)
        except KeyError:
            raise HttpError(404, "NOT_FOUND", f"no fault {fault_id}") from None

    def remove_fault(self, fault_id: int) -> dict[str, Any]:
        rule = self.fault(fault_id)
        rule.remove()
        return rule.describe()

    def release_fault(self, fault_id: int, data: Any) -> dict[str, Any]:
        rule = self.fault(fault_id)
        if not isinstance(data, dict) or set(data) - {"count"}:
            raise ActionError('a release takes {"count": n} or nothing')
        released = rule.release(data.get("count"))
        return {**rule.describe(), "released": released}

    def clear_faults(self) -> dict[str, Any]:
        removed = len(list(self.cluster.faults))
        self.cluster.faults.clear()
        return {"removed": removed}

    def journal(self, query: dict[str, str]) -> list[dict[str, Any]]:
        filters: dict[str, Any] = {}
        for name, value in query.items():
            kind = FILTERS.get(name)
            if kind is None:
                raise ActionError(f"unknown journal filter {name!r}")
            if kind is bool:
                filters[name] = value.lower() in ("1", "true", "yes")
            elif kind is int:
                try:
                    filters[name] = int(value)
                except ValueError:
                    raise ActionError(f"{name} must be an integer, got {value!r}") from None
            else:
                filters[name] = value
        return [e.as_dict() for e in self.cluster.journal(**filters)]


def _json(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError as exc:
        raise HttpError(400, "BAD_REQUEST", f"the body is not JSON: {exc}") from None


def _fault_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise HttpError(404, "NOT_FOUND", f"no fault {text!r}") from None


async def serve_control(cluster: FakeCluster, listener: trio.SocketListener,
                        token: str | None = None) -> None:
    """Serve the control API on ``listener`` until cancelled; with a ``token``, only to the
    requests that carry it."""
    api = ControlApi(cluster, token)
    async with trio.open_nursery() as nursery:
        while True:
            stream = await listener.accept()
            nursery.start_soon(_connection, api, stream)


async def _connection(api: ControlApi, stream: trio.SocketStream) -> None:
    connection = h11.Connection(h11.SERVER)
    try:
        async with stream:
            while True:
                request, body = await _read_request(connection, stream)
                if request is None:
                    return
                headers: tuple[tuple[str, str], ...] = ()
                try:
                    status, answer = await api.serve(request, body)
                except HttpError as exc:
                    status, answer = exc.status, {"error": exc.error, "message": str(exc)}
                    headers = exc.headers
                except Exception as exc:  # a control bug answers 500, the broker goes on
                    log.exception("control request failed")
                    status, answer = 500, {"error": "INTERNAL", "message": repr(exc)}
                await _send(connection, stream, status, answer, headers)
                if connection.our_state is h11.MUST_CLOSE:
                    return
                connection.start_next_cycle()
    except (h11.RemoteProtocolError, trio.BrokenResourceError, trio.ClosedResourceError,
            OSError) as exc:
        log.info("control connection ended: %s", exc)


async def _read_request(connection: h11.Connection, stream: trio.SocketStream
                        ) -> tuple[h11.Request | None, bytes]:
    request = None
    body = bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                raise h11.RemoteProtocolError("request body too large")
        elif isinstance(event, h11.EndOfMessage):
            return request, bytes(body)
        else:  # ConnectionClosed or PAUSED: the peer is done
            return None, b""


async def _send(connection: h11.Connection, stream: trio.SocketStream, status: int,
                answer: Any, extra: tuple[tuple[str, str], ...] = ()) -> None:
    payload = (json.dumps(answer, default=str, indent=None) + "\n").encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(payload))),
               *extra]
    await stream.send_all(connection.send(h11.Response(status_code=status, headers=headers)))
    await stream.send_all(connection.send(h11.Data(data=payload)))
    await stream.send_all(connection.send(h11.EndOfMessage()))
