"""fakebroker.spark read by PySpark from the fake cluster: the columns of Spark's Kafka source,
exact offset ranges per micro-batch, maxOffsetsPerTrigger shared as Spark shares it, explicit
offsets, and options refused by name."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark", reason="needs pyspark and pyarrow (.ci/install-clients)")

from confluent_kafka import Producer  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from fakebroker.spark import FORMAT  # noqa: E402
from tests.spark_support import SPARK_TIMEOUT, spark_session  # noqa: E402

pytestmark = [pytest.mark.spark, SPARK_TIMEOUT]

COLUMNS = ["key", "value", "topic", "partition", "offset", "millis", "timestampType", "headers"]


@pytest.fixture(scope="module")
def spark():
    with spark_session() as session:
        yield session


def produce_to(kafka, topic: str, per_partition: dict[int, int], headers: bool = False) -> None:
    """``n`` records to each partition; record i of partition p: key k<p>-<i> (None when i is
    a multiple of 5), value v<p>-<i>, header ("i", b"<i>") when asked."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for p, n in per_partition.items():
        for i in range(n):
            producer.produce(topic, partition=p, value=f"v{p}-{i}".encode(),
                             key=None if i % 5 == 0 else f"k{p}-{i}".encode(),
                             headers=[("i", str(i).encode())] if headers else None)
    assert producer.flush(30) == 0


def kafka_reader(spark, kafka, **options: str):
    reader = spark.read.format(FORMAT).option("kafka.bootstrap.servers", kafka.bootstrap_servers)
    return reader.options(**options)


def rows(df) -> list[tuple]:
    return [tuple(r) for r in df.select(
        "key", "value", "topic", "partition", "offset",
        F.unix_millis("timestamp").alias("millis"), "timestampType",
        *(["headers"] if "headers" in df.columns else []),
    ).orderBy("partition", "offset").collect()]


@pytest.mark.fake_kafka(topics={
    "orders": 2,
    "audit": {"partitions": 1, "configs": {"message.timestamp.type": "LogAppendTime"}},
})
def test_batch_read_has_the_columns_of_sparks_kafka_source(spark, fake_kafka):
    produce_to(fake_kafka, "orders", {0: 12, 1: 7}, headers=True)
    produce_to(fake_kafka, "audit", {0: 3})

    orders = kafka_reader(spark, fake_kafka, subscribe="orders", includeHeaders="true").load()
    audit = kafka_reader(spark, fake_kafka, subscribe="audit").load()

    assert orders.columns == COLUMNS[:5] + ["timestamp", "timestampType", "headers"]
    assert audit.columns == COLUMNS[:5] + ["timestamp", "timestampType"]
    assert rows(orders) == [
        (r.key, r.value, "orders", p, r.offset, r.timestamp, 0, [tuple(h) for h in r.headers])
        for p in range(2) for r in fake_kafka.records("orders", p)
    ]
    assert rows(audit) == [  # LogAppendTime: the broker's append time, timestampType 1
        (r.key, r.value, "audit", 0, r.offset, r.timestamp, 1)
        for r in fake_kafka.records("audit", 0)
    ]


@pytest.mark.fake_kafka(topics={"orders": 3})
def test_explicit_offsets_and_assign_read_exactly_that_range(spark, fake_kafka):
    produce_to(fake_kafka, "orders", {0: 30, 1: 10, 2: 5})
    fake_kafka.delete_records("orders", 2, before=2)

    df = kafka_reader(
        spark, fake_kafka, assign=json.dumps({"orders": [0, 2]}),
        startingOffsets=json.dumps({"orders": {"0": 10, "2": -2}}),
        endingOffsets=json.dumps({"orders": {"0": 20, "2": -1}}),
    ).load()

    assert [(r[3], r[4]) for r in rows(df)] == [(0, o) for o in range(10, 20)] + [
        (2, o) for o in range(2, 5)]


@pytest.mark.fake_kafka(topics={"orders": 3})
def test_micro_batches_share_max_offsets_per_trigger_and_end_at_the_latest_offsets(
        spark, fake_kafka, tmp_path):
    produce_to(fake_kafka, "orders", {0: 300, 1: 100})
    query = (
        spark.readStream.format(FORMAT)
        .option("kafka.bootstrap.servers", fake_kafka.bootstrap_servers)
        .option("subscribe", "orders")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "200")
        .load()
        .writeStream.format("memory").queryName("orders_read")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None and not query.isActive

    # Each batch: 200 records split 3:1 as the partitions' backlogs are.
    batches = [p for p in query.recentProgress if p["numInputRows"]]
    assert [json.loads(b["sources"][0]["endOffset"]) for b in batches] == [
        {"orders": {"0": 150, "1": 50, "2": 0}},
        {"orders": {"0": 300, "1": 100, "2": 0}},  # ListOffsets latest: the high watermarks
    ]
    read = spark.sql("SELECT partition, offset FROM orders_read").collect()
    assert sorted(tuple(r) for r in read) == [
        (p, r.offset) for p in range(3) for r in fake_kafka.records("orders", p)]


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_unsupported_and_missing_options_are_named(spark, fake_kafka):
    with pytest.raises(Exception, match="'startingTimestamp'.*not supported"):
        kafka_reader(spark, fake_kafka, subscribe="orders", startingTimestamp="0").load().count()
    with pytest.raises(Exception, match="'kafka.bootstrap.servers' must be specified"):
        spark.read.format(FORMAT).option("subscribe", "orders").load().count()
