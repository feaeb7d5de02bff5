"""Incremental fetch sessions (KIP-227), kept as Kafka's ``FetchSessionCache`` keeps them
(``kafka.server.FetchSession``): a broker's cache of sessions, each the partitions a client
fetches with what it last asked of each and what it was last told.

A full fetch (epoch 0) opens a session when the answer is made, if the cache has room or can
evict; an incremental fetch (the session's id and epoch) names only the partitions added or
changed and those it forgets, and is answered only the partitions with something new. The
cache is Kafka's: ``max.incremental.fetch.session.cache.slots`` split evenly over 8 shards
(so fewer than 8 slots hold no session), new sessions dealt to the shards in turn, each shard
with its own range of session ids; a full shard evicts, in this order, its least recently used
session if unused for over 2 minutes, else its least valuable evictable one (fewest
partitions, then lowest id) if the newcomer is worth more (privileged, which only a
follower's is, or more partitions). A session is evictable by anyone once it is 2 minutes
old, by a privileged newcomer at once unless privileged itself.

Time is the caller's milliseconds (the fetch handler's trio clock); nothing here waits.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

INVALID_SESSION_ID = 0  # no session: the id of a sessionless answer
INITIAL_EPOCH = 0  # a full fetch opening a session
FINAL_EPOCH = -1  # a full fetch without a session (closing the one named)
SHARDS = 8  # BrokerServer.NumFetchSessionCacheShards
EVICTION_MS = 120_000  # KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
SLOTS_CONFIG = "max.incremental.fetch.session.cache.slots"
_INT_MAX = 2**31 - 1
_ID_RANGE = _INT_MAX // SHARDS  # each shard's session ids: [max(1, n * range), (n + 1) * range)


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's ``FetchMetadata.nextEpoch``): final stays final,
    and after the largest int comes 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT_MAX else epoch + 1


# A cached partition's key: (topic id, partition) in a session using topic ids (v13+),
# (topic name, partition) in one using names.
Key = tuple[Any, int]


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: its topic's name and id as the client named them (the id
    alone from v13), the client's last request entry for it (fetch offset, max bytes, leader
    epochs, as sent), and the high watermark and log start offset last answered (-1: none
    yet, or an error since)."""

    topic: str
    topic_id: uuid.UUID
    request: Any
    high_watermark: int = -1
    log_start_offset: int = -1

    def must_answer(self, answer: dict[str, Any], size: int) -> bool:
        """Whether an incremental answer includes this partition's ``answer`` (``size``
        bytes of records), remembering what it tells (Kafka's ``maybeUpdateResponseData``):
        records, a changed high watermark or log start offset, a diverging epoch (for the
        fetcher to truncate), or an error, which also forgets the high watermark so the
        partition is answered again once it clears."""
        changed = size > 0
        if self.high_watermark != answer["high_watermark"]:
            self.high_watermark = answer["high_watermark"]
            changed = True
        if self.log_start_offset != answer["log_start_offset"]:
            self.log_start_offset = answer["log_start_offset"]
            changed = True
        if answer["error_code"]:
            self.high_watermark = -1
            changed = True
        if answer.get("diverging_epoch"):
            changed = True
        return changed


@dataclass(eq=False, slots=True)
class FetchSession:
    """One session: its id, its epoch (the one the client's next fetch must carry), its
    partitions in Kafka's order (as first answered; a partition answered records moves to
    the end, so each gets its turn at the answer's byte limit)."""

    id: int
    privileged: bool
    uses_topic_ids: bool
    created_ms: int
    partitions: dict[Key, CachedPartition]
    epoch: int = 1
    last_used_ms: int = 0
    # Kafka's evictable key and tree memberships, as the last touch left them.
    cached_size: int = -1
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def update(self, named: dict[Key, CachedPartition], forgotten: list[Key]) -> None:
        """An incremental fetch's changes: partitions named are added (at the end) or have
        their request entry replaced; forgotten ones are dropped."""
        for key, cached in named.items():
            if (known := self.partitions.get(key)) is None:
                self.partitions[key] = cached
            else:
                known.request = cached.request
        for key in forgotten:
            self.partitions.pop(key, None)

    def answered_records(self, key: Key) -> None:
        """Move ``key``'s partition to the end: it was just answered records."""
        self.partitions[key] = self.partitions.pop(key)

    def told(self) -> list[tuple[Key, int, int]]:
        """What the session's answers told so far: each partition, in the session's order,
        with the high watermark and log start offset last answered (``restore`` takes it)."""
        return [(key, c.high_watermark, c.log_start_offset)
                for key, c in self.partitions.items()]

    def restore(self, told: list[tuple[Key, int, int]]) -> None:
        """Forget what an answer told since ``told()`` (its partitions the same): Kafka's
        throttled answer withholds the partitions and updates nothing
        (``getThrottledResponse``), so the next answer tells it all again."""
        partitions = self.partitions
        self.partitions = {key: partitions[key] for key, _, _ in told}
        for key, high_watermark, log_start_offset in told:
            partitions[key].high_watermark = high_watermark
            partitions[key].log_start_offset = log_start_offset


@dataclass(slots=True)
class _Shard:
    number: int
    max_entries: int
    sessions: dict[int, FetchSession] = field(default_factory=dict)

    def new_id(self) -> int:
        low = max(1, self.number * _ID_RANGE)
        while True:
            candidate = random.randrange(low, (self.number + 1) * _ID_RANGE)
            if candidate not in self.sessions:
                return candidate

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Kafka's ``touch``: last used now; size and evictability as of now."""
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        old = now_ms - session.created_ms > EVICTION_MS
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old

    def try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Kafka's ``tryEvict``: make room for a session of ``size`` partitions."""
        if not self.sessions:
            return False
        stalest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stalest.last_used_ms > EVICTION_MS:
            del self.sessions[stalest.id]
            return True
        evictable = [s for s in self.sessions.values()
                     if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not evictable:
            return False
        cheapest = min(evictable, key=lambda s: (s.privileged, s.cached_size, s.id))
        if (privileged, size, 0) < (cheapest.privileged, cheapest.cached_size, cheapest.id):
            return False
        del self.sessions[cheapest.id]
        return True


class FetchSessionCache:
    """One broker's fetch sessions, ``slots`` of them at most (Kafka's
    ``max.incremental.fetch.session.cache.slots``), in Kafka's 8 shards."""

    def __init__(self, slots: int) -> None:
        self._shards = [_Shard(n, slots // SHARDS) for n in range(SHARDS)]
        self._turn = itertools.cycle(self._shards)

    def __len__(self) -> int:
        return sum(len(shard.sessions) for shard in self._shards)

    def __iter__(self) -> Iterator[FetchSession]:
        """Every session, shard by shard."""
        return (session for shard in self._shards for session in shard.sessions.values())

    def _shard_of(self, session_id: int) -> _Shard | None:
        number = session_id // _ID_RANGE
        return self._shards[number] if 0 <= number < SHARDS else None

    def get(self, session_id: int) -> FetchSession | None:
        shard = self._shard_of(session_id)
        return shard.sessions.get(session_id) if shard is not None else None

    def remove(self, session_id: int) -> FetchSession | None:
        """Close the session (a full fetch naming it); the session, or None if unknown."""
        shard = self._shard_of(session_id)
        return shard.sessions.pop(session_id, None) if shard is not None else None

    def open(self, partitions: dict[Key, CachedPartition], privileged: bool,
             uses_topic_ids: bool, now_ms: int) -> int:
        """A new session of ``partitions`` in the next shard's turn if it has room or can
        evict for it: its id, else ``INVALID_SESSION_ID`` (the answer's, then)."""
        shard = next(self._turn)
        if (len(shard.sessions) >= shard.max_entries
                and not shard.try_evict(privileged, len(partitions), now_ms)):
            return INVALID_SESSION_ID
        session = FetchSession(shard.new_id(), privileged, uses_topic_ids, now_ms, partitions,
                               epoch=next_epoch(INITIAL_EPOCH))
        shard.sessions[session.id] = session
        shard.touch(session, now_ms)
        return session.id

    def used(self, session: FetchSession, now_ms: int) -> None:
        """An incremental fetch used ``session``: touched, as Kafka's cache does."""
        shard = self._shard_of(session.id)
        if shard is not None and shard.sessions.get(session.id) is session:
            shard.touch(session, now_ms)


FULL, INCREMENTAL, SESSIONLESS, SESSION_ERROR = "full", "incremental", "sessionless", "error"


@dataclass(slots=True)
class FetchContext:
    """How one Fetch is served (Kafka's ``FetchContext`` kinds): ``full`` (answer every
    partition named, then open a session of them), ``incremental`` (the session's
    partitions, answered only where something changed; ``epoch`` is the session's epoch
    the answer must still find, else it is a duplicate), ``sessionless`` (every partition
    named, session id 0), or ``error`` (``error``, at the answer's top level, nothing else).
    A full fetch's ``named`` are the partitions it names, in its order: its session's, also
    those a fault rule or the authorizer answered instead of the handler; ``cache``, the
    one its session goes in. An incremental fetch's ``told_before`` is what its session had
    told before its answer (``FetchSession.told``), for a throttled answer to restore: taken
    only while some client quota is set (``Cluster.throttling``), the only time a consumer's
    answer can be throttled (O(partitions) a fetch otherwise spent for nothing)."""

    kind: str
    session: FetchSession | None = None
    epoch: int = 0
    error: str | None = None
    named: dict[Key, CachedPartition] = field(default_factory=dict)
    cache: FetchSessionCache | None = None
    told_before: list[tuple[Key, int, int]] | None = None


SESSIONLESS_CONTEXT = FetchContext(SESSIONLESS)


def new_context(cache: FetchSessionCache, session_id: int, epoch: int, uses_topic_ids: bool,
                named: dict[Key, CachedPartition], forgotten: list[Key], now_ms: int
                ) -> FetchContext:
    """The context of a fetch carrying ``session_id`` and ``epoch`` (Kafka's
    ``FetchManager.newContext``), changing the cache as Kafka does on the request's arrival:
    a full fetch (epoch 0 or -1) closes the session it names; an incremental one's session
    takes the partitions named and forgotten, moves to its next epoch and is touched, or is
    closed if left empty (the fetch is then sessionless). The errors: an unknown session,
    FETCH_SESSION_ID_NOT_FOUND; another epoch, INVALID_FETCH_SESSION_EPOCH; topic ids (v13+)
    in a session of names or the reverse, FETCH_SESSION_TOPIC_ID_ERROR."""
    if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        if session_id != INVALID_SESSION_ID:
            cache.remove(session_id)
        if epoch == FINAL_EPOCH:
            return SESSIONLESS_CONTEXT
        return FetchContext(FULL, named=named, cache=cache)
    session = cache.get(session_id)
    if session is None:
        return FetchContext(SESSION_ERROR, error="FETCH_SESSION_ID_NOT_FOUND")
    if session.epoch != epoch:
        return FetchContext(SESSION_ERROR, error="INVALID_FETCH_SESSION_EPOCH")
    if session.uses_topic_ids != uses_topic_ids:
        return FetchContext(SESSION_ERROR, error="FETCH_SESSION_TOPIC_ID_ERROR")
    session.update(named, forgotten)
    if not session.partitions:
        cache.remove(session.id)
        return SESSIONLESS_CONTEXT
    cache.used(session, now_ms)
    session.epoch = next_epoch(session.epoch)
    return FetchContext(INCREMENTAL, session, session.epoch)
