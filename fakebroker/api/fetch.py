"""Fetch (key 1): read stored batches, long-polling until enough bytes or max_wait_ms.

Versions: 0-17 (3.9), 18 (4.x). Flexible from v12; topic ids instead of names from v13.

Behavior:
* Answers at once when min_bytes of data are available, when any partition has an error, or
  when max_wait_ms is 0; otherwise parks until an append anywhere in the cluster or until
  max_wait_ms passes (trio's clock, so MockClock tests need no real waiting).
* Per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID from v13; with an empty, not
  null, aborted transaction list, as Kafka answers), NOT_LEADER_OR_FOLLOWER from a broker that
  does not lead it, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when the client's
  current_leader_epoch is older / newer (v12+ names the current leader for the first two
  only, v16+ also its endpoint), a follower's fetch (a replica id >= 0, in replica_state
  from v15) from a replica that does not follow the partition (the leader itself too)
  NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when it names the leader's epoch (Kafka's
  ``Partition.fetchRecords``), OFFSET_OUT_OF_RANGE below the log start offset or above the
  log end offset (the end itself is valid and returns nothing), with high watermark, last
  stable offset and log start offset -1, as Kafka answers a failed read. A last fetched epoch
  (v12+, not negative) is checked first against the log's epochs, as Kafka's
  ``Partition.readRecords``: one newer than any the log knows is OFFSET_OUT_OF_RANGE, and so is
  then an offset below the log start; one whose end in this log is before fetch_offset (or
  that the log knows under a smaller epoch) answers no records but the diverging epoch (the
  log's epoch and its end offset) for the fetcher to truncate to.
* Records are the stored batches from the one holding fetch_offset, within the partition's
  and the response's max_bytes, except that the first batch of the response is always
  returned whole (KIP-74); from v4 the bytes fill the limit as Kafka's byte range of its log
  does, the last batch cut short (clients drop it and fetch it again). The response's
  max_bytes is Kafka's: the least of the request's (v3+), the broker's ``fetch.max.bytes``
  and, for a consumer, what its ``consumer_byte_rate`` quota allows in 10 s
  (``fakebroker.api.throttling``); min_bytes is bounded by it.
* Old fetchers: where the topic's log is configured for a newer format than the version reads
  (``fakebroker.state.message_format``: magic 2 from release 0.11, magic 1 in 0.10.x or
  for a topic's ``message.format.version``), v0-1 read magic 0 and v2-3 magic 1, the read
  down-converted as Kafka sends it (``fakebroker.protocol.conversion.down_converted``: its
  length the stored read's, control batches dropped, codec kept); a zstd batch first in the
  read is UNSUPPORTED_COMPRESSION_TYPE (later, more than 128 KiB before the answer's end,
  the connection is closed, as Kafka's failed send closes it). Two refusals replace any
  other answer of the partition but the leader's and its epoch's, as Kafka's do: a topic's
  ``message.downconversion.enable=false`` (2.0 to 3.9) refuses a consumer's read that needs
  down-conversion (UNSUPPORTED_VERSION), and emulating a release before 4.0, v0-9 on a
  topic whose ``compression.type`` is zstd get UNSUPPORTED_COMPRESSION_TYPE (Kafka 4 serves
  them).
* Each partition is answered once, in one topic entry per run of a topic's partitions, in
  Kafka's order (``KafkaApis.handleFetchRequest``): the partitions read first, then those of
  unknown topic ids, then those of unknown topics or partitions, each group in the request's
  order; a partition named twice (a topic id in several entries, one partition each, as
  @platformatic/kafka sends them) is answered once, at its first place, for its last entry.
* Fetch sessions (KIP-227, v7+), as Kafka's ``FetchManager`` serves them
  (``fakebroker.state.fetch_sessions``, one cache per broker, sized by
  ``max.incremental.fetch.session.cache.slots``): a full fetch (epoch 0) is answered every
  partition and opens a session of them (its id in the answer, 0 when the cache has no room);
  epoch -1 is sessionless (session id 0) and closes the session it names, as epoch 0 does
  before opening another. An incremental fetch (the session's id and current epoch) reads
  every partition of the session, updated by those it names and forgets (its context made on
  arrival, by ``prepare``, so the fault rules and the authorizer see every partition read),
  and is answered only those with records, a changed high watermark or log start offset, or
  an error, in the session's order (a partition answered records moves to the end). Session
  errors are the whole answer's, at top level, with session id 0 and no partitions: an
  unknown id FETCH_SESSION_ID_NOT_FOUND, another epoch INVALID_FETCH_SESSION_EPOCH, a
  session of names fetched with topic ids (v13+) or the reverse FETCH_SESSION_TOPIC_ID_ERROR;
  an incremental fetch whose session moved on while it waited (a duplicate) is answered
  INVALID_FETCH_SESSION_EPOCH with the session's id.
* read_committed (isolation level 1): only batches below the last stable offset (the first
  offset of the earliest open transaction) are returned, and ``aborted_transactions`` lists
  the aborted transactions (producer id, first offset) ending at or after the fetch offset
  and starting before an upper bound Kafka takes from its sparse offset index (the first
  entry at or past the end of the bytes read, else the log end offset:
  ``fakebroker.state.log``), so the client drops their records: an answer cut short lists
  those up to that bound, which may reach past what it holds, as Kafka's do; none from
  the last stable offset on. read_uncommitted gets everything and a null list. The control
  batches (markers) are returned as stored: clients skip them.
"""

from __future__ import annotations

from typing import Any

import trio
from construct import Container, ListContainer

from fakebroker.api.access import topics
from fakebroker.api.common import node_endpoints, resolve_topic
from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.api.throttling import fetch_window_bytes, from_follower
from fakebroker.protocol.conversion import (
    SendFailed,
    UnsupportedCompressionError,
    down_converted,
)
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.releases import before
from fakebroker.state.fetch_sessions import (
    FINAL_EPOCH,
    FULL,
    INVALID_SESSION_ID,
    SESSION_ERROR,
    SESSIONLESS_CONTEXT,
    SLOTS_CONFIG,
    CachedPartition,
    FetchContext,
    FetchSession,
    FetchSessionCache,
    Key,
    new_context,
)
from fakebroker.state.message_format import DOWN_CONVERSION_CONFIG, log_magic
from fakebroker.state.quotas import INT_MAX

API_KEY = 1
READ_COMMITTED = 1
# A partition's answer before anything is read (and beside an error).
NO_RECORDS = {"records": b"", "high_watermark": -1, "last_stable_offset": -1,
              "log_start_offset": -1, "aborted_transactions": None}
# Errors of the fetch session: the whole request's, at the top level.
FETCH_SESSION_ERRORS = frozenset({
    "FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH", "FETCH_SESSION_TOPIC_ID_ERROR",
})
ERROR_PLACEMENT = Placement(
    per_topic("topics", "responses", "topic", partitions=per_partition(
        "partitions", "partitions", "partition", "partition_index",
        error_fields=dict(NO_RECORDS, current_leader={"leader_id": -1, "leader_epoch": -1}))),
    request_errors=FETCH_SESSION_ERRORS,
    when_filtered={"max_wait_ms": 0})  # the partitions left are answered at once
AUTHORIZES = (topics("READ"),)

# Errors whose partition answer names the current leader (v12+), as Kafka's do.
NAMES_THE_LEADER = frozenset(error_code(e) for e in ("NOT_LEADER_OR_FOLLOWER",
                                                     "FENCED_LEADER_EPOCH"))


def prepare(request: Any, ctx: RequestContext) -> Any:
    """The request as Kafka reads it, made on its arrival before the fault rules and the
    authorizer see it: its fetch context (``fakebroker.state.fetch_sessions``) in
    ``request.fetch_context``; an incremental fetch becomes one naming every partition of
    its session, in the session's order, with what the client last asked of each; a session
    error, one naming none. A sessionless fetch (session id 0, epoch -1; every v0-6 fetch)
    is returned as it is."""
    if request.session_epoch == FINAL_EPOCH and request.session_id == INVALID_SESSION_ID:
        return request
    ids = ctx.version >= 13
    named: dict[Key, CachedPartition] = {}
    for wanted in request.topics:
        for p in wanted.partitions:
            named[(wanted.topic_id if ids else wanted.topic, p.partition)] = CachedPartition(
                wanted.topic, wanted.topic_id, p)
    forgotten = [(t.topic_id if ids else t.topic, p) for t in request.forgotten_topics_data
                 for p in t.partitions]
    context = new_context(sessions_of(ctx), request.session_id, request.session_epoch, ids,
                          named, forgotten, now_ms())
    prepared = Container(request, fetch_context=context, forgotten_topics_data=ListContainer())
    if context.kind == SESSION_ERROR:
        prepared.topics = ListContainer()
    elif context.session is not None:  # incremental: the session's partitions, in its order
        topics = prepared.topics = ListContainer()
        for cached in context.session.partitions.values():
            if not topics or (topics[-1].topic, topics[-1].topic_id) != (cached.topic,
                                                                         cached.topic_id):
                topics.append(Container(topic=cached.topic, topic_id=cached.topic_id,
                                        partitions=ListContainer()))
            topics[-1].partitions.append(cached.request)
    return prepared


def sessions_of(ctx: RequestContext) -> FetchSessionCache:
    """This broker's fetch sessions, the cache made on first use with the broker's
    ``max.incremental.fetch.session.cache.slots``."""
    broker = ctx.broker
    if broker.fetch_sessions is None:
        slots = ctx.cluster.broker_config(SLOTS_CONFIG, broker.id)
        broker.fetch_sessions = FetchSessionCache(int(slots or 0))
    return broker.fetch_sessions


def now_ms() -> int:
    """The fetch sessions' clock: trio's, in ms (so MockClock tests see sessions age)."""
    return int(trio.current_time() * 1000)


async def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    context: FetchContext = request.get("fetch_context", SESSIONLESS_CONTEXT)
    if context.kind == SESSION_ERROR:
        return session_error(context.error, INVALID_SESSION_ID)
    deadline = trio.current_time() + max(request.max_wait_ms, 0) / 1000
    max_bytes = response_max_bytes(request, ctx)
    min_bytes = min(request.min_bytes, max_bytes)
    while True:
        answered, size, failed = assemble(request, ctx, max_bytes)
        remaining = deadline - trio.current_time()
        if size >= min_bytes or failed or remaining <= 0:
            break
        await ctx.wait_for_append(remaining)
    session_id = INVALID_SESSION_ID
    if context.kind == FULL:
        session_id = open_session(answered, context.named, ctx,
                                  from_follower(request, ctx.version))
    elif context.session is not None:
        session = context.session
        if session.epoch != context.epoch:  # another fetch of the session came meanwhile
            return session_error("INVALID_FETCH_SESSION_EPOCH", session.id)
        if ctx.cluster.throttling and not from_follower(request, ctx.version):
            context.told_before = session.told()  # for a throttled answer to undo
        answered = changed_only(answered, session, ctx.version >= 13)
        session_id = session.id
    return answer_body(answered, ctx, session_id)


def throttled(request: Any, response: dict[str, Any]) -> dict[str, Any]:
    """Kafka's answer to a Fetch over its client's quota (``getThrottledResponse``): no
    partitions, the node endpoints kept; a full fetch opens no session (the one opened for
    the answer withheld is closed again: session id 0). An incremental fetch keeps its
    session's id and its session forgets what the withheld answer told (high watermarks,
    log start offsets, the order), so the next fetch is told it. (Kafka checks the session's
    epoch again here; the fake throttles right after the handler answered, with no other
    fetch in between, so the handler's check stands.)"""
    context: FetchContext = request.get("fetch_context", SESSIONLESS_CONTEXT)
    session_id = response["session_id"]
    if context.cache is not None and session_id != INVALID_SESSION_ID:
        context.cache.remove(session_id)
        session_id = INVALID_SESSION_ID
    if context.session is not None and context.told_before is not None:
        context.session.restore(context.told_before)
    return {**response, "session_id": session_id, "responses": []}


def session_error(error: str | None, session_id: int) -> dict[str, Any]:
    """The answer to a fetch failed as a whole: the error, no partitions."""
    return {"throttle_time_ms": 0, "error_code": error_code(error), "session_id": session_id,
            "responses": [], "node_endpoints": []}


def open_session(answered: list[Answered], named: dict[Key, CachedPartition],
                 ctx: RequestContext, privileged: bool) -> int:
    """A session of the partitions a full fetch named (``privileged``: a follower's): those
    answered here in the answer's order, with the high watermark and log start offset each
    was told, then those a fault rule or the authorizer answered (an error: nothing told);
    its id, or 0 without room."""
    ids = ctx.version >= 13
    partitions = {
        (wanted.topic_id if ids else wanted.topic, result["partition_index"]): CachedPartition(
            wanted.topic, wanted.topic_id, p, result["high_watermark"],
            result["log_start_offset"])
        for wanted, p, result, _ in answered}
    for key, cached in named.items():
        partitions.setdefault(key, cached)
    return sessions_of(ctx).open(partitions, privileged, ids, now_ms())


def changed_only(answered: list[Answered], session: FetchSession, ids: bool
                 ) -> list[Answered]:
    """The partitions an incremental fetch is answered: those whose answer tells something
    new, as ``CachedPartition.must_answer`` decides; one answered records moves to the end
    of its session. A partition of the session not answered here was answered an error by a
    fault rule or the authorizer: it is told again once that clears."""
    kept = []
    read = set()
    for entry in answered:
        wanted, _, result, size = entry
        key = (wanted.topic_id if ids else wanted.topic, result["partition_index"])
        read.add(key)
        cached = session.partitions.get(key)
        if cached is None or cached.must_answer(result, size):
            kept.append(entry)
            if size and cached is not None:
                session.answered_records(key)
    if len(read) < len(session.partitions):
        for key, cached in session.partitions.items():
            if key not in read:
                cached.high_watermark = -1
    return kept


def response_max_bytes(request: Any, ctx: RequestContext) -> int:
    """The most the answer may hold, as ``KafkaApis.handleFetchRequest`` bounds it: the
    request's max_bytes (v3+; unbounded before), the broker's ``fetch.max.bytes``, and for a
    consumer (not a follower) what its ``consumer_byte_rate`` allows in one quota window."""
    asked = request.max_bytes if ctx.version >= 3 else INT_MAX
    configured = int(ctx.cluster.broker_config("fetch.max.bytes", ctx.broker.id) or INT_MAX)
    window = INT_MAX if from_follower(request, ctx.version) else fetch_window_bytes(
        ctx.cluster, ctx.principal, ctx.header.client_id)
    return min(asked, configured, window)


# One partition answered: its topic entry, its request entry, its answer, bytes of records.
Answered = tuple[Any, Any, dict[str, Any], int]


def assemble(request: Any, ctx: RequestContext, budget: int
             ) -> tuple[list[Answered], int, bool]:
    """The partitions' answers as things stand, within ``budget`` bytes of records but for
    the first batch: (answers, bytes of records, whether any partition failed)."""
    total = 0
    failed = False
    answered: list[Answered] = []
    for wanted, topic, p in in_kafkas_order(request, ctx):
        result = read_partition(ctx, request, topic, p, budget - total, first=total == 0)
        size = result.pop("size")
        failed = failed or bool(result["error_code"])
        total += size
        answered.append((wanted, p, result, size))
    return answered, total, failed


def answer_body(answered: list[Answered], ctx: RequestContext, session_id: int
                ) -> dict[str, Any]:
    """The answer of the partitions ``answered``: a run of one topic's partitions is one
    topic entry; the leaders named by errors have their endpoints listed."""
    leaders: set[int] = set()
    topics: list[dict[str, Any]] = []
    for wanted, _, result, _ in answered:
        if "current_leader" in result:
            leaders.add(result["current_leader"]["leader_id"])
        if topics and (topics[-1]["topic"], topics[-1]["topic_id"]) == (wanted.topic,
                                                                        wanted.topic_id):
            topics[-1]["partitions"].append(result)
        else:
            topics.append({"topic": wanted.topic, "topic_id": wanted.topic_id,
                           "partitions": [result]})
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": session_id,
            "responses": topics,
            "node_endpoints": node_endpoints(ctx, leaders) if leaders else []}


def in_kafkas_order(request: Any, ctx: RequestContext) -> list[tuple[Any, Any, Any]]:
    """(topic entry, topic or None, partition entry) for each partition the request names
    once (a partition named again keeps its first place and takes its last entry, as Kafka's
    map of fetched partitions), in the order Kafka answers them: the partitions it reads,
    then those of unknown topic ids, then those of unknown topics or partitions."""
    named: dict[tuple[Any, Any, int], tuple[Any, Any, Any]] = {}
    for wanted in request.topics:
        topic = resolve_topic(ctx, wanted.topic, wanted.topic_id)
        for p in wanted.partitions:
            named[(wanted.topic if ctx.version < 13 else None, wanted.topic_id,
                   p.partition)] = (wanted, topic, p)
    read, unknown_ids, unknown = [], [], []
    for wanted, topic, p in named.values():
        if topic is None and ctx.version >= 13:
            unknown_ids.append((wanted, topic, p))
        elif topic is None or not 0 <= p.partition < len(topic.partitions):
            unknown.append((wanted, topic, p))
        else:
            read.append((wanted, topic, p))
    return read + unknown_ids + unknown


def read_partition(ctx: RequestContext, request: Any, topic: Any, wanted: Any, budget: int,
                   first: bool) -> dict[str, Any]:
    """One partition's answer; its ``size`` entry (bytes of stored records read, taken out by
    ``assemble``) is not a wire field."""
    result: dict[str, Any] = dict(NO_RECORDS, partition_index=wanted.partition, size=0)
    if topic is None:
        result.update(error_code=error_code("UNKNOWN_TOPIC_ID" if ctx.version >= 13
                                            else "UNKNOWN_TOPIC_OR_PARTITION"),
                      aborted_transactions=[])
        return result
    partition = (topic.partitions[wanted.partition]
                 if 0 <= wanted.partition < len(topic.partitions) else None)
    error = ctx.leader_check(partition)
    if partition is not None and not error:
        # Kafka's FetchRequest reads any negative epoch as none (optionalEpoch), where
        # ListOffsets and OffsetForLeaderEpoch fence all but -1 (measured on Kafka 4.4)
        error = ctx.epoch_check(partition, max(wanted.current_leader_epoch, -1))
    if partition is not None and not error and from_follower(request, ctx.version):
        error = follower_check(request, ctx.version, partition, wanted.current_leader_epoch)
    if error:
        result["error_code"] = error
        if partition is None:
            result["aborted_transactions"] = []
        elif error in NAMES_THE_LEADER:
            result["current_leader"] = {"leader_id": partition.leader,
                                        "leader_epoch": partition.leader_epoch}
        return result
    assert partition is not None
    if ctx.version < 10 and refuses_zstd(ctx) \
            and topic.config("compression.type", ctx.broker.id) == "zstd":
        result["error_code"] = error_code("UNSUPPORTED_COMPRESSION_TYPE")
        return result
    magic = fetcher_magic(ctx, topic)
    if magic is not None and not from_follower(request, ctx.version) \
            and topic.configs.get(DOWN_CONVERSION_CONFIG, "").lower() == "false":
        result["error_code"] = error_code("UNSUPPORTED_VERSION")
        return result
    log = partition.log
    offset = wanted.fetch_offset
    diverging = diverging_epoch(log, wanted.last_fetched_epoch, offset)
    if diverging is None or not log.log_start_offset <= offset <= log.log_end_offset \
            and not diverging:
        result["error_code"] = error_code("OFFSET_OUT_OF_RANGE")
        return result
    stable = log.last_stable_offset
    result.update(high_watermark=log.high_watermark, last_stable_offset=stable,
                  log_start_offset=log.log_start_offset)
    if diverging:
        result.update(error_code=0, diverging_epoch=diverging)
        return result
    committed = request.isolation_level == READ_COMMITTED
    limit = min(wanted.partition_max_bytes, budget)
    end = stable if committed else None
    chunks = log.read(offset, max(limit, 0), at_least_one=first or ctx.version < 3, end=end)
    chunks += partial_tail(log, offset, chunks, limit, end)
    size = sum(map(len, chunks))
    if magic is not None and chunks:
        try:
            converted = down_converted(b"".join(chunks), magic, offset)
        except SendFailed as exc:
            raise ConnectionClosed(f"Fetch v{ctx.version}: {exc}") from None
        except UnsupportedCompressionError:
            return dict(NO_RECORDS, partition_index=wanted.partition, size=0,
                        error_code=error_code("UNSUPPORTED_COMPRESSION_TYPE"))
        result.update(error_code=0, records=converted, size=size)
    else:  # a list of stored batches: written in a row by the codec, never joined
        result.update(error_code=0, records=chunks, size=size)
    if committed:
        start = log.position_of(offset)
        upper = offset if offset >= stable else log.upper_bound(
            start + sum(map(len, chunks)), start)
        result["aborted_transactions"] = [
            {"producer_id": t.producer_id, "first_offset": t.first_offset}
            for t in log.aborted_between(offset, upper)]
    return result


def diverging_epoch(log: Any, last_fetched_epoch: int, offset: int) -> dict[str, int] | None:
    """Kafka's ``Partition.readRecords`` given a last fetched epoch (v12+; a negative one is
    none): None when the read is OFFSET_OUT_OF_RANGE (the epoch is newer than any the log
    knows, or the offset is below the log start), the diverging epoch to answer instead of
    records when the log's copy of that epoch ends before ``offset`` (or the epoch is not the
    log's), else {} (read on)."""
    if last_fetched_epoch < 0:
        return {}
    epoch, end = log.epoch_end_offset(last_fetched_epoch)
    if epoch == -1 or end == -1 or offset < log.log_start_offset:
        return None
    if epoch < last_fetched_epoch or end < offset:
        return {"epoch": epoch, "end_offset": end}
    return {}


def follower_check(request: Any, version: int, partition: Any, current_leader_epoch: int
                   ) -> int:
    """A follower's fetch from a replica id that is not one of the partition's followers
    (Kafka's ``Partition.followerReplicaOrThrow``): UNKNOWN_LEADER_EPOCH when it names the
    leader's epoch, else NOT_LEADER_OR_FOLLOWER; 0 for a follower."""
    replica = request.replica_state.replica_id if version >= 15 else request.replica_id
    if replica in partition.replicas and replica != partition.leader:
        return 0
    return error_code("UNKNOWN_LEADER_EPOCH" if current_leader_epoch >= 0
                      else "NOT_LEADER_OR_FOLLOWER")


def refuses_zstd(ctx: RequestContext) -> bool:
    """Whether the emulated release refuses Fetch v0-9 on a topic configured for zstd, as
    Kafka did before 4.0 (``KafkaApis.maybeConvertFetchedData``; 4.4.0 serves them, measured)."""
    release = ctx.cluster.settings.kafka_version
    return release is not None and before(release, "4.0")


def fetcher_magic(ctx: RequestContext, topic: Any) -> int | None:
    """The magic a fetch of this version reads, when older than the one the topic's log is
    configured to store (Kafka decides by the configured format, not by the batches read):
    0 for v0-1, 1 for v2-3; None when the stored batches go as they are."""
    stored = log_magic(ctx.cluster.settings.kafka_version, topic.configs)
    if stored > 0 and ctx.version <= 1:
        return 0
    if stored > 1 and ctx.version <= 3:
        return 1
    return None


def partial_tail(log: Any, offset: int, chunks: list[bytes], limit: int, end: int | None
                 ) -> list[bytes]:
    """The head of the batch after ``chunks`` that fills the read up to ``limit`` (the first
    batch's size, when that alone is larger): Kafka reads a byte range of its segment
    (``LogSegment.read``), whose last batch may be cut short, as clients expect, never
    past the segment's end; nothing
    when nothing was read (a first batch over the limit of a later partition is left out)."""
    room = max(limit, len(chunks[0])) - sum(map(len, chunks)) if chunks else 0
    if room <= 0:
        return []
    after = log.read(log.end_of_read(offset, len(chunks)), 0, at_least_one=True,
                     end=log.read_end(offset, end))
    return [after[0][:room]] if after else []
