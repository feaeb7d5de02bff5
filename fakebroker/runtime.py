"""The trio facade: ``async with open_cluster(...) as cluster`` runs a whole fake cluster.

Guarantees:

* Every broker listens on its own socket before ``open_cluster`` yields; ``bootstrap_servers``
  lists them all. Port 0 lets the OS pick each port; a non-zero ``port`` gives consecutive
  ports ``port, port+1, ...``.
* All cluster state lives on the trio thread that runs ``open_cluster``.
* Leaving the block closes every listener and connection.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import trio

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

from fakebroker.protocol.records import Record, decode_records
from fakebroker.server import DEFAULT_MAX_REQUEST_BYTES, AppendSignal, BrokerServer
from fakebroker.state.cluster import Cluster, ClusterError, Topic
from fakebroker.state.inspect import GroupView, consumer_group_view, group_view

TopicSpec = int | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    id: int
    host: str
    port: int

    def host_port(self) -> tuple[str, int]:
        return self.host, self.port

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "host": self.host, "port": self.port}


class FakeCluster:
    """A running fake cluster, used from its trio thread."""

    def __init__(self, state: Cluster, servers: list[BrokerServer]):
        self.state = state
        self.servers = servers

    @property
    def brokers(self) -> list[BrokerAddress]:
        return [BrokerAddress(b.id, b.host, b.port) for b in self.state.brokers.values()]

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,host:port,...`` of every broker, for a client's bootstrap.servers."""
        return ",".join(f"{b.host}:{b.port}" for b in self.brokers)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> Topic:
        """Create a topic; raises ``ClusterError`` (with Kafka's error name) when it can't."""
        return self.state.create_topic(name, partitions, replication_factor, dict(configs or {}))

    def records(self, topic: str, partition: int = 0) -> list[Record]:
        """Every record stored in a partition from its log start, decoded."""
        log = self._partition(topic, partition).log
        return [r for b in log.batches for r in decode_records(b.data)
                if r.offset >= log.log_start_offset and not r.is_control]

    def offsets(self, topic: str, partition: int = 0) -> tuple[int, int]:
        """(log start offset, high watermark) of a partition."""
        log = self._partition(topic, partition).log
        return log.log_start_offset, log.high_watermark

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a consumer group (state, generation, members, assignments)."""
        consumer_group = self.state.consumer_groups.groups.get(group_id)
        if consumer_group is not None:
            return consumer_group_view(consumer_group)
        group = self.state.groups.group(group_id)
        return group_view(group) if group is not None else None

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset ``group_id`` committed for a partition, or None."""
        group = self.state.groups.group(group_id)
        found = group.offsets.get((topic, partition)) if group is not None else None
        return found.offset if found is not None else None

    def _partition(self, topic: str, partition: int):
        found = self.state.partition(topic, partition)
        if found is None:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}/{partition}")
        return found


def topic_args(spec: TopicSpec) -> dict[str, Any]:
    """``3`` or ``{"partitions": 3, "replication_factor": 1, "configs": {...}}`` as kwargs."""
    if isinstance(spec, int):
        return {"partitions": spec}
    return dict(spec)


async def listen(host: str, port: int) -> trio.SocketListener:
    """One listening socket on ``host:port`` (0 = OS-assigned)."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    for extra in listeners[1:]:
        await extra.aclose()
    return listeners[0]


@contextlib.asynccontextmanager
async def open_cluster(
    brokers: int = 1,
    topics: Mapping[str, TopicSpec] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    auto_create_topics: bool = True,
    default_partitions: int = 1,
    cluster_id: str = "fakebroker-cluster",
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    group_initial_rebalance_delay_ms: int = 0,
    group_min_session_timeout_ms: int = 6000,
) -> AsyncIterator[FakeCluster]:
    """Run a fake cluster of ``brokers`` brokers with ``topics`` (name -> partitions/spec)."""
    if brokers < 1:
        raise ValueError("a cluster needs at least one broker")
    state = Cluster(cluster_id=cluster_id, auto_create_topics=auto_create_topics,
                    default_partitions=default_partitions)
    state.groups.initial_rebalance_delay_ms = group_initial_rebalance_delay_ms
    state.groups.min_session_timeout_ms = group_min_session_timeout_ms
    signal = AppendSignal()
    state.on_append(signal.fire)
    listeners: list[trio.SocketListener] = []
    try:
        for index in range(brokers):
            listeners.append(await listen(host, port + index if port else 0))
            state.add_broker(host, listeners[-1].socket.getsockname()[1])
        for name, spec in (topics or {}).items():
            state.create_topic(name, **topic_args(spec))
    except BaseException:
        for listener in listeners:
            await listener.aclose()
        raise
    servers = [BrokerServer(state, broker, signal, max_request_bytes)
               for broker in state.brokers.values()]
    try:
        async with trio.open_nursery() as nursery:
            for server, listener in zip(servers, listeners, strict=True):
                nursery.start_soon(server.serve, listener)
            nursery.start_soon(state.groups.run_timers)
            nursery.start_soon(state.consumer_groups.run_timers)
            try:
                yield FakeCluster(state, servers)
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The caller's own exception, not wrapped by our nursery (trio's strict groups).
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
