"""Running the matrix: per release, the fake answering as it and its Apache Kafka broker, every
client's rounds on both, and the table of outcomes."""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fakebroker import FakeKafka
from fakebroker.real.launch import start_real_kafka
from fakebroker.real_cluster import RealCluster
from tests.matrix.clients import Client
from tests.matrix.rounds import ROUNDS, Cluster, Outcome, run_cell

# Release line -> the Apache Kafka release this suite runs for it (fakebroker kafka install).
RELEASES: dict[str, str] = {"3.9": "3.9.1", "4.4": "4.4.0"}
BROKERS: tuple[str, ...] = ("fake", "kafka")


@dataclass
class Matrix:
    """Outcomes by (client, release line, broker, round); ``seconds``: the whole run."""

    cells: dict[tuple[str, str, str, str], Outcome] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def differences(self) -> list[tuple[str, str, str, Outcome, Outcome]]:
        """(client, release, round, on the fake, on Kafka) for every cell that differs."""
        found = []
        for (client, release, broker, round_), on_fake in self.cells.items():
            if broker != "fake":
                continue
            on_kafka = self.cells.get((client, release, "kafka", round_))
            if on_kafka is not None and on_kafka.outcome != on_fake.outcome:
                found.append((client, release, round_, on_fake, on_kafka))
        return found


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@contextmanager
def fake_cluster(release: str) -> Iterator[Cluster]:
    with FakeKafka(kafka_version=release) as fake:
        yield fake


@contextmanager
def kafka_cluster(release: str) -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="matrix-kafka-") as tmp, \
            start_real_kafka(Path(tmp), version=RELEASES[release]) as broker:
        cluster = RealCluster(broker.bootstrap_servers, shared=False).warm_up()
        try:
            yield cluster
        finally:
            cluster.close()


CLUSTERS: dict[str, Callable[[str], AbstractContextManager[Cluster]]] = {
    "fake": fake_cluster, "kafka": kafka_cluster}


def run_matrix(clients: Sequence[Client], releases: Sequence[str] = tuple(RELEASES),
               rounds: Sequence[str] = ROUNDS,
               report: Callable[[str], None] = lambda line: None) -> Matrix:
    """Run every round of every client on both brokers of each release; ``report`` hears one
    line per cell as it ends."""
    matrix = Matrix()
    started = time.monotonic()
    runnable = []
    for client in clients:
        why = client.missing()
        if why:
            matrix.skipped[client.name] = why
            report(f"skipped {client.name}: {why}")
        else:
            runnable.append(client)
    for release in releases:
        for broker in BROKERS:
            with CLUSTERS[broker](release) as cluster:
                for client in runnable:
                    for round_ in rounds:
                        name = slug(f"{client.name}-{round_}")
                        outcome = run_cell(client.argv(), cluster, round_, name)
                        matrix.cells[client.name, release, broker, round_] = outcome
                        report(f"{broker} {release} | {client.name} | {round_}: "
                               f"{outcome.outcome} {outcome.message[:200]}".rstrip())
    matrix.seconds = time.monotonic() - started
    return matrix
