"""A Spark pipeline over Kafka through Spark's own connector: read events, total them per
user, publish the totals to a topic.

Each event is a Kafka record whose value is JSON like ``{"user": "ada", "amount": 12}``. The
streaming job (:func:`start`) reads the events topic with ``.format("kafka")``, keeps a
running total per user (events, amount) in its checkpoint, and after every micro-batch
writes the users whose totals changed to the totals topic with ``.format("kafka")``: key the
user, value ``{"user": "ada", "events": 3, "amount": 40}``. The newest record of a key is
that user's total so far (a compacted topic's reading); :func:`published_totals` reads them.

Spark's Kafka sink is at-least-once: a micro-batch Spark runs again after a failure, or a
Produce whose answer was lost, may publish a total twice. Every record it publishes is still
a true total of a prefix of the events, and the newest one per user is the total of all the
events read: nothing is lost and nothing is counted twice, only repeated.

:func:`batch_totals` computes the same totals over a range of the events topic in one batch
read (``startingOffsets``/``endingOffsets`` as offsets or JSON, or ``startingTimestamp``).

Against ``fakebroker serve --port 9092 --topic events:3 --topic totals:1``::

    python examples/event_totals.py --bootstrap-servers 127.0.0.1:9092 \\
        --events events --totals totals --checkpoint /tmp/totals-checkpoint

Spark's Kafka connector must be on the classpath: this runs on ``fakebroker.spark.session``,
which puts it there (``python -m fakebroker.spark.install`` installs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

EVENT_SCHEMA = "user string, amount long"


def read_events(spark: SparkSession, bootstrap_servers: str, topic: str,
                options: Mapping[str, str] | None = None) -> DataFrame:
    """A streaming DataFrame of the events (user, amount) of ``topic``, from the earliest
    offsets, unless ``options`` (Spark's Kafka source options) say otherwise: a
    ``subscribePattern`` or ``assign`` there replaces ``subscribe``."""
    settings = {"subscribe": topic, "startingOffsets": "earliest", **dict(options or {})}
    if "subscribePattern" in settings or "assign" in settings:
        del settings["subscribe"]
    return parse(
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .options(**settings)
        .load()
    )


def parse(records: DataFrame) -> DataFrame:
    """Kafka rows (the connector's columns) -> events: user, amount."""
    return (records.select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e"))
            .select("e.*"))


def aggregate(events: DataFrame) -> DataFrame:
    """Per user: ``events`` (count) and ``amount`` (sum)."""
    return events.groupBy("user").agg(F.count("*").alias("events"),
                                      F.sum("amount").alias("amount"))


def as_records(totals: DataFrame) -> DataFrame:
    """Totals -> the Kafka sink's columns: key the user, value the JSON of the row."""
    return totals.select(F.col("user").alias("key"),
                         F.to_json(F.struct("user", "events", "amount")).alias("value"))


def start(
    spark: SparkSession,
    *,
    bootstrap_servers: str,
    events_topic: str,
    totals_topic: str,
    checkpoint: str,
    options: Mapping[str, str] | None = None,
    sink_options: Mapping[str, str] | None = None,
    available_now: bool = True,
) -> StreamingQuery:
    """Starts the streaming job. ``available_now``: ``trigger(availableNow=True)``, it reads
    what the topic holds when it starts (from the checkpoint's offsets, or the earliest), in
    as many micro-batches as ``maxOffsetsPerTrigger`` makes, then stops; otherwise it runs
    micro-batches as records come until stopped. ``options``: more source options;
    ``sink_options``: more sink options (``kafka.<producer setting>``)."""
    query = (
        as_records(aggregate(read_events(spark, bootstrap_servers, events_topic, options)))
        .writeStream.format("kafka")
        .outputMode("update")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", totals_topic)
        .options(**dict(sink_options or {}))
        .option("checkpointLocation", checkpoint)
    )
    if available_now:
        query = query.trigger(availableNow=True)
    return query.start()


def batch_totals(spark: SparkSession, *, bootstrap_servers: str, topic: str,
                 **options: str) -> dict[str, tuple[int, int]]:
    """The totals (user -> (events, amount)) of the events in one batch read of ``topic``:
    ``options`` are Spark's batch options, e.g. ``startingOffsets``/``endingOffsets`` (JSON:
    ``{"events":{"0":5,"1":-2}}``, -2 earliest, -1 latest) or ``startingTimestamp`` (ms)."""
    records = (spark.read.format("kafka")
               .option("kafka.bootstrap.servers", bootstrap_servers)
               .option("subscribe", topic)
               .options(**options)
               .load())
    rows = aggregate(parse(records)).collect()
    return {r["user"]: (r["events"], r["amount"]) for r in rows}


def publish_batch_totals(spark: SparkSession, *, bootstrap_servers: str, events_topic: str,
                         totals_topic: str, **options: str) -> None:
    """The batch job: totals of a range of the events topic, published to ``totals_topic``
    with the Kafka sink (``df.write.format("kafka")``)."""
    records = (spark.read.format("kafka")
               .option("kafka.bootstrap.servers", bootstrap_servers)
               .option("subscribe", events_topic)
               .options(**options)
               .load())
    (as_records(aggregate(parse(records)))
     .write.format("kafka")
     .option("kafka.bootstrap.servers", bootstrap_servers)
     .option("topic", totals_topic)
     .save())


def published(spark: SparkSession, bootstrap_servers: str,
              topic: str) -> list[tuple[str, tuple[int, int]]]:
    """Every total in ``topic``, in offset order per partition: (user, (events, amount))."""
    rows = (spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("subscribe", topic)
            .load()
            .orderBy("partition", "offset")
            .select(F.col("value").cast("string").alias("json"))
            .collect())
    out = []
    for row in rows:
        total = json.loads(row["json"])
        out.append((total["user"], (total["events"], total["amount"])))
    return out


def published_totals(spark: SparkSession, bootstrap_servers: str,
                     topic: str) -> dict[str, tuple[int, int]]:
    """user -> (events, amount): the newest total published for each user."""
    return dict(published(spark, bootstrap_servers, topic))


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    """The command: runs the job once (AvailableNow) and prints every user's published total,
    ``user | events | amount``, one per line. ``spark``: a session to use (default: its own
    :func:`fakebroker.spark.session`, stopped at the end)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT,...",
                        help="the Kafka cluster (bootstrap.servers)")
    parser.add_argument("--events", required=True, help="the events topic")
    parser.add_argument("--totals", required=True, help="the topic totals are published to")
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder")
    parser.add_argument("--max-offsets-per-trigger", type=int, metavar="N",
                        help="read at most N events per micro-batch (default: all there are)")
    args = parser.parse_args(argv)
    options = {}
    if args.max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(args.max_offsets_per_trigger)

    def run(spark: SparkSession) -> None:
        start(spark, bootstrap_servers=args.bootstrap_servers, events_topic=args.events,
              totals_topic=args.totals, checkpoint=args.checkpoint,
              options=options).awaitTermination()
        for user, (events, amount) in sorted(
                published_totals(spark, args.bootstrap_servers, args.totals).items()):
            print(f"{user} | {events} | {amount}")

    if spark is not None:
        run(spark)
        return 0
    from fakebroker.spark import session

    with session(app_name="event-totals") as own:
        run(own)
    return 0


if __name__ == "__main__":
    sys.exit(main())
