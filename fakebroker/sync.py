"""The synchronous facade: ``with FakeKafka(brokers=1, topics={"orders": 3}) as kafka:``.

Trio runs the cluster in a background thread; every method here is thread-safe because it
runs its work on that thread (``trio.from_thread``) and returns the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import trio

from fakebroker.protocol.records import Record
from fakebroker.runtime import BrokerAddress, FakeCluster, TopicSpec, open_cluster
from fakebroker.state.inspect import GroupView

T = TypeVar("T")


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

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> None:
        """Create a topic (``ClusterError`` with Kafka's error name if it cannot be)."""
        self.call(lambda: self.cluster.create_topic(name, partitions, replication_factor,
                                                    configs))

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count."""
        return self.call(lambda: {n: len(t.partitions)
                                  for n, t in self.cluster.state.topics.items()})

    def records(self, topic: str, partition: int = 0) -> list[Record]:
        """The records of a partition, decoded (key, value, headers, timestamp, offset...)."""
        return self.call(self.cluster.records, topic, partition)

    def offsets(self, topic: str, partition: int = 0) -> tuple[int, int]:
        """(log start offset, high watermark) of a partition."""
        return self.call(self.cluster.offsets, topic, partition)

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a consumer group: state, generation, protocol, leader, members with
        their decoded assignments; None if the group does not exist."""
        return self.call(self.cluster.group, group_id)

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset a group committed for a partition, or None."""
        return self.call(self.cluster.committed, group_id, topic, partition)
