"""The example pipeline (examples/event_totals.py) on PySpark, reading a 3-partition topic of
JSON events from the fake cluster through fakebroker.spark, with Trigger.AvailableNow and a
checkpoint: the totals per user are exactly those of the records produced, each counted once,
across restarts."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="needs pyspark and pyarrow (.ci/install-clients)")

from examples import event_totals  # noqa: E402
from fakebroker.spark import FORMAT  # noqa: E402
from tests.spark_support import (  # noqa: E402
    SPARK_TIMEOUT,
    as_records,
    events,
    expected_totals,
    produce,
    spark_session,
)

pytestmark = [pytest.mark.spark, SPARK_TIMEOUT]

USERS = 7


@pytest.fixture(scope="module")
def spark():
    with spark_session() as session:
        yield session


def run_pipeline(spark, kafka, tmp_path, **options: str) -> list[int]:
    """Runs the pipeline once (AvailableNow) on topic ``events``; returns the input rows of
    each micro-batch it ran."""
    query = event_totals.start(
        spark,
        source_format=FORMAT,
        bootstrap_servers=kafka.bootstrap_servers,
        topic="events",
        output=str(tmp_path / "totals"),
        checkpoint=str(tmp_path / "checkpoint"),
        options=options,
    )
    query.awaitTermination(120)
    assert not query.isActive, "the AvailableNow query did not finish within 120 s"
    if query.exception() is not None:
        raise query.exception()
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def totals_of(spark, tmp_path) -> dict[str, tuple[int, int]]:
    rows = event_totals.totals(spark, str(tmp_path / "totals")).collect()
    return {r["user"]: (r["events"], r["amount"]) for r in rows}


@pytest.mark.fake_kafka(brokers=3, topics={"events": 3})
def test_pipeline_totals_every_record_exactly_once(spark, fake_kafka, tmp_path):
    produced = events(USERS, 3000)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    assert all(fake_kafka.offsets("events", p)[1] > 0 for p in range(3))

    batches = run_pipeline(spark, fake_kafka, tmp_path, maxOffsetsPerTrigger="1000")

    assert totals_of(spark, tmp_path) == expected_totals(produced)
    assert sum(batches) == 3000 and len(batches) >= 3 and max(batches) <= 1000


@pytest.mark.fake_kafka(topics={"events": 3})
def test_restart_from_the_checkpoint_reads_only_new_records(spark, fake_kafka, tmp_path):
    first = events(USERS, 500)
    produce(fake_kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 500

    more = events(USERS, 200, first=500)
    produce(fake_kafka.bootstrap_servers, "events", as_records(more))
    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 200
    assert totals_of(spark, tmp_path) == expected_totals(first + more)

    assert run_pipeline(spark, fake_kafka, tmp_path) == []  # nothing new: no micro-batch
    assert totals_of(spark, tmp_path) == expected_totals(first + more)
