"""The synchronous facade: ``with FakeKafka(brokers=1, topics={"orders": 3}) as kafka:``.

Trio runs the cluster in a background thread; every method here is thread-safe because it
runs its work on that thread (``trio.from_thread``) and returns the result.

Guarantees:

* Every argument is checked when the ``FakeKafka`` is made, as ``open_cluster`` checks it
  (``TypeError`` for an unknown option or a sink that is not one, ``OptionError`` for a bad
  setting, ``ClusterError`` for a topic that cannot be created); what is left for ``start()``
  is what only starting can tell (a port in use, a journal file that cannot be opened).
* The cluster's thread never dies in silence: an error that ends it after ``start()`` is
  logged (logger ``fakebroker``, level ERROR, with its traceback) when it happens, and the
  next call (any method, ``bootstrap_servers`` included) raises ``ClusterStopped`` with that
  error as its cause; so does ``stop()``, unless a call reported it already.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import trio

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

from fakebroker.faults.rules import FaultRule
from fakebroker.journal import JournalEntry
from fakebroker.operations import OnClusterThread
from fakebroker.protocol.records import Record
from fakebroker.runtime import (
    BrokerAddress,
    FakeCluster,
    JournalSink,
    TopicSpec,
    check_cluster,
    open_cluster,
)
from fakebroker.state.views import (
    GroupView,
    PartitionOffsets,
    ShareGroupView,
    TransactionView,
)

if TYPE_CHECKING:
    from fakebroker.state.acls import Acl

T = TypeVar("T")
log = logging.getLogger("fakebroker")


class ClusterStopped(RuntimeError):
    """The cluster's thread ended with an error after it had started; ``__cause__`` is that
    error."""


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
                 *, journal_sink: JournalSink = None, **options: Any):
        """``brokers``, ``topics`` (name -> partitions, or a mapping of ``partitions``,
        ``replication_factor``, ``configs``), ``journal_sink`` (a text file, or the path of
        one to append to) and the settings of ``fakebroker.options.ClusterSettings``: all
        checked here (see the module's guarantees)."""
        check_cluster(brokers, topics, journal_sink, options)
        self._args = dict(brokers=brokers, topics=topics, journal_sink=journal_sink, **options)
        self._cluster: FakeCluster | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None  # why start() failed
        self._failure: ClusterStopped | None = None  # why the running cluster stopped
        self._failure_reported = False
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
        """Stop the cluster and wait for its thread; safe to call twice. ``ClusterStopped``
        if the cluster had stopped on an error that no call reported yet."""
        if self._thread is None:
            return
        if self._stop is not None and self._token is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join()
        self._thread = None
        self._check_running()

    def __enter__(self) -> FakeKafka:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None:  # the block's own error goes on: the failure is logged
            self._failure_reported = True
        self.stop()

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            if not self._ready.is_set():  # reported to start()
                self._error = exc
                self._ready.set()
                return
            cause = _innermost(exc)
            log.error("the fake Kafka cluster stopped on an error: %s: %s",
                      type(cause).__name__, cause, exc_info=exc)
            failure = ClusterStopped(f"the cluster stopped on an error: "
                                     f"{type(cause).__name__}: {cause}")
            failure.__cause__ = cause
            self._failure = failure

    def _check_running(self) -> None:
        """Raise ``ClusterStopped`` if the cluster's thread ended on an error (reported
        once to ``stop()``, to every call)."""
        if self._failure is not None and not (self._thread is None and
                                              self._failure_reported):
            self._failure_reported = True
            raise self._failure

    async def _main(self) -> None:
        async with open_cluster(**self._args) as cluster:
            self._cluster = cluster
            self._token = trio.lowlevel.current_trio_token()
            self._stop = trio.Event()
            self._ready.set()
            await self._stop.wait()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the cluster's trio thread and return its result."""
        return self._on_thread(trio.from_thread.run_sync, fn, *args)

    def call_async(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` on the cluster's trio thread and return its result."""
        return self._on_thread(trio.from_thread.run, fn, *args)

    def _on_thread(self, run: Callable[..., T], fn: Callable[..., Any], *args: Any) -> T:
        self._check_running()
        if self._token is None:
            raise RuntimeError("the cluster is not running")
        try:
            return run(fn, *args, trio_token=self._token)
        except trio.RunFinishedError:
            if self._thread is not None:
                self._thread.join()  # the failure, if any, is recorded once it has ended
            self._check_running()
            raise RuntimeError("the cluster is not running") from None

    @property
    def cluster(self) -> FakeCluster:
        self._check_running()
        if self._cluster is None:
            raise RuntimeError("the cluster is not running")
        return self._cluster

    # -- the cluster ----------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers

    @property
    def client_config(self) -> dict[str, str]:
        """Kafka client properties reaching this cluster, by Java's names:
        ``bootstrap.servers`` (PLAINTEXT), as ``RealCluster.client_config`` gives a real
        one's (``fakebroker.client_config.for_librdkafka`` turns them into confluent-kafka's).
        """
        return {"bootstrap.servers": self.bootstrap_servers}

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

    def name(self, base: str) -> str:
        """The name a test gives ``base`` (a topic, group or transactional id): ``base``
        itself, on a cluster of its own. A test that runs on a shared real cluster too
        names things through this (``RealCluster.name`` puts the test's prefix before it)."""
        return base

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> None:
        """Create a topic (``ClusterError`` with Kafka's error name if it cannot be)."""
        self.call(lambda: self.cluster.create_topic(name, partitions, replication_factor,
                                                    configs))

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count (Kafka's internal topics left out, as the real
        broker's inspection leaves them out)."""
        return self.call(lambda: {n: len(t.partitions)
                                  for n, t in self.cluster.state.topics.items()
                                  if not t.internal})

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
        """A snapshot of a classic, KIP-848 or streams group: state, generation, protocol,
        leader, members with their decoded assignments and, in KIP-848 and streams groups,
        their member epochs (a streams member's assignment: its active tasks by subtopology
        id, beside its standby and warm-up tasks and process id); None if the group does not
        exist."""
        return self.call(self.cluster.group, group_id)

    def share_group(self, group_id: str) -> ShareGroupView | None:
        """A snapshot of a share group: members and their assignments, and per (topic,
        partition) the start offset and the in-flight records (offset, state, delivery
        count, holder); None if there is no such share group."""
        return self.call(self.cluster.share_group, group_id)

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset a group committed for a partition, or None."""
        return self.call(self.cluster.committed, group_id, topic, partition)

    def acls(self) -> list[Acl]:
        """Every ACL of the cluster, in creation order (``fakebroker.state.acls.Acl``)."""
        return self.call(self.cluster.acls)

    # -- faults and the journal -----------------------------------------------------------

    @property
    def faults(self) -> Faults:
        """Fault rules: ``kafka.faults.add(api="Fetch", topic="orders", partition=0,
        error="NOT_LEADER_OR_FOLLOWER", count=2)`` returns a ``FaultHandle``."""
        return Faults(self)

    def journal(self, **filters: Any) -> list[JournalEntry]:
        """Requests seen, oldest first; filters: api, broker, client_id, listener, principal,
        error, faulted, since, limit."""
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
    expire_share_locks = OnClusterThread(FakeCluster.expire_share_locks)
    set_latency = OnClusterThread(FakeCluster.set_latency)
    abort_transaction = OnClusterThread(FakeCluster.abort_transaction)
    release_fault = OnClusterThread(FakeCluster.release_fault)
    create_acl = OnClusterThread(FakeCluster.create_acl)
    delete_acls = OnClusterThread(FakeCluster.delete_acls)
    set_sasl_user = OnClusterThread(FakeCluster.set_sasl_user)
    remove_sasl_user = OnClusterThread(FakeCluster.remove_sasl_user)
    set_client_quota = OnClusterThread(FakeCluster.set_client_quota)


def _innermost(exc: BaseException) -> BaseException:
    """The error itself, out of the groups trio's nurseries wrap it in (beside the
    cancellations it caused)."""
    while isinstance(exc, BaseExceptionGroup):
        errors = [e for e in exc.exceptions if not isinstance(e, trio.Cancelled)]
        if len(errors) != 1:
            break
        exc = errors[0]
    return exc
