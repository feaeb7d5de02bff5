"""The synchronous facade: ``with FakeKafka(brokers=1, topics={"orders": 3}) as kafka:``.

Trio runs the cluster in a background thread; every method here is thread-safe because it
runs its work on that thread (``trio.from_thread``) and returns the result.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import trio

from fakebroker.faults.rules import FaultRule
from fakebroker.journal import JournalEntry
from fakebroker.operations import OnClusterThread
from fakebroker.protocol.records import Record
from fakebroker.runtime import BrokerAddress, FakeCluster, TopicSpec, open_cluster
from fakebroker.state.views import GroupView, PartitionOffsets, TransactionView

T = TypeVar("T")


class FaultHandle:
    """A fault rule seen from another thread: ``hits``, ``wait(n, timeout)``, ``held``,
    ``release(n)``, ``remove()``."""

    def __init__(self, kafka: FakeKafka, rule: FaultRule):
        self._kafka = kafka
        self.rule = rule

    @property
    def id(self) -> int:
        return self.rule.id

    @property
    def hits(self) -> int:
        """How many requests the rule was applied to so far."""
        return self.rule.hits

    def wait(self, hits: int = 1, timeout: float = 10.0) -> int:
        """Block until the rule was applied ``hits`` times in all (``TimeoutError`` after
        ``timeout`` seconds); returns the hit count."""
        return self._kafka.call_async(self.rule.wait, hits, timeout)

    @property
    def held(self) -> int:
        """How many requests the rule (a ``hold`` rule) holds now."""
        return self._kafka.call(lambda: self.rule.held)

    def release(self, count: int | None = None) -> int:
        """Let the ``count`` oldest held requests go on (all when None); returns how many
        were let go."""
        return self._kafka.call(self.rule.release, count)

    def remove(self) -> None:
        """Stop applying the rule (and release what it holds)."""
        self._kafka.call(self.rule.remove)

    def describe(self) -> dict[str, Any]:
        return self._kafka.call(self.rule.describe)

    def __repr__(self) -> str:
        return f"<FaultHandle {self.rule.id} hits={self.rule.hits}>"


class Faults:
    """``kafka.faults``: add, list and clear fault rules of a running FakeKafka."""

    def __init__(self, kafka: FakeKafka):
        self._kafka = kafka

    def add(self, **fields: Any) -> FaultHandle:
        """Add a rule (fields: see ``fakebroker.faults.rules``); ``FaultError`` if bad."""
        rule = self._kafka.call(lambda: self._kafka.cluster.faults.add(**fields))
        return FaultHandle(self._kafka, rule)

    def list(self) -> list[dict[str, Any]]:
        """Every rule still registered, as data (with hits and whether it is active)."""
        return self._kafka.call(lambda: [r.describe() for r in self._kafka.cluster.faults])

    def clear(self) -> None:
        """Remove every rule."""
        self._kafka.call(self._kafka.cluster.faults.clear)


class FakeKafka:
    """A fake Kafka cluster for synchronous code; start with ``with`` or ``start()``."""

    def __init__(self, brokers: int = 1, topics: Mapping[str, TopicSpec] | None = None,
                 **options: Any):
        self._args = dict(brokers=brokers, topics=topics, **options)
        self._cluster: FakeCluster | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeKafka:
        """Start the cluster; returns once every broker is listening."""
        self._thread = threading.Thread(target=self._run, name="fakebroker", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Stop the cluster and wait for its thread; safe to call twice."""
        if self._thread is None:
            return
        if self._stop is not None and self._token is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join()
        self._thread = None

    def __enter__(self) -> FakeKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        async with open_cluster(**self._args) as cluster:
            self._cluster = cluster
            self._token = trio.lowlevel.current_trio_token()
            self._stop = trio.Event()
            self._ready.set()
            await self._stop.wait()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the cluster's trio thread and return its result."""
        if self._token is None:
            raise RuntimeError("the cluster is not running")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def call_async(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` on the cluster's trio thread and return its result."""
        if self._token is None:
            raise RuntimeError("the cluster is not running")
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    @property
    def cluster(self) -> FakeCluster:
        if self._cluster is None:
            raise RuntimeError("the cluster is not running")
        return self._cluster

    # -- the cluster ----------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers

    @property
    def brokers(self) -> list[BrokerAddress]:
        return self.cluster.brokers

    @property
    def listeners(self) -> dict[str, str]:
        """Listener name (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) -> its bootstrap string
        over every broker."""
        return self.cluster.listeners

    @property
    def ssl(self) -> dict[str, str | None] | None:
        """``{"ca_file", "client_cert_file", "client_key_file"}`` (PEM files) for a TLS
        client; None without a TLS listener."""
        return self.cluster.ssl

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> None:
        """Create a topic (``ClusterError`` with Kafka's error name if it cannot be)."""
        self.call(lambda: self.cluster.create_topic(name, partitions, replication_factor,
                                                    configs))

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count."""
        return self.call(lambda: {n: len(t.partitions)
                                  for n, t in self.cluster.state.topics.items()})

    def records(self, topic: str, partition: int = 0, markers: bool = False) -> list[Record]:
        """The records of a partition, decoded (key, value, headers, timestamp, offset...);
        a transactional one's ``transaction`` is "committed", "aborted" or "open";
        ``markers``: with the transactions' control records."""
        return self.call(self.cluster.records, topic, partition, markers)

    def offsets(self, topic: str, partition: int = 0) -> PartitionOffsets:
        """(log start offset, high watermark) of a partition; ``.last_stable_offset``."""
        return self.call(self.cluster.offsets, topic, partition)

    def transactions(self) -> dict[str, TransactionView]:
        """Every transactional id, by id: state, producer id and epoch, partitions, groups,
        start time and timeout."""
        return self.call(self.cluster.transactions)

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a consumer group: state, generation, protocol, leader, members with
        their decoded assignments; None if the group does not exist."""
        return self.call(self.cluster.group, group_id)

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset a group committed for a partition, or None."""
        return self.call(self.cluster.committed, group_id, topic, partition)

    # -- faults and the journal -----------------------------------------------------------

    @property
    def faults(self) -> Faults:
        """Fault rules: ``kafka.faults.add(api="Fetch", topic="orders", partition=0,
        error="NOT_LEADER_OR_FOLLOWER", count=2)`` returns a ``FaultHandle``."""
        return Faults(self)

    def journal(self, **filters: Any) -> list[JournalEntry]:
        """Requests seen, oldest first; filters: api, broker, client_id, error, faulted,
        since, limit."""
        return self.call(lambda: self.cluster.journal(**filters))

    def coverage(self) -> dict[str, Any]:
        """API versions, error codes and faults exercised since start."""
        return self.call(self.cluster.coverage)

    # -- the cluster's operations (natural failures, releasing held requests), on its thread -

    move_leader = OnClusterThread(FakeCluster.move_leader)
    move_coordinator = OnClusterThread(FakeCluster.move_coordinator)
    broker_down = OnClusterThread(FakeCluster.broker_down)
    broker_up = OnClusterThread(FakeCluster.broker_up)
    delete_records = OnClusterThread(FakeCluster.delete_records)
    truncate = OnClusterThread(FakeCluster.truncate)
    rebalance = OnClusterThread(FakeCluster.rebalance)
    kick_member = OnClusterThread(FakeCluster.kick_member)
    set_latency = OnClusterThread(FakeCluster.set_latency)
    abort_transaction = OnClusterThread(FakeCluster.abort_transaction)
    release_fault = OnClusterThread(FakeCluster.release_fault)
    set_sasl_user = OnClusterThread(FakeCluster.set_sasl_user)
    remove_sasl_user = OnClusterThread(FakeCluster.remove_sasl_user)
