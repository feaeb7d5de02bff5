"""The example pipeline (examples/event_totals.py) on PySpark, reading a 3-partition topic of
JSON events from the fake cluster through fakebroker.spark, with Trigger.AvailableNow and a
checkpoint: the totals per user are exactly those of the records produced, each counted once,
across restarts."""

from __future__ import annotations

import json
import time

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


# -- faults: the pipeline completes with exactly the right totals, or fails naming what is lost


def start_pipeline(spark, kafka, tmp_path, **options: str):
    return event_totals.start(
        spark, source_format=FORMAT, bootstrap_servers=kafka.bootstrap_servers, topic="events",
        output=str(tmp_path / "totals"), checkpoint=str(tmp_path / "checkpoint"),
        options=options,
    )


def leader_of(kafka, partition: int) -> int:
    return kafka.call(lambda: kafka.cluster.state.partition("events", partition).leader)


@pytest.mark.fake_kafka(brokers=3, topics={"events": 3})
def test_not_leader_or_follower_on_fetch_is_retried(spark, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    fault = fake_kafka.faults.add(api="Fetch", topic="events", partition=0,
                                  error="NOT_LEADER_OR_FOLLOWER", count=2)

    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 900

    assert fault.hits == 2
    assert totals_of(spark, tmp_path) == expected_totals(produced)


@pytest.mark.fake_kafka(brokers=3, topics={"events": 3})
def test_leader_moving_while_a_partition_is_read(spark, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    old_leader = leader_of(fake_kafka, 0)
    # The first Fetch of partition 0 is held for a second; the leader moves meanwhile, so
    # the old leader answers it NOT_LEADER_OR_FOLLOWER and the reader must follow the move.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, delay_ms=1000)
    query = start_pipeline(spark, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    new_leader = fake_kafka.move_leader("events", 0)
    query.awaitTermination(120)

    assert query.exception() is None and not query.isActive
    assert new_leader != old_leader
    assert fake_kafka.journal(api="Fetch", broker=old_leader, error="NOT_LEADER_OR_FOLLOWER")
    assert totals_of(spark, tmp_path) == expected_totals(produced)


@pytest.mark.fake_kafka(brokers=3, topics={"events": 3})
def test_broker_restarting_while_a_partition_is_read(spark, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    leader = leader_of(fake_kafka, 0)
    # Partition 0 has a single replica: while its broker is down it is offline.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, delay_ms=1000)
    query = start_pipeline(spark, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    fake_kafka.broker_down(leader)
    time.sleep(1)
    fake_kafka.broker_up(leader)
    query.awaitTermination(120)

    assert query.exception() is None and not query.isActive
    fetches = [e for e in fake_kafka.journal(api="Fetch", broker=leader)
               if e.targets == ["events/0"]]
    cut = next(i for i, e in enumerate(fetches) if e.outcome != "answered")
    assert "connection closed" in fetches[cut].outcome  # the read was cut by the restart
    assert any(e.outcome == "answered" for e in fetches[cut + 1:])  # and resumed there
    assert totals_of(spark, tmp_path) == expected_totals(produced)


@pytest.mark.fake_kafka(topics={"events": 3})
def test_records_deleted_below_the_checkpoint_change_nothing(spark, fake_kafka, tmp_path):
    first = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 300
    for p in range(3):  # every record read so far is deleted
        fake_kafka.delete_records("events", p, before=fake_kafka.offsets("events", p)[1])

    more = events(USERS, 90, first=300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(more))
    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 90
    assert totals_of(spark, tmp_path) == expected_totals(first + more)


def lose_unread_records(kafka, spark, tmp_path, lost: int) -> tuple[list[dict], list[dict], int]:
    """Reads 300 events, produces 90 more, deletes the first ``lost`` new ones of partition 0
    before they are read. Returns (every event produced, the deleted ones, their first offset)."""
    first = events(USERS, 300)
    produce(kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark, kafka, tmp_path)) == 300
    read_up_to = kafka.offsets("events", 0)[1]
    more = events(USERS, 90, first=300)
    produce(kafka.bootstrap_servers, "events", as_records(more))
    deleted = [json.loads(r.value) for r in kafka.records("events", 0)
               if read_up_to <= r.offset < read_up_to + lost]
    assert len(deleted) == lost
    kafka.delete_records("events", 0, before=read_up_to + lost)
    return first + more, deleted, read_up_to


@pytest.mark.fake_kafka(topics={"events": 3})
def test_unread_records_deleted_fail_the_query_naming_the_lost_offsets(
        spark, fake_kafka, tmp_path):
    produced, _, lost_from = lose_unread_records(fake_kafka, spark, tmp_path, lost=5)

    with pytest.raises(Exception) as failure:
        run_pipeline(spark, fake_kafka, tmp_path)

    message = str(failure.value)
    assert f"Cannot fetch offsets [{lost_from}, {lost_from + 5}) of events-0" in message
    assert 'set the source option "failOnDataLoss" to "false"' in message
    assert totals_of(spark, tmp_path) == expected_totals(produced[:300])


@pytest.mark.fake_kafka(topics={"events": 3})
def test_fail_on_data_loss_false_skips_exactly_the_deleted_records(spark, fake_kafka, tmp_path):
    produced, deleted, _ = lose_unread_records(fake_kafka, spark, tmp_path, lost=5)

    assert sum(run_pipeline(spark, fake_kafka, tmp_path, failOnDataLoss="false")) == 85

    assert totals_of(spark, tmp_path) == expected_totals(e for e in produced if e not in deleted)


@pytest.mark.fake_kafka(topics={"events": 3})
def test_log_truncated_while_a_partition_is_read_fails_naming_the_lost_offsets(
        spark, fake_kafka, tmp_path):
    produce(fake_kafka.bootstrap_servers, "events", as_records(events(USERS, 300)))
    assert sum(run_pipeline(spark, fake_kafka, tmp_path)) == 300
    read_up_to = fake_kafka.offsets("events", 0)[1]
    produce(fake_kafka.bootstrap_servers, "events", as_records(events(USERS, 90, first=300)))
    planned_end = fake_kafka.offsets("events", 0)[1]
    # Partition 0's range is planned, then an unclean election truncates its log while its
    # first Fetch is held.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, delay_ms=1000)
    query = start_pipeline(spark, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    log_end = fake_kafka.truncate("events", 0, read_up_to + 5)  # whole batches go
    with pytest.raises(Exception) as failure:
        query.awaitTermination(120)

    lost_from = max(read_up_to, log_end)
    assert f"Cannot fetch offsets [{lost_from}, {planned_end}) of events-0" in str(failure.value)
    assert f"the log now ends at offset {log_end}" in str(failure.value)
