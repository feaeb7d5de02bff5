"""confluent-kafka at its defaults, the one client every throughput workload uses."""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from fakebroker.bench.systems import Running

QUIET = {"log_level": 3}  # librdkafka's own warnings would interleave with the report


def unique(prefix: str) -> str:
    """A fresh topic or group name."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topics(system: Running, names: list[str], partitions: int = 1) -> None:
    """Create topics of ``partitions`` partitions with CreateTopics. Two peers lack that API:
    nafka's topics exist once named, with one partition, so nothing is sent to it; the
    librdkafka mock creates a topic when a Metadata request names it, with 4 partitions (its
    default), which the workloads tolerate: they use partition 0 only."""
    if system.name == "nafka":
        return
    admin = AdminClient({"bootstrap.servers": system.bootstrap, **QUIET})
    if system.name == "librdkafka-mock":
        for name in names:
            admin.list_topics(topic=name, timeout=30)
        return
    futures = admin.create_topics([NewTopic(n, partitions, 1) for n in names],
                                  operation_timeout=30)
    for future in futures.values():
        future.result(30)
