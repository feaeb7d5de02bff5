"""Source offsets as Spark's Kafka source writes them, and its maxOffsetsPerTrigger split."""

from __future__ import annotations

from collections.abc import Mapping

TP = tuple[str, int]
"""A topic partition: (topic, partition)."""

Offsets = dict[str, dict[str, int]]
"""A source offset as JSON: {topic: {"<partition>": next offset}} (Spark's KafkaSourceOffset)."""


def to_json(offsets: Mapping[TP, int]) -> Offsets:
    """{(topic, partition): offset} as Spark's offset JSON."""
    out: Offsets = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def from_json(offsets: Offsets) -> dict[TP, int]:
    """Spark's offset JSON as {(topic, partition): offset}."""
    return {(topic, int(p)): o for topic, parts in offsets.items() for p, o in parts.items()}


def rate_limit(limit: int, begin: Mapping[TP, int], latest: Mapping[TP, int]) -> dict[TP, int]:
    """End offsets of a micro-batch of at most about ``limit`` records, as Spark's
    KafkaMicroBatchStream.rateLimit sets them: each partition gets a share of ``limit`` in
    proportion to its backlog (latest - begin; a partition new since ``begin`` from offset 0),
    rounded down, but at least one record when it has any."""
    sizes = {tp: end - begin.get(tp, 0) for tp, end in latest.items()
             if end - begin.get(tp, 0) > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    limited = {}
    for tp, end in latest.items():
        if tp not in sizes:
            limited[tp] = end
            continue
        share = limit * (sizes[tp] / total)
        step = int(share) if share >= 1 else 1
        limited[tp] = min(end, begin.get(tp, 0) + step)
    return limited
