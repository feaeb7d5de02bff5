"""The example pipeline (examples/event_totals.py) on Spark's own Kafka connector
(``.format("kafka")`` for source and sink) against the fake cluster: streaming with
Trigger.AvailableNow, micro-batches and a checkpoint, and batch reads by offsets, by
timestamp and with headers. Every total published is exactly the total of the events it
covers. Each test takes ``kafka``: ``--kafka=real`` runs them on Apache Kafka too
(tests/dual.py)."""

from __future__ import annotations

import json
import time

import pytest

from tests.spark_support import (
    SPARK_TIMEOUT,
    as_records,
    events,
    expected_totals,
    produce,
    require_spark_with_connector,
)

require_spark_with_connector()

from examples import event_totals  # noqa: E402
from fakebroker.spark import connector_jars  # noqa: E402

pytestmark = [pytest.mark.spark, SPARK_TIMEOUT]

USERS = 7
TOPICS = {"events": 3, "totals": 1}


def run_pipeline(spark, kafka, tmp_path, **options: str) -> list[int]:
    """Runs the streaming job once (AvailableNow) from topic ``events`` to ``totals``;
    returns the input rows of each micro-batch it ran."""
    query = event_totals.start(
        spark, bootstrap_servers=kafka.bootstrap_servers, events_topic="events",
        totals_topic="totals", checkpoint=str(tmp_path / "checkpoint"), options=options)
    query.awaitTermination(120)
    assert not query.isActive, "the AvailableNow query did not finish within 120 s"
    if query.exception() is not None:
        raise query.exception()
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def published(spark, kafka) -> list[tuple[str, tuple[int, int]]]:
    return event_totals.published(spark, kafka.bootstrap_servers, "totals")


def newest(totals: list[tuple[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    return dict(totals)


def test_the_session_is_local_loopback_bound_and_carries_the_connector(spark_kafka):
    conf = spark_kafka.sparkContext.getConf()
    assert conf.get("spark.master") == "local[2]"
    assert conf.get("spark.driver.host") == conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.jars").split(",") == [str(p) for p in connector_jars()]
    # the connector's classes come from those jars
    jvm = spark_kafka.sparkContext._jvm
    source = jvm.java.lang.Class.forName("org.apache.spark.sql.kafka010.KafkaSourceProvider", True,
                                         jvm.Thread.currentThread().getContextClassLoader())
    location = str(source.getProtectionDomain().getCodeSource().getLocation())
    assert location.endswith("/spark-sql-kafka-0-10_2.13-4.2.0.jar")


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_the_job_publishes_every_users_total_in_micro_batches(spark_kafka, kafka, tmp_path):
    produced = events(USERS, 3000)
    produce(kafka.bootstrap_servers, "events", as_records(produced))
    assert all(kafka.offsets("events", p)[1] > 0 for p in range(3))

    batches = run_pipeline(spark_kafka, kafka, tmp_path, maxOffsetsPerTrigger="1000")

    assert sum(batches) == 3000 and len(batches) == 3 and max(batches) <= 1000
    totals = published(spark_kafka, kafka)
    assert newest(totals) == expected_totals(produced)
    # update mode: each micro-batch publishes the users it changed, once, as running totals
    assert len(totals) <= 3 * USERS
    for user in expected_totals(produced):
        counts = [n for u, (n, _) in totals if u == user]
        assert counts == sorted(set(counts)), f"{user}'s totals must only grow: {counts}"


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_restart_from_the_checkpoint_reads_only_new_records(spark_kafka, kafka, tmp_path):
    first = events(USERS, 500)
    produce(kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark_kafka, kafka, tmp_path)) == 500
    assert newest(published(spark_kafka, kafka)) == expected_totals(first)

    more = events(USERS, 200, first=500)
    produce(kafka.bootstrap_servers, "events", as_records(more))
    assert sum(run_pipeline(spark_kafka, kafka, tmp_path)) == 200
    assert newest(published(spark_kafka, kafka)) == expected_totals(first + more)

    end = kafka.offsets("totals", 0)[1]
    assert run_pipeline(spark_kafka, kafka, tmp_path) == []  # nothing new: no micro-batch
    assert kafka.offsets("totals", 0)[1] == end  # and nothing published


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_running_query_publishes_as_records_arrive(spark_kafka, kafka, tmp_path):
    query = event_totals.start(
        spark_kafka, bootstrap_servers=kafka.bootstrap_servers, events_topic="events",
        totals_topic="totals", checkpoint=str(tmp_path / "checkpoint"), available_now=False)
    try:
        first = events(USERS, 100)
        produce(kafka.bootstrap_servers, "events", as_records(first))
        query.processAllAvailable()
        assert newest(published(spark_kafka, kafka)) == expected_totals(first)

        more = events(USERS, 50, first=100)
        produce(kafka.bootstrap_servers, "events", as_records(more))
        query.processAllAvailable()
        assert newest(published(spark_kafka, kafka)) == expected_totals(first + more)
    finally:
        query.stop()
    assert query.exception() is None


# -- batch reads --------------------------------------------------------------------------


def values_in(kafka, topic: str, ranges: dict[int, tuple[int, int]]) -> list[dict]:
    """The events stored in ``[start, end)`` of each partition."""
    return [json.loads(r.value) for p, (start, end) in ranges.items()
            for r in kafka.records(topic, p) if start <= r.offset < end]


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_batch_read_between_json_offsets(spark_kafka, kafka):
    produce(kafka.bootstrap_servers, "events", as_records(events(USERS, 600)))
    ends = {p: kafka.offsets("events", p)[1] for p in range(3)}
    # partition 0 from offset 10 to 30, partition 1 from the earliest to 25, partition 2
    # from 5 to the latest
    starting = json.dumps({"events": {"0": 10, "1": -2, "2": 5}})
    ending = json.dumps({"events": {"0": 30, "1": 25, "2": -1}})

    totals = event_totals.batch_totals(
        spark_kafka, bootstrap_servers=kafka.bootstrap_servers, topic="events",
        startingOffsets=starting, endingOffsets=ending)

    wanted = values_in(kafka, "events", {0: (10, 30), 1: (0, 25), 2: (5, ends[2])})
    assert totals == expected_totals(wanted)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_batch_read_from_a_timestamp(spark_kafka, kafka):
    # an hour ago and a minute ago (Kafka's retention would delete records days old)
    now = int(time.time() * 1000)
    old, new = now - 3_600_000, now - 60_000
    produce(kafka.bootstrap_servers, "events", as_records(events(USERS, 300)),
            timestamp_ms=old)
    recent = events(USERS, 120, first=300)
    produce(kafka.bootstrap_servers, "events", as_records(recent), timestamp_ms=new)

    totals = event_totals.batch_totals(
        spark_kafka, bootstrap_servers=kafka.bootstrap_servers, topic="events",
        startingTimestamp=str(new - 1000))

    assert totals == expected_totals(recent)  # from the offsets ListOffsets found by time


@pytest.mark.fake_kafka(topics={"events": 1})
def test_a_batch_read_with_headers(spark_kafka, kafka):
    produce(kafka.bootstrap_servers, "events", as_records(events(2, 3)),
            headers=[("source", b"web"), ("trace", b"\x00\x01")])
    produce(kafka.bootstrap_servers, "events", as_records(events(2, 1, first=3)))

    rows = (spark_kafka.read.format("kafka")
            .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("subscribe", "events").option("includeHeaders", "true")
            .load().orderBy("offset").collect())

    with_headers = [("source", b"web"), ("trace", b"\x00\x01")]
    assert [(r["offset"], [(h["key"], bytes(h["value"])) for h in r["headers"] or []])
            for r in rows] == [(0, with_headers), (1, with_headers), (2, with_headers), (3, [])]


@pytest.mark.fake_kafka(topics=TOPICS)
def test_the_batch_job_publishes_totals_with_the_kafka_sink(spark_kafka, kafka):
    produced = events(USERS, 400)
    produce(kafka.bootstrap_servers, "events", as_records(produced))

    event_totals.publish_batch_totals(
        spark_kafka, bootstrap_servers=kafka.bootstrap_servers, events_topic="events",
        totals_topic="totals")

    totals = published(spark_kafka, kafka)
    assert sorted(totals) == sorted(expected_totals(produced).items())  # once per user


@pytest.mark.fake_kafka(topics=TOPICS)
def test_the_examples_command_prints_the_readmes_totals(spark_kafka, kafka, tmp_path,
                                                        capsys):
    """examples/event_totals.py's command as docs/how-to/spark.md runs it: 1000 events of 5
    users."""
    produce(kafka.bootstrap_servers, "events",
            as_records({"user": f"user-{i % 5}", "amount": i} for i in range(1000)))

    assert event_totals.main(["--bootstrap-servers", kafka.bootstrap_servers,
                              "--events", "events", "--totals", "totals",
                              "--checkpoint", str(tmp_path / "checkpoint")],
                             spark=spark_kafka) == 0

    assert capsys.readouterr().out.splitlines() == [
        "user-0 | 200 | 99500", "user-1 | 200 | 99700", "user-2 | 200 | 99900",
        "user-3 | 200 | 100100", "user-4 | 200 | 100300"]
