"""The fake cluster as plain objects: brokers, topics, partitions and their logs.

No sockets and no trio here. All mutation happens on the broker's trio thread; facades reach it
through ``trio.from_thread``. Observers registered with ``on_append`` are called after every
append, which is how long-polling fetches are woken.

Guarantees:

* Topic ids are random, non-zero and stable for the life of the topic.
* Broker ids are 1..n. Partition ``p`` of the ``k``-th topic created is led by broker
  ``(k + p) % n + 1``, with its replicas on the following brokers, so leaders spread.
* Every partition starts at leader epoch 0; each leader change bumps it.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fakebroker.options import ClusterSettings, java_trim
from fakebroker.protocol.errors import ClusterError
from fakebroker.state.kafka_ids import kafka_uuid_text
from fakebroker.state.log import PartitionLog
from fakebroker.state.loggers import Loggers

if TYPE_CHECKING:
    from fakebroker.state.acls import AclStore
    from fakebroker.state.client_metrics import Subscriptions
    from fakebroker.state.credentials import Credentials
    from fakebroker.state.delegation_tokens import DelegationTokens
    from fakebroker.state.features import Features
    from fakebroker.state.fetch_sessions import FetchSessionCache
    from fakebroker.state.groups import Groups
    from fakebroker.state.producers import ProducerRegistry
    from fakebroker.state.quotas import ClientQuotas
    from fakebroker.state.transactions import TransactionCoordinator
    from fakebroker.timers import Timed

LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_NAME = 249
# Partitions one CreateTopics request may make, or one CreatePartitions request add, all
# its topics together (Kafka's controller, ReplicationControlManager); the API handlers
# apply it.
MAX_PARTITIONS_PER_BATCH = 10_000
OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
# Kafka's internal topics (``Topic.isInternal``: by name, however they were made).
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, "__share_group_state"})
# How Kafka 4.4 makes the coordinators' topics (offsets.topic.num.partitions and
# transaction.state.log.num.partitions, 50; the configs it sets on them), measured: with the
# replication factor the fake's brokers report (offsets.topic.replication.factor 1).
INTERNAL_PARTITIONS = 50
INTERNAL_TOPIC_CONFIGS: dict[str, dict[str, str | None]] = {
    OFFSETS_TOPIC: {"cleanup.policy": "compact", "compression.type": "producer",
                    "segment.bytes": "104857600"},
    TRANSACTION_STATE_TOPIC: {"cleanup.policy": "compact", "compression.type": "uncompressed",
                              "min.insync.replicas": "1", "segment.bytes": "104857600",
                              "unclean.leader.election.enable": "false"},
}


@dataclass(slots=True, eq=False)
class Broker:
    """One broker: its id, where clients reach it, whether it is up, its loggers
    (``fakebroker.state.loggers``), its fetch sessions (``fakebroker.state.fetch_sessions``;
    made by the first Fetch to use them, gone when it goes down, as a restarted Kafka's).

    ``endpoints`` maps each listener's name (its security protocol: PLAINTEXT, SSL,
    SASL_PLAINTEXT, SASL_SSL) to its port, all at ``host``; ``port`` is the bootstrap
    listener's (PLAINTEXT if the broker has one, else its first). A broker made with a port
    alone has one PLAINTEXT listener on it."""

    id: int
    host: str
    port: int
    rack: str | None = None
    up: bool = True
    latency_ms: int = 0  # every request to this broker waits this long before it is handled
    endpoints: dict[str, int] = field(default_factory=dict)
    loggers: Loggers = field(default_factory=Loggers)
    fetch_sessions: FetchSessionCache | None = None

    def __post_init__(self) -> None:
        if not self.endpoints:
            self.endpoints = {"PLAINTEXT": self.port}


@dataclass(slots=True, eq=False)
class Partition:
    """One partition of a topic: its leader, replicas, in-sync replicas and log; while a
    reassignment is in progress, the replicas it adds and removes (``state.elections``)."""

    topic: str
    index: int
    leader: int
    replicas: list[int]
    isr: list[int]
    leader_epoch: int = 0
    log: PartitionLog = field(default_factory=PartitionLog)
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log.begin_epoch(self.leader_epoch)


@dataclass(slots=True, eq=False)
class Topic:
    """One topic: its id, partitions and the configs set on it."""

    name: str
    id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
    # The cluster's dynamic broker configs (``Cluster.default_broker_configs`` and
    # ``Cluster.broker_configs``), shared.
    broker_defaults: dict[str, str] = field(default_factory=dict)
    broker_configs: dict[int, dict[str, str]] = field(default_factory=dict)
    # The brokers' static configs (``ClusterSettings.kafka_configs``: overrides), shared.
    broker_static: dict[str, str] = field(default_factory=dict)

    def config_layers(self, broker: int | None = None) -> list[tuple[dict[str, str], int]]:
        """The broker configs a topic's unset configs come from on ``broker``, with their
        DescribeConfigs source, highest first: that broker's dynamic configs, the cluster's
        dynamic defaults, the static configs."""
        own = self.broker_configs.get(broker, {}) if broker is not None else {}
        return [(own, 2), (self.broker_defaults, 3), (self.broker_static, 4)]

    def config(self, name: str, broker: int | None = None) -> str:
        """The topic's value for config ``name`` on ``broker`` (the leader that applies it):
        set on the topic, else its broker synonym's from that broker's dynamic configs, the
        cluster's dynamic defaults, the static configs, else Kafka's default."""
        from fakebroker.state.configs import (
            TOPIC_DEFAULTS,
            broker_names,
            kafka_value,
            topic_config,
        )

        value = self.configs.get(name)
        if value is not None:
            return kafka_value(name, value)
        own = self.broker_configs.get(broker) if broker is not None else None
        for values in (own, self.broker_defaults, self.broker_static):
            if values and any(n in values for n in broker_names(name)):
                return str(topic_config(name, {}, self.config_layers(broker))[0])
        return str(TOPIC_DEFAULTS[name].default)  # no broker config sets it


# Cluster-wide dynamic broker configs of a new Kafka 4.4 cluster (source
# DYNAMIC_DEFAULT_BROKER_CONFIG): what it describes for the cluster default resource ("").
NEW_CLUSTER_DEFAULTS: dict[str, str] = {"min.insync.replicas": "1"}


def check_topic_name(name: str) -> None:
    """Raise ``invalid_topic_name(name)`` if there is one."""
    error = invalid_topic_name(name)
    if error is not None:
        raise error


def invalid_topic_name(name: str) -> ClusterError | None:
    """``ClusterError(INVALID_TOPIC_EXCEPTION)`` with Kafka's message for a name Kafka's
    ``Topic.validate`` refuses (empty, "." or "..", longer than 249 characters, a character
    other than ASCII letters, digits, '.', '_' and '-'), else None. Kafka checks it wherever
    it names an illegal topic before looking the topic up: CreateTopics, Metadata (auto-
    creating or not), DescribeConfigs, DescribeProducers, DescribeTopicPartitions."""
    reason = None
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_TOPIC_NAME:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME}"
    elif not LEGAL_TOPIC.fullmatch(name):
        reason = (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    if reason is None:
        return None
    return ClusterError("INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}")


@dataclass(eq=False)
class Cluster:
    """Brokers and topics of one fake cluster."""

    # A fresh random id in Kafka's form unless given (Kafka's ``kafka-storage random-uuid``).
    cluster_id: str = field(default_factory=kafka_uuid_text)
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, Topic] = field(default_factory=dict)
    # How the cluster was started (auto-creation, num.partitions ...): DescribeConfigs reports
    # these very values.
    settings: ClusterSettings = field(default_factory=ClusterSettings)
    default_replication_factor: int = 1
    # Dynamic broker configs (IncrementalAlterConfigs, AlterConfigs): the cluster default
    # (resource "", as a new Kafka 4.4 cluster has it) and each broker's own.
    default_broker_configs: dict[str, str] = field(
        default_factory=lambda: dict(NEW_CLUSTER_DEFAULTS))
    broker_configs: dict[int, dict[str, str]] = field(default_factory=dict)
    # The static broker configs every broker starts with (``settings.kafka_configs()``).
    static_broker_configs: dict[str, str] = field(default_factory=dict)
    # ``producers``, ``groups``, ``transactions`` and ``acls`` are made on first use (a request or
    # operation that needs them): a broker starts serving without importing their code.
    _producers: ProducerRegistry | None = None
    _client_metrics: Subscriptions | None = None
    _groups: Groups | None = None
    _transactions: TransactionCoordinator | None = None
    _credentials: Credentials | None = None
    _acls: AclStore | None = None
    _delegation_tokens: DelegationTokens | None = None
    _features: Features | None = None
    _quotas: ClientQuotas | None = None
    _coordinator_observers: list[Callable[[Timed], None]] = field(default_factory=list)
    # group or transactional id -> broker id, for coordinators moved on purpose
    coordinator_overrides: dict[str, int] = field(default_factory=dict)
    _topic_seq: itertools.count = field(default_factory=itertools.count)
    _append_observers: list[Callable[[], None]] = field(default_factory=list)
    _topics_by_id: dict[uuid.UUID, Topic] = field(default_factory=dict)
    # Bumped by every change to what Metadata reports: brokers (and whether they are up),
    # topics, partitions and their leaders, epochs, replicas and ISR (``changed``).
    generation: int = 0
    # A Produce was refused at ``settings.max_stored_bytes`` and none fitted since: the
    # warning is logged once each time the cap is reached (``fakebroker.state.storage_cap``).
    at_storage_cap: bool = False

    def __post_init__(self) -> None:
        """The static configs from the settings; a cluster formatted with eligible leader
        replicas (KIP-966: a new 4.1+ cluster) has min.insync.replicas as its dynamic
        default (Kafka's format writes it: the static one, else 1), one formatted without
        (an emulated release before 4.1) none."""
        from fakebroker.state.features import ELIGIBLE_LEADER_REPLICAS_VERSION

        self.static_broker_configs.update(self.settings.kafka_configs())
        if not self.features.at_least(ELIGIBLE_LEADER_REPLICAS_VERSION, 1):
            self.default_broker_configs.pop("min.insync.replicas", None)
        elif "min.insync.replicas" in self.static_broker_configs:
            self.default_broker_configs["min.insync.replicas"] = \
                self.static_broker_configs["min.insync.replicas"]
        self.default_replication_factor = int(
            self.settings.broker_config("default.replication.factor") or 1)

    def broker_config(self, name: str, broker: int | None = None) -> str | None:
        """Broker config ``name`` (one of ``fakebroker.options.BROKER_CONFIGS``) as ``broker``
        runs with it now: its dynamic config, else the cluster's dynamic default, else the
        static config it started with, else Kafka's default (None: Kafka has none); a dynamic
        value as Kafka parses it (Java-trimmed: "2000\\0" is 2000)."""
        own = self.broker_configs.get(broker, {}) if broker is not None else {}
        for layer in (own, self.default_broker_configs):
            if name in layer:
                return java_trim(layer[name])
        return self.settings.broker_config(name)

    @property
    def producers(self) -> ProducerRegistry:
        """Every producer id and its sequences, made on first use."""
        if self._producers is None:
            from fakebroker.state.producers import ProducerRegistry

            self._producers = ProducerRegistry()
        return self._producers

    @property
    def client_metrics(self) -> Subscriptions:
        """Client metrics subscriptions (CLIENT_METRICS config resources, KIP-714), made on
        first use."""
        if self._client_metrics is None:
            from fakebroker.state.client_metrics import Subscriptions

            self._client_metrics = Subscriptions()
        return self._client_metrics

    @property
    def acls(self) -> AclStore:
        """The cluster's ACLs, made on first use (the authorizer reads them)."""
        if self._acls is None:
            from fakebroker.state.acls import AclStore

            self._acls = AclStore()
        return self._acls

    @property
    def groups(self) -> Groups:
        """Every group and committed offset, made on first use, with the group settings;
        ``on_coordinator`` observers are told then."""
        if self._groups is None:
            from fakebroker.state.classic_groups import ClassicGroupCoordinator
            from fakebroker.state.groups import Groups
            from fakebroker.state.share_groups import ShareSettings
            from fakebroker.state.streams_groups import StreamsSettings

            config = self.settings.broker_config
            self._groups = Groups(ClassicGroupCoordinator(
                initial_rebalance_delay_ms=self.settings.group_initial_rebalance_delay_ms,
                min_session_timeout_ms=self.settings.group_min_session_timeout_ms,
                max_session_timeout_ms=int(config("group.max.session.timeout.ms") or 0)))
            self._groups.config = self.broker_config
            self._groups.open_transactions = lambda group_id: (
                self._transactions is not None and bool(self._transactions.pending.get(group_id)))
            self._groups.consumer.session_timeout_ms = int(
                config("group.consumer.session.timeout.ms") or 0)
            self._groups.consumer.heartbeat_interval_ms = int(
                config("group.consumer.heartbeat.interval.ms") or 0)
            self._groups.consumer.partitions_of = self._groups.share.partitions_of = \
                self._groups.streams.partitions_of = lambda: {
                    name: len(t.partitions) for name, t in self.topics.items()
                    if not t.internal}
            # records a share group releases wake the ShareFetches waiting, as appends do
            self._groups.share.on_release = self.notify_append
            self._groups.share.settings = ShareSettings.from_broker_config(config)
            self._groups.streams.settings = StreamsSettings.from_broker_config(config)
            self._made(self._groups)
        return self._groups

    @property
    def credentials(self) -> Credentials:
        """The SASL users (PLAIN passwords, SCRAM credentials), made on first use from the
        ``sasl_users`` setting."""
        if self._credentials is None:
            from fakebroker.state.credentials import Credentials

            self._credentials = Credentials(self.settings.sasl_users)
        return self._credentials

    @property
    def quotas(self) -> ClientQuotas:
        """The client quotas (AlterClientQuotas) and the rates enforced from them, made on
        first use."""
        if self._quotas is None:
            from fakebroker.state.quotas import ClientQuotas

            self._quotas = ClientQuotas()
        return self._quotas

    @property
    def throttling(self) -> bool:
        """Whether some user or client-id quota is set (requests are measured only then)."""
        return self._quotas is not None and self._quotas.enforcer.enforcing

    def connection_throttle_ms(self, broker_id: int, host: str, now_ms: int) -> int:
        """The ms a new connection from ``host`` to broker ``broker_id`` is held before it is
        closed unserved, 0 to serve it: its IP's ``connection_creation_rate``
        (``Enforcer.connection``); 0 at once while no IP quota is set."""
        if self._quotas is None or not self._quotas.connection_rates:
            return 0
        return self._quotas.enforcer.connection(broker_id, host, now_ms)

    @property
    def delegation_tokens(self) -> DelegationTokens:
        """The delegation tokens, made on first use from the ``delegation_token_*``
        settings."""
        if self._delegation_tokens is None:
            from fakebroker.state.delegation_tokens import DelegationTokens

            self._delegation_tokens = DelegationTokens(
                self.settings.delegation_token_secret_key,
                self.settings.delegation_token_max_lifetime_ms,
                self.settings.delegation_token_expiry_time_ms)
        return self._delegation_tokens

    @property
    def features(self) -> Features:
        """The finalized feature levels (ApiVersions, UpdateFeatures), made on first use:
        a new Kafka 4.4 cluster's (or the ``kafka_version`` release's), transaction.version
        at the ``transaction_version`` setting."""
        if self._features is None:
            from fakebroker.state.features import Features

            self._features = Features.new_cluster(self.settings.transaction_version,
                                                  self.settings.kafka_version)
        return self._features

    @property
    def transactions(self) -> TransactionCoordinator:
        """The transaction coordinator, made on first use from the settings (its verdict on a
        partition not added: the ``kafka_version`` release's), over the producers and the
        groups' offset store; ``on_coordinator`` observers are told then."""
        if self._transactions is None:
            from fakebroker.protocol.releases import since
            from fakebroker.state.transactions import (
                ABORT_SCAN_CONFIG,
                ABORTABLE_FROM,
                TransactionCoordinator,
            )

            self._transactions = TransactionCoordinator(
                self.producers, self.groups.offsets, self.settings.transaction_max_timeout_ms,
                not_added="TRANSACTION_ABORTABLE"
                if since(self.settings.kafka_version, ABORTABLE_FROM) else "INVALID_TXN_STATE",
                abort_scan_ms=int(self.settings.broker_config(ABORT_SCAN_CONFIG) or 10_000))
            self._transactions.write_markers = self.write_markers
            self._made(self._transactions)
        return self._transactions

    def on_coordinator(self, observer: Callable[[Timed], None]) -> None:
        """Call ``observer(coordinator)`` for the groups and the transaction coordinator
        when each is made (at once for one made already): its timer starts with it."""
        self._coordinator_observers.append(observer)
        for made in (self._groups, self._transactions):
            if made is not None:
                observer(made)

    def _made(self, coordinator: Timed) -> None:
        for observer in self._coordinator_observers:
            observer(coordinator)

    def changed(self) -> None:
        """Note a change to the metadata (answers kept for the old state are dropped)."""
        self.generation += 1

    # -- brokers --------------------------------------------------------------------------

    def add_broker(self, host: str, port: int, rack: str | None = None,
                   endpoints: dict[str, int] | None = None) -> Broker:
        """Add the next broker, at ``host:port``, with its listeners' ports (``endpoints``,
        listener name -> port; none: one PLAINTEXT listener on ``port``)."""
        broker = Broker(len(self.brokers) + 1, host, port, rack, endpoints=dict(endpoints or {}))
        self.brokers[broker.id] = broker
        self.changed()
        return broker

    @property
    def controller_id(self) -> int:
        return min((b.id for b in self.brokers.values() if b.up), default=-1)

    def live_brokers(self) -> list[Broker]:
        return [b for b in self.brokers.values() if b.up]

    def coordinator_of(self, key: str) -> int:
        """The broker coordinating a group (or transactional) id: deterministic, or moved;
        when that broker is down, the next live broker in id order."""
        moved = self.coordinator_overrides.get(key)
        if moved is not None and self.brokers[moved].up:
            return moved
        ids = sorted(self.brokers)
        start = zlib.crc32(key.encode()) % len(ids)
        for step in range(len(ids)):
            broker = ids[(start + step) % len(ids)]
            if self.brokers[broker].up:
                return broker
        return ids[start]

    # -- topics ---------------------------------------------------------------------------

    def topic_by_id(self, topic_id: uuid.UUID) -> Topic | None:
        """The live topic with this id (an index, checked against ``topics`` on every use, so
        it never answers for a deleted or replaced topic)."""
        topic = self._topics_by_id.get(topic_id)
        if topic is not None and self.topics.get(topic.name) is topic:
            return topic
        self._topics_by_id = {t.id: t for t in self.topics.values()}
        return self._topics_by_id.get(topic_id)

    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    def coordinator_topic(self, name: str) -> Topic:
        """The coordinators' topic ``name`` (``__consumer_offsets``, ``__transaction_state``),
        made as Kafka makes it on first use of its coordinator (FindCoordinator; Metadata
        naming it with auto-creation on) if it is not there."""
        topic = self.topics.get(name)
        if topic is None:
            topic = self.create_topic(name, INTERNAL_PARTITIONS, 1,
                                      configs=INTERNAL_TOPIC_CONFIGS[name])
        return topic

    def create_topic(
        self,
        name: str,
        partitions: int | None = None,
        replication_factor: int | None = None,
        configs: dict[str, str | None] | None = None,
        assignments: dict[int, list[int]] | None = None,
        validate_only: bool = False,
        admit: Callable[[int], bool] | None = None,
    ) -> Topic:
        """Create a topic; ``ClusterError`` with Kafka's error name and message when it cannot
        be, checked in Kafka's controller's order: name, existence, configs, then partitions
        (manual assignments, replication factor, partition count, placement), then
        ``admit(partitions)`` (the client's controller mutation quota, validate_only or not:
        False refuses the topic, THROTTLING_QUOTA_EXCEEDED without a message)."""
        check_topic_name(name)
        if name in self.topics:
            raise ClusterError("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists.")
        if configs:  # the config table is imported when a topic is given configs
            from fakebroker.state.configs import InvalidConfigError, validate_topic_config
        for key, value in (configs or {}).items():
            try:
                validate_topic_config(key, value, self.settings.kafka_version)
            except InvalidConfigError as exc:
                raise ClusterError("INVALID_CONFIG", str(exc)) from None
        count = self.settings.default_partitions if partitions in (None, -1) else partitions
        factor = (
            self.default_replication_factor if replication_factor in (None, -1)
            else replication_factor
        )
        if assignments:
            for given, what in ((replication_factor, "replication factor"),
                                (partitions, "numPartitions")):
                if given not in (None, -1):
                    raise ClusterError("INVALID_REQUEST", "A manual partition assignment was "
                                       f"specified, but {what} was not set to -1.")
            count = len(assignments)
            factor = len(next(iter(assignments.values())))
            self._check_assignments(assignments)
        if factor <= 0:
            raise ClusterError("INVALID_REPLICATION_FACTOR", "Replication factor must be larger "
                               "than 0, or -1 to use the default value.")
        if count <= 0:
            raise ClusterError("INVALID_PARTITIONS",
                               "Number of partitions was set to an invalid non-positive value.")
        if factor > len(self.brokers):
            raise ClusterError(
                "INVALID_REPLICATION_FACTOR",
                f"Unable to replicate the partition {factor} time(s): The target replication "
                f"factor of {factor} cannot be reached because only {len(self.brokers)} "
                "broker(s) are registered or some brokers have all their log directories "
                "cordoned.",
            )
        if admit is not None and not admit(count):
            raise ClusterError("THROTTLING_QUOTA_EXCEEDED")
        topic = Topic(
            name=name,
            id=uuid.uuid4(),
            partitions=[],
            configs={k: v for k, v in (configs or {}).items() if v is not None},
            internal=name in INTERNAL_TOPICS,
            broker_defaults=self.default_broker_configs,
            broker_configs=self.broker_configs,
            broker_static=self.static_broker_configs,
        )
        if validate_only:
            return topic
        start = next(self._topic_seq)
        for index in range(count):
            replicas = (assignments or {}).get(index) or self._spread(start + index, factor)
            topic.partitions.append(Partition(name, index, replicas[0], replicas, list(replicas)))
        self.topics[name] = topic
        self.changed()
        return topic

    def create_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None = None,
        validate_only: bool = False, admit: Callable[[int], bool] | None = None,
    ) -> None:
        """Grow topic ``name`` to ``count`` partitions (the request's bound,
        ``MAX_PARTITIONS_PER_BATCH``, is the CreatePartitions handler's); ``admit(added)`` is
        asked where Kafka's controller checks the client's mutation quota, before the
        assignments' brokers (False: THROTTLING_QUOTA_EXCEEDED without a message)."""
        topic = self.topics.get(name)
        if topic is None:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{name}' does not exist.")
        current = len(topic.partitions)
        if count == current:
            raise ClusterError("INVALID_PARTITIONS", f"Topic already has {current} partition(s).")
        if count < current:
            raise ClusterError("INVALID_PARTITIONS", f"The topic {name} currently has {current} "
                               f"partition(s); {count} would not be an increase.")
        factor = len(topic.partitions[0].replicas)
        if assignments is not None:
            if len(assignments) != count - current:
                raise ClusterError(
                    "INVALID_REPLICA_ASSIGNMENT",
                    f"Attempted to add {count - current} additional partition(s), but only "
                    f"{len(assignments)} assignment(s) were specified.",
                )
        if admit is not None and not admit(count - current):
            raise ClusterError("THROTTLING_QUOTA_EXCEEDED")
        if assignments is not None:
            self._check_assignments(dict(enumerate(assignments)))
        if validate_only:
            return
        start = next(self._topic_seq)
        for index in range(current, count):
            replicas = (
                assignments[index - current] if assignments else self._spread(start + index, factor)
            )
            topic.partitions.append(Partition(name, index, replicas[0], replicas, list(replicas)))
        self.changed()

    def delete_topic(self, name: str) -> Topic:
        """Delete topic ``name`` with its records and every group's committed offsets of it
        (Kafka's coordinator drops them too); ``ClusterError`` when there is none."""
        topic = self.topics.pop(name, None)
        if topic is None:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{name}' does not exist.")
        if self._groups is not None:  # no group has offsets before the groups are made
            self._groups.offsets.delete_topic(name)
        self.changed()
        return topic

    def _spread(self, start: int, factor: int) -> list[int]:
        ids = sorted(self.brokers)
        return [ids[(start + i) % len(ids)] for i in range(factor)]

    def _check_assignments(self, assignments: dict[int, list[int]]) -> None:
        for replicas in assignments.values():
            unknown = [r for r in replicas if r not in self.brokers]
            if unknown or not replicas or len(set(replicas)) != len(replicas):
                raise ClusterError(
                    "INVALID_REPLICA_ASSIGNMENT", f"Invalid replica assignment {replicas}"
                )

    # -- records --------------------------------------------------------------------------

    def on_append(self, observer: Callable[[], None]) -> None:
        """Call ``observer()`` after every append (used to wake waiting fetches)."""
        self._append_observers.append(observer)

    def write_markers(self, producer_id: int, producer_epoch: int, commit: bool,
                      partitions: Iterable[tuple[str, int]], coordinator_epoch: int
                      ) -> dict[tuple[str, int], str]:
        """Append a transaction's commit or abort marker to each partition's log (Kafka's
        WriteTxnMarkers); wakes waiting fetches. Answers per partition NONE, or
        UNKNOWN_TOPIC_OR_PARTITION for one that no longer exists."""
        from fakebroker.protocol.records import assign_offsets, encode_marker  # transactions'
        from fakebroker.state.retention import roll_for

        now_ms = time.time_ns() // 1_000_000
        results = {}
        for topic, index in partitions:
            partition = self.partition(topic, index)
            if partition is None:
                results[(topic, index)] = "UNKNOWN_TOPIC_OR_PARTITION"
                continue
            log_append = self.topics[topic].config(
                "message.timestamp.type", partition.leader) == "LogAppendTime"
            stored = assign_offsets(
                encode_marker(producer_id, producer_epoch, commit, coordinator_epoch, now_ms),
                partition.log.log_end_offset, partition.leader_epoch,
                now_ms if log_append else None)
            partition.log.append_marker(stored, now_ms, partition.leader_epoch, producer_id,
                                        commit, coordinator_epoch,
                                        roll_for(self.topics[topic], partition, now_ms))
            self.producers.end_transaction(topic, index, producer_id, producer_epoch)
            results[(topic, index)] = "NONE"
        self.notify_append()
        return results

    def notify_append(self) -> None:
        for observer in self._append_observers:
            observer()
