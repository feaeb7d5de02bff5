"""The fetch session cache evicts as Kafka's ``FetchSessionCacheShard`` does (its times are
minutes, so these run on the cache itself, with the clock passed in): a full shard makes room
for a newcomer by dropping a session unused for over 2 minutes, else a less valuable one old
enough to be evictable; the epochs follow Kafka's ``FetchMetadata.nextEpoch``."""

from __future__ import annotations

import uuid

from fakebroker.state.fetch_sessions import (
    EVICTION_MS,
    FINAL_EPOCH,
    SHARDS,
    CachedPartition,
    FetchSessionCache,
    next_epoch,
)

NAMES = uuid.UUID(int=0)


def partitions(count: int) -> dict:
    return {("orders", p): CachedPartition("orders", NAMES, None) for p in range(count)}


def full_cache(now_ms: int = 0, size: int = 1) -> tuple[FetchSessionCache, list[int]]:
    """A cache of 8 slots (one per shard) filled at ``now_ms`` with sessions of ``size``."""
    cache = FetchSessionCache(SHARDS)
    opened = [cache.open(partitions(size), False, False, now_ms) for _ in range(SHARDS)]
    assert all(opened)
    return cache, opened


def test_a_newcomer_evicts_the_session_of_its_shard_unused_for_over_two_minutes():
    cache, opened = full_cache()
    for session_id in opened[1:]:
        cache.used(cache.get(session_id), EVICTION_MS)  # all but the first shard's used
    newcomer = cache.open(partitions(1), False, False, EVICTION_MS + 1)
    assert newcomer and cache.get(opened[0]) is None and len(cache) == SHARDS


def test_a_young_shard_takes_no_unprivileged_newcomer():
    cache, _ = full_cache()
    assert cache.open(partitions(100), False, False, EVICTION_MS) == 0


def test_a_larger_newcomer_evicts_a_smaller_session_once_it_is_old_enough():
    cache, opened = full_cache(size=2)
    for session_id in opened:  # in use, and old enough to be evictable by anyone
        cache.used(cache.get(session_id), EVICTION_MS + 1)
    as_large = cache.open(partitions(2), False, False, EVICTION_MS + 2)
    larger = cache.open(partitions(3), False, False, EVICTION_MS + 2)
    assert as_large == 0  # equal size: the newcomer is not worth more
    assert larger and cache.get(opened[1]) is None  # the next shard's turn, its session


def test_a_privileged_newcomer_evicts_a_young_unprivileged_session_of_any_size():
    cache, opened = full_cache(size=50)
    follower = cache.open(partitions(1), True, False, 1)
    assert follower and cache.get(opened[0]) is None and cache.get(follower).privileged


def test_fewer_slots_than_shards_hold_no_session():
    assert FetchSessionCache(SHARDS - 1).open(partitions(1), True, False, 0) == 0


def test_each_shard_has_its_own_range_of_session_ids():
    _, opened = full_cache()
    width = (2**31 - 1) // SHARDS
    assert [session_id // width for session_id in opened] == list(range(SHARDS))


def test_epochs_count_up_wrap_to_one_and_final_stays_final():
    assert [next_epoch(e) for e in (0, 1, 2**31 - 1, FINAL_EPOCH)] == [1, 2, 1, FINAL_EPOCH]
