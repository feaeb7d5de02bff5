"""The log manager's background task: retention checks, on Kafka's schedule.

``run_retention`` runs in the cluster's nursery (``open_cluster``): its first check
``log.initial.task.delay.ms`` after the cluster starts (Kafka's default 30 s), then one every
``log.retention.check.interval.ms`` (5 minutes), as Kafka's ``LogManager`` schedules
``cleanupLogs``; each check deletes what ``fakebroker.state.retention.check`` says, by the
wall clock (record timestamps are wall-clock milliseconds). Both configs are the broker's
static ones (``--override``), as on Kafka, where they are read-only.
"""

from __future__ import annotations

import time

import trio

from fakebroker.options import ClusterSettings
from fakebroker.state import retention
from fakebroker.state.cluster import Cluster


async def run_retention(cluster: Cluster, settings: ClusterSettings) -> None:
    """Check retention on Kafka's schedule; runs until cancelled."""
    await trio.sleep(int(settings.broker_config("log.initial.task.delay.ms") or 0) / 1000)
    interval = int(settings.broker_config("log.retention.check.interval.ms") or 1) / 1000
    while True:
        retention.check(cluster, time.time_ns() // 1_000_000)
        await trio.sleep(interval)
