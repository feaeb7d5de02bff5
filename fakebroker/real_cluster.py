"""FakeKafka's inspection API over a real Kafka cluster, so one test body reads the same on
either: ``bootstrap_servers``, ``brokers``, ``listeners``, ``ssl``, ``name``, ``create_topic``,
``topics``, ``records``, ``offsets``, ``group``, ``committed`` and ``transactions``, answered
by Kafka's own APIs; on a local Kafka the session started (``local``: ``--kafka-nodes N``),
``broker_down`` and ``broker_up`` too, which stop a node and start it again. The pytest
plugin's ``kafka`` fixture gives one under ``--kafka=real`` (``fakebroker.pytest_plugin``); it
needs confluent-kafka (``pip install confluent-kafka``).

* topics, partitions, committed offsets, topic creation: confluent-kafka's ``AdminClient``
  (librdkafka), the way an application reads them;
* ``offsets`` and ``records``: ListOffsets and Fetch (read_uncommitted, from the log start to
  the high watermark) at the partition's leader, on the wire (``fakebroker.wire_client``),
  the batches decoded as the fake's ``records`` decodes its log: the same ``Record``s, with
  the batch's producer id, epoch and sequence (which no client library hands out), control
  records left out as there;
* ``group``: ConsumerGroupDescribe, then DescribeGroups, on the wire, because librdkafka's
  admin leaves out what tests read (a KIP-848 group's epoch, a member's regex). Kafka's
  describe APIs do not report a classic group's generation or leader: those are ``None``
  here (a test reads them from the JoinGroup answer instead).
* ``transactions``: ListTransactions, then DescribeTransactions at each id's coordinator, on
  the wire. Kafka names a transaction's groups only as the ``__consumer_offsets`` partitions
  their offsets go to, which cannot be turned back into group ids: ``groups`` is ``()``
  here, and ``partitions`` leaves those internal partitions out, as the fake's.

Each test gets a cluster of its own in one of two ways (``RealCluster.isolated``):

* a **shared** cluster (the default: one the tests do not own, e.g. ``--kafka-bootstrap``)
  is never cleared. Each test gets a name prefix of its own (``name("orders")`` is
  ``fakebroker-<session>-<worker>-<n>-orders``; the session part is random, the worker is
  pytest-xdist's, so concurrent sessions and workers never meet); ``topics()`` and
  ``transactions()`` list only the prefix's, the marker's topics are made under it, and
  after the test its groups (members removed first) and topics are deleted. A test must name
  every topic, group and transactional id it makes through ``name``, or it is neither
  isolated nor cleaned up. A session killed mid-test leaves its prefixed names behind.
* an **exclusive** cluster (``shared=False``: a broker the session started for itself) is
  made to look like a fresh fake cluster before each test (``reset``): every group's members
  removed and the group deleted, every topic deleted (waiting until the broker no longer
  lists it), on a broker with an authorizer every ACL deleted, then the marker's topics
  created. ``name`` is the identity there, as on the fake.

Every topic the inspection creates is served by its leader and known to every broker before
it returns, as a fake topic is from its creation.

``listeners`` and ``ssl`` are FakeKafka's: listener name -> address, and the client's PEM
files on a broker with TLS listeners, else None. Inspection goes through
``bootstrap_servers`` as ``client_config`` says: Kafka client properties by Java's names
(``security.protocol``, SASL, TLS: ``fakebroker.client_config``; PLAINTEXT without any),
with ``bootstrap.servers``, the same for the tests' own clients
(``fakebroker.client_config.for_librdkafka`` turns them into confluent-kafka's).
"""

from __future__ import annotations

import copy
import dataclasses
import struct
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from fakebroker.client_config import connect, for_librdkafka
from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.protocol.records import Record, decode_records, next_offset
from fakebroker.runtime import BrokerAddress, TopicSpec, topic_args
from fakebroker.state.views import (
    GroupView,
    MemberView,
    PartitionOffsets,
    TransactionView,
    assigned_partitions,
    sorted_tasks,
)
from fakebroker.wire_client import WireClient

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

    from fakebroker.real.launch import KafkaCluster, RealKafka

T = TypeVar("T")

# Kafka's internal topics (org.apache.kafka.common.internals.Topic): never listed by topics(),
# never deleted by reset().
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
TIMEOUT = 30.0
# FindCoordinator's key types.
GROUP_KEY, TRANSACTION_KEY = 0, 1
# DescribeTransactions' states of a transaction not yet ended (TransactionState's names).
OPEN_TRANSACTION_STATES = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort",
                                     "PrepareEpochFence"})


def wait_for(condition: Callable[[], T], what: str, timeout: float = TIMEOUT) -> T:
    """Poll ``condition`` until it returns something true; ``TimeoutError`` naming ``what``
    (tests on either broker use it: the message names no broker)."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def by_subtopology(task_ids: Any) -> dict[str, list[int]]:
    """StreamsGroupDescribe's TaskIds entries as a view holds tasks."""
    return sorted_tasks({t.subtopology_id: t.partitions for t in task_ids})


def with_outcomes(records: list[Record], markers: bool) -> list[Record]:
    """``records`` (a partition's, in offset order) with each transactional one's outcome,
    read from the log as a read_committed consumer reads it: a producer's records up to its
    next control record took that marker's outcome (key: version, then type 0 abort or 1
    commit); those after its last marker are still open."""
    outcome: dict[int, str] = {}  # offset -> outcome
    waiting: dict[int, list[int]] = {}  # producer id -> offsets awaiting its marker
    for record in records:
        if not record.is_transactional:
            continue
        if record.is_control:
            commit = struct.unpack_from(">hh", record.key or bytes(4))[1] == 1
            ended = "committed" if commit else "aborted"
            for offset in [*waiting.pop(record.producer_id, []), record.offset]:
                outcome[offset] = ended
        else:
            waiting.setdefault(record.producer_id, []).append(record.offset)
    return [dataclasses.replace(r, transaction=outcome.get(r.offset, "open"))
            if r.is_transactional else r
            for r in records if markers or not r.is_control]


class RealCluster:
    """A real Kafka cluster seen through FakeKafka's inspection API (see the module doc).

    ``shared``: the cluster is not the tests' own, so tests are isolated by name prefixes
    and nothing else is ever deleted; ``shared=False`` for a broker the session started
    for itself, cleared before each test (``reset``). ``authorizer``: the broker has one,
    so ``reset`` deletes its ACLs too (an exclusive cluster only)."""

    def __init__(self, bootstrap_servers: str, listeners: Mapping[str, str] | None = None,
                 ssl: Mapping[str, str] | None = None, authorizer: bool = False, *,
                 shared: bool = True, local: KafkaCluster | None = None,
                 client_config: Mapping[str, str] | None = None):
        try:
            from confluent_kafka.admin import AdminClient
        except ImportError:
            raise ImportError("fakebroker's inspection of a real Kafka cluster uses "
                              "confluent-kafka: pip install confluent-kafka") from None

        self.bootstrap_servers = bootstrap_servers
        self.listeners = dict(listeners or {"PLAINTEXT": bootstrap_servers})
        self.ssl = dict(ssl) if ssl is not None else None
        self.shared = shared
        self.local = local
        # Kafka client properties (Java's names: fakebroker.client_config) reaching this
        # cluster, for the tests' clients and for the inspection's own connections.
        self.client_config = {**(client_config or {}), "bootstrap.servers": bootstrap_servers}
        self.prefix = ""  # this test's names (a shared cluster's isolated view)
        self._authorizer = authorizer
        # Never auto-create: a librdkafka handle that looked up a topic keeps refreshing it,
        # and (as a producer-type handle) by default with auto-creation allowed, which would
        # bring a topic back as soon as reset() deleted it. Lookups list every topic.
        self._admin: AdminClient | None = AdminClient({
            **for_librdkafka(self.client_config), "log_level": 3,
            "allow.auto.create.topics": False})

    def __repr__(self) -> str:
        shown = f" prefix={self.prefix!r}" if self.prefix else ""
        return f"<RealCluster {self.bootstrap_servers}{shown}>"

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            raise RuntimeError(f"{self!r} is closed")
        return self._admin

    def name(self, base: str) -> str:
        """The name this test gives ``base`` (a topic, group or transactional id): behind the
        test's prefix on a shared cluster, ``base`` itself on an exclusive one (and on the
        fake: ``FakeKafka.name``)."""
        return self.prefix + base

    def warm_up(self) -> RealCluster:
        """Wait until a fresh broker has what a fake cluster has from its start: a group
        coordinator (Kafka creates ``__consumer_offsets`` on the first FindCoordinator and
        answers COORDINATOR_NOT_AVAILABLE meanwhile) and producer ids (the first
        InitProducerId waits for a block from the controller: COORDINATOR_LOAD_IN_PROGRESS),
        at every broker (each asks the controller for a block of its own)."""
        def answered(address: str, api: str, version: int, body: dict) -> bool:
            with self._connect(address, "warm-up") as client:
                return client.request(api, version, body).error_code == 0

        first = self.bootstrap_servers.split(",")[0]
        wait_for(lambda: answered(first, "FindCoordinator", 3,
                                  {"key": "warm-up", "key_type": 0}), "a group coordinator")
        for address in self._broker_addresses():
            wait_for(lambda a=address: answered(a, "InitProducerId", 4, {
                "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1,
                "producer_epoch": -1}), f"producer ids at {address}")
        return self

    def close(self) -> None:
        """Let go of the admin client (before the broker stops: it would log refusals)."""
        self._admin = None

    # -- the cluster ----------------------------------------------------------------------

    def broker_down(self, broker: int) -> None:
        """Take a broker down, as ``FakeKafka.broker_down``: on a local Kafka (``local``, the
        cluster the session started), its node stops (a controlled shutdown): leadership
        moves to live in-sync replicas and Metadata omits it."""
        self._node(broker).stop()

    def broker_up(self, broker: int) -> None:
        """Bring a broker taken down back, as ``FakeKafka.broker_up``: its node starts again
        on its old ports; returns once Metadata lists it."""
        assert self.local is not None  # _node checked it
        self.local.start_again(self._node(broker))

    def _bootstrap_client(self, client_id: str) -> WireClient:
        """A wire client to the first bootstrap server that takes the connection (a broker of
        the list may be down)."""
        *others, last = self.bootstrap_servers.split(",")
        for address in others:
            try:
                return self._connect(address, client_id)
            except OSError:
                continue
        return self._connect(last, client_id)

    def _node(self, broker: int) -> RealKafka:
        if self.local is None:
            raise RuntimeError(f"{self!r} is not a local Kafka the session started: its "
                               "brokers cannot be taken down from here")
        for node in self.local.nodes:
            if node.node_id == broker:
                return node
        raise ValueError(f"no broker {broker}: the nodes are 1 to {len(self.local.nodes)}")

    @property
    def brokers(self) -> list[BrokerAddress]:
        metadata = self.admin.list_topics(timeout=TIMEOUT)
        return [BrokerAddress(b.id, b.host, b.port)
                for b in sorted(metadata.brokers.values(), key=lambda b: b.id)]

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, str] | None = None) -> None:
        """Create a topic and wait until every partition's leader serves it, as a fake topic is
        from its creation (``ClusterError`` with Kafka's error name if it cannot be created).
        Kafka answers CreateTopics before its broker leads the new partitions: a Produce at
        once may meet NOT_LEADER_OR_FOLLOWER, which clients retry."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import NewTopic

        topic = NewTopic(name, partitions, replication_factor, config=dict(configs or {}))
        future = self.admin.create_topics([topic], operation_timeout=TIMEOUT)[name]
        try:
            future.result(timeout=TIMEOUT)
        except KafkaException as exc:
            error = exc.args[0]
            raise ClusterError(error.name(), error.str()) from None
        wait_for(lambda: self._served(name, partitions), f"topic {name!r} to be served")

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count (Kafka's internal topics left out; on a shared
        cluster only this test's: those named behind its prefix)."""
        metadata = self.admin.list_topics(timeout=TIMEOUT)
        return {name: len(t.partitions) for name, t in metadata.topics.items()
                if name not in INTERNAL_TOPICS and t.error is None
                and name.startswith(self.prefix)}

    def records(self, topic: str, partition: int = 0, markers: bool = False) -> list[Record]:
        """The data records of a partition from its log start to its high watermark, as the
        leader serves them to a read_uncommitted consumer (Fetch), decoded as the fake's; a
        transactional record's ``transaction`` is what its producer's next marker in the
        log wrote ("committed", "aborted"), or "open" before any; ``markers``: with the
        control records (their ``transaction``: the outcome they wrote)."""
        return with_outcomes(self._stored(topic, partition), markers)

    def _stored(self, topic: str, partition: int) -> list[Record]:
        start, _ = self.offsets(topic, partition)
        records: list[Record] = []
        offset = start
        with self._connect(self._leader(topic, partition), "inspect") as client:
            while True:
                answer = client.request("Fetch", 12, {
                    "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 26,
                    "isolation_level": 0, "topics": [{"topic": topic, "partitions": [
                        {"partition": partition, "fetch_offset": offset,
                         "partition_max_bytes": 1 << 26}]}]})
                (served,) = answer.responses[0].partitions
                if served.error_code != 0:
                    raise ClusterError(ErrorCode(served.error_code).name, f"{topic}-{partition}")
                if offset >= served.high_watermark:
                    return records
                after = next_offset(served.records)  # past emptied batches, compaction's
                if after is None or after <= offset:
                    raise ClusterError("UNKNOWN_SERVER_ERROR",
                                       f"{topic}-{partition}: nothing served at {offset}")
                records += [r for r in decode_records(served.records) if r.offset >= offset]
                offset = after

    def offsets(self, topic: str, partition: int = 0) -> PartitionOffsets:
        """(log start offset, high watermark) of a partition, with its last stable offset
        (ListOffsets at its leader: earliest, latest, latest for read_committed)."""
        with self._connect(self._leader(topic, partition), "inspect") as client:
            answers = []
            for timestamp, isolation in ((-2, 0), (-1, 0), (-1, 1)):
                answer = client.request("ListOffsets", 7, {
                    "replica_id": -1, "isolation_level": isolation, "topics": [
                        {"name": topic, "partitions": [
                            {"partition_index": partition, "timestamp": timestamp}]}]})
                (found,) = answer.topics[0].partitions
                if found.error_code != 0:
                    raise ClusterError(ErrorCode(found.error_code).name, f"{topic}-{partition}")
                answers.append(found.offset)
        return PartitionOffsets(*answers)

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        """The offset a group committed for a partition, or None (OffsetFetch, as an admin)."""
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        request = ConsumerGroupTopicPartitions(group_id, [TopicPartition(topic, partition)])
        future = self.admin.list_consumer_group_offsets([request])[group_id]
        (found,) = future.result(timeout=TIMEOUT).topic_partitions
        if found.error is not None:
            raise ClusterError(found.error.name(), found.error.str())
        return found.offset if found.offset >= 0 else None

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a group: a KIP-848 group from ConsumerGroupDescribe (generation is
        the group epoch, protocol the server assignor), a streams group from
        StreamsGroupDescribe (members' active, standby and warm-up tasks by subtopology id,
        their epochs and process ids), else a classic group from DescribeGroups (generation
        and leader None: Kafka does not report them); None if there is no such group."""
        with self._connect(self._coordinator(group_id), "inspect") as client:
            (described,) = client.request("ConsumerGroupDescribe", 0,
                                          {"group_ids": [group_id]}).groups
            if described.error_code == 0:
                return GroupView(
                    group_id, described.group_state, described.group_epoch, "consumer",
                    described.assignor_name, None, tuple(
                        MemberView(m.member_id, m.instance_id, m.client_id, m.client_host,
                                   {t.topic_name: sorted(t.partitions)
                                    for t in m.assignment.topic_partitions},
                                   m.subscribed_topic_regex, m.member_epoch)
                        for m in described.members))
            if described.error_code != ErrorCode.GROUP_ID_NOT_FOUND:
                raise ClusterError(ErrorCode(described.error_code).name,
                                   described.error_message or "")
            (streams,) = client.request("StreamsGroupDescribe", 0,
                                        {"group_ids": [group_id]}).groups
            if streams.error_code == 0:
                return GroupView(
                    group_id, streams.group_state, streams.group_epoch, "streams", "sticky",
                    None, tuple(
                        MemberView(m.member_id, m.instance_id, m.client_id, m.client_host,
                                   by_subtopology(m.assignment.active_tasks),
                                   member_epoch=m.member_epoch, process_id=m.process_id,
                                   standby=by_subtopology(m.assignment.standby_tasks),
                                   warmup=by_subtopology(m.assignment.warmup_tasks))
                        for m in streams.members))
            (classic,) = client.request("DescribeGroups", 5, {"groups": [group_id]}).groups
        if classic.error_code != 0:
            raise ClusterError(ErrorCode(classic.error_code).name, "DescribeGroups")
        if classic.group_state == "Dead":
            return None
        consumer = classic.protocol_type == "consumer"
        return GroupView(
            group_id, classic.group_state, None, classic.protocol_type,
            classic.protocol_data or None, None, tuple(
                MemberView(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                           assigned_partitions(m.member_assignment) if consumer else {})
                for m in classic.members))

    def transactions(self) -> dict[str, TransactionView]:
        """Every transactional id the cluster knows, by id (ListTransactions in any state at
        every broker, then DescribeTransactions at their coordinators): state, producer id
        and epoch, the partitions of its ongoing transaction, its start time and timeout;
        ``groups`` is ``()`` (see the module doc). On a shared cluster only this test's
        ids."""
        ids = []
        for address in self._broker_addresses():
            with self._connect(address, "inspect") as client:
                listed = client.request("ListTransactions", 1, {
                    "state_filters": [], "producer_id_filters": [], "duration_filter": -1})
            if listed.error_code != 0:
                raise ClusterError(ErrorCode(listed.error_code).name, "ListTransactions")
            ids += [t.transactional_id for t in listed.transaction_states
                    if t.transactional_id.startswith(self.prefix)]
        ids.sort()
        at: dict[str, list[str]] = {}  # coordinator -> its ids
        with self._bootstrap_client("inspect") as client:
            for start in range(0, len(ids), 100):
                found = client.request("FindCoordinator", 4, {
                    "key_type": 1, "coordinator_keys": ids[start:start + 100]}).coordinators
                for coordinator in found:
                    if coordinator.error_code != 0:
                        raise ClusterError(ErrorCode(coordinator.error_code).name,
                                           coordinator.key)
                    at.setdefault(f"{coordinator.host}:{coordinator.port}", []).append(
                        coordinator.key)
        views: dict[str, TransactionView] = {}
        for address, keys in at.items():
            with self._connect(address, "inspect") as client:
                described = client.request("DescribeTransactions", 0, {
                    "transactional_ids": keys}).transaction_states
            for txn in described:
                if txn.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND:
                    continue  # expired between the two requests
                if txn.error_code != 0:
                    raise ClusterError(ErrorCode(txn.error_code).name, txn.transactional_id)
                views[txn.transactional_id] = TransactionView(
                    txn.transactional_id, txn.transaction_state, txn.producer_id,
                    txn.producer_epoch,
                    tuple(sorted((t.topic, p) for t in txn.topics
                                 if t.topic not in INTERNAL_TOPICS for p in t.partitions)),
                    (), txn.transaction_start_time_ms, txn.transaction_timeout_ms)
        return dict(sorted(views.items()))

    # -- a cluster of its own for each test -------------------------------------------------

    @contextmanager
    def isolated(self, prefix: str, topics: Mapping[str, TopicSpec] | None = None
                 ) -> Iterator[RealCluster]:
        """The cluster as one test sees it, with ``topics`` (the ``fake_kafka`` marker's)
        made new: on a shared cluster a view whose names are behind ``prefix``, whose groups
        and topics are deleted when the block ends; on an exclusive cluster the cluster
        itself, ``reset`` first (``prefix`` unused)."""
        if not self.shared:
            self.reset(topics)
            yield self
            return
        if not prefix:
            raise ValueError("a shared cluster's test needs a name prefix of its own")
        view = copy.copy(self)
        view.prefix = self.prefix + prefix
        try:
            view._create_topics(topics, view.name)
            yield view
        finally:
            view._end_transactions()
            view._remove_groups()
            view._delete_topics()

    def reset(self, topics: Mapping[str, TopicSpec] | None = None) -> None:
        """Make an exclusive broker look like a new cluster: no groups, no topics but
        ``topics`` (the ``fake_kafka`` marker's), each new; no ACLs on a broker with an
        authorizer. Refused on a shared cluster (it would delete what is not the tests')."""
        if self.shared:
            raise RuntimeError(f"{self!r} is shared: reset() would delete everything on it; "
                               "isolate tests with isolated(prefix) instead")
        self._end_transactions()
        self._remove_groups()
        self._delete_topics()
        if self._authorizer:
            self._delete_acls()
        self._create_topics(topics, str)

    def _create_topics(self, topics: Mapping[str, TopicSpec] | None,
                       name: Callable[[str], str]) -> None:
        for base, spec in (topics or {}).items():
            args = topic_args(spec)
            self.create_topic(name(base), args.pop("partitions", 1),
                              args.pop("replication_factor", 1), args.pop("configs", None))
            if args:
                raise TypeError(f"topic {base!r}: the real broker takes no {sorted(args)}")

    def _end_transactions(self) -> None:
        """Abort every transaction still open (on a shared cluster: this test's ids) the way
        a new producer with its transactional id does (InitProducerId fences it), and wait
        until its markers are written. Left open, Kafka would abort it at its timeout, later,
        and write its markers into whatever partitions bear its topics' names by then: a
        later test's, recreated under the same names."""
        for transactional_id, view in self.transactions().items():
            if view.state not in OPEN_TRANSACTION_STATES:
                continue
            with self._connect(self._coordinator(transactional_id, TRANSACTION_KEY),
                               "reset") as client:
                wait_for(lambda c=client, t=transactional_id: self._fence(c, t),
                         f"transaction {transactional_id} aborted")

    @staticmethod
    def _fence(client: WireClient, transactional_id: str) -> bool:
        """One InitProducerId for ``transactional_id``: True once it is answered (the
        transaction it had open aborted), False while Kafka is still ending it."""
        answer = client.request("InitProducerId", 4, {
            "transactional_id": transactional_id, "transaction_timeout_ms": 60_000,
            "producer_id": -1, "producer_epoch": -1})
        if answer.error_code == ErrorCode.CONCURRENT_TRANSACTIONS:
            return False
        if answer.error_code != 0:
            raise ClusterError(ErrorCode(answer.error_code).name,
                               f"InitProducerId fencing {transactional_id}")
        return True

    def _remove_groups(self) -> None:
        """Remove every group's members (LeaveGroup or a leaving ConsumerGroupHeartbeat)
        and delete the groups every broker lists (on a shared cluster: this test's, by its
        prefix); fails naming any group Kafka would not delete."""
        listed = []
        for address in self._broker_addresses():
            with self._connect(address, "reset") as client:
                listed += client.request("ListGroups", 5, {"states_filter": [],
                                                            "types_filter": []}).groups
        for group in listed:
            if not group.group_id.startswith(self.prefix):
                continue
            with self._connect(self._coordinator(group.group_id), "reset") as client:
                if group.group_type == "consumer":
                    self._leave_consumer_group(client, group.group_id)
                elif group.group_type == "classic":
                    self._leave_classic_group(client, group.group_id)
                elif group.group_type == "streams":
                    self._leave_streams_group(client, group.group_id)
                if group.group_type in ("consumer", "classic", "streams"):
                    self._delete_group(client, group.group_id)

    @staticmethod
    def _leave_consumer_group(client: WireClient, group_id: str) -> None:
        (described,) = client.request("ConsumerGroupDescribe", 0,
                                      {"group_ids": [group_id]}).groups
        # One LeaveGroup for every member, of either protocol: members leaving one by one
        # would downgrade a group of both to a classic group once only classic ones remain.
        if not described.members:
            return
        left = client.request("LeaveGroup", 5, {"group_id": group_id, "members": [
            {"member_id": m.member_id, "group_instance_id": m.instance_id}
            for m in described.members]})
        for member in left.members:
            if member.error_code not in (0, ErrorCode.UNKNOWN_MEMBER_ID):
                raise ClusterError(ErrorCode(member.error_code).name,
                                   f"member {member.member_id} of {group_id} did not leave")

    @staticmethod
    def _leave_streams_group(client: WireClient, group_id: str) -> None:
        (described,) = client.request("StreamsGroupDescribe", 0,
                                      {"group_ids": [group_id]}).groups
        for member in described.members:
            left = client.request("StreamsGroupHeartbeat", 1, {
                "group_id": group_id, "member_id": member.member_id, "member_epoch": -1,
                "instance_id": member.instance_id})
            if left.error_code not in (0, ErrorCode.UNKNOWN_MEMBER_ID):
                raise ClusterError(ErrorCode(left.error_code).name,
                                   f"member {member.member_id} of {group_id} did not leave")

    @staticmethod
    def _leave_classic_group(client: WireClient, group_id: str) -> None:
        (described,) = client.request("DescribeGroups", 5, {"groups": [group_id]}).groups
        if not described.members:
            return
        left = client.request("LeaveGroup", 5, {"group_id": group_id, "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id,
             "reason": "test reset"} for m in described.members]})
        if left.error_code != 0:
            raise ClusterError(ErrorCode(left.error_code).name, f"{group_id}: LeaveGroup")

    @staticmethod
    def _delete_group(client: WireClient, group_id: str) -> None:
        (result,) = client.request("DeleteGroups", 2, {"groups_names": [group_id]}).results
        if result.error_code not in (0, ErrorCode.GROUP_ID_NOT_FOUND):
            raise ClusterError(ErrorCode(result.error_code).name,
                               f"group {group_id!r} could not be deleted")

    def _delete_topics(self) -> None:
        names = list(self.topics())
        if not names:
            return
        futures = self.admin.delete_topics(names, operation_timeout=TIMEOUT)
        for future in futures.values():
            future.result(timeout=TIMEOUT)
        wait_for(lambda: not set(names) & set(self.topics()), f"topics {names} to be deleted")

    def _delete_acls(self) -> None:
        """DeleteAcls matching every binding; then wait until DescribeAcls lists none (the
        broker's authorizer applies the deletion from the metadata log)."""
        match_all = {"resource_type_filter": 1, "resource_name_filter": None,
                     "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                     "operation": 1, "permission_type": 1}
        with self._bootstrap_client("reset") as client:
            (result,) = client.request("DeleteAcls", 3, {"filters": [match_all]}).filter_results
            if result.error_code != 0:
                raise ClusterError(ErrorCode(result.error_code).name, "DeleteAcls")
            wait_for(lambda: not client.request("DescribeAcls", 3, match_all).resources,
                     "every ACL to be deleted")

    # -- helpers ----------------------------------------------------------------------------

    def _served(self, topic: str, partitions: int) -> bool:
        """Metadata names a leader for each partition, the leader answers ListOffsets, and
        every broker's Metadata has the topic (each learns it from the controller's log in
        its own time: measured on three nodes, 3 of 60 answers right after creation were
        UNKNOWN_TOPIC_OR_PARTITION)."""
        metadata = self.admin.list_topics(timeout=TIMEOUT)
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or len(found.partitions) != partitions \
                or any(p.leader < 0 for p in found.partitions.values()):
            return False
        for broker in metadata.brokers.values():
            with self._connect(f"{broker.host}:{broker.port}", "inspect") as client:
                answer = client.request("Metadata", 12, {"topics": [{"name": topic}],
                                                         "allow_auto_topic_creation": False})
            if answer.topics[0].error_code != 0 or len(answer.topics[0].partitions) != partitions:
                return False
        for p in found.partitions.values():
            leader = metadata.brokers[p.leader]
            with self._connect(f"{leader.host}:{leader.port}", "inspect") as client:
                answer = client.request("ListOffsets", 7, {"replica_id": -1, "topics": [
                    {"name": topic, "partitions": [{"partition_index": p.id, "timestamp": -1}]}]})
            if answer.topics[0].partitions[0].error_code != 0:
                return False
        return True

    def _broker_addresses(self) -> list[str]:
        """host:port of every broker in the cluster's metadata. ListGroups and
        ListTransactions go to each: a Kafka broker answers them only for the groups and
        transactional ids it coordinates."""
        metadata = self.admin.list_topics(timeout=TIMEOUT)
        return [f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id)]

    def _leader(self, topic: str, partition: int) -> str:
        """host:port of a partition's leader; ``ClusterError`` if there is no such partition."""
        metadata = self.admin.list_topics(timeout=TIMEOUT)
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or partition not in found.partitions:
            raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION",
                               f"{topic}-{partition} does not exist")
        leader = metadata.brokers[found.partitions[partition].leader]
        return f"{leader.host}:{leader.port}"

    def _connect(self, address: str, client_id: str) -> WireClient:
        """A wire connection to a broker of the cluster, as ``client_config`` says (TLS,
        SASL login)."""
        return connect(address, self.client_config, client_id)

    def _coordinator(self, key: str, key_type: int = GROUP_KEY) -> str:
        with self._bootstrap_client("inspect") as client:
            found = client.request("FindCoordinator", 3, {"key": key, "key_type": key_type})
        if found.error_code != 0:
            raise ClusterError(ErrorCode(found.error_code).name, found.error_message or "")
        return f"{found.host}:{found.port}"
