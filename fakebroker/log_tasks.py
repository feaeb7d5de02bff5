"""The log manager's background tasks: retention checks and the compaction cleaner, on
Kafka's schedule. Both run in the cluster's nursery (``open_cluster``) and use the wall clock
(record timestamps are wall-clock milliseconds).

* ``run_retention``: its first check ``log.initial.task.delay.ms`` after the cluster starts
  (Kafka's default 30 s), then one every ``log.retention.check.interval.ms`` (5 minutes), as
  Kafka's ``LogManager`` schedules ``cleanupLogs``: each deletes what
  ``fakebroker.state.retention`` says of every log not compacted. Both configs are the
  broker's static ones (``--override``), read-only on Kafka too.
* ``run_cleaner``: Kafka's cleaner thread: cleans the filthiest compacted log
  (``fakebroker.state.compaction``) and applies retention to the compacted logs, again at
  once after a cleaning, else after ``log.cleaner.backoff.ms`` (15 s; the cluster's dynamic
  default when set).
"""

from __future__ import annotations

import time

import trio

from fakebroker.options import ClusterSettings
from fakebroker.state import retention
from fakebroker.state.cluster import Cluster


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def run_retention(cluster: Cluster, settings: ClusterSettings) -> None:
    """Check retention on Kafka's schedule; runs until cancelled."""
    await trio.sleep(int(settings.broker_config("log.initial.task.delay.ms") or 0) / 1000)
    interval = int(settings.broker_config("log.retention.check.interval.ms") or 1) / 1000
    while True:
        retention.check(cluster, _now_ms(), compacted=False)
        await trio.sleep(interval)


async def run_cleaner(cluster: Cluster) -> None:
    """Clean compacted logs as Kafka's cleaner thread does; runs until cancelled. Its first
    pass comes one backoff after the start: a new cluster's logs are empty, so the pass Kafka
    makes at once would find nothing, and the cleaner (with the record codec it imports) is
    loaded after serve is ready (tests/test_startup.py)."""
    await trio.sleep(_cleaner_backoff_s(cluster))
    from fakebroker.state import compaction

    while True:
        cleaned = compaction.clean_filthiest(cluster, _now_ms())
        retention.check(cluster, _now_ms(), compacted=True)
        await trio.sleep(0 if cleaned else _cleaner_backoff_s(cluster))


def _cleaner_backoff_s(cluster: Cluster) -> float:
    """``log.cleaner.backoff.ms`` in seconds: the cluster's dynamic default when set, else the
    static config; at least a millisecond (Kafka's cleaner at 0 spins on a thread of its own,
    here it would hold the one thread every connection is served on)."""
    return max(int(cluster.broker_config("log.cleaner.backoff.ms") or 0), 1) / 1000
