"""ShareFetch (key 78): a share group member acquires records, acknowledging earlier ones.

Versions: 0 (4.0, early access), 1 (4.1+: max records, batch size, the acquisition lock
timeout), 2 (4.2+: acquire mode, renew acknowledgements). Kafka 4.4 serves 1-2. Flexible.

Behavior (fakebroker/state/share_groups.py, share_partitions.py have the details):
* A null group id, then a member id empty or longer than 36 characters, then (v2) a renewal
  (``is_renew_ack``) with a max/min bytes, max records or max wait other than 0:
  INVALID_REQUEST, before anything else (``check_member_id``; measured on Kafka 4.4).
* Share sessions: epoch 0 opens the member's session with the partitions named (and may not
  carry acknowledgements: INVALID_REQUEST; naming a partition twice ends the member's
  session and opens none, UNKNOWN_SERVER_ERROR: Kafka 4.4's SharePartitionManager.newContext
  removes the old session, then fails adding the duplicate to the new one, measured), a
  later request must carry the session's next epoch (INVALID_SHARE_SESSION_EPOCH; no
  session: SHARE_SESSION_NOT_FOUND) and adds the
  partitions it names, ``forgotten_topics_data`` takes partitions out, -1 only acknowledges
  and closes the session (the member's acquired records are released), and so does the end
  of the connection that opened it. These errors are the whole request's, at the top level.
* Acknowledgements (per partition, applied first): ACCEPT, RELEASE, REJECT, GAP, RENEW; the
  result in ``acknowledge_error_code``, as ShareAcknowledge's (``share_acknowledge``).
* Then records are acquired from every partition of the session, at most ``max_records`` in
  all (whole batches), from one segment of each partition's log as a Fetch reads one, each
  locked for the group's ``share.record.lock.duration.ms`` (``acquisition_lock_timeout_ms``,
  v1+); the stored batches holding them are returned with their acquired ranges and
  delivery counts. A session of no partitions is answered at once (Kafka's
  handleFetchFromShareFetchRequest, nothing to fetch; measured). With nothing to acquire, the
  request waits up to ``max_wait_ms`` for an
  append or for records released (a lock expiring, a RELEASE); once the session ended while
  it waited (its member removed, the session replaced or closed), it acquires nothing more and is
  answered with what it has. Nothing is acquired from a
  partition the group has no share state for (a group that does not exist, a partition never
  assigned to its members): it does not end the wait and is answered UNKNOWN_SERVER_ERROR, at
  each fetch of the session (Kafka 4.4's share coordinator refuses to read an uninitialized
  share-partition; measured); a start offset altered below -1 is moved to the log start by the
  fetch begun after it, which acquires nothing from that partition and answers at once; a
  fetch waiting when it was altered acquires nothing from the partition (measured on Kafka
  4.4: an append does not end its wait).
* Per partition: UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (naming
  the current leader); UNKNOWN_SERVER_ERROR, at once, for every partition of the empty group
  id (whose session is opened all the same; measured on Kafka 4.4), for a partition with
  records to acquire when max_bytes is negative (acquiring none; one without waits), and
  after the wait for one without share state (above).
  Answered, as Kafka answers: the partitions with records, an error or
  acknowledgement results, and once the wait ran out with nothing found, the partitions the
  request adds to the session (a partition named again, already in it, is left out). An
  error answer for the whole request has an acquisition lock timeout of 0.
* A v2 acquire mode other than 0 (batch-optimized) or 1 (record limit) fails the fetch once
  the session was opened or moved on and the acknowledgements applied: UNKNOWN_SERVER_ERROR
  for the whole request, no partition answered (Kafka 4.4's ShareAcquireMode.forId refusing
  it, uncaught; measured at epoch 0 and at a later one with acknowledgements: the session's
  next epoch is the one after), when the session holds a partition of a topic that exists
  (one of unknown topic ids only is answered UNKNOWN_TOPIC_ID on each, measured). A final
  fetch (epoch -1) acquires nothing and is answered.
"""

from __future__ import annotations

import uuid
from typing import Any

import trio

from fakebroker.api.access import groups, topics
from fakebroker.api.common import node_endpoints
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_partition, per_topic
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.cluster import Partition
from fakebroker.state.share_groups import check_member_id
from fakebroker.state.share_partitions import Acquired

API_KEY = 78
NO_LEADER = {"leader_id": 0, "leader_epoch": 0}  # as Kafka leaves it beside no error
# A partition's answer before anything is acquired (and beside an error).
NOTHING = {"records": b"", "acquired_records": (), "acknowledge_error_code": 0,
           "current_leader": NO_LEADER}
SESSION_ERRORS = frozenset({"SHARE_SESSION_NOT_FOUND", "INVALID_SHARE_SESSION_EPOCH",
                            "SHARE_SESSION_LIMIT_REACHED"})
ERROR_PLACEMENT = Placement(
    per_topic("topics", "responses", "topic", partitions=per_partition(
        "partitions", "partitions", "partition_index", error_fields=NOTHING)),
    request_errors=SESSION_ERRORS | {"GROUP_AUTHORIZATION_FAILED", "INVALID_REQUEST"},
    when_filtered={"max_wait_ms": 0})
AUTHORIZES = (groups("READ"), topics("READ"))
FINAL = -1
ACQUIRE_MODES = (0, 1)  # v2's ShareAcquireMode: batch-optimized, record limit
DEFAULT_MAX_RECORDS = 500  # v0 requests carry none: the client's max.poll.records default
NAMES_THE_LEADER = frozenset({error_code("NOT_LEADER_OR_FOLLOWER")})

Key = tuple[uuid.UUID, int]  # topic id, partition


async def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    share = ctx.cluster.groups.share
    group_id, member_id = request.group_id or "", request.member_id or ""
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "responses": [],
                              "acquisition_lock_timeout_ms": share.lock_duration_ms(group_id),
                              "node_endpoints": []}
    named = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions]
    acks = {(t.topic_id, p.partition_index): p.acknowledgement_batches
            for t in request.topics for p in t.partitions if p.acknowledgement_batches}
    epoch = request.share_session_epoch
    try:
        if request.group_id is None:
            raise ClusterError("INVALID_REQUEST", None)
        check_member_id(member_id)
        if ctx.version >= 2 and request.is_renew_ack and any(
                (request.max_bytes, request.min_bytes, request.max_records, request.max_wait_ms)):
            raise ClusterError("INVALID_REQUEST", None)
        if epoch == 0:
            if acks:
                raise ClusterError("INVALID_REQUEST")
            if len(set(named)) < len(named):  # Kafka's bug: its mustAdd throws on a duplicate
                share.close_session(group_id, member_id)
                raise ClusterError("UNKNOWN_SERVER_ERROR", None)
            session = share.open_session(group_id, member_id, named,
                                         (ctx.broker.id, ctx.connection_id))
        else:
            session = share.session(group_id, member_id, epoch)
    except ClusterError as exc:
        answer.update(error_code=exc.code, error_message=exc.message,
                      acquisition_lock_timeout_ms=0)
        return answer
    answers: dict[Key, dict[str, Any]] = {}
    now = trio.current_time()
    for key, batches in acks.items():
        answers[key] = partition_answer(key[1])
        answers[key]["acknowledge_error_code"], answers[key]["acknowledge_error_message"] = \
            acknowledge(ctx, group_id, member_id, key, batches, now)
    if epoch == FINAL:
        share.close_session(group_id, member_id)
        answer["responses"] = by_topic(answers)
        return answer
    added = set(named)  # named and not in the session before: answered even with nothing
    if epoch != 0:
        forgotten = {(t.topic_id, p) for t in request.forgotten_topics_data
                     for p in t.partitions}
        added -= set(session.partitions)
        session.partitions = [k for k in dict.fromkeys([*session.partitions, *named])
                              if k not in forgotten]
    wanted = list(session.partitions)
    if ctx.version >= 2 and request.share_acquire_mode not in ACQUIRE_MODES and any(
            ctx.cluster.topic_by_id(topic_id) is not None for topic_id, _ in wanted):
        return dict(answer, error_code=error_code("UNKNOWN_SERVER_ERROR"),
                    acquisition_lock_timeout_ms=0)
    max_records = request.max_records if ctx.version >= 1 and request.max_records > 0 \
        else DEFAULT_MAX_RECORDS
    deadline = trio.current_time() + max(request.max_wait_ms, 0) / 1000
    leaders: set[int] = set()
    moved: set[Key] = set()  # partitions whose start offset was out of range, now moved
    waited = False
    while True:
        fetched, stateless = acquire(ctx, group_id, member_id, wanted, max_records, leaders,
                                     None if waited else moved, request.max_bytes < 0)
        remaining = deadline - trio.current_time()
        found = bool(moved) or any(a["acquired_records"] or (a["error_code"] and key not in
                                                             stateless)
                                   for key, a in fetched.items())
        if found or remaining <= 0 or acks or not wanted:
            break
        await ctx.wait_for_append(remaining)
        waited = True
        if not share.is_current(group_id, member_id, session):
            break  # its session ended while it waited: nothing more is acquired for it
    for key, fetched_answer in fetched.items():
        if key in answers:
            for field in ("acknowledge_error_code", "acknowledge_error_message"):
                fetched_answer[field] = answers[key][field]
        if key in answers or fetched_answer["acquired_records"] or fetched_answer["error_code"] \
                or key in moved or (not found and key in added):
            answers[key] = fetched_answer
    answer["responses"] = by_topic(answers)
    if leaders:
        answer["node_endpoints"] = node_endpoints(ctx, leaders)
    return answer


def partition_answer(index: int) -> dict[str, Any]:
    return dict(NOTHING, partition_index=index, error_code=0, acquired_records=[])


def by_topic(answers: dict[Key, dict[str, Any]]) -> list[dict[str, Any]]:
    topics: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for (topic_id, _), answer in answers.items():
        topics.setdefault(topic_id, []).append(answer)
    return [{"topic_id": t, "partitions": ps} for t, ps in topics.items()]


def find(ctx: RequestContext, key: Key) -> tuple[str, Partition] | int:
    """The partition a key names and its topic, or the error code of the partition."""
    topic = ctx.cluster.topic_by_id(key[0])
    if topic is None:
        return error_code("UNKNOWN_TOPIC_ID")
    partition = topic.partitions[key[1]] if 0 <= key[1] < len(topic.partitions) else None
    return ctx.leader_check(partition) or (topic.name, partition)  # type: ignore[return-value]


def acknowledge(ctx: RequestContext, group_id: str, member_id: str, key: Key, batches: Any,
                now: float) -> tuple[int, str | None]:
    """Apply one partition's acknowledgement batches; the error code and message of the
    result."""
    found = find(ctx, key)
    if isinstance(found, int):
        return found, None
    try:
        ctx.cluster.groups.share.acknowledge(
            group_id, member_id, found[0], key[1],
            [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in batches], now)
    except ClusterError as exc:
        return exc.code, exc.message
    return 0, None


def acquire(ctx: RequestContext, group_id: str, member_id: str, wanted: list[Key],
            max_records: int, leaders: set[int], moved: set[Key] | None,
            negative_max_bytes: bool = False) -> tuple[dict[Key, dict[str, Any]], set[Key]]:
    """Each partition's answer, records acquired for the member (at most ``max_records``
    in all), and the partitions without share state (UNKNOWN_SERVER_ERROR, which does not
    end a wait). A partition whose start offset is out of the log's range (altered below -1)
    acquires nothing; given ``moved`` (the request's first attempt), it is moved to the
    log's start and added to ``moved``. With ``negative_max_bytes`` a partition that has
    records to acquire answers UNKNOWN_SERVER_ERROR and acquires none: Kafka 4.4's
    DelayedShareFetch fails reading it ("Request max bytes must be greater than 0",
    measured: no delivery counted, the session kept); one with none waits as ever."""
    share = ctx.cluster.groups.share
    now = trio.current_time()
    answers = {}
    stateless = set()
    for key in wanted:
        answer = answers[key] = partition_answer(key[1])
        found = find(ctx, key)
        if isinstance(found, int):
            answer["error_code"] = found
            partition = ctx.cluster.topic_by_id(key[0])
            if found in NAMES_THE_LEADER and partition is not None:
                leader = partition.partitions[key[1]]
                answer["current_leader"] = {"leader_id": leader.leader,
                                            "leader_epoch": leader.leader_epoch}
                leaders.add(leader.leader)
            continue
        name, partition = found
        if not group_id:  # Kafka cannot make the share-partition of an empty group id
            answer["error_code"] = error_code("UNKNOWN_SERVER_ERROR")
            continue
        if not share.has_state(group_id, name, key[1]):
            answer["error_code"] = error_code("UNKNOWN_SERVER_ERROR")
            stateless.add(key)
            continue
        if max_records <= 0:
            continue
        log = partition.log
        if share.out_of_range_start(group_id, name, key[1]):
            if moved is not None:
                share.move_start(group_id, name, key[1], log.log_start_offset)
                moved.add(key)
            continue
        if negative_max_bytes and share.acquirable(
                group_id, member_id, name, key[1],
                [(b.base_offset, b.last_offset) for b in log.batches],
                log.log_start_offset, log.high_watermark, now, log.read_end):
            answer["error_code"] = error_code("UNKNOWN_SERVER_ERROR")
            continue
        try:
            runs = share.acquire(group_id, member_id, name, key[1],
                                 [(b.base_offset, b.last_offset) for b in log.batches],
                                 log.log_start_offset, log.high_watermark, max_records, now,
                                 log.read_end)
        except ClusterError as exc:
            answer["error_code"] = exc.code
            continue
        max_records -= sum(r.last_offset - r.first_offset + 1 for r in runs)
        answer["acquired_records"] = [{"first_offset": r.first_offset,
                                       "last_offset": r.last_offset,
                                       "delivery_count": r.delivery_count} for r in runs]
        answer["records"] = holding(log.batches, runs)
    return answers, stateless


def holding(batches: Any, runs: list[Acquired]) -> list[bytes]:
    """The stored batches holding any acquired offset, in order."""
    return [b.data for b in batches
            if any(b.base_offset <= r.last_offset and r.first_offset <= b.last_offset
                   for r in runs)]
