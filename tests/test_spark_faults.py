"""The example pipeline (examples/event_totals.py) under faults, through Spark's own Kafka
connector: the job publishes exactly the right totals, or fails with the connector's own
error naming what is lost. The sink is at-least-once: each test states what it allows. The
read_committed tests take ``kafka`` (no fault in them): ``--kafka=real`` runs them on Apache
Kafka too (tests/dual.py)."""

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

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewPartitions  # noqa: E402

from examples import event_totals  # noqa: E402

pytestmark = [pytest.mark.spark, SPARK_TIMEOUT]

USERS = 7
TOPICS = {"events": 3, "totals": 1}


def start(spark, kafka, tmp_path, *, available_now: bool = True,
          sink_options: dict[str, str] | None = None, **options: str):
    return event_totals.start(
        spark, bootstrap_servers=kafka.bootstrap_servers, events_topic="events",
        totals_topic="totals", checkpoint=str(tmp_path / "checkpoint"), options=options,
        sink_options=sink_options, available_now=available_now)


def finish(query) -> list[int]:
    """Waits for an AvailableNow query; raises its failure; returns each batch's input rows."""
    query.awaitTermination(120)
    assert not query.isActive, "the AvailableNow query did not finish within 120 s"
    if query.exception() is not None:
        raise query.exception()
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def run_pipeline(spark, kafka, tmp_path, **options: str) -> list[int]:
    return finish(start(spark, kafka, tmp_path, **options))


def published(spark, kafka) -> list[tuple[str, tuple[int, int]]]:
    return event_totals.published(spark, kafka.bootstrap_servers, "totals")


def newest(spark, kafka) -> dict[str, tuple[int, int]]:
    return dict(published(spark, kafka))


def leader_of(kafka, topic: str, partition: int) -> int:
    return kafka.call(lambda: kafka.cluster.state.partition(topic, partition).leader)


def admin(kafka) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka.bootstrap_servers})


# -- the source -----------------------------------------------------------------------------


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_not_leader_or_follower_on_fetch_is_retried(spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    fault = fake_kafka.faults.add(api="Fetch", topic="events", partition=0,
                                  error="NOT_LEADER_OR_FOLLOWER", count=2)

    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 900

    assert fault.hits == 2
    assert newest(spark_kafka, fake_kafka) == expected_totals(produced)


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_a_leader_moving_while_a_partition_is_read(spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    old_leader = leader_of(fake_kafka, "events", 0)
    # The first Fetch of partition 0 is held; the leader moves meanwhile, so the old leader
    # answers it NOT_LEADER_OR_FOLLOWER and the reader must follow the move.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, hold=True)
    query = start(spark_kafka, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    new_leader = fake_kafka.move_leader("events", 0)
    held.release()

    assert sum(finish(query)) == 900
    assert new_leader != old_leader
    assert fake_kafka.journal(api="Fetch", broker=old_leader, error="NOT_LEADER_OR_FOLLOWER")
    assert newest(spark_kafka, fake_kafka) == expected_totals(produced)


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_a_broker_restarting_while_a_partition_is_read(spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 900)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    leader = leader_of(fake_kafka, "events", 0)
    # Partition 0 has a single replica: while its broker is down it is offline.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, hold=True)
    query = start(spark_kafka, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    fake_kafka.broker_down(leader)
    time.sleep(1)
    fake_kafka.broker_up(leader)

    assert sum(finish(query)) == 900
    fetches = [e for e in fake_kafka.journal(api="Fetch", broker=leader)
               if e.targets == ["events/0"]]
    cut = next(i for i, e in enumerate(fetches) if e.outcome != "answered")
    assert fetches[cut].outcome.startswith("held")  # the read was cut by the restart
    assert any(e.outcome == "answered" for e in fetches[cut + 1:])  # and resumed there
    assert newest(spark_kafka, fake_kafka) == expected_totals(produced)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_records_deleted_below_the_checkpoint_change_nothing(spark_kafka, fake_kafka, tmp_path):
    first = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 300
    for p in range(3):  # every record read so far is deleted
        fake_kafka.delete_records("events", p, before=fake_kafka.offsets("events", p)[1])

    more = events(USERS, 90, first=300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(more))
    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 90
    assert newest(spark_kafka, fake_kafka) == expected_totals(first + more)


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


@pytest.mark.fake_kafka(topics=TOPICS)
def test_unread_records_deleted_fail_the_query_with_sparks_data_loss_error(
        spark_kafka, fake_kafka, tmp_path):
    produced, _, lost_from = lose_unread_records(fake_kafka, spark_kafka, tmp_path, lost=5)
    planned_end = fake_kafka.offsets("events", 0)[1]

    with pytest.raises(Exception) as failure:
        run_pipeline(spark_kafka, fake_kafka, tmp_path)

    # the task's consumer fetches the range's first offset, gets OFFSET_OUT_OF_RANGE (it is
    # below the log start now), and the connector names the range it was to read
    message = str(failure.value)
    assert "Some data may have been lost because they are not available in Kafka" in message
    assert ("If you don't want your streaming query to fail on such cases, set the source "
            "option failOnDataLoss to false." in message)
    assert (f"Reason: Could not read records in offset [{lost_from}, {planned_end}) for topic "
            "partition events-0" in message)
    assert newest(spark_kafka, fake_kafka) == expected_totals(produced[:300])


@pytest.mark.fake_kafka(topics=TOPICS)
def test_fail_on_data_loss_false_skips_exactly_the_deleted_records(
        spark_kafka, fake_kafka, tmp_path):
    produced, deleted, _ = lose_unread_records(fake_kafka, spark_kafka, tmp_path, lost=5)

    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path, failOnDataLoss="false")) == 85

    assert newest(spark_kafka, fake_kafka) == expected_totals(
        e for e in produced if e not in deleted)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_partitions_added_while_the_query_runs_are_read_from_their_start(
        spark_kafka, fake_kafka, tmp_path):
    query = start(spark_kafka, fake_kafka, tmp_path, available_now=False)
    try:
        first = events(USERS, 150)
        produce(fake_kafka.bootstrap_servers, "events", as_records(first))
        query.processAllAvailable()
        kafka_admin = admin(fake_kafka)
        kafka_admin.create_partitions([NewPartitions("events", 5)])["events"].result(30)
        more = events(USERS, 200, first=150)
        produce(fake_kafka.bootstrap_servers, "events", as_records(more))
        assert all(fake_kafka.offsets("events", p)[1] > 0 for p in (3, 4))
        query.processAllAvailable()
        assert newest(spark_kafka, fake_kafka) == expected_totals(first + more)
    finally:
        query.stop()
    assert query.exception() is None


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_subscribed_topic_deleted_fails_the_query_with_kafkas_error(
        spark_kafka, kafka, tmp_path):
    """``subscribe``: the driver describes the topic (Admin.describeTopics) before every
    micro-batch; once it is deleted Kafka answers UNKNOWN_TOPIC_OR_PARTITION and the query
    fails with it, whatever failOnDataLoss says."""
    query = start(spark_kafka, kafka, tmp_path, available_now=False)
    kafka_admin = admin(kafka)
    try:
        first = events(USERS, 150)
        produce(kafka.bootstrap_servers, "events", as_records(first))
        query.processAllAvailable()
        kafka_admin.delete_topics(["events"])["events"].result(30)
        with pytest.raises(Exception) as failure:
            query.awaitTermination(60)
    finally:
        query.stop()
    assert ("terminated with exception: org.apache.kafka.common.errors."
            "UnknownTopicOrPartitionException: This server does not host this topic-partition."
            in str(failure.value))
    assert newest(spark_kafka, kafka) == expected_totals(first)


def delete_and_recreate(kafka, query) -> tuple[list[dict], dict[int, int], dict[int, int]]:
    """The query reads 150 events; the topic is deleted, created again and given 60 events.
    Returns (the first events, each partition's end before, after)."""
    kafka_admin = admin(kafka)
    first = events(USERS, 150)
    produce(kafka.bootstrap_servers, "events", as_records(first))
    query.processAllAvailable()
    before = {p: kafka.offsets("events", p)[1] for p in range(3)}
    kafka_admin.delete_topics(["events"])["events"].result(30)
    # no partition matches now: the source reports no offsets, so no micro-batch runs
    query.processAllAvailable()
    kafka.create_topic("events", 3)
    produce(kafka.bootstrap_servers, "events", as_records(events(USERS, 60, first=150)))
    after = {p: kafka.offsets("events", p)[1] for p in range(3)}
    assert all(after[p] < before[p] for p in range(3))
    return first, before, after


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_topic_deleted_and_created_again_is_data_loss(spark_kafka, fake_kafka, tmp_path):
    """``subscribePattern``: a deleted topic just stops matching; created again, its
    partitions' offsets went back, which Spark reports as data loss."""
    query = start(spark_kafka, fake_kafka, tmp_path, available_now=False,
                  subscribePattern="events")
    try:
        first, before, after = delete_and_recreate(fake_kafka, query)
        with pytest.raises(Exception) as failure:
            query.processAllAvailable()
    finally:
        query.stop()
    message = str(failure.value)
    assert "Some data may have been lost because they are not available in Kafka" in message
    assert any(f"Reason: Partition events-{p} offset was changed from {before[p]} to {after[p]}."
               in message for p in range(3)), message
    assert newest(spark_kafka, fake_kafka) == expected_totals(first)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_topic_deleted_and_created_again_with_fail_on_data_loss_false(
        spark_kafka, fake_kafka, tmp_path):
    """failOnDataLoss false: the records of the new topic below the old offsets are skipped
    (Spark cannot tell them from records it read), the ones after are read."""
    query = start(spark_kafka, fake_kafka, tmp_path, available_now=False,
                  subscribePattern="events", failOnDataLoss="false")
    try:
        first, _, _ = delete_and_recreate(fake_kafka, query)
        query.processAllAvailable()
        assert newest(spark_kafka, fake_kafka) == expected_totals(first)
        later = events(USERS, 70, first=210)
        produce(fake_kafka.bootstrap_servers, "events", as_records(later))
        query.processAllAvailable()
        assert newest(spark_kafka, fake_kafka) == expected_totals(first + later)
    finally:
        query.stop()
    assert query.exception() is None


@pytest.mark.fake_kafka(topics=TOPICS)
def test_an_unclean_truncation_while_a_partition_is_read(spark_kafka, fake_kafka, tmp_path):
    produce(fake_kafka.bootstrap_servers, "events", as_records(events(USERS, 300)))
    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 300
    read_up_to = fake_kafka.offsets("events", 0)[1]
    produce(fake_kafka.bootstrap_servers, "events", as_records(events(USERS, 90, first=300)))
    planned_end = fake_kafka.offsets("events", 0)[1]
    # Partition 0's range is planned, then an unclean election truncates its log while its
    # first Fetch is held.
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, hold=True)
    query = start(spark_kafka, fake_kafka, tmp_path, **{"kafkaConsumer.pollTimeoutMs": "3000"})
    held.wait(1, timeout=60)
    log_end = fake_kafka.truncate("events", 0, read_up_to + 5)
    held.release()
    with pytest.raises(Exception) as failure:
        finish(query)

    # The consumer reads what is left, then polls at the new log end: nothing comes within
    # kafkaConsumer.pollTimeoutMs, the offset is out of the partition's range: data loss.
    assert log_end < planned_end
    lost_from = max(read_up_to, log_end)
    assert "Some data may have been lost because they are not available in Kafka" in str(
        failure.value)
    assert (f"Reason: Could not read records in offset [{lost_from}, {planned_end}) for topic "
            "partition events-0" in str(failure.value))



@pytest.mark.fake_kafka(topics=TOPICS)
def test_an_unclean_truncation_with_fail_on_data_loss_false_skips_the_lost_records(
        spark_kafka, fake_kafka, tmp_path):
    first = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(first))
    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 300
    read_up_to = fake_kafka.offsets("events", 0)[1]
    more = events(USERS, 90, first=300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(more))
    stored = {r.offset: json.loads(r.value) for r in fake_kafka.records("events", 0)}
    held = fake_kafka.faults.add(api="Fetch", topic="events", partition=0, hold=True)
    query = start(spark_kafka, fake_kafka, tmp_path, failOnDataLoss="false",
                  **{"kafkaConsumer.pollTimeoutMs": "3000"})
    held.wait(1, timeout=60)
    log_end = fake_kafka.truncate("events", 0, read_up_to + 5)
    held.release()

    finish(query)

    lost = [e for offset, e in stored.items() if offset >= log_end]
    assert lost and log_end >= read_up_to
    assert newest(spark_kafka, fake_kafka) == expected_totals(
        e for e in first + more if e not in lost)

# -- the sink ---------------------------------------------------------------------------------
# Spark's Kafka sink is at-least-once. What that allows, checked by assert_at_least_once: every
# record published is a true running total (a user's events are keyed to one partition, so
# "the total of the user's first n events" is well defined), the newest one per user is the
# total of all its events, and a total may be published more than once, never changed.


def prefix_totals(produced: list[dict]) -> dict[str, list[tuple[int, int]]]:
    """user -> the totals of its first 1, 2, ... events (in the order produced)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for e in produced:
        running = out.setdefault(e["user"], [])
        n, amount = running[-1] if running else (0, 0)
        running.append((n + 1, amount + e["amount"]))
    return out


def assert_at_least_once(totals: list[tuple[str, tuple[int, int]]],
                         produced: list[dict]) -> None:
    prefixes = prefix_totals(produced)
    for user, total in totals:
        assert total in prefixes[user], f"{user}: {total} is no running total of its events"
    assert dict(totals) == expected_totals(produced)


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_a_lost_produce_ack_is_retried_and_deduplicated_by_the_idempotent_producer(
        spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    lost = fake_kafka.faults.add(api="Produce", topic="totals", apply_then=True, drop=True)

    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 300

    assert lost.hits == 1
    totals = published(spark_kafka, fake_kafka)
    assert_at_least_once(totals, produced)
    # kafka-clients' producer is idempotent by default: its retry of the appended batch is a
    # duplicate sequence, which the broker acknowledges without appending it again
    assert sorted(totals) == sorted(expected_totals(produced).items())


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_a_lost_produce_ack_without_idempotence_publishes_the_batch_twice(
        spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    lost = fake_kafka.faults.add(api="Produce", topic="totals", apply_then=True, drop=True)

    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path,
                            sink_options={"kafka.enable.idempotence": "false"})) == 300

    assert lost.hits == 1
    totals = published(spark_kafka, fake_kafka)
    assert_at_least_once(totals, produced)
    # the dropped request was appended, and appended again by the retry: its records twice
    assert len(totals) > USERS
    assert sorted(set(totals)) == sorted(expected_totals(produced).items())


@pytest.mark.fake_kafka(brokers=3, topics=TOPICS)
def test_the_sinks_broker_restarting_while_it_publishes(spark_kafka, fake_kafka, tmp_path):
    produced = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    leader = leader_of(fake_kafka, "totals", 0)
    # The first Produce of totals is held; its broker goes down (the request ends unapplied
    # with its connection) and comes back a second later.
    held = fake_kafka.faults.add(api="Produce", topic="totals", hold=True)
    query = start(spark_kafka, fake_kafka, tmp_path)
    held.wait(1, timeout=60)
    fake_kafka.broker_down(leader)
    time.sleep(1)
    fake_kafka.broker_up(leader)

    assert sum(finish(query)) == 300
    produces = fake_kafka.journal(api="Produce", broker=leader)
    assert [e.outcome for e in produces if e.targets == ["totals/0"]][0].startswith("held")
    totals = published(spark_kafka, fake_kafka)
    assert_at_least_once(totals, produced)
    assert sorted(totals) == sorted(expected_totals(produced).items())  # here: each once


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_failed_micro_batch_runs_again_on_restart_and_may_publish_twice(
        spark_kafka, fake_kafka, tmp_path):
    """The at-least-once case proper: a sink task fails (a Produce refused with a
    non-retriable error), the query stops with the micro-batch planned but not committed;
    restarted from the checkpoint, the batch runs again and publishes all its totals, so
    those the other task had published before are there twice."""
    produced = events(USERS, 300)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    refused = fake_kafka.faults.add(api="Produce", topic="totals", error="INVALID_RECORD")

    with pytest.raises(Exception) as failure:
        run_pipeline(spark_kafka, fake_kafka, tmp_path)
    assert "InvalidRecordException" in str(failure.value)
    assert refused.hits == 1
    before = published(spark_kafka, fake_kafka)

    assert sum(run_pipeline(spark_kafka, fake_kafka, tmp_path)) == 300

    totals = published(spark_kafka, fake_kafka)
    assert_at_least_once(totals, produced)
    assert totals[:len(before)] == before
    assert sorted(totals[len(before):]) == sorted(expected_totals(produced).items())
    assert len(before) < USERS  # the failed task's users were not published the first time


# -- transactions: read_committed through the connector -------------------------------------


def transactional_producer(kafka, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                         "transactional.id": transactional_id, "linger.ms": 5})
    producer.init_transactions(30)
    return producer


def in_transaction(producer: Producer, evts: list[dict]) -> None:
    """Begins a transaction and produces ``evts`` in it (flushed, neither committed nor
    aborted)."""
    producer.begin_transaction()
    for key, value in as_records(evts):
        producer.produce("events", key=key, value=value)
    assert producer.flush(30) == 0


def committed_aborted_and_open(kafka) -> tuple[Producer, list[dict], list[dict], list[dict]]:
    """A transactional producer commits 120 events, aborts 40, commits 60 more, then leaves 30
    in an open transaction. Returns (the producer, committed, aborted, open events)."""
    committed, aborted = events(USERS, 120), events(USERS, 40, first=120)
    also_committed, still_open = events(USERS, 60, first=160), events(USERS, 30, first=220)
    producer = transactional_producer(kafka, "spark-txn")
    in_transaction(producer, committed)
    producer.commit_transaction(30)
    in_transaction(producer, aborted)
    producer.abort_transaction(30)
    in_transaction(producer, also_committed)
    producer.commit_transaction(30)
    in_transaction(producer, still_open)
    return producer, committed + also_committed, aborted, still_open


def batch_read(spark, kafka, **options: str) -> list[dict]:
    rows = (spark.read.format("kafka")
            .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .options(subscribe="events", startingOffsets="earliest", endingOffsets="latest")
            .options(**options).load().select("value").collect())
    return [json.loads(bytes(r.value)) for r in rows]


def amounts(evts: list[dict]) -> list[int]:
    return sorted(e["amount"] for e in evts)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_read_committed_batch_read_yields_no_aborted_or_open_record(spark_kafka, kafka):
    producer, committed, aborted, still_open = committed_aborted_and_open(kafka)
    try:
        read = batch_read(spark_kafka, kafka, **{"kafka.isolation.level": "read_committed"})
        assert amounts(read) == amounts(committed)  # each committed record once, nothing else
        # the same read at the default read_uncommitted yields the aborted records (and the
        # open ones, up to the high watermark)
        uncommitted = batch_read(spark_kafka, kafka)
        assert amounts(uncommitted) == amounts(committed + aborted + still_open)
    finally:
        producer.abort_transaction(30)


@pytest.mark.fake_kafka(topics=TOPICS)
def test_a_read_committed_query_stops_at_an_open_transaction_and_reads_it_once_committed(
        spark_kafka, kafka, tmp_path):
    producer, committed, _, still_open = committed_aborted_and_open(kafka)
    read_committed = {"kafka.isolation.level": "read_committed"}
    try:
        assert sum(run_pipeline(spark_kafka, kafka, tmp_path, **read_committed)) == \
            len(committed)
        assert newest(spark_kafka, kafka) == expected_totals(committed)
    finally:
        producer.commit_transaction(30)
    assert sum(run_pipeline(spark_kafka, kafka, tmp_path, **read_committed)) == \
        len(still_open)
    assert newest(spark_kafka, kafka) == expected_totals(committed + still_open)
