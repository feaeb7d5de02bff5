"""One conformance run: a real Kafka and a fake cluster, the corpus to both, the table.

``run(tmp_dir)`` starts Apache Kafka 4.4.0 (tests/real_kafka.py, single-node KRaft) and a
one-broker FakeKafka with the settings that matter set alike (cluster id, auto-creation on,
num.partitions 1, group.initial.rebalance.delay.ms 0, the retention checks' timing), asks the
real broker which versions it serves (ApiVersions), replays the corpus
(tests/conformance/corpus.py) to both at the versions both serve, normalises both answers
(normalise.py) and compares them field by field (compare.py). Every API×version fakebroker
serves gets a cell; a version Kafka 4.4 does not serve is marked so, and one both serve
without a request in the corpus fails the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from fakebroker import FakeKafka
from fakebroker.api import HANDLERS, served_versions
from fakebroker.protocol.specs import api_spec
from tests.conformance.compare import (
    FAKE,
    KAFKA,
    NO_REQUEST,
    NOT_SERVED,
    Cell,
    Intended,
    judge,
    load_intended,
    table,
)
from tests.conformance.corpus import Request, Step, captured_corpus, wire_corpus
from tests.conformance.normalise import NORMALISERS, UNORDERED, normalise
from tests.conformance.replay import Exchange, Side, replay
from tests.real_kafka import KAFKA_VERSION, SUITE_LOG_TIMING, start_real_kafka

TABLE = Path(__file__).resolve().parents[2] / "CONFORMANCE.md"


@dataclass
class Result:
    """A run's cells (every API×version fakebroker serves, in API key order), the intended
    entries (with how often each matched) and the normalised exchanges behind them."""

    cells: list[Cell]
    intended: list[Intended]
    exchanges: list[Exchange]

    @property
    def failures(self) -> list[Cell]:
        """Cells with a difference not listed as intended, or without a request."""
        return [c for c in self.cells if c.status in ("differs", NO_REQUEST)]

    @property
    def unused(self) -> list[Intended]:
        """Intended entries no difference matched (stale: remove them)."""
        return [i for i in self.intended if not i.used]

    def markdown(self) -> str:
        return table(self.cells, self.intended, HEADER)


def corpus(versions: dict[str, list[int]]) -> list[Step]:
    """The written corpus, then the captured one (requests at versions both serve)."""
    steps: list[Step] = list(wire_corpus(versions))
    steps += [s for s in captured_corpus()
              if not isinstance(s, Request) or s.version in versions.get(s.api, ())]
    return steps


@contextlib.contextmanager
def both_brokers(tmp_dir: Path, kafka_version: str | None = None,
                 overrides: Mapping[str, str] | None = None,
                 kafka_only: Mapping[str, str] | None = None) -> Iterator[list[Side]]:
    """A real Kafka (in ``tmp_dir``) and a fake one with the settings that matter set alike,
    as the sides of a replay (Kafka's first), closed after; the fake answering as Kafka
    ``kafka_version`` if given (the versions it serves and refuses); ``overrides`` (broker
    configs by Kafka's names) given to both, ``kafka_only`` to Kafka alone (configs of what
    the fake does not model)."""
    with start_real_kafka(tmp_dir, overrides={**(overrides or {}), **(kafka_only or {})}) \
            as kafka, FakeKafka(
            brokers=1, cluster_id=kafka.cluster_id, auto_create_topics=True,
            default_partitions=1, group_initial_rebalance_delay_ms=0,
            overrides={**SUITE_LOG_TIMING, **(overrides or {})},
            kafka_version=kafka_version) as fake:
        sides = [Side(KAFKA, kafka.bootstrap_servers), Side(FAKE, fake.bootstrap_servers)]
        try:
            yield sides
        finally:
            for side in sides:
                side.close()


def common_versions(kafka: Side) -> dict[str, list[int]]:
    """Per API name, the versions both the fake and ``kafka`` serve."""
    real = kafka.served()
    return {api_spec(key).name: [v for v in served_versions(key) or () if v in real.get(key, ())]
            for key in HANDLERS}


def run(tmp_dir: Path) -> Result:
    """Start both brokers in ``tmp_dir``, replay the corpus and compare every answer."""
    with both_brokers(tmp_dir) as sides:
        real = sides[0].served()
        exchanges = replay(corpus(common_versions(sides[0])), sides)
    intended = load_intended()
    cells: dict[tuple[str, int], Cell] = {}
    compared = []
    for exchange in exchanges:
        request = exchange.request
        answers = {s.name: normalise(exchange.answers[s.name], s, request) for s in sides}
        judge(cells, request.api, request.version, request.case, answers[KAFKA],
              answers[FAKE], intended)
        compared.append(Exchange(request, answers))
    ordered = []
    for key in sorted(HANDLERS):
        name = api_spec(key).name
        for version in served_versions(key) or ():
            cell = cells.get((name, version))
            if version not in real.get(key, ()):
                cell = Cell(name, version, status=NOT_SERVED)
            elif cell is None:
                cell = Cell(name, version, status=NO_REQUEST)
            ordered.append(cell)
    return Result(ordered, intended, compared)


HEADER = f"""# Conformance: fakebroker against Apache Kafka {KAFKA_VERSION}

Written by `python -m tests.conformance` (tests/conformance/); the test
`tests/conformance/test_conformance.py` (marker `real_kafka`) fails on a difference not listed
in `tests/conformance/intended.toml` and when this file is out of date.

Every request of the corpus (tests/conformance/corpus.py: requests written from the wire
tests' bodies, and requests captured from confluent-kafka, kafka-python and the Java client in
`tests/conformance/captured.jsonl`) went to a real Kafka {KAFKA_VERSION} (single-node KRaft)
and to a one-broker fakebroker with the same cluster id, auto-creation on, num.partitions 1
and group.initial.rebalance.delay.ms 0, in the same order. Both answers were decoded with
fakebroker's codec for the request's version and compared field by field after the
normalisers of tests/conformance/normalise.py, which hide only what Kafka leaves free:

{chr(10).join(f"* `{n.__name__}`: {' '.join((n.__doc__ or '').split())}" for n in NORMALISERS)}

The lists compared as sets (``unordered``), by key: {"; ".join(
    f"{api} " + ", ".join(f"`{path}` by {'/'.join(key) if key else 'value'}"
                          for path, key in lists)
    for api, lists in UNORDERED.items())}.

A cell is *identical* (no field differs), *intended* (every difference is listed below with
its reason) or *differs* (a difference to fix: the field path, Kafka's value / fakebroker's);
versions fakebroker serves for older clients that Kafka {KAFKA_VERSION} no longer serves are
marked so (Kafka's own ApiVersions answer decides)."""
