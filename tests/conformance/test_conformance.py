"""fakebroker answers every request of the conformance corpus as Apache Kafka 4.4 does, but
for the differences tests/conformance/intended.toml lists with their reasons; CONFORMANCE.md
is the table of this very run (``python -m tests.conformance`` writes it)."""

from __future__ import annotations

import pytest

from tests.conformance.compare import short
from tests.conformance.run import TABLE, run
from tests.real_kafka import require_real_kafka

pytestmark = [pytest.mark.real_kafka, pytest.mark.timeout(240)]


def test_every_answer_is_kafkas_or_an_intended_difference(tmp_path):
    """~20 s. A Kafka of its own, not the session's ``real_kafka``: both brokers must start
    empty (other tests' topics and groups would show in the answers)."""
    require_real_kafka()
    result = run(tmp_path)
    unexplained = [
        f"{cell.api} v{cell.version} [{f.case}] {f.difference.path}: "
        f"Kafka {short(f.difference.kafka, 200)} / fakebroker {short(f.difference.fake, 200)}"
        for cell in result.failures for f in cell.unexplained]
    missing = [f"{c.api} v{c.version}" for c in result.failures if not c.findings]
    assert not unexplained, "answers that differ from Kafka's:\n" + "\n".join(unexplained)
    assert not missing, "served by both brokers, but no request in the corpus: " + \
        ", ".join(missing)
    assert not result.unused, "intended differences that no longer occur: " + ", ".join(
        f"{i.id} ({i.api})" for i in result.unused)
    assert TABLE.read_text() == result.markdown(), \
        f"{TABLE.name} is out of date: run `python -m tests.conformance`"
