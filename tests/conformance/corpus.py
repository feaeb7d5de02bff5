"""The conformance corpus: the requests both brokers get, in order.

A corpus is a list of steps. A ``Request`` is sent to both brokers and both answers are
compared; a ``Settle`` waits, uncompared, until both are ready for what follows (Kafka makes
topics and coordinators asynchronously). Two parts make the corpus:

* ``wire_corpus``: written here, from the wire tests' bodies (tests/bodies.py): the same
  topics, records and groups set up on both brokers through requests, then cases per API at
  every version both brokers serve (the known suspects first: DescribeConfigs, error codes
  and where they sit, OffsetFetch for all topics, ListOffsets by timestamp, Metadata for
  unknown topics, CreateTopics refusals).
* ``captured_corpus``: what real clients (confluent-kafka, kafka-python, the Java client)
  sent to a real Kafka through a recording proxy, kept in ``captured.jsonl`` (written by
  ``python -m tests.conformance.capture``), so the run needs no client and is deterministic.

Values a broker chooses (topic ids, member ids, producer ids) are written as placeholders
that each broker's own earlier answers fill in (``TopicId("orders")``, ``MemberId(1)``, ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import crc32c

from fakebroker.protocol.records import encode_batch
from tests.bodies import (
    DELETE_RECORDS_TO_END,
    DESCRIBE_CLUSTER,
    DESCRIBE_TOPIC_CONFIGS,
    INIT_PRODUCER_ID,
    OFFSET_FOR_LEADER_EPOCH,
    batch,
    fetch_body,
    join_body,
    produce_body,
    subscription,
)

if TYPE_CHECKING:
    from tests.conformance.replay import Side

CAPTURED = Path(__file__).with_name("captured.jsonl")
CLIENT_ID = "conformance"
# A member id placeholder a broker has not filled (an earlier answer gave no member id): the
# request still goes, so its answer shows what followed from the earlier difference.
UNGIVEN = "ungiven-member-id"


class Placeholder:
    """A value in a request body that each broker fills in from its own earlier answers."""

    def resolve(self, side: Side) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class TopicId(Placeholder):
    """The id this broker gave topic ``name``."""

    name: str

    def resolve(self, side: Side) -> Any:
        return side.topic_id(self.name)


@dataclass(frozen=True)
class MemberId(Placeholder):
    """The ``n``-th member id (from 1) this broker gave a member (JoinGroup, or
    ConsumerGroupHeartbeat when the member sent none); ``UNGIVEN`` if it gave fewer."""

    n: int

    def resolve(self, side: Side) -> Any:
        return side.member_ids[self.n - 1] if self.n <= len(side.member_ids) else UNGIVEN


@dataclass(frozen=True)
class ProducerId(Placeholder):
    """The ``n``-th producer id (from 1) this broker gave (InitProducerId); -1 if it gave
    fewer."""

    n: int

    def resolve(self, side: Side) -> Any:
        return side.producer_ids[self.n - 1] if self.n <= len(side.producer_ids) else -1


@dataclass(frozen=True)
class GivenBy(Placeholder):
    """Field ``name`` of this broker's answer to the request of case ``case`` (a member id
    or producer id it gave: how the captured corpus names them); ``otherwise`` if there
    was no such answer."""

    case: str
    name: str
    otherwise: Any

    def resolve(self, side: Side) -> Any:
        answer = side.answers.get(self.case)
        return answer.get(self.name, self.otherwise) if isinstance(answer, dict) \
            else self.otherwise


@dataclass(frozen=True)
class ClusterId(Placeholder):
    """The cluster id this broker gave (Metadata, DescribeCluster)."""

    def resolve(self, side: Side) -> Any:
        return side.cluster_id


@dataclass(frozen=True)
class MemberEpoch(Placeholder):
    """The epoch this broker last gave KIP-848 member ``member`` (a member id or a
    ``MemberId``); ``otherwise`` if it gave none."""

    member: Any
    otherwise: int

    def resolve(self, side: Side) -> Any:
        return side.member_epochs.get(resolve(self.member, side), self.otherwise)


@dataclass(frozen=True)
class Generation(Placeholder):
    """The generation of the last successful JoinGroup answer of group ``group`` from this
    broker; -1 if there was none."""

    group: str

    def resolve(self, side: Side) -> Any:
        return side.generations.get(self.group, -1)


@dataclass(frozen=True)
class ProducedBatches(Placeholder):
    """Record batches of an idempotent producer whose id this broker gave (``producer``: a
    placeholder of it): each batch's producer id is rewritten and its CRC made again."""

    data: bytes
    producer: Placeholder

    def resolve(self, side: Side) -> Any:
        return with_producer_id(self.data, self.producer.resolve(side))


def with_producer_id(data: bytes, producer_id: int) -> bytes:
    """Magic-2 batches ``data`` with every batch's producer id set to ``producer_id``."""
    out = bytearray(data)
    pos = 0
    while pos + 61 <= len(out):
        length = struct.unpack_from(">i", out, pos + 8)[0]
        end = pos + 12 + length
        if out[pos + 16] == 2:
            struct.pack_into(">q", out, pos + 43, producer_id)
            struct.pack_into(">I", out, pos + 17, crc32c.crc32c(bytes(out[pos + 21:end])))
        pos = end
    return bytes(out)


def resolve(body: Any, side: Side) -> Any:
    """``body`` with every placeholder filled in for ``side``."""
    if isinstance(body, Placeholder):
        return body.resolve(side)
    if isinstance(body, Mapping):
        return {k: resolve(v, side) for k, v in body.items()}
    if isinstance(body, list | tuple):
        return [resolve(v, side) for v in body]
    return body


@dataclass(frozen=True)
class Request:
    """One request for both brokers: ``case`` says what it asks (it names the request in the
    conformance table). ``answered`` False: Kafka sends no answer (Produce with acks=0)."""

    api: str
    version: int
    body: Mapping[str, Any]
    case: str
    client_id: str = CLIENT_ID
    answered: bool = True


@dataclass(frozen=True)
class Settle:
    """Not compared: wait until both brokers list ``topics`` with a leader for every
    partition, answer OffsetFetch for ``groups`` and FindCoordinator for
    ``transactional_ids`` without an error (Kafka creates topics, __consumer_offsets and
    __transaction_state asynchronously, then loads each coordinator partition), describe the
    SCRAM credentials of ``scram_users`` (Kafka's broker learns a change from its controller
    a moment after answering it), list ``quota_entities`` client quota entities (the same),
    and, with
    ``producer_ids``, give a producer id (Kafka's first InitProducerId waits for a block of
    ids from its controller; the id given counts as the broker's next ``ProducerId``), and
    until the transactions of ``ended`` are no longer ending (Kafka writes a transaction's
    markers after EndTxn answers, and answers CONCURRENT_TRANSACTIONS until then); with
    ``share_state`` (a topic), until a share group's start offset of its partition 0 can be
    written and read back (Kafka makes its share-state topic on first use, and fails the
    share-partitions it cannot initialize until then)."""

    topics: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    transactional_ids: tuple[str, ...] = ()
    producer_ids: bool = False
    ended: tuple[str, ...] = ()
    scram_users: tuple[str, ...] = ()
    quota_entities: int | None = None
    share_state: str | None = None


Step = Request | Settle
Versions = Mapping[str, Sequence[int]]


# -- the written corpus -----------------------------------------------------------------------


class _Corpus:
    """Steps being written: ``each(api, case, body_of_version)`` adds a request per version
    both brokers serve."""

    def __init__(self, versions: Versions) -> None:
        self.versions = versions
        self.steps: list[Step] = []

    def of(self, api: str) -> Sequence[int]:
        return self.versions.get(api, ())

    def add(self, api: str, version: int, body: Mapping[str, Any], case: str,
            **options: Any) -> None:
        if version in self.of(api):
            self.steps.append(Request(api, version, body, case, **options))

    def each(self, api: str, case: str, body: Callable[[int], Mapping[str, Any] | None],
             versions: Sequence[int] | None = None) -> None:
        """A request per version (of ``versions`` if given); ``body(version)`` None skips."""
        for version in self.of(api):
            if versions is not None and version not in versions:
                continue
            made = body(version)
            if made is not None:
                self.steps.append(Request(api, version, made, case))

    def settle(self, topics: Sequence[str] = (), groups: Sequence[str] = (),
               transactional_ids: Sequence[str] = (), producer_ids: bool = False,
               ended: Sequence[str] = (), scram_users: Sequence[str] = (),
               quota_entities: int | None = None, share_state: str | None = None) -> None:
        self.steps.append(Settle(tuple(topics), tuple(groups), tuple(transactional_ids),
                                 producer_ids, tuple(ended), tuple(scram_users),
                                 quota_entities, share_state))


TIMESTAMPED = [(None, f"t{i}".encode(), [], 1000 * (i + 1)) for i in range(4)]


def wire_corpus(versions: Versions) -> list[Step]:
    """The written corpus, at the ``versions`` of each API both brokers serve."""
    c = _Corpus(versions)
    _setup(c)
    _metadata(c)
    _produce_fetch(c)
    _list_offsets(c)
    _configs(c)
    _admin(c)
    _offsets(c)
    _classic_groups(c)
    _consumer_groups(c)
    _share_groups(c)
    _streams_groups(c)
    _producers(c)
    _transactions(c)
    _acls(c)
    _scram_credentials(c)
    _client_quotas(c)
    _delegation_tokens(c)
    _sasl(c)
    return c.steps


def _setup(c: _Corpus) -> None:
    """Topics (orders: 2 partitions; timed: records with known timestamps; stamped:
    LogAppendTime; legacy: for Produce v0-2, which Kafka 4 refuses) and their records, on
    both brokers through the same requests."""
    c.add("CreateTopics", 7, {"topics": [
        {"name": "orders", "num_partitions": 2, "replication_factor": 1},
        {"name": "timed", "num_partitions": 1, "replication_factor": 1},
        {"name": "stamped", "num_partitions": 1, "replication_factor": 1,
         "configs": [{"name": "message.timestamp.type", "value": "LogAppendTime"}]},
        {"name": "legacy", "num_partitions": 2, "replication_factor": 1},
        {"name": "small", "num_partitions": 1, "replication_factor": 1,
         "configs": [{"name": "max.message.bytes", "value": "200"}]},
    ], "timeout_ms": 30000}, "setup: create orders, timed, stamped, legacy, small")
    c.settle(topics=["orders", "timed", "stamped", "legacy", "small"])
    c.add("Produce", 9, produce_body("orders", 0, batch([b"a", b"b", b"c"])),
          "setup: 3 records to orders/0")
    c.add("Produce", 9, produce_body("orders", 1, batch([b"d"])), "setup: 1 record to orders/1")
    c.add("Produce", 9, produce_body("timed", 0, encode_batch(TIMESTAMPED)),
          "setup: 4 records at 1000..4000 ms to timed/0")


def _metadata(c: _Corpus) -> None:
    c.each("Metadata", "named topics", lambda v: {"topics": [{"name": "orders"},
                                                             {"name": "timed"}]})
    c.each("Metadata", "all topics", lambda v: {"topics": [] if v == 0 else None})
    c.each("Metadata", "no topics", lambda v: {"topics": []}, versions=range(1, 99))
    c.each("Metadata", "unknown topic, auto-creation allowed",
           lambda v: {"topics": [{"name": f"auto-{v}"}], "allow_auto_topic_creation": True})
    c.settle(topics=[f"auto-{v}" for v in c.of("Metadata")])
    c.each("Metadata", "topic auto-created by the request before",
           lambda v: {"topics": [{"name": f"auto-{v}"}], "allow_auto_topic_creation": False})
    c.each("Metadata", "unknown topic, auto-creation not allowed",
           lambda v: {"topics": [{"name": "ghost"}], "allow_auto_topic_creation": False},
           versions=range(4, 99))
    c.each("Metadata", "illegal topic name",
           lambda v: {"topics": [{"name": "bad/name"}], "allow_auto_topic_creation": True})
    c.each("Metadata", "with authorized operations", lambda v: {
        "topics": [{"name": "orders"}], "include_topic_authorized_operations": True,
        "include_cluster_authorized_operations": True}, versions=range(8, 99))
    c.each("Metadata", "topic by id", lambda v: {"topics": [
        {"name": None, "topic_id": TopicId("orders")}]}, versions=range(12, 99))
    c.each("Metadata", "unknown topic id", lambda v: {"topics": [
        {"name": None, "topic_id": uuid.UUID(int=7)}]}, versions=range(12, 99))


def _produce_fetch(c: _Corpus) -> None:
    """Produce (v0-2, with magic 1 message sets, to their own topic: Kafka 4 refuses them, and
    what they append must not move the other topics' offsets) and Fetch."""
    def produce(topic: str, partition: int, value: bytes, topic_id: Any = None
                ) -> Callable[[int], Mapping[str, Any]]:
        if topic_id is None:  # an existing topic: v0-2 write to legacy instead
            return lambda v: produce_body(topic if v >= 3 else "legacy", partition,
                                          batch([value], magic=2 if v >= 3 else 1),
                                          TopicId(topic if v >= 3 else "legacy"))
        return lambda v: produce_body(topic, partition, batch([value], magic=2 if v >= 3 else 1),
                                      topic_id)

    c.each("Produce", "one record", lambda v: produce("orders", 1, f"v{v}".encode())(v))
    c.each("Produce", "unknown partition", produce("orders", 9, b"x"))
    c.each("Produce", "unknown topic", produce("ghost", 0, b"x", uuid.UUID(int=7)))
    c.each("Produce", "LogAppendTime topic", produce("stamped", 0, b"s"))
    c.add("Produce", 9, produce_body("orders", 0, batch([b"quiet"]), acks=0),
          "acks=0 (no answer)", answered=False)
    c.add("Produce", 9, produce_body("orders", 0, batch([b"x"]), acks=2), "acks=2")
    c.add("Produce", 9, produce_body("orders", 0, batch([b"x"], magic=1)),
          "v9 with a magic 1 message set")
    c.add("Produce", 9, produce_body("orders", 0, batch([b"x"]) + batch([b"y"])),
          "v9 with two batches")
    corrupt = bytearray(batch([b"x"]))
    corrupt[-1] ^= 0xFF
    c.add("Produce", 9, produce_body("orders", 0, bytes(corrupt)), "v9 with a bad CRC")
    c.add("Produce", 9, produce_body("small", 0, batch([b"x" * 300])),
          "v9 above the topic's max.message.bytes")
    zstd = encode_batch([(None, b"z", [], 0)], compression=4)
    c.add("Produce", 6, produce_body("orders", 0, zstd), "v6 with zstd")

    def fetch(topic: str, partition: int, offset: int, topic_id: Any = None) -> Any:
        return lambda v: fetch_body(topic, partition, offset, topic_id or TopicId(topic))

    c.each("Fetch", "orders/0 from 0", fetch("orders", 0, 0))
    c.each("Fetch", "timed/0 from 2 (inside a batch)", fetch("timed", 0, 2))
    c.each("Fetch", "stamped/0 (LogAppendTime)", fetch("stamped", 0, 0))
    c.each("Fetch", "offset past the end", fetch("orders", 0, 100))
    c.each("Fetch", "unknown partition", fetch("orders", 9, 0))
    c.each("Fetch", "unknown topic", fetch("ghost", 0, 0, uuid.UUID(int=7)))

    def stale_epoch(v: int) -> Mapping[str, Any]:
        body = fetch_body("orders", 0, 0, TopicId("orders"))
        body["topics"][0]["partitions"][0]["current_leader_epoch"] = 5
        return body
    c.each("Fetch", "leader epoch from the future", stale_epoch, versions=range(9, 99))

    def read_committed(v: int) -> Mapping[str, Any]:
        return dict(fetch_body("orders", 0, 0, TopicId("orders")), isolation_level=1)
    c.each("Fetch", "read_committed", read_committed, versions=range(4, 99))


def _list_offsets(c: _Corpus) -> None:
    def lookup(topic: str, partition: int, timestamp: int) -> Callable[[int], Any]:
        return lambda v: {"replica_id": -1, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "timestamp": timestamp, "max_num_offsets": 1}]}]}

    for timestamp, case in [(-2, "earliest"), (-1, "latest"), (2500, "by timestamp 2500"),
                            (1000, "by timestamp 1000 (the first)"),
                            (9000, "by timestamp after the last record")]:
        c.each("ListOffsets", case, lookup("timed", 0, timestamp))
    c.each("ListOffsets", "max timestamp", lookup("timed", 0, -3), versions=range(7, 99))
    c.each("ListOffsets", "earliest local", lookup("timed", 0, -4), versions=range(8, 99))
    c.each("ListOffsets", "latest tiered", lookup("timed", 0, -5), versions=range(9, 99))
    c.each("ListOffsets", "unknown partition", lookup("orders", 9, -1))
    c.each("ListOffsets", "unknown topic", lookup("ghost", 0, -1))
    c.each("ListOffsets", "two partitions, read_committed", lambda v: {
        "replica_id": -1, "isolation_level": 1, "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "timestamp": -1}, {"partition_index": 1, "timestamp": -2}]}]})


def _configs(c: _Corpus) -> None:
    def resource(kind: int, name: str, keys: list[str] | None) -> Mapping[str, Any]:
        return {"resource_type": kind, "resource_name": name, "configuration_keys": keys}

    c.each("DescribeConfigs", "topic, all configs", lambda v: DESCRIBE_TOPIC_CONFIGS)
    c.each("DescribeConfigs", "topic, set and default keys, with synonyms", lambda v: {
        "resources": [resource(2, "stamped", ["message.timestamp.type", "retention.ms",
                                              "cleanup.policy", "no.such.config"])],
        "include_synonyms": True})
    c.each("DescribeConfigs", "topic keys with documentation", lambda v: {
        "resources": [resource(2, "orders", ["retention.ms"])], "include_documentation": True})
    c.each("DescribeConfigs", "unknown topic", lambda v: {
        "resources": [resource(2, "ghost", None)]})
    c.each("DescribeConfigs", "broker, settings the tests set", lambda v: {
        "resources": [resource(4, "1", ["auto.create.topics.enable", "num.partitions",
                                        "group.initial.rebalance.delay.ms"])],
        "include_synonyms": True})
    c.each("DescribeConfigs", "broker, defaults, with synonyms", lambda v: {
        "resources": [resource(4, "1", ["log.retention.hours", "message.max.bytes",
                                        "default.replication.factor",
                                        "socket.request.max.bytes",
                                        "group.min.session.timeout.ms",
                                        "offsets.topic.replication.factor",
                                        "log.message.timestamp.type", "min.insync.replicas"])],
        "include_synonyms": True})
    c.each("DescribeConfigs", "cluster default broker resource, all configs", lambda v: {
        "resources": [resource(4, "", None)]})
    c.each("DescribeConfigs", "cluster default broker resource", lambda v: {
        "resources": [resource(4, "", ["num.partitions"])]})
    c.each("DescribeConfigs", "another broker id", lambda v: {
        "resources": [resource(4, "7", None)]})
    c.each("DescribeConfigs", "broker loggers", lambda v: {
        "resources": [resource(8, "1", ["kafka.server.KafkaApis"])]})
    c.each("DescribeConfigs", "broker loggers, all, with synonyms and documentation",
           lambda v: {"resources": [resource(8, "1", None)], "include_synonyms": True,
                      "include_documentation": True})
    c.each("DescribeConfigs", "broker loggers: another broker, none, not an id", lambda v: {
        "resources": [resource(8, "2", None), resource(8, "", None), resource(8, "x", None),
                      resource(8, "01", ["root"])]})

    def altered(kind: int, name: str, ops: list[tuple[str, int, str | None]]
                ) -> Callable[[int], Mapping[str, Any]]:
        return lambda v: {"validate_only": True, "resources": [
            {"resource_type": kind, "resource_name": name, "configs": [
                {"name": k, "config_operation": op, "value": value} for k, op, value in ops]}]}

    for case, kind, name, ops in [
        ("topic, SET and APPEND (validate only)", 2, "orders",
         [("retention.ms", 0, "1000"), ("cleanup.policy", 2, "compact")]),
        ("unknown topic config", 2, "orders", [("no.such.config", 0, "1")]),
        ("value of the wrong type", 2, "orders", [("max.message.bytes", 0, "big")]),
        ("APPEND to a config not a list", 2, "orders", [("retention.ms", 2, "5")]),
        ("unknown topic", 2, "ghost", [("retention.ms", 0, "1")]),
        ("null value for SET", 2, "orders", [("retention.ms", 0, None)]),
        ("duplicate keys", 2, "orders", [("retention.ms", 0, "1"), ("retention.ms", 1, None)]),
        # Above the default: the differential fuzzer flips validate_only, and Kafka's group
        # coordinator then refuses to write a commit batch above a lowered limit
        # (UNKNOWN_SERVER_ERROR), which the fake does not size (docs/explanation/robustness.md)
        ("broker, dynamic config (validate only)", 4, "1",
         [("message.max.bytes", 0, "2000000")]),
        ("another broker id", 4, "7", [("message.max.bytes", 0, "2000")]),
        ("broker config not dynamic", 4, "", [("auto.create.topics.enable", 0, "false")]),
        ("cluster min.insync.replicas removed", 4, "", [("min.insync.replicas", 1, None)]),
        ("broker logger levels (validate only)", 8, "1",
         [("root", 0, "INFO"), ("org.apache.kafka.server.logger.LoggingController", 1, None)]),
        ("broker logger not listed", 8, "1", [("kafka.server.ReplicaManager", 0, "DEBUG")]),
        ("broker logger level not supported", 8, "1", [("root", 0, "OFF")]),
        ("broker root logger deleted", 8, "1", [("root", 1, None)]),
        ("broker logger APPEND", 8, "1", [("root", 2, "DEBUG")]),
        ("another broker's loggers", 8, "2", [("root", 0, "INFO")]),
    ]:
        c.each("IncrementalAlterConfigs", case, altered(kind, name, ops))
    controller = "org.apache.kafka.server.logger.LoggingController"
    for case, op, value in (("broker logger level set", 0, "DEBUG"),
                            ("broker logger level deleted", 1, None)):
        c.each("IncrementalAlterConfigs", case, lambda v, op=op, value=value: {
            "validate_only": False, "resources": [
                {"resource_type": 8, "resource_name": "1", "configs": [
                    {"name": controller, "config_operation": op, "value": value}]}]})
        c.each("DescribeConfigs", f"broker loggers after the {case}", lambda v: {
            "resources": [resource(8, "1", None)]})
    for case, kind, name, configs in [
        ("topic (validate only)", 2, "orders", {"retention.ms": "1000"}),
        ("unknown topic config", 2, "orders", {"no.such.config": "1"}),
        ("unknown topic", 2, "ghost", {"retention.ms": "1"}),
        ("broker config not dynamic", 4, "1", {"num.partitions": "3"}),
        ("broker logger", 8, "1", {"root": "INFO"}),
    ]:
        c.each("AlterConfigs", case, lambda v, kind=kind, name=name, configs=configs: {
            "validate_only": True, "resources": [
                {"resource_type": kind, "resource_name": name,
                 "configs": [{"name": k, "value": value} for k, value in configs.items()]}]})


def _admin(c: _Corpus) -> None:
    def create(topics: list[Mapping[str, Any]], validate_only: bool = False
               ) -> Callable[[int], Mapping[str, Any]]:
        return lambda v: {"topics": topics, "timeout_ms": 30000, "validate_only": validate_only}

    c.each("CreateTopics", "a new topic", lambda v: create(
        [{"name": f"created-{v}", "num_partitions": 2, "replication_factor": 1}])(v))
    c.each("CreateTopics", "broker defaults (-1)", lambda v: create(
        [{"name": f"defaults-{v}", "num_partitions": -1, "replication_factor": -1}])(v),
        versions=range(4, 99))
    c.each("CreateTopics", "validate only", create(
        [{"name": "validated", "num_partitions": 3, "replication_factor": 1,
          "configs": [{"name": "retention.ms", "value": "1000"}]}], validate_only=True))
    for topic, case in [
        ({"name": "orders", "num_partitions": 1, "replication_factor": 1}, "topic exists"),
        ({"name": "bad/name", "num_partitions": 1, "replication_factor": 1}, "illegal name"),
        ({"name": "x" * 250, "num_partitions": 1, "replication_factor": 1}, "name too long"),
        ({"name": "zero", "num_partitions": 0, "replication_factor": 1}, "zero partitions"),
        ({"name": "wide", "num_partitions": 1, "replication_factor": 3},
         "replication factor above the brokers"),
        ({"name": "conf", "num_partitions": 1, "replication_factor": 1,
          "configs": [{"name": "no.such.config", "value": "1"}]}, "unknown config"),
        ({"name": "conf2", "num_partitions": 1, "replication_factor": 1,
          "configs": [{"name": "retention.ms", "value": "soon"}]}, "bad config value"),
        ({"name": "assigned", "num_partitions": 2, "replication_factor": 1,
          "assignments": [{"partition_index": 0, "broker_ids": [1]}]},
         "assignments with partitions"),
    ]:
        c.each("CreateTopics", case, create([topic]))
    c.each("CreateTopics", "a name given twice", create(
        [{"name": "twice", "num_partitions": 1, "replication_factor": 1}] * 2))
    c.settle(topics=[f"created-{v}" for v in c.of("CreateTopics")]
             + [f"defaults-{v}" for v in c.of("CreateTopics") if v >= 4])

    c.each("CreatePartitions", "grow to 3", lambda v: {"topics": [
        {"name": f"created-{v + 2}", "count": 3, "assignments": None}], "timeout_ms": 30000})
    c.each("CreatePartitions", "must grow", lambda v: {"topics": [
        {"name": "orders", "count": 2, "assignments": None}], "timeout_ms": 30000})
    c.each("CreatePartitions", "unknown topic", lambda v: {"topics": [
        {"name": "ghost", "count": 2, "assignments": None}], "timeout_ms": 30000})
    c.each("CreatePartitions", "validate only", lambda v: {"topics": [
        {"name": "orders", "count": 5, "assignments": None}], "timeout_ms": 30000,
        "validate_only": True})

    c.each("DeleteTopics", "by name (by id from v6)", lambda v: {
        "topic_names": [f"created-{v + 1}"],
        "topics": [{"name": None, "topic_id": TopicId(f"created-{v + 1}")}],
        "timeout_ms": 30000})
    c.each("DeleteTopics", "neither name nor id", lambda v: {
        "topics": [{"name": None, "topic_id": uuid.UUID(int=0)}], "timeout_ms": 30000},
        versions=range(6, 99))
    c.each("DeleteTopics", "unknown topic", lambda v: {
        "topic_names": ["ghost"], "topics": [{"name": "ghost"}], "timeout_ms": 30000})
    c.each("DeleteTopics", "unknown topic id", lambda v: {
        "topics": [{"name": None, "topic_id": uuid.UUID(int=7)}], "timeout_ms": 30000},
        versions=range(6, 99))

    c.each("DeleteRecords", "to the high watermark", lambda v: DELETE_RECORDS_TO_END)
    c.each("DeleteRecords", "below offset 1", lambda v: {"topics": [{"name": "orders",
           "partitions": [{"partition_index": 1, "offset": 1}]}], "timeout_ms": 30000})
    c.each("Fetch", "below the log start offset", lambda v: fetch_body(
        "orders", 1, 0, TopicId("orders")))
    c.each("DeleteRecords", "above the high watermark", lambda v: {"topics": [
        {"name": "orders", "partitions": [{"partition_index": 1, "offset": 1000}]}],
        "timeout_ms": 30000})
    c.each("DeleteRecords", "unknown partition", lambda v: {"topics": [
        {"name": "orders", "partitions": [{"partition_index": 9, "offset": 0}]}],
        "timeout_ms": 30000})

    c.each("ElectLeaders", "preferred leader leads already; unknown partitions", lambda v: {
        "election_type": 0, "timeout_ms": 30000, "topic_partitions": [
            {"topic": "orders", "partitions": [0, 9]}, {"topic": "ghost", "partitions": [0]}]})
    c.each("ElectLeaders", "unclean, the partition has a leader", lambda v: {
        "election_type": 1, "timeout_ms": 30000, "topic_partitions": [
            {"topic": "orders", "partitions": [0]}]}, versions=range(1, 99))
    c.each("ElectLeaders", "unknown election type", lambda v: {
        "election_type": 5, "timeout_ms": 30000, "topic_partitions": [
            {"topic": "orders", "partitions": [0]}]}, versions=range(1, 99))
    def reassign(partition: int, replicas: list[int] | None, topic: str = "orders"
                 ) -> dict[str, Any]:
        return {"timeout_ms": 30000, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "replicas": replicas}]}]}

    for replicas, case in [([1], "to the replicas it has"), ([1, 4242], "an unknown broker"),
                           ([1, 1], "a broker twice"), ([], "no replicas"),
                           (None, "cancel, none in progress")]:
        c.each("AlterPartitionReassignments", case,
               lambda v, replicas=replicas: reassign(0, replicas))
    c.each("AlterPartitionReassignments", "unknown partition", lambda v: reassign(9, [1]))
    c.each("AlterPartitionReassignments", "unknown topic", lambda v: reassign(0, [1], "ghost"))
    c.each("ListPartitionReassignments", "every partition, none in progress", lambda v: {
        "timeout_ms": 30000, "topics": None})
    c.each("ListPartitionReassignments", "named partitions, unknown ones", lambda v: {
        "timeout_ms": 30000, "topics": [{"name": "orders", "partition_indexes": [0, 9]},
                                        {"name": "ghost", "partition_indexes": [0]}]})

    c.each("OffsetForLeaderEpoch", "epoch 0", lambda v: OFFSET_FOR_LEADER_EPOCH)
    c.each("OffsetForLeaderEpoch", "epoch from the future", lambda v: {
        "replica_id": -1, "topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 9}]}]})
    c.each("OffsetForLeaderEpoch", "current epoch fenced", lambda v: {
        "replica_id": -1, "topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "current_leader_epoch": 7, "leader_epoch": 0}]}]})
    c.each("OffsetForLeaderEpoch", "unknown partition", lambda v: {
        "replica_id": -1, "topics": [{"topic": "orders", "partitions": [
            {"partition": 9, "current_leader_epoch": -1, "leader_epoch": 0}]}]})

    c.each("DescribeLogDirs", "an unknown topic", lambda v: {
        "topics": [{"topic": "ghost", "partitions": [0]}]})
    c.each("AlterReplicaLogDirs", "to a directory the broker has not", lambda v: {"dirs": [
        {"path": "/nowhere", "topics": [{"name": "orders", "partitions": [0]}]}]})
    c.each("DescribeTopicPartitions", "a page of one partition", lambda v: {
        "topics": [{"name": "orders"}, {"name": "ghost"}], "response_partition_limit": 1,
        "cursor": None})
    c.each("DescribeTopicPartitions", "from the cursor", lambda v: {
        "topics": [{"name": "orders"}, {"name": "ghost"}], "response_partition_limit": 2000,
        "cursor": {"topic_name": "orders", "partition_index": 1}})
    c.each("DescribeTopicPartitions", "a cursor outside the topics named", lambda v: {
        "topics": [{"name": "orders"}], "response_partition_limit": 2000,
        "cursor": {"topic_name": "ghost", "partition_index": 0}})
    c.each("ListConfigResources", "brokers", lambda v: {"resource_types": [4]})
    c.each("ListConfigResources", "a type not listed", lambda v: {"resource_types": [3]},
           versions=range(1, 99))
    c.each("DescribeQuorum", "another partition", lambda v: {"topics": [
        {"topic_name": "orders", "partitions": [{"partition_index": 0}]}]})
    c.each("DescribeQuorum", "no partition", lambda v: {"topics": []})
    c.each("UnregisterBroker", "an id not registered", lambda v: {"broker_id": 7})
    c.each("UnregisterController", "the active controller", lambda v: {"controller_id": 1})
    c.each("UnregisterController", "an id not registered", lambda v: {"controller_id": 7})
    voter = {"cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
             "voter_directory_id": uuid.UUID(int=5), "ack_when_committed": True,
             "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": 9}]}
    c.each("AddRaftVoter", "no directory id", lambda v: dict(
        voter, voter_directory_id=uuid.UUID(int=0)))
    c.each("AddRaftVoter", "no CONTROLLER listener", lambda v: dict(voter, listeners=[
        {"name": "OTHER", "host": "localhost", "port": 9}]))
    c.each("RemoveRaftVoter", "no directory id", lambda v: {
        "cluster_id": None, "voter_id": 1, "voter_directory_id": uuid.UUID(int=0)})
    features = {"timeout_ms": 60000, "validate_only": True}
    c.each("UpdateFeatures", "an upgrade to the level finalized", lambda v: dict(
        features, feature_updates=[{"feature": "group.version", "max_version_level": 1,
                                    "upgrade_type": 1}]))
    c.each("UpdateFeatures", "a downgrade without a downgrade type", lambda v: dict(
        features, feature_updates=[{"feature": "group.version", "max_version_level": 0,
                                    "upgrade_type": 1}]))
    c.each("UpdateFeatures", "an unknown feature and a level not supported", lambda v: dict(
        features, feature_updates=[
            {"feature": "share.version", "max_version_level": 2, "upgrade_type": 1},
            {"feature": "nope.version", "max_version_level": 1, "upgrade_type": 1},
            {"feature": "group.version", "max_version_level": 5, "upgrade_type": 1}]))
    c.each("UpdateFeatures", "safe downgrades, validated only", lambda v: dict(
        features, feature_updates=[
            {"feature": "group.version", "max_version_level": 0, "upgrade_type": 2},
            {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": 3}]),
        versions=range(1, 99))
    c.each("UpdateFeatures", "a kraft.version downgrade", lambda v: dict(
        features, feature_updates=[
            {"feature": "kraft.version", "max_version_level": 0, "upgrade_type": 2}]),
        versions=range(1, 99))
    c.each("UpdateFeatures", "an unknown upgrade type", lambda v: dict(
        features, feature_updates=[
            {"feature": "group.version", "max_version_level": 1, "upgrade_type": 9}]),
        versions=range(1, 99))
    c.each("DescribeCluster", "endpoints", lambda v: DESCRIBE_CLUSTER)
    c.each("DescribeCluster", "with authorized operations", lambda v: {
        "include_cluster_authorized_operations": True, "endpoint_type": 1})
    c.each("ApiVersions", "client software", lambda v: {
        "client_software_name": "conformance", "client_software_version": "1.0"})
    c.each("ApiVersions", "client software name Kafka refuses", lambda v: {
        "client_software_name": "no spaces please", "client_software_version": "1.0"},
        versions=range(3, 99))
    for cluster, node, case in [(ClusterId(), 1, "this cluster and node"),
                                (ClusterId(), 7, "another node"),
                                ("AAAAAAAAAAAAAAAAAAAAAA", 1, "another cluster"),
                                (None, -1, "no cluster or node")]:
        c.each("ApiVersions", case, lambda v, cluster=cluster, node=node: {
            "client_software_name": "conformance", "client_software_version": "1.0",
            "cluster_id": cluster, "node_id": node}, versions=range(5, 99))


def _commit(group: str, offsets: Mapping[tuple[str, int], int], metadata: str = "",
            generation: Any = -1, member: Any = "") -> Callable[[int], Mapping[str, Any]]:
    topics: dict[str, list[Mapping[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition,
                                             "committed_offset": offset,
                                             "committed_metadata": metadata})
    return lambda v: {"group_id": group, "generation_id_or_member_epoch": generation,
                      "member_id": member, "topics": [
                          {"name": t, "topic_id": TopicId(t), "partitions": p}
                          for t, p in topics.items()]}


def _fetch_offsets(group: str, topics: Mapping[str, list[int]] | None
                   ) -> Callable[[int], Mapping[str, Any]]:
    def body(v: int) -> Mapping[str, Any]:
        wanted = None if topics is None else [
            {"name": t, "topic_id": TopicId(t), "partition_indexes": p}
            for t, p in topics.items()]
        if v >= 8:
            return {"groups": [{"group_id": group, "topics": wanted}]}
        return {"group_id": group, "topics": wanted}
    return body


def _offsets(c: _Corpus) -> None:
    c.settle(groups=["committed", "nobody", "other", "pruned"]
             + [f"doomed-{v}" for v in c.of("DeleteGroups")])
    c.each("FindCoordinator", "a group", lambda v: {"key": "committed", "key_type": 0,
                                                    "coordinator_keys": ["committed"]})
    c.each("FindCoordinator", "two groups", lambda v: {
        "key_type": 0, "coordinator_keys": ["committed", "other"]}, versions=range(4, 99))
    c.each("OffsetCommit", "simple commit (no generation)", lambda v: _commit(
        "committed", {("orders", 0): 2, ("orders", 1): v, ("timed", 0): 1}, metadata="m")(v))
    c.each("OffsetCommit", "unknown topic", lambda v: _commit("committed", {("ghost", 0): 1})(v))
    c.each("OffsetCommit", "unknown partition", lambda v: _commit(
        "committed", {("orders", 9): 1})(v))
    c.each("OffsetCommit", "metadata too large", lambda v: _commit(
        "committed", {("orders", 0): 1}, metadata="x" * 5000)(v))
    c.each("OffsetCommit", "a generation without a group", lambda v: _commit(
        "committed", {("orders", 0): 1}, generation=3, member="stranger")(v))
    c.each("OffsetFetch", "named partitions, one not committed", _fetch_offsets(
        "committed", {"orders": [0, 1], "timed": [0, 3]}))
    c.each("OffsetFetch", "all topics", lambda v: _fetch_offsets("committed", None)(v)
           if v >= 2 else None)
    c.each("OffsetFetch", "unknown group", _fetch_offsets("nobody", {"orders": [0]}))
    c.each("OffsetFetch", "unknown group, all topics", lambda v: _fetch_offsets(
        "nobody", None)(v) if v >= 2 else None)
    c.each("OffsetFetch", "unknown topic", _fetch_offsets("committed", {"ghost": [0]}),
           versions=range(0, 10))
    c.each("OffsetFetch", "two groups", lambda v: {"groups": [
        {"group_id": "committed", "topics": [{"name": "orders", "topic_id": TopicId("orders"),
                                               "partition_indexes": [0]}]},
        {"group_id": "nobody", "topics": None}]}, versions=range(8, 99))

    for v in c.of("DeleteGroups"):
        c.add("OffsetCommit", 2, _commit(f"doomed-{v}", {("orders", 0): 1})(2),
              "setup: offsets of a group to delete")
    c.each("DeleteGroups", "an empty group and an unknown one", lambda v: {
        "groups_names": [f"doomed-{v}", "nobody"]})
    c.add("OffsetCommit", 2, _commit("pruned", {("orders", 0): 1, ("orders", 1): 1})(2),
          "setup: offsets of a group to prune")
    c.each("OffsetDelete", "a committed partition, an uncommitted one, an unknown topic",
           lambda v: {"group_id": "pruned", "topics": [
               {"name": "orders", "partitions": [{"partition_index": 0},
                                                 {"partition_index": 9}]},
               {"name": "ghost", "partitions": [{"partition_index": 0}]}]})
    c.each("OffsetDelete", "unknown group", lambda v: {"group_id": "nobody", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0}]}]})


def _classic_groups(c: _Corpus) -> None:
    """A lone member's life per JoinGroup version: join (v4+ twice: MEMBER_ID_REQUIRED
    first), sync, describe, heartbeat, the joins Kafka refuses while it is a member, commit,
    leave; then requests of members a group does not know."""
    joins = list(c.of("JoinGroup"))
    c.settle(groups=[f"classic-{v}" for v in joins])
    members = 0
    newest = {api: max(c.of(api)) for api in ("SyncGroup", "Heartbeat", "LeaveGroup",
                                               "DescribeGroups") if c.of(api)}
    protocols = [{"name": "range", "metadata": subscription("orders")},
                 {"name": "roundrobin", "metadata": subscription("orders", "timed")}]
    for v in joins:
        group = f"classic-{v}"
        c.add("JoinGroup", v, join_body(group=group, protocols=protocols),
              "new member, two protocols")
        members += 1
        me = MemberId(members)
        if v >= 4:
            c.add("JoinGroup", v, join_body(me, group=group, protocols=protocols),
                  "new member with the id it was given")
        c.add("DescribeGroups", min(v, newest.get("DescribeGroups", 0)), {"groups": [group]},
              "a group completing its rebalance")
        c.add("SyncGroup", min(v, newest.get("SyncGroup", 0)), {
            "group_id": group, "generation_id": Generation(group), "member_id": me,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": me, "assignment": b"\x00\x00"}]},
            "the leader's assignment")
        c.add("DescribeGroups", min(v, newest.get("DescribeGroups", 0)), {
            "groups": [group, "nobody"], "include_authorized_operations": True},
            "a stable group and an unknown one")
        c.add("Heartbeat", min(v, newest.get("Heartbeat", 0)), {
            "group_id": group, "generation_id": Generation(group), "member_id": me},
            "member of the current generation")
        c.add("Heartbeat", min(v, newest.get("Heartbeat", 0)), {
            "group_id": group, "generation_id": 9, "member_id": me}, "another generation")
        c.add("JoinGroup", v, dict(join_body(me, group=group), protocol_type="connect"),
              "the member with another protocol type")
        c.add("JoinGroup", v, dict(join_body(me, group=group), protocols=[]),
              "the member with no protocols")
        c.add("JoinGroup", v, join_body("stranger", group=group), "unknown member id")
        c.add("JoinGroup", v, dict(join_body(group=f"tiny-{v}"), session_timeout_ms=1),
              "session timeout below the minimum")
        c.add("OffsetCommit", 8, _commit(group, {("orders", 0): 1}, generation=Generation(group),
                                         member=me)(8), "member of the current generation")
        c.add("LeaveGroup", min(v, newest.get("LeaveGroup", 0)), {
            "group_id": group, "member_id": me, "members": [{"member_id": me}]},
            "the lone member")

    for v in c.of("SyncGroup"):
        c.add("SyncGroup", v, {"group_id": "classic-3", "generation_id": 1,
                               "member_id": "stranger", "assignments": []},
              "unknown member, no protocol type or name")
        c.add("SyncGroup", v, {"group_id": "classic-3", "generation_id": 1,
                               "member_id": "stranger", "protocol_type": "consumer",
                               "protocol_name": "range", "assignments": []}, "unknown member")
    for v in c.of("Heartbeat"):
        c.add("Heartbeat", v, {"group_id": "classic-3", "generation_id": 1,
                               "member_id": "stranger"}, "unknown member")
        c.add("Heartbeat", v, {"group_id": "nobody", "generation_id": 1,
                               "member_id": "stranger"}, "unknown group")
    for v in c.of("LeaveGroup"):
        c.add("LeaveGroup", v, {"group_id": "classic-3", "member_id": "stranger",
                                "members": [{"member_id": "stranger"}]}, "unknown member")
    c.each("ListGroups", "all groups", lambda v: {})
    c.each("ListGroups", "Empty groups", lambda v: {"states_filter": ["Empty"]},
           versions=range(4, 99))
    c.each("ListGroups", "consumer-type groups", lambda v: {"types_filter": ["consumer"]},
           versions=range(5, 99))


NAMED_BY_BROKER = "a new member, named by the broker"


def _consumer_groups(c: _Corpus) -> None:
    """KIP-848 members: join (v0: the broker names the member), an epoch from the future or
    an unknown member, describe, commits and offset fetches with the member's epoch, one
    from the future and an old one."""
    for v in c.of("ConsumerGroupHeartbeat"):
        group = f"next-{v}"
        c.settle(groups=[group])
        c.add("ConsumerGroupHeartbeat", v, {
            "group_id": group, "member_id": "" if v == 0 else "AAAAAAAAAAAAAAAAAAAAAQ",
            "member_epoch": 0, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": ["orders"], "topic_partitions": []},
            NAMED_BY_BROKER if v == 0 else "a new member")
        c.add("ConsumerGroupHeartbeat", v, {
            "group_id": group, "member_id": "AAAAAAAAAAAAAAAAAAAAAQ", "member_epoch": 5},
            "an epoch from the future" if v else "an unknown member")
        for d in c.of("ConsumerGroupDescribe"):
            c.add("ConsumerGroupDescribe", d, {"group_ids": [group, "nobody"]},
                  "a stable group and an unknown one")
        c.add("DescribeGroups", max(c.of("DescribeGroups")), {"groups": [group]},
              "a consumer group")
        member: Any = GivenBy(NAMED_BY_BROKER, "member_id", UNGIVEN) if v == 0 \
            else "AAAAAAAAAAAAAAAAAAAAAQ"
        for epoch, case in [(MemberEpoch(member, 1), "the member's epoch"),
                            (99, "an epoch from the future"), (0, "an old epoch")]:
            c.add("OffsetCommit", max(c.of("OffsetCommit")), _commit(
                group, {("orders", 0): 1}, generation=epoch, member=member)(0),
                f"a KIP-848 member, {case}")
            c.add("OffsetFetch", max(c.of("OffsetFetch")), {"groups": [
                {"group_id": group, "member_id": member, "member_epoch": epoch,
                 "topics": [{"name": "orders", "topic_id": TopicId("orders"),
                             "partition_indexes": [0]}]}]}, f"a KIP-848 member, {case}")
    c.each("ListGroups", "consumer protocol groups", lambda v: {
        "types_filter": ["consumer"], "states_filter": ["Stable"]}, versions=range(5, 99))


STREAMS_MEMBER = "streams-member-1"
STREAMS_INTERNAL = ("streamed-words-repartition", "streamed-counts-changelog")


def _streams_groups(c: _Corpus) -> None:
    """Streams groups (KIP-1071): the group's configs (Kafka's checks and texts), a Kafka
    Streams member joining with a word count's topology over ``orders`` (the internal topics
    named missing, the first assignment held by the initial delay), fenced, unknown, the
    request checks; the group described, listed, described by DescribeGroups; a topology
    description refused without a plugin; the member leaving and the group deleted."""
    group = "streamed"
    repartition, changelog = STREAMS_INTERNAL

    def topic(name: str, configs: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
        return {"name": name, "partitions": 0, "replication_factor": 1,
                "topic_configs": [{"key": k, "value": v} for k, v in configs]}

    topology = {"epoch": 0, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": [repartition],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [topic(changelog, [("cleanup.policy", "compact")])],
         "repartition_sink_topics": [],
         "repartition_source_topics": [topic(repartition, [("cleanup.policy", "delete")])],
         "copartition_groups": []}]}
    join = {"group_id": group, "member_id": STREAMS_MEMBER, "member_epoch": 0,
            "endpoint_information_epoch": 0, "rebalance_timeout_ms": 300_000,
            "topology": topology, "active_tasks": [], "standby_tasks": [],
            "warmup_tasks": [], "process_id": "process-1", "client_tags": [],
            "task_offsets": [], "task_end_offsets": []}
    for name, value, case in [("streams.session.timeout.ms", "1000", "a session below the "
                               "minimum"),
                              ("streams.num.standby.replicas", "3", "standbys above the maximum"),
                              ("streams.assignor.name", "x", "an unknown assignor"),
                              ("streams.heartbeat.interval.ms", "6000", "a heartbeat interval")]:
        c.each("IncrementalAlterConfigs", f"a streams group's config: {case}", lambda v, n=name,
               val=value: {"resources": [{"resource_type": 32, "resource_name": group,
                                          "configs": [{"name": n, "config_operation": 0,
                                                       "value": val}]}],
                           "validate_only": False},
               versions=[max(c.of("IncrementalAlterConfigs"))])
    newest = max(c.of("StreamsGroupHeartbeat"), default=None)
    if newest is None:
        return
    c.add("StreamsGroupHeartbeat", newest, join, "a new member with its topology")
    c.settle(topics=list(STREAMS_INTERNAL))
    for v in c.of("StreamsGroupHeartbeat"):
        for body, case in [({"member_epoch": 9}, "an epoch from the future"),
                           ({"member_id": "streams-member-2", "member_epoch": 1},
                            "an unknown member"),
                           ({"group_id": "nobody", "member_epoch": 1}, "an unknown group"),
                           ({"member_epoch": 1, "topology": topology},
                            "a topology outside a join"),
                           ({"member_epoch": 0, "rebalance_timeout_ms": 1000},
                            "a join without tasks or topology"),
                           ({"member_epoch": -3}, "an epoch below -2"),
                           ({"member_epoch": 1, "active_tasks": []},
                            "one task list without the others"),
                           ({"group_id": "", "member_epoch": 0}, "no group id")]:
            c.add("StreamsGroupHeartbeat", v, {
                "group_id": group, "member_id": STREAMS_MEMBER,
                "endpoint_information_epoch": 0, **body}, case)
    for v in c.of("StreamsGroupDescribe"):
        c.add("StreamsGroupDescribe", v, {"group_ids": [group, "nobody", "shared"]},
              "a streams group, an unknown one and a group of another type")
    c.each("StreamsGroupTopologyDescriptionUpdate", "no description plugin", lambda v: {
        "group_id": group, "member_id": STREAMS_MEMBER, "topology_epoch": 0,
        "topology_description": {"subtopologies": [], "global_stores": []}})
    c.each("ListGroups", "streams groups", lambda v: {"types_filter": ["streams"],
                                                      "states_filter": []},
           versions=range(5, 99))
    c.add("DescribeGroups", max(c.of("DescribeGroups")), {"groups": [group]}, "a streams group")
    c.add("DeleteGroups", max(c.of("DeleteGroups")), {"groups_names": [group]},
          "a streams group with a member")
    c.add("StreamsGroupHeartbeat", newest, {
        "group_id": group, "member_id": STREAMS_MEMBER, "member_epoch": -1,
        "endpoint_information_epoch": 0}, "the member leaves")
    c.add("DeleteGroups", max(c.of("DeleteGroups")), {"groups_names": [group]},
          "an empty streams group")


SHARE_MEMBER = "AAAAAAAAAAAAAAAAAAAAAg"
SETTLE_SHARE_GROUP = "settle-share"  # written by the share_state settle


def _share_groups(c: _Corpus) -> None:
    """Share groups (KIP-932): the group's configs (Kafka's checks and texts), a member
    joining, fenced, unknown; a share session over ``queue`` (4 records in two batches)
    acquiring, releasing, accepting, rejecting, its epochs; the start offsets described,
    altered and deleted; the group listed, described by DescribeGroups, deleted once empty."""
    group = "shared"

    def configs(ops: list[tuple[str, str]]) -> Mapping[str, Any]:
        return {"resources": [{"resource_type": 32, "resource_name": group, "configs": [
            {"name": k, "config_operation": 0, "value": v} for k, v in ops]}],
            "validate_only": False}

    def fetch(epoch: int, acks: list[tuple[int, int, int]], named: bool = True,
              member: str = SHARE_MEMBER, wait_ms: int = 500
              ) -> Callable[[int], Mapping[str, Any]]:
        partitions = [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": last, "acknowledge_types": [t]}
            for f, last, t in acks]}] if named or acks else []
        return lambda v: {
            "group_id": group, "member_id": member, "share_session_epoch": epoch,
            "max_wait_ms": wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
            "batch_size": 100, "forgotten_topics_data": [],
            "topics": [{"topic_id": TopicId("queue"), "partitions": partitions}]
            if partitions else []}

    def acknowledge(epoch: int, acks: list[tuple[int, int, int]]
                    ) -> Callable[[int], Mapping[str, Any]]:
        return lambda v: {
            "group_id": group, "member_id": SHARE_MEMBER, "share_session_epoch": epoch,
            "topics": [{"topic_id": TopicId("queue"), "partitions": [{
                "partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": f, "last_offset": last, "acknowledge_types": [t]}
                    for f, last, t in acks]}]}] if acks else []}

    c.add("CreateTopics", 7, {"topics": [{"name": "queue", "num_partitions": 1,
                                          "replication_factor": 1}], "timeout_ms": 30000},
          "setup: create queue")
    c.settle(topics=["queue"], groups=[group, SETTLE_SHARE_GROUP], share_state="queue")
    c.add("Produce", 9, produce_body("queue", 0, batch([b"q0", b"q1"])),
          "setup: 2 records to queue/0")
    c.add("Produce", 9, produce_body("queue", 0, batch([b"q2", b"q3"])),
          "setup: 2 more records to queue/0")
    for ops, case in [([("share.auto.offset.reset", "earliest")], "the reset policy"),
                      ([("share.record.lock.duration.ms", "1000")], "a lock below the minimum"),
                      ([("share.delivery.count.limit", "1")], "a delivery limit below 2"),
                      ([("share.isolation.level", "x")], "an isolation level unknown"),
                      ([("no.such.config", "1")], "an unknown group config")]:
        c.each("IncrementalAlterConfigs", f"a share group's config: {case}",
               lambda v, ops=ops: configs(ops), versions=[max(c.of("IncrementalAlterConfigs"))])
    c.each("DescribeConfigs", "a group's configs", lambda v: {"resources": [
        {"resource_type": 32, "resource_name": group, "configuration_keys": None}],
        "include_synonyms": v >= 1}, versions=[max(c.of("DescribeConfigs"))])
    for v in c.of("ShareGroupHeartbeat"):
        c.add("ShareGroupHeartbeat", v, {"group_id": group, "member_id": SHARE_MEMBER,
                                         "member_epoch": 0, "subscribed_topic_names": ["queue"]},
              "a new member")
        for body, case in [({"member_epoch": 9}, "an epoch from the future"),
                           ({"member_id": "AAAAAAAAAAAAAAAAAAAAAw", "member_epoch": 1},
                            "an unknown member"),
                           ({"group_id": "nobody", "member_epoch": 1}, "an unknown group"),
                           ({"member_epoch": 0, "subscribed_topic_names": None},
                            "a join without topics"),
                           ({"group_id": "", "member_epoch": 0}, "no group id")]:
            c.add("ShareGroupHeartbeat", v, {
                "group_id": group, "member_id": SHARE_MEMBER, "subscribed_topic_names": ["queue"],
                **body}, case)
    for v in c.of("ShareGroupDescribe"):
        c.add("ShareGroupDescribe", v, {"group_ids": [group, "nobody"]},
              "a share group and an unknown one")
    newest_fetch, newest_ack = max(c.of("ShareFetch")), max(c.of("ShareAcknowledge"))
    for case, api, version, body in [
            # Kafka makes its share-state topic and reads the partition's state first
            ("a new share session", "ShareFetch", newest_fetch, fetch(0, [], wait_ms=10_000)),
            ("release the first record", "ShareAcknowledge", newest_ack,
             acknowledge(1, [(0, 0, 2)])),
            ("accept two, the released one again", "ShareFetch", newest_fetch,
             fetch(2, [(1, 2, 1)], named=False)),
            ("reject it, accept the last", "ShareFetch", newest_fetch,
             fetch(3, [(0, 0, 3), (3, 3, 1)], named=False)),
            ("nothing left", "ShareFetch", newest_fetch, fetch(4, [], named=False)),
            ("nothing left, the partition named again", "ShareFetch", newest_fetch,
             fetch(5, [])),
            ("an offset never delivered", "ShareAcknowledge", newest_ack,
             acknowledge(6, [(9, 9, 1)])),
            ("an offset accepted already", "ShareAcknowledge", newest_ack,
             acknowledge(7, [(3, 3, 1)]))]:
        c.add(api, version, body(version), case)
    for case, body in [("a session epoch from the future", fetch(9, [])),
                       ("no session", fetch(1, [], member="AAAAAAAAAAAAAAAAAAAABA")),
                       ("acknowledgements opening a session", fetch(0, [(0, 0, 1)]))]:
        c.each("ShareFetch", case, body)
    c.each("ShareAcknowledge", "a session opened by an acknowledgement", acknowledge(0, []))
    for v in c.of("DescribeShareGroupOffsets"):
        c.add("DescribeShareGroupOffsets", v, {"groups": [
            {"group_id": group, "topics": None}, {"group_id": "nobody", "topics": None}]},
            "a share group's offsets and an unknown group's")
    c.each("ShareFetch", "the session closed", fetch(-1, [], named=False),
           versions=[newest_fetch])
    c.each("AlterShareGroupOffsets", "a group with a member", lambda v: {
        "group_id": group, "topics": [{"topic_name": "queue", "partitions": [
            {"partition_index": 0, "start_offset": 1}]}]})
    c.each("DeleteShareGroupOffsets", "a group with a member", lambda v: {
        "group_id": group, "topics": [{"topic_name": "queue"}]})
    c.each("AlterShareGroupOffsets", "a new group; a partition and a topic unknown", lambda v: {
        "group_id": "share-idle", "topics": [
            {"topic_name": "queue", "partitions": [{"partition_index": 0, "start_offset": 2},
                                                   {"partition_index": 7, "start_offset": 0}]},
            {"topic_name": "nowhere", "partitions": [{"partition_index": 0,
                                                      "start_offset": 0}]}]})
    for v in c.of("DescribeShareGroupOffsets"):
        c.add("DescribeShareGroupOffsets", v, {"groups": [{"group_id": "share-idle",
                                                           "topics": None}]},
              "offsets altered")
    c.each("DeleteShareGroupOffsets", "a topic with offsets, one without, one unknown",
           lambda v: {"group_id": "share-idle", "topics": [
               {"topic_name": "queue"}, {"topic_name": "timed"}, {"topic_name": "nowhere"}]})
    c.each("DeleteShareGroupOffsets", "an unknown group", lambda v: {
        "group_id": "nobody", "topics": [{"topic_name": "queue"}]})
    c.each("ListGroups", "share groups", lambda v: {"types_filter": ["share"],
                                                    "states_filter": []},
           versions=range(5, 99))
    c.add("DescribeGroups", max(c.of("DescribeGroups")), {"groups": [group]}, "a share group")
    for v in c.of("ShareGroupHeartbeat"):
        c.add("ShareGroupHeartbeat", v, {"group_id": group, "member_id": SHARE_MEMBER,
                                         "member_epoch": -1}, "the member leaves")
    c.add("DeleteGroups", max(c.of("DeleteGroups")),
          {"groups_names": [group, "share-idle", SETTLE_SHARE_GROUP]}, "share groups")


def _producers(c: _Corpus) -> None:
    c.settle(producer_ids=True)
    c.each("InitProducerId", "idempotent producer", lambda v: INIT_PRODUCER_ID)
    c.settle(transactional_ids=["tx"])
    c.add("FindCoordinator", max(c.of("FindCoordinator")),
          {"key_type": 1, "coordinator_keys": ["tx"]}, "a transactional id")
    c.each("InitProducerId", "transactional producer", lambda v: dict(
        INIT_PRODUCER_ID, transactional_id=f"tx-{v}"))
    c.each("InitProducerId", "epoch bump of an idempotent producer", lambda v: dict(
        INIT_PRODUCER_ID, producer_id=ProducerId(2), producer_epoch=0), versions=range(3, 99))
    c.each("InitProducerId", "an epoch that is not the producer's", lambda v: dict(
        INIT_PRODUCER_ID, producer_id=ProducerId(3), producer_epoch=4), versions=range(3, 99))

    def idempotent(values: list[bytes], sequence: int, epoch: int = 0) -> Any:
        records = encode_batch([(None, v, [], 1_700_000_000_000) for v in values],
                               producer_id=0, producer_epoch=epoch, base_sequence=sequence)
        return produce_body("timed", 0, ProducedBatches(records, ProducerId(2)))

    for records, case in [(idempotent([b"i0", b"i1"], 0), "idempotent batch"),
                          (idempotent([b"i0", b"i1"], 0), "the same batch again"),
                          (idempotent([b"i5"], 5), "a sequence gap"),
                          (idempotent([b"e1"], 0, epoch=1), "an epoch the producer bumped"),
                          (idempotent([b"e0"], 2), "the old epoch")]:
        c.add("Produce", 9, records, case)
    c.add("Fetch", 12, fetch_body("timed", 0, 4, TopicId("timed")), "idempotent batches")


def _transactions(c: _Corpus) -> None:
    """A transaction of ``etx`` on orders/0 with the offsets of group ``txg``, asked about
    while it is open, committed, then ended again; transactions v2 with ``etx5``."""
    c.settle(transactional_ids=["etx", "etx5"], groups=["txg"])
    c.each("InitProducerId", "a transaction timeout above the maximum", lambda v: dict(
        INIT_PRODUCER_ID, transactional_id="etx", transaction_timeout_ms=900_001))
    c.add("InitProducerId", 4, dict(INIT_PRODUCER_ID, transactional_id="etx"),
          "txn setup: init etx")
    pid = GivenBy("txn setup: init etx", "producer_id", -1)

    def add(producer: Any, partitions: list[int], verify_only: bool = False
            ) -> Callable[[int], Mapping[str, Any]]:
        topics = [{"name": "orders", "partitions": partitions}]
        return lambda v: ({"transactions": [{
            "transactional_id": "etx", "producer_id": producer, "producer_epoch": 0,
            "verify_only": verify_only, "topics": topics}]} if v >= 4 else {
            "v3_and_below_transactional_id": "etx", "v3_and_below_producer_id": producer,
            "v3_and_below_producer_epoch": 0, "v3_and_below_topics": topics})

    c.each("AddPartitionsToTxn", "orders/0 joins", add(pid, [0]), versions=range(0, 4))
    c.each("AddPartitionsToTxn", "verify orders/0 (in) and orders/1 (not in)",
           add(pid, [0, 1], verify_only=True), versions=range(4, 99))
    c.each("AddPartitionsToTxn", "an unknown producer id", add(123456, [0]))
    c.each("AddPartitionsToTxn", "an unknown partition", add(pid, [0, 9]),
           versions=range(0, 4))
    records = encode_batch([(None, b"txn", [], 1_700_000_000_000)], producer_id=0,
                           producer_epoch=0, base_sequence=0, transactional=True)
    c.add("Produce", 9, dict(produce_body("orders", 0, ProducedBatches(records, pid)),
                             transactional_id="etx"), "a transactional batch")
    c.add("Produce", 9, dict(produce_body("orders", 1, ProducedBatches(records, pid)),
                             transactional_id="etx"), "a transactional batch, not added")
    c.each("Fetch", "read_committed, a transaction open", lambda v: dict(
        fetch_body("orders", 0, 0, TopicId("orders")), isolation_level=1),
        versions=range(4, 99))
    c.each("ListOffsets", "read_committed latest, a transaction open", lambda v: {
        "replica_id": -1, "isolation_level": 1, "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "timestamp": -1}]}]}, versions=range(2, 99))
    c.each("AddOffsetsToTxn", "group txg joins", lambda v: {
        "transactional_id": "etx", "producer_id": pid, "producer_epoch": 0,
        "group_id": "txg"})
    c.each("AddOffsetsToTxn", "an old epoch", lambda v: {
        "transactional_id": "etx", "producer_id": pid, "producer_epoch": 9,
        "group_id": "txg"})
    c.each("TxnOffsetCommit", "an offset of txg", lambda v: {
        "transactional_id": "etx", "group_id": "txg", "producer_id": pid,
        "producer_epoch": 0, "topics": [{"name": "orders", "topic_id": TopicId("orders"),
                                         "partitions": [{"partition_index": 0,
                                                         "committed_offset": 5}]}]})
    c.each("TxnOffsetCommit", "an unknown topic and partition", lambda v: {
        "transactional_id": "etx", "group_id": "txg", "producer_id": pid,
        "producer_epoch": 0, "topics": [
            {"name": "ghost", "topic_id": uuid.UUID(int=7),
             "partitions": [{"partition_index": 0, "committed_offset": 1}]},
            {"name": "orders", "topic_id": TopicId("orders"),
             "partitions": [{"partition_index": 9, "committed_offset": 1}]}]})
    c.each("OffsetFetch", "require_stable, an offset pending", lambda v: dict(
        _fetch_offsets("txg", {"orders": [0]})(v), require_stable=True),
        versions=range(7, 99))
    c.each("DescribeTransactions", "open, and unknown", lambda v: {
        "transactional_ids": ["etx", "unknown-etx"]})
    c.each("ListTransactions", "ongoing ones", lambda v: {"state_filters": ["Ongoing"],
                                                          "producer_id_filters": [pid]})
    c.each("ListTransactions", "an unknown state", lambda v: {
        "state_filters": ["Sleeping"], "producer_id_filters": []})
    c.each("ListTransactions", "by transactional id pattern", lambda v: {
        "state_filters": [], "producer_id_filters": [], "transactional_id_pattern": "etx|nope"},
        versions=range(2, 99))
    c.each("DescribeProducers", "orders/0", lambda v: {"topics": [
        {"name": "orders", "partition_indexes": [0, 9]}]})
    c.add("EndTxn", 4, {"transactional_id": "etx", "producer_id": pid, "producer_epoch": 0,
                        "committed": True}, "commit")
    c.settle(ended=["etx"])
    c.each("EndTxn", "commit again (a retry)", lambda v: {
        "transactional_id": "etx", "producer_id": pid, "producer_epoch": 0,
        "committed": True}, versions=range(0, 5))
    c.each("EndTxn", "abort after the commit", lambda v: {
        "transactional_id": "etx", "producer_id": pid, "producer_epoch": 0,
        "committed": False}, versions=range(0, 5))
    c.each("EndTxn", "an old epoch", lambda v: {
        "transactional_id": "etx", "producer_id": pid, "producer_epoch": 7,
        "committed": True}, versions=range(0, 5))
    c.each("Fetch", "read_committed, after the commit", lambda v: dict(
        fetch_body("orders", 0, 0, TopicId("orders")), isolation_level=1),
        versions=range(4, 99))
    c.each("OffsetFetch", "require_stable, after the commit", lambda v: dict(
        _fetch_offsets("txg", {"orders": [0]})(v), require_stable=True),
        versions=range(7, 99))
    c.each("WriteTxnMarkers", "an abort marker on orders/1", lambda v: {"markers": [{
        "producer_id": pid, "producer_epoch": 0, "transaction_result": False,
        "coordinator_epoch": 0, "topics": [{"name": "orders", "partition_indexes": [1, 9]}]}]})
    c.add("InitProducerId", 5, dict(INIT_PRODUCER_ID, transactional_id="etx5"),
          "txn setup: init etx5")
    pid5 = GivenBy("txn setup: init etx5", "producer_id", -1)
    c.add("Produce", 12, dict(produce_body("orders", 1, ProducedBatches(records, pid5)),
                              transactional_id="etx5"),
          "a transactional batch of transactions v2 (added by the leader)")
    c.add("EndTxn", 5, {"transactional_id": "etx5", "producer_id": pid5, "producer_epoch": 0,
                        "committed": True}, "commit (transactions v2: the epoch bumps)")
    c.settle(ended=["etx5"])
    c.add("EndTxn", 5, {"transactional_id": "etx5", "producer_id": pid5, "producer_epoch": 0,
                        "committed": True}, "commit again (a v2 retry: the epoch before)")
    c.add("EndTxn", 5, {"transactional_id": "etx5", "producer_id": pid5, "producer_epoch": 1,
                        "committed": True}, "commit with no transaction (Empty)")


# -- the captured corpus ----------------------------------------------------------------------


ACL = {"resource_type": 2, "resource_name": "orders", "resource_pattern_type": 3,
       "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}
ACL_FILTER = {"resource_type_filter": 1, "resource_name_filter": None,
              "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
              "operation": 1, "permission_type": 1}


def _acls(c: _Corpus) -> None:
    """The ACL APIs of a broker without an authorizer (both: SECURITY_DISABLED)."""
    c.each("CreateAcls", "no authorizer", lambda v: {"creations": [ACL, dict(ACL, operation=4)]})
    c.each("DescribeAcls", "no authorizer", lambda v: ACL_FILTER)
    c.each("DeleteAcls", "no authorizer", lambda v: {"filters": [ACL_FILTER]})
def _upsertion(name: str, mechanism: int, iterations: int) -> dict[str, Any]:
    """A SCRAM upsertion with a fixed salt (a client salts at random): both brokers get the
    same bytes."""
    salt = f"salt-of-{name}".encode()
    algorithm = "sha256" if mechanism == 1 else "sha512"
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt,
            "salted_password": hashlib.pbkdf2_hmac(algorithm, b"secret", salt, iterations)}


def _scram_credentials(c: _Corpus) -> None:
    """SCRAM users added, described and refused on PLAINTEXT (no authentication needed)."""
    alter = "AlterUserScramCredentials"
    c.add(alter, 0, {"deletions": [], "upsertions": [
        _upsertion("alice", 1, 8192), _upsertion("alice-512", 2, 4096),
        _upsertion("bob", 2, 16384)]}, "three users added")
    c.settle(scram_users=["alice", "alice-512", "bob"])
    describe = "DescribeUserScramCredentials"
    c.add(describe, 0, {"users": [{"name": "alice"}, {"name": "bob"}]}, "named users")
    c.add(describe, 0, {"users": [{"name": "carol"}, {"name": "bob"}, {"name": "bob"}]},
          "an unknown user and one named twice")
    c.add(describe, 0, {"users": None}, "every user")
    c.add(describe, 0, {"users": []}, "every user (an empty list)")
    c.add(alter, 0, {"deletions": [
        {"name": "carol", "mechanism": 1}, {"name": "alice-512", "mechanism": 2},
        {"name": "dave", "mechanism": 0}], "upsertions": [
        _upsertion("few", 1, 4095), _upsertion("many", 2, 16385),
        dict(_upsertion("unknown-mechanism", 1, 4096), mechanism=3),
        dict(_upsertion("", 1, 4096), name=""),
        dict(_upsertion("no-password", 1, 4096), salted_password=b""),
        _upsertion("alice-512", 1, 4096), _upsertion("erin", 1, 4096)]},
        "each refusal, a deletion, a user named twice")


def _quota_entry(pairs: Sequence[tuple[str, str | None]],
                 ops: Mapping[str, float | None]) -> dict[str, Any]:
    """An AlterClientQuotas entry: the entity's (type, name) pairs; a value None removes."""
    return {"entity": [{"entity_type": t, "entity_name": n} for t, n in pairs],
            "ops": [{"key": k, "value": 0.0 if v is None else v, "remove": v is None}
                    for k, v in ops.items()]}


QUOTAS_SET = [
    ((("user", "alice"), ("client-id", "app")),
     {"producer_byte_rate": 1024.0, "request_percentage": 12.5}),
    ((("user", None),), {"consumer_byte_rate": 4096.0}),
    ((("client-id", None),), {"controller_mutation_rate": 0.5}),
    ((("ip", "127.0.0.1"),), {"connection_creation_rate": 50.0}),
    ((("ip", None),), {"connection_creation_rate": 70.0}),
]


def _client_quotas(c: _Corpus) -> None:
    """Client quotas set, refused, described by every kind of filter, then removed (no
    quota is left to throttle the corpus's later requests)."""
    alter, describe = "AlterClientQuotas", "DescribeClientQuotas"
    c.add(alter, 0, {"entries": [_quota_entry(*q) for q in QUOTAS_SET],
                     "validate_only": False}, "users, client-ids, ips and their defaults")
    c.settle(quota_entities=len(QUOTAS_SET))
    c.each(alter, "each refusal, validate only", lambda v: {"entries": [
        _quota_entry(e, ops) for e, ops in [
            ((("user", "u1"),), {"producer_byte_rate": 1.5}),
            ((("user", "u2"),), {"consumer_byte_rate": 0.0}),
            ((("user", "u3"),), {"producer_byte_rate": 1e20}),
            ((("user", "u4"),), {"bogus": 1.0}),
            ((("user", "u5"),), {"connection_creation_rate": 1.0}),
            ((("ip", "10.0.0.1"),), {"producer_byte_rate": 1.0}),
            ((("ip", "10.0.0.2"),), {"connection_creation_rate": 3e9}),
            ((("ip", "not a host!"),), {"connection_creation_rate": 1.0}),
            ((("ip", "10.0.0.3"), ("user", "u6")), {"connection_creation_rate": 1.0}),
            ((("group", "g"),), {"producer_byte_rate": 1.0}),
            ((("user", ""),), {"producer_byte_rate": 1.0}),
            ((), {"producer_byte_rate": 1.0}),
            ((("user", "u7"),), {"producer_byte_rate": 5.0, "request_percentage": 200.0}),
            ((("user", "u8"),), {"producer_byte_rate": None}),
        ]], "validate_only": True})
    twice = _quota_entry((("user", "dup"),), {"producer_byte_rate": 5.0})
    c.add(alter, 1, {"entries": [
        {**twice, "ops": twice["ops"] * 2}, _quota_entry((("user", "u9"), ("user", "u10")), {
            "producer_byte_rate": 10.0})], "validate_only": True},
        "a key named twice, a type named twice")
    for case, components, strict in [
            ("everything", [], False), ("nothing (strict, no component)", [], True),
            ("a user by name", [("user", 0, "alice")], False),
            ("a user by name, strict", [("user", 0, "alice")], True),
            ("the default user", [("user", 1, None)], False),
            ("any client-id", [("client-id", 2, None)], False),
            ("users with client-ids, strict", [("user", 2, None), ("client-id", 2, None)],
             True),
            ("any ip", [("ip", 2, None)], False),
            ("exact without a name", [("user", 0, None)], False),
            ("default with a name", [("user", 1, "x")], False),
            ("any with a name", [("user", 2, "x")], False),
            ("an unknown match type", [("user", 3, None)], False),
            ("an unknown entity type", [("group", 2, None)], False),
            ("an empty entity type", [("", 2, None)], False),
            ("a type twice", [("user", 2, None), ("user", 1, None)], False),
            ("ip with a user", [("ip", 2, None), ("user", 2, None)], False)]:
        c.each(describe, case, lambda v, components=components, strict=strict: {
            "components": [{"entity_type": t, "match_type": m, "match": n}
                           for t, m, n in components],
            "strict": strict})
    c.add(alter, 1, {"entries": [_quota_entry(e, dict.fromkeys(ops)) for e, ops in QUOTAS_SET],
                     "validate_only": False}, "every quota removed")
    c.settle(quota_entities=0)


def _delegation_tokens(c: _Corpus) -> None:
    """The token APIs on a PLAINTEXT connection: refused before anything else."""
    c.each("CreateDelegationToken", "on PLAINTEXT", lambda v: {
        "owner_principal_type": None, "owner_principal_name": None, "max_lifetime_ms": -1,
        "renewers": [{"principal_type": "User", "principal_name": "bob"}]})
    c.each("RenewDelegationToken", "on PLAINTEXT",
           lambda v: {"hmac": b"not-a-token", "renew_period_ms": -1})
    c.each("ExpireDelegationToken", "on PLAINTEXT",
           lambda v: {"hmac": b"not-a-token", "expiry_time_period_ms": -1})
    c.each("DescribeDelegationToken", "on PLAINTEXT", lambda v: {"owners": None})


def to_json(value: Any) -> Any:
    """A request body as JSON: bytes as {"$b64": ...}, UUIDs as {"$uuid": ...}, placeholders
    as {"$topic_id": name}, {"$member_id": n}, {"$producer_id": n}, {"$given_by": case,
    "name": field, "otherwise": value}, {"$batches": ..., "producer": placeholder},
    {"$cluster_id": true}, {"$epoch_of": member, "otherwise": n}, {"$generation_of": group}."""
    if isinstance(value, TopicId):
        return {"$topic_id": value.name}
    if isinstance(value, MemberId):
        return {"$member_id": value.n}
    if isinstance(value, ProducerId):
        return {"$producer_id": value.n}
    if isinstance(value, ProducedBatches):
        return {"$batches": base64.b64encode(value.data).decode(),
                "producer": to_json(value.producer)}
    if isinstance(value, GivenBy):
        return {"$given_by": value.case, "name": value.name, "otherwise": value.otherwise}
    if isinstance(value, ClusterId):
        return {"$cluster_id": True}
    if isinstance(value, MemberEpoch):
        return {"$epoch_of": to_json(value.member), "otherwise": value.otherwise}
    if isinstance(value, Generation):
        return {"$generation_of": value.group}
    if isinstance(value, bytes | bytearray):
        return {"$b64": base64.b64encode(value).decode()}
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def from_json(value: Any) -> Any:
    """The inverse of ``to_json``."""
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$topic_id" in value:
        return TopicId(value["$topic_id"])
    if "$member_id" in value:
        return MemberId(value["$member_id"])
    if "$producer_id" in value:
        return ProducerId(value["$producer_id"])
    if "$batches" in value:
        return ProducedBatches(base64.b64decode(value["$batches"]), from_json(value["producer"]))
    if "$given_by" in value:
        return GivenBy(value["$given_by"], value["name"], value["otherwise"])
    if "$cluster_id" in value:
        return ClusterId()
    if "$epoch_of" in value:
        return MemberEpoch(from_json(value["$epoch_of"]), value["otherwise"])
    if "$generation_of" in value:
        return Generation(value["$generation_of"])
    if "$b64" in value:
        return base64.b64decode(value["$b64"])
    if "$uuid" in value:
        return uuid.UUID(value["$uuid"])
    return {k: from_json(v) for k, v in value.items()}


def captured_corpus(path: Path = CAPTURED) -> Iterator[Step]:
    """The captured requests (one JSON object a line: client, client_id, api, version, body;
    or a settle line), in capture order."""
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if "settle" in entry:
            settle = entry["settle"]
            yield Settle(tuple(settle.get("topics", ())), tuple(settle.get("groups", ())),
                         tuple(settle.get("transactional_ids", ())),
                         settle.get("producer_ids", False))
            continue
        yield Request(entry["api"], entry["version"], from_json(entry["body"]),
                      f"{entry['client']}: {entry['what']}", client_id=entry["client_id"])


def _sasl(c: _Corpus) -> None:
    """The SASL APIs on the PLAINTEXT listener the corpus runs on: Kafka's request handler
    answers both ILLEGAL_SASL_STATE (the exchange itself, on SASL listeners, is compared by
    tests/test_sasl.py's cases)."""
    c.each("SaslHandshake", "on a PLAINTEXT listener", lambda v: {"mechanism": "PLAIN"})
    c.each("SaslAuthenticate", "on a PLAINTEXT listener",
           lambda v: {"auth_bytes": b"\0alice\0alice-secret"})
