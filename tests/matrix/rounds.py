"""The matrix's four rounds, and one cell: a client's round against one cluster.

Each round has its own topic (and group), made by the runner before the client runs, so a
round's outcome never depends on another's:

* ``produce``: the client writes 6 records (keys k0.., values v0..) to partition 0 of a
  1-partition topic, acks=all; passes when the broker holds exactly those values, in order.
* ``assign-consume``: the runner seeds 6 records into partition 0; the client assigns the
  partition without a group, from the beginning, and must read v0..v5 in order.
* ``group``: the runner seeds 2 records into each of 3 partitions; three members of one group
  subscribe; passes when each member holds one partition read to its end, each of the 6 records
  was read (one may be read twice: offsets are committed at the end), and the group's committed
  offsets are 2 on every partition.
* ``admin``: the client creates a topic of 2 partitions, describes it (2 partitions), describes
  its configs and deletes it (the calls its admin API has).

A cell's outcome is ``pass`` or the error's class as the client names it (its exception's class
name; for librdkafka, ``KafkaException`` with the error's name), or ``Timeout`` when the client
gave no answer within ROUND_TIMEOUT.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

ROUNDS: tuple[str, ...] = ("produce", "assign-consume", "group", "admin")
RECORDS = 6  # the drivers' RECORDS
GROUP_PARTITIONS = 3
ROUND_TIMEOUT = 180.0  # seconds: a driver gives up on its own after 60 s of waiting


class Cluster(Protocol):
    """What the runner needs of a cluster: FakeKafka's inspection API, which
    ``fakebroker.real_cluster.RealCluster`` gives a real Kafka too."""

    bootstrap_servers: str

    def create_topic(self, name: str, partitions: int = 1) -> None: ...

    def records(self, topic: str, partition: int = 0) -> list: ...

    def committed(self, group_id: str, topic: str, partition: int) -> int | None: ...


@dataclass(frozen=True)
class Outcome:
    """A cell: ``pass`` or the error's class; ``message`` says more (not compared)."""

    outcome: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"


def seed(bootstrap: str, topic: str, per_partition: Sequence[int]) -> None:
    """Write v0, v1... into the topic's partitions (``per_partition[p]`` records into p) with
    confluent-kafka, the runner's own client."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    value = 0
    for partition, count in enumerate(per_partition):
        for _ in range(count):
            producer.produce(topic, b"v%d" % value, key=b"k%d" % value, partition=partition)
            value += 1
    if producer.flush(30) != 0:
        raise RuntimeError(f"the runner could not seed {topic}")


def run_cell(argv: Sequence[str], cluster: Cluster, round_: str, name: str) -> Outcome:
    """Run one round of a client (``argv`` + ROUND BOOTSTRAP TOPIC GROUP) on ``cluster``:
    the runner prepares the round's topic, runs the client, and checks what the broker holds
    after a round the client calls passed. ``name``: unique on this cluster (topic and group)."""
    topic, group = f"m-{name}", f"m-{name}-group"
    bootstrap = cluster.bootstrap_servers
    if round_ == "produce":
        cluster.create_topic(topic, 1)
    elif round_ == "assign-consume":
        cluster.create_topic(topic, 1)
        seed(bootstrap, topic, [RECORDS])
    elif round_ == "group":
        cluster.create_topic(topic, GROUP_PARTITIONS)
        seed(bootstrap, topic, [RECORDS // GROUP_PARTITIONS] * GROUP_PARTITIONS)
    outcome = drive([*argv, round_, bootstrap, topic, group])
    if not outcome.passed:
        return outcome
    if round_ == "produce":
        stored = [r.value for r in cluster.records(topic, 0)]
        if stored != [b"v%d" % i for i in range(RECORDS)]:
            return Outcome("RecordsDiffer", f"the broker holds {stored}")
    elif round_ == "group":
        committed = [cluster.committed(group, topic, p) for p in range(GROUP_PARTITIONS)]
        if committed != [RECORDS // GROUP_PARTITIONS] * GROUP_PARTITIONS:
            return Outcome("CommitsDiffer", f"committed offsets {committed}")
    return outcome


def drive(argv: Sequence[str]) -> Outcome:
    """Run a driver and read its one JSON line."""
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=ROUND_TIMEOUT,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Outcome("Timeout", f"no answer in {ROUND_TIMEOUT:.0f} s")
    lines = [line for line in run.stdout.splitlines() if line.startswith('{"outcome"')]
    if len(lines) != 1:
        return Outcome("DriverFailed", f"exit {run.returncode}: {run.stderr[-1500:]}")
    answer = json.loads(lines[0])
    return Outcome(answer["outcome"], answer.get("message", ""))
