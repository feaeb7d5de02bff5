"""A Kafka Streams 4.4.0 word count (tests/java/WordCount.java: exactly_once_v2, a count
store with its compacted changelog) restores its store from a changelog the broker's cleaner
has compacted, and counts on from there: the changelog made with short segments and a low
dirty ratio (Streams' ``topic.`` configs), the cleaner looking every 100 ms (the marker's
overrides, tests/test_retention.py's). Run on both brokers with ``--kafka=both``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for
from tests.clients.streams import start_word_count
from tests.test_clients_transactions_jvm import (
    committed_counts,
    lines_of_words,
    produce_lines,
    true_counts,
    wait_for_counts,
)
from tests.test_retention import QUICK_LOG_TASKS

# Two JVM starts of the application, each 10-30 s on the shared test machine.
pytestmark = [pytest.mark.java, pytest.mark.timeout(300)]

CHANGELOG = "wc-counts-changelog"
# The changelog's segments roll 100 ms apart by record timestamps; cleaned when 1% is dirty.
QUICK_CHANGELOG = ("topic.segment.ms=100", "topic.min.cleanable.dirty.ratio=0.01")


def changelog_records(kafka: Any) -> int:
    return sum(len(kafka.records(CHANGELOG, p)) for p in range(2))


@pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2}, overrides=QUICK_LOG_TASKS)
def test_a_restore_from_a_compacted_changelog_counts_on_exactly(kafka: Any,
                                                                tmp_path: Path) -> None:
    """Two batches of lines (produced seconds apart: the changelog's records, stamped as the
    lines, roll segments) counted; once the cleaner has removed superseded counts from the
    changelog, a new instance with an empty state directory restores the store from it and
    counts a third batch: read_committed, each word's counts are exactly 1, 2, ..., n."""
    batches = [lines_of_words(0, 30), lines_of_words(30, 30), lines_of_words(60, 20)]
    updates = sum(true_counts(batches[0] + batches[1]).values())  # one changelog record each
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "a", props=QUICK_CHANGELOG) as app:
        for done in (1, 2):
            produce_lines(kafka, "lines", batches[done - 1], tmp_path)
            wait_for_counts(kafka, app, "counts", true_counts(
                [line for batch in batches[:done] for line in batch]), timeout=60)
        assert app.stop()[-1] == {"done": 60}
    wait_for(lambda: changelog_records(kafka) < updates, "the changelog to be compacted",
             timeout=60)

    produce_lines(kafka, "lines", batches[2], tmp_path)
    want = true_counts([line for batch in batches for line in batch])
    with start_word_count(kafka.bootstrap_servers, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "b", props=QUICK_CHANGELOG) as app:
        wait_for_counts(kafka, app, "counts", want, timeout=90)
        app.stop()
    assert committed_counts(kafka, "counts") == {w: list(range(1, n + 1))
                                                 for w, n in want.items()}
