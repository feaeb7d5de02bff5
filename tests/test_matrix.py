"""A slice of the client matrix (tests/matrix/; the whole of it is ``python -m tests.matrix``):
a few cells, each the same on the fake answering as a release as on that release's Apache Kafka
broker, and the outcome measured there."""

from __future__ import annotations

import uuid

import pytest

from fakebroker import FakeKafka
from fakebroker.real_cluster import RealCluster
from tests.absent import absent
from tests.matrix import CLIENTS, run_cell
from tests.matrix.rounds import ROUNDS, Outcome
from tests.matrix.run import Matrix
from tests.matrix.table import between_markers, compact

# client, release line, round, the outcome on both brokers
SLICE = [
    # KIP-896: Kafka 4 dropped DescribeConfigs v0, the only one this client speaks.
    ("Java kafka-clients 0.11.0.3", "4.4", "admin", "UnsupportedVersionException"),
    ("Java kafka-clients 4.4.0", "3.9", "group", "pass"),
    ("librdkafka 2.0.2 (Debian)", "3.9", "produce", "pass"),
    ("kafka-python 3.0.12", "4.4", "group", "pass"),
    ("kafkajs 2.2.4", "4.4", "admin", "pass"),
]
REAL_BROKER = {"3.9": "real_kafka_3_9", "4.4": "real_kafka"}


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
@pytest.mark.parametrize("client_name,release,round_,expected", SLICE)
def test_a_cell_is_the_same_on_the_fake_as_on_apache_kafka(
        client_name: str, release: str, round_: str, expected: str,
        request: pytest.FixtureRequest):
    (client,) = [c for c in CLIENTS if c.name == client_name]
    why = client.missing()
    if why:
        absent(why)
    name = f"{round_}-{uuid.uuid4().hex[:8]}"
    with FakeKafka(kafka_version=release) as fake:
        on_fake = run_cell(client.argv(), fake, round_, name)
    broker = request.getfixturevalue(REAL_BROKER[release])
    real = RealCluster(broker.bootstrap_servers).warm_up()
    try:
        on_kafka = run_cell(client.argv(), real, round_, name)
    finally:
        real.close()
    assert (on_fake.outcome, on_kafka.outcome) == (expected, expected), (on_fake, on_kafka)


def test_readmes_table_gives_clients_alike_one_row_and_names_each_round_that_did_not_pass():
    matrix = Matrix()
    outcomes = {"old": {"4.4": "UnsupportedVersionException"}, "a": {}, "b": {}, "c": {}}
    for client, refused in outcomes.items():
        for release in ("3.9", "4.4"):
            for round_ in ROUNDS:
                verdict = refused.get(release, "pass") if round_ == "admin" else "pass"
                for broker in ("fake", "kafka"):
                    matrix.cells[(client, release, broker, round_)] = Outcome(verdict)
    matrix.cells[("c", "3.9", "fake", "produce")] = Outcome("TimeoutException")
    rows = compact(matrix).splitlines()[2:]
    assert rows == [
        "| old | 4 rounds pass | 3 rounds pass; admin: UnsupportedVersionException |",
        "| a, b | 4 rounds pass | 4 rounds pass |",
        "| c | 3 rounds pass; produce: fake TimeoutException ≠ Kafka pass | 4 rounds pass |",
    ]
    readme = "intro\n<!-- matrix -->\nold table\n<!-- /matrix -->\nrest\n"
    assert between_markers(readme, "new\n") == (
        "intro\n<!-- matrix -->\nnew\n<!-- /matrix -->\nrest\n")
