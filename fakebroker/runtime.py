"""The trio facade: ``async with open_cluster(...) as cluster`` runs a whole fake cluster.

Guarantees:

* Every broker listens on its own socket, one per listener (``listeners``: PLAINTEXT, SSL,
  SASL_PLAINTEXT, SASL_SSL; none asked: one PLAINTEXT listener), before ``open_cluster``
  yields; ``listeners`` gives each listener's bootstrap string over all brokers, and
  ``bootstrap_servers`` the PLAINTEXT listener's (the first listener's without one). Port 0
  lets the OS pick each port; a non-zero ``port`` gives consecutive ports ``port, port+1,
  ...``: the first listener's on every broker, then the next listener's (listener ``k`` of
  broker ``i``, both from 0, on ``port + k * brokers + i``).
* A TLS listener (SSL, SASL_SSL) serves certificates the cluster makes at start, in a private
  temporary directory removed when it stops (``ssl`` names the CA and client files), or the
  ones ``ssl_cert``/``ssl_key`` give (``fakebroker.security.tls``). A cluster without one
  imports nothing of TLS.
* All cluster state lives on the trio thread that runs ``open_cluster``.
* Leaving the block closes every listener and connection.
* Natural failures (``move_leader``, ``broker_down`` ...) change the cluster as Kafka's
  controller would, then wake every parked fetch so it answers from the new state.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

import trio

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

from fakebroker.log_tasks import run_cleaner, run_retention
from fakebroker.operations import operation
from fakebroker.options import ClusterSettings
from fakebroker.protocol.errors import ClusterError
from fakebroker.server import BrokerServer, Services, open_listener
from fakebroker.state import failures
from fakebroker.state.cluster import Cluster, Topic
from fakebroker.state.kafka_ids import kafka_uuid_text
from fakebroker.timers import run_timers

if TYPE_CHECKING:
    from fakebroker.faults.rules import FaultRegistry, FaultRule
    from fakebroker.journal import JournalEntry
    from fakebroker.protocol.records import Record
    from fakebroker.security.tls import ClusterTls
    from fakebroker.state.acls import Acl
    from fakebroker.state.views import (
        GroupView,
        PartitionOffsets,
        ShareGroupView,
        TransactionView,
    )
    from fakebroker.timers import Timed

TopicSpec = int | Mapping[str, Any]
# Where the journal writes each request as a JSON line: a text file, or a file's path.
JournalSink = TextIO | str | os.PathLike[str] | None
TOPIC_FIELDS = ("partitions", "replication_factor", "configs", "assignments")


class BrokerAddress(NamedTuple):
    """Where a client reaches broker ``id`` (a named tuple: declared at start, in a fraction
    of a frozen dataclass's time)."""

    id: int
    host: str
    port: int

    def host_port(self) -> tuple[str, int]:
        return self.host, self.port

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "host": self.host, "port": self.port}


class FakeCluster:
    """A running fake cluster, used from its trio thread."""

    def __init__(self, state: Cluster, servers: list[BrokerServer], services: Services,
                 nursery: trio.Nursery, settings: ClusterSettings,
                 tls: ClusterTls | None = None):
        self.state = state
        self.settings = settings
        self.servers = servers
        self.services = services
        self._nursery = nursery
        self._tls = tls

    @property
    def faults(self) -> FaultRegistry:
        """The fault rules: ``faults.add(api="Fetch", error="NOT_LEADER_OR_FOLLOWER")`` returns
        a rule with ``.hits``, ``await .wait(n, timeout)``, ``.held``, ``.release(n)`` and
        ``.remove()``."""
        return self.services.faults

    def add_fault(self, **fields: Any) -> FaultRule:
        """Shorthand for ``faults.add(**fields)``."""
        return self.services.faults.add(**fields)

    def journal(self, **filters: Any) -> list[JournalEntry]:
        """Journal entries, oldest first (filters: api, broker, client_id, listener,
        principal, error, faulted, since, limit; see ``Journal.query``)."""
        return self.services.journal.query(**filters)

    def coverage(self) -> dict[str, Any]:
        """Which API versions, error codes and faults the requests since start exercised."""
        return self.services.journal.coverage()

    @property
    def brokers(self) -> list[BrokerAddress]:
        return [BrokerAddress(b.id, b.host, b.port) for b in self.state.brokers.values()]

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,host:port,...`` of every broker, for a client's bootstrap.servers: the
        PLAINTEXT listener's, or the first listener's when there is none."""
        return ",".join(f"{b.host}:{b.port}" for b in self.brokers)

    @property
    def listeners(self) -> dict[str, str]:
        """Listener name -> its bootstrap string over every broker (``host:port,...``), in the
        order the listeners were asked for: ``{"PLAINTEXT": ...}`` when none was."""
        brokers = self.state.brokers.values()
        return {name: ",".join(f"{b.host}:{b.endpoints[name]}" for b in brokers)
                for name in listener_names(self.settings)}

    @property
    def ssl(self) -> dict[str, str | None] | None:
        """The PEM files a TLS client uses, ``{"ca_file", "client_cert_file",
        "client_key_file"}`` (the CA to trust; the client certificate and its unencrypted
        PKCS#8 key for mTLS, None with user-given certificates); None without a TLS
        listener."""
        return dict(self._tls.files) if self._tls is not None else None

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> Topic:
        """Create a topic; raises ``ClusterError`` (with Kafka's error name) when it can't."""
        return self.state.create_topic(name, partitions, replication_factor, dict(configs or {}))

    def records(self, topic: str, partition: int = 0, markers: bool = False) -> list[Record]:
        """Every record stored in a partition from its log start, decoded; a transactional
        one says what became of it (``transaction``: "committed", "aborted" or "open").
        ``markers``: the transactions' control records too (``is_control``; their
        ``transaction`` is the outcome they wrote)."""
        import dataclasses

        from fakebroker.protocol.records import decode_records

        log = self._partition(topic, partition).log
        found = []
        for batch in log.batches:
            if batch.control and not markers:
                continue
            outcome = log.outcome(batch.producer_id, batch.base_offset) \
                if batch.transactional else None
            found += [dataclasses.replace(r, transaction=outcome) if outcome else r
                      for r in decode_records(batch.data) if r.offset >= log.log_start_offset]
        return found

    def offsets(self, topic: str, partition: int = 0) -> PartitionOffsets:
        """(log start offset, high watermark) of a partition, with ``.last_stable_offset``."""
        from fakebroker.state.views import PartitionOffsets

        log = self._partition(topic, partition).log
        return PartitionOffsets(log.log_start_offset, log.high_watermark,
                                log.last_stable_offset)

    def transactions(self) -> dict[str, TransactionView]:
        """Every transactional id the cluster knows, by id: its state, producer id and epoch,
        the partitions and groups of its ongoing transaction (none once it ended, as Kafka's
        DescribeTransactions), when its last transaction began and its timeout."""
        from fakebroker.state.views import transaction_view

        return {txn_id: transaction_view(txn) for txn_id, txn in
                sorted(self.state.transactions.transactions.items())}

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a classic, KIP-848 consumer or streams group (state, generation,
        members, assignments; member epochs in KIP-848 and streams groups; a streams member's
        active, standby and warm-up tasks by subtopology id and its process id)."""
        from fakebroker.state.views import consumer_group_view, group_view, streams_group_view

        groups = self.state.groups
        consumer_group = groups.consumer_group(group_id)
        if consumer_group is not None:
            return consumer_group_view(consumer_group)
        streams_group = groups.streams_group(group_id)
        if streams_group is not None:
            return streams_group_view(streams_group)
        group = groups.classic_group(group_id)
        return group_view(group) if group is not None else None

    def share_group(self, group_id: str) -> ShareGroupView | None:
        """A snapshot of a share group (members, assignments, each partition's start offset
        and in-flight records with their state and delivery count), or None."""
        from fakebroker.state.views import share_group_view

        group = self.state.groups.share_group(group_id)
        return share_group_view(group) if group is not None else None

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset ``group_id`` committed for a partition, or None."""
        found = self.state.groups.offsets.get(group_id, topic, partition)
        return found.offset if found is not None else None

    # -- natural failures -----------------------------------------------------------------

    @operation("leader")
    def move_leader(self, topic: str, partition: int = 0, broker: int | None = None) -> int:
        """Move a partition's leader (default: the next live broker); the leader epoch bumps
        and the old leader answers NOT_LEADER_OR_FOLLOWER. Returns the new leader."""
        leader = failures.move_leader(self.state, topic, partition, broker)
        self._wake()
        return leader

    @operation("coordinator")
    def move_coordinator(self, group: str, broker: int | None = None) -> int:
        """Move a group's (or transactional id's) coordinator; returns the new one."""
        coordinator = failures.move_coordinator(self.state, group, broker)
        self._wake()
        return coordinator

    @operation()
    def broker_down(self, broker: int) -> None:
        """Take a broker down: it stops listening (a client connecting is refused; on Linux
        its port stays reserved for it), its connections drop, leadership moves to live
        in-sync replicas (partitions with none go offline), Metadata omits it."""
        failures.broker_down(self.state, broker)
        self.servers[broker - 1].stop()
        self._wake()

    @operation()
    async def broker_up(self, broker: int) -> None:
        """Bring a broker back on its old port; it leads its offline partitions again, and
        the reassignments waiting for it complete."""
        server = self.servers[broker - 1]
        state = self.state.brokers.get(broker)
        if state is None or state.up:
            failures.broker_up(self.state, broker)  # raises the right ClusterError
        await server.resume()
        failures.broker_up(self.state, broker)
        from fakebroker.state.elections import complete_reassignments  # reassignments'

        complete_reassignments(self.state)
        self._wake()

    @operation("log_start_offset")
    def delete_records(self, topic: str, partition: int = 0, before: int = -1) -> int:
        """Advance a partition's log start to ``before`` (-1: its end); returns it."""
        start = failures.delete_records(self.state, topic, partition, before)
        self._wake()
        return start

    @operation("log_end_offset")
    def truncate(self, topic: str, partition: int, offset: int) -> int:
        """Unclean leader election: drop records at or after ``offset``; returns the end."""
        end = failures.truncate(self.state, topic, partition, offset)
        self._wake()
        return end

    @operation()
    def rebalance(self, group: str) -> None:
        """Start a rebalance of a classic group now; members learn it from their next
        heartbeat (REBALANCE_IN_PROGRESS)."""
        from fakebroker.state.groups import GroupKind  # with the groups: made on first use

        kind = self.state.groups.kind(group)
        if kind is GroupKind.CONSUMER:
            raise ClusterError("INVALID_REQUEST",
                               f"{group} uses the consumer protocol (KIP-848): its "
                               "coordinator reconciles, it has no rebalance to force")
        if kind is None:
            raise ClusterError("GROUP_ID_NOT_FOUND", f"no group {group}")
        self.state.groups.classic.force_rebalance(group, trio.current_time())

    @operation()
    def kick_member(self, group: str, member_id: str) -> None:
        """Expire a member's session now (classic, KIP-848, share or streams group): the
        group rebalances without it and the member learns it (UNKNOWN_MEMBER_ID, as Kafka
        answers a member whose session ran out) and joins again; a share group member's
        acquired records are released (another member may take them), a streams group
        member's tasks go to the other members."""
        try:
            self.state.groups.expire_member(group, member_id, trio.current_time())
        except ClusterError as exc:
            raise ClusterError(exc.error, f"no member {member_id} in group {group}") from None

    @operation()
    def expire_share_locks(self, group: str) -> None:
        """Every acquisition lock of a share group runs out now, as when a consumer is too
        slow: its acquired records become available again (archived once at the delivery
        limit) and the next ShareFetch of any member acquires them, with a delivery count
        one higher."""
        self.state.groups.share.expire_locks(group)
        self.state.groups.expire(trio.current_time())

    @operation()
    def abort_transaction(self, transactional_id: str) -> None:
        """The coordinator aborts the ongoing transaction of ``transactional_id`` now, as
        when it times out: the epoch is bumped first (the producer is fenced: its next call
        fails as Kafka fails it), abort markers go to every partition of the transaction,
        its pending offsets are dropped."""
        self.state.transactions.abort(transactional_id)

    @operation()
    def set_latency(self, broker: int, ms: int) -> None:
        """Every request to ``broker`` waits ``ms`` milliseconds before it is handled."""
        if broker not in self.state.brokers:
            raise ClusterError("BROKER_NOT_AVAILABLE", f"no broker {broker}")
        if ms < 0:
            raise ClusterError("INVALID_REQUEST", "latency must be >= 0 ms")
        self.state.brokers[broker].latency_ms = ms

    @operation()
    def set_sasl_user(self, user: str, password: str) -> None:
        """Add a SASL user, or change its password, for PLAIN, SCRAM-SHA-256 and
        SCRAM-SHA-512 at once. It counts from the next authentication on: the old password is
        then refused, also when a connection re-authenticates (KIP-368); connections already
        authenticated keep working until they must re-authenticate, as on Kafka."""
        self.state.credentials.set_user(user, password)

    @operation()
    def remove_sasl_user(self, user: str) -> None:
        """Remove a SASL user (its PLAIN password and SCRAM credentials): its next
        authentication fails, and so does its next re-authentication, closing that
        connection; until then its authenticated connections keep working, as on Kafka."""
        if not self.state.credentials.remove_user(user):
            raise ClusterError("RESOURCE_NOT_FOUND", f"no SASL user {user}")

    @operation()
    def set_client_quota(self, key: str, value: float | None, user: str | None = None,
                         client_id: str | None = None, ip: str | None = None) -> None:
        """Set the client quota ``key`` (``producer_byte_rate``, ``consumer_byte_rate``,
        ``request_percentage``, ``controller_mutation_rate``; ``connection_creation_rate``
        for an ip) of an entity to ``value``, or remove it (None), as AlterClientQuotas
        does: the entity of ``user``, ``client_id`` or both, or of ``ip`` (``<default>``: the
        type's default entity). Enforced from the next request (or connection) on;
        INVALID_REQUEST with Kafka's message for what Kafka refuses."""
        from fakebroker.state.quotas import entity_of

        given = [(kind, None if name == "<default>" else name)
                 for kind, name in (("user", user), ("client-id", client_id), ("ip", ip))
                 if name is not None]
        [(_, refusal)] = self.state.quotas.alter([(entity_of(given), [(key, value)])])
        if refusal is not None:
            raise ClusterError(refusal.error, refusal.message)

    @operation("released")
    def release_fault(self, fault: int, count: int | None = None) -> int:
        """Let the ``count`` oldest requests hold rule ``fault`` holds go on (all of them
        when None); returns how many were let go. The same as the rule's ``release``."""
        try:
            rule = self.services.faults.get(fault)
        except KeyError:
            raise ClusterError("INVALID_REQUEST", f"no fault {fault}") from None
        return rule.release(count)

    # -- ACLs ---------------------------------------------------------------------------------

    def acls(self) -> list[Acl]:
        """Every ACL of the cluster, in the order they were created (what DescribeAcls with
        a match-anything filter lists)."""
        return list(self.state.acls)

    @operation()
    def create_acl(self, resource_type: str, resource_name: str, principal: str,
                   operation: str, permission: str = "ALLOW", pattern_type: str = "LITERAL",
                   host: str = "*") -> None:
        """Add an ACL, as CreateAcls adds one: ``resource_type`` TOPIC, GROUP, CLUSTER
        (named kafka-cluster), TRANSACTIONAL_ID...; ``pattern_type`` LITERAL or PREFIXED
        (a literal ``*`` names every resource); ``principal`` like ``User:alice`` or
        ``User:*``; ``operation`` READ, WRITE, DESCRIBE, ALL...; ``permission`` ALLOW or DENY;
        ``host`` the client address or ``*``. It counts when the cluster's ``authorizer`` is
        on. INVALID_REQUEST with Kafka's message for an ACL Kafka refuses."""
        from fakebroker.state.acls import Acl, AclError

        try:
            self.state.acls.create(Acl(resource_type.upper(), resource_name,
                                       pattern_type.upper(), principal, host,
                                       operation.upper(), permission.upper()))
        except AclError as exc:
            raise ClusterError("INVALID_REQUEST", str(exc)) from None

    @operation("deleted")
    def delete_acls(self, resource_type: str = "ANY", resource_name: str | None = None,
                    principal: str | None = None, operation: str = "ANY") -> int:
        """Remove the ACLs matching a filter (DeleteAcls' filter: ANY or None matches
        anything; a resource name matches exactly); returns how many were removed."""
        from fakebroker.state.acls import AclFilter

        return len(self.state.acls.delete([AclFilter(
            resource_type.upper(), resource_name, principal=principal,
            operation=operation.upper())])[0])

    def _wake(self) -> None:
        self.services.signal.fire()

    def _partition(self, topic: str, partition: int):
        found = self.state.partition(topic, partition)
        if found is None:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}/{partition}")
        return found


def _start_timers(nursery: trio.Nursery, coordinator: Timed) -> None:
    """Start the timer task of a coordinator the cluster just made (its groups, its
    transactions) in the cluster's nursery, unless the cluster is stopping: stopped, it needs
    no timer."""
    if not nursery.cancel_scope.cancel_called:
        nursery.start_soon(run_timers, coordinator)


def topic_args(spec: TopicSpec) -> dict[str, Any]:
    """``3`` or ``{"partitions": 3, "replication_factor": 1, "configs": {...}}`` as kwargs;
    ``TypeError`` for anything else."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        return {"partitions": spec}
    if isinstance(spec, Mapping) and set(spec) <= set(TOPIC_FIELDS):
        return dict(spec)
    raise TypeError(f"a topic is a partition count or a mapping of {', '.join(TOPIC_FIELDS)}; "
                    f"got {spec!r}")


def check_cluster(brokers: int, topics: Mapping[str, TopicSpec] | None,
                  journal_sink: JournalSink, options: Mapping[str, Any]) -> Cluster:
    """Check ``open_cluster``'s arguments as it checks them, without opening anything: the
    settings (``TypeError``, ``OptionError``), the journal sink (``TypeError``) and every
    topic, created on a scratch cluster of as many brokers (``ClusterError``, or
    ``TypeError`` for a spec of the wrong shape; both name the topic). Returns that scratch
    cluster: the state the cluster would start with, ports aside."""
    settings = ClusterSettings.from_kwargs({"brokers": brokers, **options})
    _check_sink(journal_sink)
    _check_topics(topics)
    scratch = Cluster(cluster_id=settings.cluster_id or kafka_uuid_text(), settings=settings)
    for _ in range(settings.brokers):
        scratch.add_broker(settings.advertised, 0)
    for name, spec in (topics or {}).items():
        _create_topic(scratch, name, spec)
    return scratch


def _check_topics(topics: object) -> None:
    """``TypeError`` unless ``topics`` is None or a mapping of topic name -> spec."""
    if topics is not None and not isinstance(topics, Mapping):
        raise TypeError("topics: expected a mapping of topic name to a partition count or "
                        f"spec, e.g. {{'orders': 3}}; got {topics!r}")


def _check_sink(sink: JournalSink) -> None:
    if not (sink is None or isinstance(sink, str | os.PathLike)
            or callable(getattr(sink, "write", None))):
        raise TypeError(f"journal_sink: expected a text file or a path, got {sink!r}")


def _create_topic(state: Cluster, name: str, spec: TopicSpec) -> None:
    """``state.create_topic`` from a spec; its errors name the topic."""
    try:
        state.create_topic(name, **topic_args(spec))
    except ClusterError as exc:
        raise ClusterError(exc.error, f"topic {name!r}: {exc}") from None
    except TypeError as exc:
        raise TypeError(f"topic {name!r}: {exc}") from None


@contextlib.contextmanager
def _journal_file(sink: JournalSink) -> Iterator[TextIO | None]:
    """The sink itself, or the file at its path opened to append (closed on leaving)."""
    if not isinstance(sink, str | os.PathLike):
        yield sink
        return
    try:
        file = open(sink, "a", encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise OSError(exc.errno, f"journal_sink: cannot open {os.fsdecode(sink)}: "
                                 f"{exc.strerror}") from None
    with file:
        yield file


def listener_names(settings: ClusterSettings) -> tuple[str, ...]:
    """The listeners every broker has: ``settings.listeners``, or one PLAINTEXT."""
    return settings.listeners or ("PLAINTEXT",)


async def listen(host: str, port: int) -> trio.SocketListener:
    """One listening socket on ``host:port`` (0 = OS-assigned), on ``host``'s first address;
    a broker serving it keeps its port while it is down (see ``open_listener``). An address
    that cannot be listened on is an ``OSError`` naming it."""
    try:
        return await open_listener(host, port)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None


@contextlib.asynccontextmanager
async def open_cluster(
    brokers: int = 1,
    topics: Mapping[str, TopicSpec] | None = None,
    *,
    journal_sink: JournalSink = None,
    **options: Any,
) -> AsyncIterator[FakeCluster]:
    """Run a fake cluster of ``brokers`` brokers with ``topics`` (name -> partitions/spec).

    ``options`` are the cluster settings of ``fakebroker.options.ClusterSettings`` (``host``
    to bind, ``advertised_host`` to give clients, ``port``, ``auto_create_topics``, ``seed``
    for probabilistic faults, ``journal_capacity`` ...): an unknown name is a ``TypeError``, a
    bad value an ``OptionError``; a topic that cannot be created is a ``ClusterError`` naming
    it. The journal writes each request as a JSON line to ``journal_sink`` when one is given:
    a text file (left open), or a path (opened to append before the brokers listen, closed
    when the cluster stops)."""
    settings = ClusterSettings.from_kwargs({"brokers": brokers, **options})
    _check_sink(journal_sink)
    _check_topics(topics)
    with _journal_file(journal_sink) as sink:
        async with _run_cluster(settings, topics, sink) as cluster:
            yield cluster


@contextlib.asynccontextmanager
async def _run_cluster(settings: ClusterSettings, topics: Mapping[str, TopicSpec] | None,
                       journal_sink: TextIO | None) -> AsyncIterator[FakeCluster]:
    state = Cluster(cluster_id=settings.cluster_id or kafka_uuid_text(), settings=settings)
    services = Services(settings, journal_sink)
    state.on_append(services.signal.fire)
    names = listener_names(settings)
    bootstrap = "PLAINTEXT" if "PLAINTEXT" in names else names[0]
    tls = None
    if any(name in ("SSL", "SASL_SSL") for name in names):
        from fakebroker.security.tls import ClusterTls

        tls = ClusterTls.start(settings)
    sockets: list[dict[str, trio.SocketListener]] = []  # per broker: listener -> socket
    try:
        try:
            for index in range(settings.brokers):
                sockets.append({})
                for k, name in enumerate(names):
                    port = settings.port + k * settings.brokers + index if settings.port else 0
                    sockets[-1][name] = await listen(settings.host, port)
                ports = {name: sock.socket.getsockname()[1]
                         for name, sock in sockets[-1].items()}
                state.add_broker(settings.advertised, ports[bootstrap], endpoints=ports)
            for name, spec in (topics or {}).items():
                _create_topic(state, name, spec)
        except BaseException:
            for listener in (sock for found in sockets for sock in found.values()):
                await listener.aclose()
            raise
        servers = [BrokerServer(state, broker, services, settings.max_request_bytes)
                   for broker in state.brokers.values()]
        async with trio.open_nursery() as nursery:
            for server, found in zip(servers, sockets, strict=True):
                for name, listener in found.items():
                    await nursery.start(functools.partial(
                        server.serve, name=name, tls=tls.context(name) if tls else None),
                        listener)
            state.on_coordinator(functools.partial(_start_timers, nursery))
            nursery.start_soon(services.signal.run_deadlines)
            nursery.start_soon(run_retention, state, settings)
            nursery.start_soon(run_cleaner, state)
            try:
                yield FakeCluster(state, servers, services, nursery, settings, tls)
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The caller's own exception, not wrapped by our nursery (trio's strict groups).
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        if tls is not None:
            tls.close()
