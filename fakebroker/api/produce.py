"""Produce (key 0): append record batches to partition logs.

Versions: 0-11 (3.9), 12-13 (4.x; v13 names topics by id). Flexible from v9. Kafka 4 still
advertises min 0 (KAFKA-18659); this broker serves v0-2 too, with legacy message sets
(refused as 4.x refuses them when it emulates 4.x).

Behavior (the order of the checks is Kafka 4.4's, measured: ``produce_validation``):
* Before anything else, every partition's first entry is peeked at: one Kafka cannot iterate
  (a size below 14, an unknown magic) is CORRUPT_MESSAGE for every partition with Kafka's
  reason (a size above 2**31 - 13, which overflows Kafka's int when it adds the 12 bytes
  before it: UNKNOWN_SERVER_ERROR, measured), a transactional batch in a request without a
  transactional id
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition (acks=0: the connection closes).
* A partition named more than once (no client does) is appended once, with the last of its
  records that passed the topic and shape checks, and answered once: the last refused
  entry's error if one was refused (even where the append was refused too), else the
  append's (Kafka's KafkaApis keeps them in maps and merges its refusals last; measured).
  Each topic is answered in one entry.
* acks must be -1, 0 or 1, else INVALID_REQUIRED_ACKS for each partition that passed the
  topic and shape checks (those that did not keep their own error).
* acks=0: no response at all; if any partition failed, the connection is closed (as Kafka
  does), so the client learns something went wrong.
* Per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for v13); the request's shape
  (v3+: exactly one whole magic-2 batch, INVALID_RECORD; bytes after the last whole entry
  are dropped, as Kafka trims them); then INVALID_TOPIC_EXCEPTION
  (no message) for Kafka's internal topics (``__consumer_offsets``...) unless the client id
  is ``__admin_client``, as Kafka's ReplicaManager refuses them; NOT_LEADER_OR_FOLLOWER
  from a broker that does not lead it (v10+ also names the current leader and its endpoint),
  then the log's checks: INVALID_RECORD for a base offset other than 0, MESSAGE_TOO_LARGE
  above the topic's max.message.bytes, CORRUPT_MESSAGE for a bad CRC, UNKNOWN_SERVER_ERROR
  for an unknown codec, INVALID_RECORD for a count or offset range out of shape, a control
  batch or an idempotent batch without a sequence, or records that do not add up (read only
  where they are decoded anyway: ``produce_validation.check_records``); none with a message,
  those but MESSAGE_TOO_LARGE and CORRUPT_MESSAGE with the log start offset, as Kafka's;
  UNSUPPORTED_COMPRESSION_TYPE for zstd below v7 (with the shape); INVALID_TIMESTAMP
  for a CreateTime record beyond message.timestamp.after.max.ms ahead of the broker's clock
  (1 h) or message.timestamp.before.max.ms behind it, each such record in record_errors;
  before that INVALID_RECORD for a record without a key to a compacted topic, each such
  record in record_errors (Kafka's message; both with the log start offset). Before those,
  acks=-1 to a partition whose ISR is smaller than its min.insync.replicas (at most its
  replica count, Kafka's effective min ISR): NOT_ENOUGH_REPLICAS, no message.
  (NOT_ENOUGH_REPLICAS_AFTER_APPEND never happens: the fake's replicas hold every append.)
* With the ``max_stored_bytes`` setting (the fake's own, Kafka has none), a batch that would
  take the cluster's stored records past it: POLICY_VIOLATION with a message naming the cap
  (``fakebroker.state.storage_cap``), checked last, just before the append.
* Idempotent batches (producer id >= 0) follow Kafka's sequence rules, per partition
  (``fakebroker.state.producers``): a retried batch is not appended twice and is answered
  with its first offset (and, as Kafka does, the stored batch's max timestamp as its append
  time); OUT_OF_ORDER_SEQUENCE_NUMBER and INVALID_PRODUCER_EPOCH otherwise (with the log
  start offset, without a message). These come after every record check, as Kafka checks
  the producer's state after LogValidator: a batch that is not its producer's plain next one
  on the partition (a retry, a refusal, a new epoch, a producer new there) has its records
  read first, so records that do not add up are INVALID_RECORD and change no state.
* Transactional batches (a request with a transactional id): the partition must be in the
  producer's ongoing transaction, as the leader verifies with the coordinator (KIP-890):
  Produce v12+ adds it there implicitly (transactions v2: the client chose them, as Java
  clients do when ``transaction.version`` is finalized at 2; Kafka 4.4 adds at any finalized
  level, measured); older versions get INVALID_TXN_STATE (v0-10) or TRANSACTION_ABORTABLE
  (v11+) for a partition not added, INVALID_PRODUCER_EPOCH for a fenced epoch and
  INVALID_PRODUCER_ID_MAPPING for an unknown producer id, nothing appended. This is asked
  first, right after the request's shape (and the leader check): before acks, the CRC and
  every other check of the log, as Kafka's ReplicaManager verifies before it appends
  (``handleProduceAppend``; so a v12 batch refused later has still joined). Before that,
  transactional batches of more than one producer id and epoch in the partitions to append
  are INVALID_PRODUCER_ID_MAPPING for the whole request, with Kafka's message. A cluster
  answering as a release before 3.6 verifies nothing (KIP-890 part 1 came in 3.6): the batch
  is appended, and a partition never added to the transaction holds its last stable offset
  there (a hanging transaction), as those releases did.
* With an authorizer: WRITE on the transactional id, if the request has one (else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition), then WRITE on each topic
  (TOPIC_AUTHORIZATION_FAILED on its partitions, nothing appended). As in Kafka 4, an
  idempotent batch needs no IDEMPOTENT_WRITE here: InitProducerId checked it.
* The stored bytes are the client's bytes with baseOffset and partitionLeaderEpoch rewritten;
  with message.timestamp.type=LogAppendTime the batch is stamped and its CRC recomputed.
  Records in another format than the log's (``fakebroker.state.message_format``: magic 2
  from release 0.11; 0.10.x, or a topic's ``message.format.version`` before 3.0, keep magic
  1 or 0), or compressed otherwise than the topic's ``compression.type`` asks, are rebuilt
  as Kafka's LogValidator rebuilds them (``fakebroker.protocol.conversion.rebuilt``): one
  batch or wrapper for the request, offsets, keys, values and timestamps kept (magic 0 has
  none: -1). Before that, as Kafka's validator checks: INVALID_RECORD for several entries
  of which one is compressed or magic 2, or of mixed magic; UNSUPPORTED_FOR_MESSAGE_FORMAT
  for idempotent or transactional records to a legacy log; UNKNOWN_SERVER_ERROR for headers
  to one (Kafka's record builder throws).
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api import produce_validation
from fakebroker.api.access import topics, transactional_ids
from fakebroker.api.common import node_endpoints, resolve_topic
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from fakebroker.protocol.conversion import rebuilt
from fakebroker.protocol.errors import ClusterError, error_code, error_name
from fakebroker.protocol.records import (
    BatchHeader,
    CorruptRecordError,
    InvalidRecordError,
    assign_offsets,
    read_batch_headers,
)
from fakebroker.protocol.releases import since
from fakebroker.state import storage_cap
from fakebroker.state.cluster import Partition, Topic
from fakebroker.state.message_format import log_magic
from fakebroker.state.producers import AppendedBatch
from fakebroker.state.retention import roll_for

API_KEY = 0
ADMIN_CLIENT_ID = "__admin_client"  # the one client id that may write internal topics
# Beside a partition's error: nothing was appended.
NOT_APPENDED = {"base_offset": -1, "log_append_time_ms": -1, "log_start_offset": -1,
                "record_errors": ()}
NOT_ADDED = "Partition was not added to the transaction"  # Kafka's message
# KIP-890 part 1: the first release whose leaders verify a transactional batch's partition
# with the coordinator (transaction.partition.verification.enable, true from 3.6.0); before,
# the batch was appended, and a partition never added hung its transaction.
VERIFIED_FROM = "3.6"
ERROR_PLACEMENT = Placement(per_topic("topic_data", "responses", partitions=per_partition(
    "partition_data", "partition_responses", "index", error_fields=NOT_APPENDED)))
AUTHORIZES = (transactional_ids("WRITE"), topics("WRITE"))
# compression.type's codecs (but "producer": the one the records came with).
CODEC_IDS = {"uncompressed": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


def handle(request: Any, ctx: RequestContext) -> dict[str, Any] | None:
    refusal = request_refusal(request, ctx)
    checked = {} if refusal is not None else checked_partitions(ctx, request.topic_data)
    refusal = refusal or producers_refusal(ctx, checked)
    if refusal is not None:  # Kafka's answer for the whole request, every partition alike
        if request.acks == 0:
            raise ConnectionClosed(f"acks=0 produce failed: {refusal.error}")
        return {"throttle_time_ms": 0, "node_endpoints": [], "responses": [
            {"name": t.name, "topic_id": t.topic_id, "partition_responses": [
                dict(NOT_APPENDED, index=p.index, error_code=refusal.code,
                     error_message=refusal.message) for p in t.partition_data]}
            for t in request.topic_data]}
    appended = False
    leaders: set[int] = set()
    responses = []
    budget = storage_cap.Budget(ctx.cluster)
    for (name, topic_id), (topic, partitions) in checked.items():
        results = []
        for index, (records, refused) in partitions.items():
            result: dict[str, Any] = {"index": index}
            try:
                if records is not None:
                    try:
                        result.update(append(ctx, topic, index, records, budget,
                                             request.transactional_id, request.acks))
                        appended = True
                    except ClusterError:
                        if refused is None:
                            raise
                if refused is not None:  # Kafka's merge: a refusal wins over the append's
                    raise refused
            except ClusterError as exc:
                result.update(NOT_APPENDED, error_code=exc.code, error_message=exc.message,
                              **exc.answer_fields)
                partition = topic.partitions[index] if topic and 0 <= index < len(
                    topic.partitions) else None
                if exc.code == error_code("NOT_LEADER_OR_FOLLOWER") and partition is not None:
                    result["current_leader"] = {"leader_id": partition.leader,
                                                "leader_epoch": partition.leader_epoch}
                    leaders.add(partition.leader)
            results.append(result)
        responses.append({"name": name, "topic_id": topic_id,
                          "partition_responses": results})
    if appended:
        ctx.cluster.notify_append()
    if request.acks == 0:
        failed = [r for t in responses for r in t["partition_responses"] if r.get("error_code")]
        if failed:
            raise ConnectionClosed(
                f"acks=0 produce failed: {error_name(failed[0]['error_code'])}"
            )
        return None
    return {"responses": responses, "throttle_time_ms": 0,
            "node_endpoints": node_endpoints(ctx, leaders) if leaders else []}


def request_refusal(request: Any, ctx: RequestContext) -> ClusterError | None:
    """Kafka's refusals of a whole request, before any partition is appended (KafkaApis):
    CORRUPT_MESSAGE for a first entry Kafka cannot iterate, TRANSACTIONAL_ID_AUTHORIZATION_
    FAILED for a transactional batch in a request without a transactional id,
    UNKNOWN_SERVER_ERROR for an unknown codec in v3-6 (``produce_validation.
    unknown_codec_below_v7``, for a partition that exists); None: go on."""
    try:
        if any_transactional(request) and request.transactional_id is None:
            return ClusterError("TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
    except ClusterError as exc:
        return exc
    if 3 <= ctx.version < 7:
        for topic_data in request.topic_data:
            topic = resolve_topic(ctx, topic_data.name, topic_data.topic_id)
            for data in topic_data.partition_data:
                if topic is not None and 0 <= data.index < len(topic.partitions) \
                        and produce_validation.unknown_codec_below_v7(data.records):
                    return ClusterError("UNKNOWN_SERVER_ERROR")
    return None


def any_transactional(request: Any) -> bool:
    """Kafka's peek at every partition's first entry, in order, stopping at the first
    transactional batch (``produce_validation.first_batch_is_transactional``)."""
    peek = produce_validation.first_batch_is_transactional
    for topic_data in request.topic_data:
        for data in topic_data.partition_data:
            if peek(data.records):
                return True
    return False


def named_once(entries: Any) -> dict[tuple[Any, Any], dict[int, list[bytes | None]]]:
    """The request's partitions, each once (by topic name and id, then index, in the order
    first named) with the records of every entry naming it, in order: Kafka's KafkaApis
    keeps a partition's entries in maps (a partition named twice is appended once, with the
    last records that passed the request's checks, and answered once: the last entry's
    refusal if one was refused, else the append's answer; measured on Kafka 4.4)."""
    named: dict[tuple[Any, Any], dict[int, list[bytes | None]]] = {}
    for topic_data in entries:
        partitions = named.setdefault((topic_data.name, topic_data.topic_id), {})
        for data in topic_data.partition_data:
            partitions.setdefault(data.index, []).append(data.records)
    return named


Checked = dict[tuple[Any, Any], tuple[Topic | None, dict[int, tuple[bytes | None,
                                                                   ClusterError | None]]]]


def checked_partitions(ctx: RequestContext, entries: Any) -> Checked:
    """KafkaApis' checks of the request's partitions (``shaped``), each partition once
    (``named_once``) as Kafka's maps keep them: per topic, per partition, the last whole
    entries that passed (to append; None: none did) and the last refusal (to answer)."""
    checked: Checked = {}
    for (name, topic_id), partitions in named_once(entries).items():
        topic = resolve_topic(ctx, name, topic_id)
        results = checked[name, topic_id] = (topic, {})
        for index, occurrences in partitions.items():
            records, refused = None, None
            for sent in occurrences:
                try:
                    records = shaped(ctx, topic, index, sent)
                except ClusterError as exc:
                    refused = exc
            results[1][index] = records, refused
    return checked


def producers_refusal(ctx: RequestContext, checked: Checked) -> ClusterError | None:
    """INVALID_PRODUCER_ID_MAPPING for the whole request (Kafka's message) when the
    partitions to append hold transactional batches of more than one producer id and epoch
    (ReplicaManager.handleProduceAppend, before any verification; measured); else None."""
    if not since(ctx.cluster.settings.kafka_version, VERIFIED_FROM):
        return None
    producers = {produce_validation.transactional_producer(records)
                 for _, partitions in checked.values()
                 for records, _ in partitions.values() if records is not None}
    producers.discard(None)
    if len(producers) > 1:
        return ClusterError("INVALID_PRODUCER_ID_MAPPING",
                            "Transactional records contained more than one producer ID")
    return None


def shaped(ctx: RequestContext, topic: Topic | None, index: int, records: bytes | None
           ) -> bytes:
    """KafkaApis' checks of one partition's entry, before the append: the topic and the
    partition exist, then the request's shape (``produce_validation.whole_entries``); its
    whole entries."""
    if topic is None:
        raise ClusterError("UNKNOWN_TOPIC_ID" if ctx.version >= 13
                             else "UNKNOWN_TOPIC_OR_PARTITION")
    if not 0 <= index < len(topic.partitions):
        raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION")
    return produce_validation.whole_entries(ctx.version, records or b"")


def append(ctx: RequestContext, topic: Topic, index: int, records: bytes,
           budget: storage_cap.Budget, transactional_id: str | None = None, acks: int = 1
           ) -> dict[str, Any]:
    """Validate and append one partition's records, as ``shaped`` returned them (``budget``:
    the request's view of the storage cap); the partition's response fields."""
    partition = topic.partitions[index]
    producer = produce_validation.transactional_producer(records)
    if producer is not None and transactional_id is not None \
            and since(ctx.cluster.settings.kafka_version, VERIFIED_FROM):
        check_leader(ctx, partition)
        if verification_needed(ctx, partition, *producer):
            verify_transaction(ctx, transactional_id, *producer, (partition.topic, index))
    if acks not in (-1, 0, 1):
        raise ClusterError("INVALID_REQUIRED_ACKS")
    if topic.internal and ctx.header.client_id != ADMIN_CLIENT_ID:
        raise ClusterError("INVALID_TOPIC_EXCEPTION")  # Kafka's: no message
    check_leader(ctx, partition)
    if acks == -1 and len(partition.isr) < min(
            int(topic.config("min.insync.replicas", ctx.broker.id)), len(partition.replicas)):
        raise ClusterError("NOT_ENOUGH_REPLICAS")  # Kafka's effective min ISR, no message
    magic = log_magic(ctx.cluster.settings.kafka_version, topic.configs)
    headers = validate(ctx, topic, partition.index, records, magic)
    log = partition.log
    first = headers[0]
    if first.producer_id >= 0:
        duplicate = check_sequence(ctx, partition, first)
        if duplicate is not None:  # Kafka answers the stored batch's timestamp here
            return {"base_offset": duplicate.base_offset,
                    "log_start_offset": log.log_start_offset,
                    "log_append_time_ms": duplicate.max_timestamp}
    append_time = ctx.now_ms() \
        if topic.config("message.timestamp.type", ctx.broker.id) == "LogAppendTime" else None
    base = log.log_end_offset
    data = in_log_format(ctx, topic, records, headers, magic, append_time)
    stored = assign_offsets(data, base, partition.leader_epoch, append_time)
    budget.admit(len(stored), partition.topic, partition.index)
    span = sum(h.last_offset_delta + 1 if h.magic == 2 else h.record_count for h in headers)
    max_timestamp = append_time if append_time is not None else max(
        h.max_timestamp for h in headers)
    log.append(stored, span, max_timestamp, partition.leader_epoch, first.producer_id,
               first.is_transactional, roll_for(topic, partition, ctx.now_ms()))
    if first.producer_id >= 0:
        ctx.cluster.producers.record(partition.topic, partition.index, first.producer_id,
                                     first.producer_epoch, first.base_sequence,
                                     first.last_offset_delta + 1, base, max_timestamp)
    return {"base_offset": base, "log_start_offset": log.log_start_offset,
            "log_append_time_ms": -1 if append_time is None else append_time}


def validate(ctx: RequestContext, topic: Topic, index: int, records: bytes, magic: int
             ) -> list[BatchHeader]:
    """Kafka's checks of partition ``index``'s whole entries (``produce_validation``: the
    request's shape is checked before) before they are appended to a log that stores
    ``magic``: the log's analysis, then LogValidator's, in their order."""
    start = topic.partitions[index].log.log_start_offset
    limit = int(topic.config("max.message.bytes", ctx.broker.id))
    produce_validation.check_before_crc(records, limit, start)
    try:
        headers = read_batch_headers(records)
    except CorruptRecordError:
        raise ClusterError("CORRUPT_MESSAGE") from None
    except InvalidRecordError:
        if produce_validation.unknown_codec(records):  # Kafka's CompressionType.forId throws
            raise ClusterError("UNKNOWN_SERVER_ERROR", log_start_offset=start) from None
        raise ClusterError("INVALID_RECORD", log_start_offset=start) from None
    if not headers:
        raise ClusterError("CORRUPT_MESSAGE")
    first = headers[0]
    if len(headers) > 1 and (first.magic == 2 or any(h.compression != NONE for h in headers)):
        raise ClusterError("INVALID_RECORD")  # "Compressed outer record has more than one batch"
    if any(h.magic != first.magic for h in headers):
        raise ClusterError("INVALID_RECORD")  # the first batch's magic, for every batch
    produce_validation.check_batch_fields(headers, start)
    if magic < 2 and (first.is_transactional or first.producer_id >= 0):
        raise ClusterError("UNSUPPORTED_FOR_MESSAGE_FORMAT")  # no message, as Kafka's
    produce_validation.check_decompresses(records, headers, start)
    compacted = "compact" in topic.config("cleanup.policy", ctx.broker.id).split(",")
    create_time = topic.config("message.timestamp.type", ctx.broker.id) == "CreateTime"
    bounds = timestamp_bounds(ctx, topic, headers) if create_time else None
    if compacted or bounds is not None or any(h.timestamp_type == 1 for h in headers):
        produce_validation.check_records(records, headers, start)
        produce_validation.check_record_fields(
            records, f"{topic.name}-{index}", start, compacted=compacted, bounds=bounds,
            create_time=create_time)
    elif first.producer_id >= 0 and not ctx.cluster.producers.continues(
            topic.name, index, first.producer_id, first.producer_epoch, first.base_sequence):
        # Kafka reads the records before the producer's state is checked: a batch that will
        # be a retry, a refusal, a new epoch or a producer new to the partition is read here
        # (rare), so its records' INVALID_RECORD comes first and a refused batch changes no
        # state; the plain next batch of a producer is stored unread, as any batch is.
        produce_validation.check_records(records, headers, start)
    return headers


def in_log_format(ctx: RequestContext, topic: Topic, records: bytes,
                  headers: list[BatchHeader], magic: int, append_time: int | None) -> bytes:
    """``records`` as the log is to store them, before offsets (LogValidator): as sent when
    every entry has the log's ``magic`` and is uncompressed with no codec asked for, or is
    the one entry, compressed as the topic's ``compression.type`` asks (``producer``: as
    sent) and not magic 0; else rebuilt in that magic and codec
    (``fakebroker.protocol.conversion.rebuilt``). Headers for a legacy log fail as Kafka's
    builder fails them: UNKNOWN_SERVER_ERROR."""
    source = next((h.compression for h in reversed(headers) if h.compression != NONE), NONE)
    wanted = topic.config("compression.type", ctx.broker.id)
    target = source if wanted == "producer" else CODEC_IDS[wanted]
    if source == target == NONE:
        in_place = all(h.magic == magic for h in headers)
    else:
        in_place = source == target and headers[0].magic == magic and magic != 0
    if in_place:
        return records
    try:
        return rebuilt(records, magic, target, append_time)
    except ValueError:
        raise ClusterError("UNKNOWN_SERVER_ERROR") from None


def timestamp_bounds(ctx: RequestContext, topic: Topic, headers: list[BatchHeader]
                     ) -> tuple[int, int] | None:
    """The [low, high] range of LogValidator.validateTimestamp for a CreateTime topic whose
    records may lie outside it (now - message.timestamp.before.max.ms, now +
    message.timestamp.after.max.ms), or None: the batch headers' timestamps prove every
    record inside (a record's timestamp is the base timestamp plus its delta, which a client
    never makes smaller than the base: a header whose base lies above its max proves nothing)."""
    now = ctx.now_ms()
    low = now - int(topic.config("message.timestamp.before.max.ms", ctx.broker.id))
    high = now + int(topic.config("message.timestamp.after.max.ms", ctx.broker.id))
    if all(low <= h.first_timestamp <= h.max_timestamp <= high for h in headers) \
            and low <= 0:  # no lower bound: the default, Long.MAX_VALUE
        return None
    return low, high


def check_sequence(ctx: RequestContext, partition: Partition, batch: BatchHeader
                   ) -> AppendedBatch | None:
    """The earlier append of a retried batch, or None; a sequence or epoch refusal carries
    no message and the log start offset, as Kafka's."""
    try:
        return ctx.cluster.producers.check(
            partition.topic, partition.index, batch.producer_id, batch.producer_epoch,
            batch.base_sequence, batch.last_offset_delta + 1,
        )
    except ClusterError as exc:  # Kafka sends no message, and the log start offset
        raise ClusterError(exc.error, log_start_offset=partition.log.log_start_offset
                           ) from None


def check_leader(ctx: RequestContext, partition: Partition) -> None:
    """NOT_LEADER_OR_FOLLOWER (or the leader check's other error) from a broker that does
    not lead ``partition``."""
    leader_error = ctx.leader_check(partition)
    if leader_error:
        raise ClusterError(error_name(leader_error))


def verification_needed(ctx: RequestContext, partition: Partition, producer_id: int,
                        epoch: int) -> bool:
    """The leader's check of a transactional batch before it asks the coordinator (measured
    on Kafka 4.4), whatever transactional id the request names: an epoch older than the
    producer's last on the partition is INVALID_PRODUCER_EPOCH at once (before the CRC and
    the records); a partition holding the producer's open transaction at that epoch needs no
    verification (``UnifiedLog.hasOngoingTransaction``)."""
    known = ctx.cluster.producers.epoch(partition.topic, partition.index, producer_id)
    if known is None:
        return True
    if epoch < known:
        raise ClusterError("INVALID_PRODUCER_EPOCH")
    return not (producer_id in partition.log.ongoing and epoch == known)


def verify_transaction(ctx: RequestContext, transactional_id: str, producer_id: int,
                       epoch: int, partition: tuple[str, int]) -> None:
    """The partition leader's check that a transactional batch's partition is in its
    producer's transaction (added here under transactions v2), with the errors Kafka's
    AddPartitionsToTxnManager gives producers. Kafka's ReplicaManager asks it before the
    append's other checks (``handleProduceAppend``): before acks, the CRC and the records."""
    transactions = ctx.cluster.transactions
    try:
        if ctx.version >= 12:
            transactions.add_partitions(transactional_id, producer_id, epoch, [partition],
                                        trio.current_time(), version=2)
            return
        verdict = transactions.verify_partitions(transactional_id, producer_id, epoch,
                                                 [partition])[partition]
    except ClusterError as exc:
        verdict = exc.error
    if verdict == "PRODUCER_FENCED":
        raise ClusterError("INVALID_PRODUCER_EPOCH")
    if verdict in ("TRANSACTION_ABORTABLE", "INVALID_TXN_STATE"):
        raise ClusterError("INVALID_TXN_STATE" if ctx.version <= 10 else verdict,
                           NOT_ADDED)
    if verdict != "NONE":
        raise ClusterError(verdict)
