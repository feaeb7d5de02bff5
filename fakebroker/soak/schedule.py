"""The soak's seeded schedule: which fault or failure comes when, drawn from
``random.Random(seed)`` before the run starts.

A seed and a duration give the same schedule every time (``digest`` names it): the same
events, at the same offsets from the start, with the same targets. What the seed does not
fix is thread timing: when the clients' requests meet a fault rule, how far a producer got
when a broker went down, so two runs of one seed apply the same schedule to different
traffic. Targets that exist only at run time (a member's id) are chosen by index among
those alive then, and an event whose target is absent is counted as skipped.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any

# Fault rules: (api, error) pairs a client retries, as Kafka's brokers answer them.
RETRIABLE_ERRORS = (
    ("Produce", "NOT_LEADER_OR_FOLLOWER"),
    ("Produce", "REQUEST_TIMED_OUT"),
    ("Fetch", "NOT_LEADER_OR_FOLLOWER"),
    ("Metadata", "LEADER_NOT_AVAILABLE"),
    ("OffsetCommit", "COORDINATOR_NOT_AVAILABLE"),
    ("OffsetCommit", "NOT_COORDINATOR"),
    ("OffsetFetch", "COORDINATOR_LOAD_IN_PROGRESS"),
    ("FindCoordinator", "COORDINATOR_NOT_AVAILABLE"),
    ("Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("AddPartitionsToTxn", "CONCURRENT_TRANSACTIONS"),
    ("EndTxn", "CONCURRENT_TRANSACTIONS"),
    ("InitProducerId", "COORDINATOR_LOAD_IN_PROGRESS"),
)
# APIs whose answer is lost after the request was applied (the client retries or rejoins).
LOST_ACK_APIS = ("Produce", "OffsetCommit", "EndTxn", "AddPartitionsToTxn", "Fetch",
                 "Heartbeat", "ConsumerGroupHeartbeat", "SyncGroup", "InitProducerId")
DELAYED_APIS = ("Produce", "Fetch", "Metadata", "OffsetCommit", "EndTxn", "FindCoordinator",
                "ConsumerGroupHeartbeat", "JoinGroup", "SyncGroup", "AddPartitionsToTxn",
                "ListOffsets")
THROTTLED_APIS = ("Produce", "Fetch", "OffsetCommit", "ConsumerGroupHeartbeat")

# kind -> weight: how often it is drawn
KINDS = {
    "move_leader": 6,
    "broker_down": 2,  # its broker_up follows after a drawn pause
    "move_coordinator": 4,
    "lost_ack": 5,
    "delay": 4,
    "throttle": 3,
    "error": 5,
    "member_join": 2,
    "member_leave": 2,
    "kick_member": 2,
    "abort_transaction": 1,
}


@dataclass(frozen=True)
class Event:
    """One scheduled event, ``at`` seconds after the start."""

    at: float
    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Shape:
    """What the schedule targets: the cluster's brokers, the topic's partitions, the groups
    and the transactional ids."""

    brokers: int
    partitions: int
    groups: tuple[str, ...]
    transactional_ids: tuple[str, ...]
    mean_gap: float = 0.5  # mean seconds between events


def schedule(seed: int, seconds: float, shape: Shape) -> list[Event]:
    """The events of a run of ``seconds`` with ``seed``, in time order. Events stop 5 s (or
    a tenth of the run, if less) before the end, so the run ends on a quiet cluster."""
    rng = random.Random(seed)
    kinds, weights = tuple(KINDS), tuple(KINDS.values())
    end = seconds - min(5.0, seconds / 10)
    events: list[Event] = []
    down_until = 0.0  # one broker down at a time: the others keep every partition online
    t = rng.expovariate(1 / shape.mean_gap)
    while t < end:
        kind = rng.choices(kinds, weights)[0]
        params = _params(rng, kind, shape)
        if kind == "broker_down":
            pause = round(rng.uniform(0.5, 5.0), 3)
            if t >= down_until and t + pause < end:
                events.append(Event(round(t, 3), kind, params))
                events.append(Event(round(t + pause, 3), "broker_up", params))
                down_until = t + pause
        else:
            events.append(Event(round(t, 3), kind, params))
        t += rng.expovariate(1 / shape.mean_gap)
    events.sort(key=lambda e: e.at)
    return events


def _params(rng: random.Random, kind: str, shape: Shape) -> dict[str, Any]:
    if kind == "move_leader":
        return {"partition": rng.randrange(shape.partitions)}
    if kind == "broker_down":
        return {"broker": rng.randint(1, shape.brokers)}
    if kind == "move_coordinator":
        return {"key": rng.choice(shape.groups + shape.transactional_ids)}
    if kind == "lost_ack":
        return {"api": rng.choice(LOST_ACK_APIS)}
    if kind == "delay":
        return {"api": rng.choice(DELAYED_APIS), "delay_ms": rng.randint(20, 1500),
                "count": rng.randint(1, 5)}
    if kind == "throttle":
        return {"api": rng.choice(THROTTLED_APIS), "throttle_ms": rng.randint(50, 1000),
                "count": rng.randint(1, 3)}
    if kind == "error":
        api, error = rng.choice(RETRIABLE_ERRORS)
        return {"api": api, "error": error, "count": rng.randint(1, 3)}
    if kind in ("member_join", "member_leave", "kick_member"):
        return {"group": rng.choice(shape.groups), "index": rng.randrange(1 << 16)}
    if kind == "abort_transaction":
        return {"transactional_id": rng.choice(shape.transactional_ids)}
    raise ValueError(kind)


def digest(events: list[Event]) -> str:
    """A short name of a schedule: equal digests, equal schedules."""
    text = json.dumps([asdict(e) for e in events], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
