"""A PySpark streaming pipeline: JSON events from Kafka, totals per user, Parquet.

Each event is a Kafka record whose value is JSON like ``{"user": "ada", "amount": 12}``.
Every micro-batch is parsed, aggregated per user (events, amount) and written as Parquet to
``<output>/batch_id=<n>/``, overwriting that folder: a micro-batch Spark runs again after a
failure rewrites its own output, so with the checkpoint each record counts exactly once.
:func:`totals` adds the micro-batches up.

Run it against a broker, e.g. ``fakebroker serve --port 9092 --topic events:3``::

    python examples/event_totals.py --bootstrap-servers 127.0.0.1:9092 --topic events \\
        --output /tmp/totals --checkpoint /tmp/totals-checkpoint

It reads with fakebroker's Python Kafka source (``--format fakebroker-kafka``, the default);
``--format kafka`` uses Spark's JVM connector instead, where its jar is deployed. Both take
the same options and give the same columns.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

EVENT_SCHEMA = "user string, amount long"


def start(
    spark: SparkSession,
    *,
    source_format: str,
    bootstrap_servers: str,
    topic: str,
    output: str,
    checkpoint: str,
    options: Mapping[str, str] | None = None,
) -> StreamingQuery:
    """Starts the pipeline with Trigger.AvailableNow: it reads what the topic holds now (from
    the checkpoint's offsets, or from the earliest), in as many micro-batches as
    maxOffsetsPerTrigger makes, and stops. ``options``: more source options."""
    events = (
        spark.readStream.format(source_format)
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .options(**dict(options or {}))
        .load()
        .select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("event"))
        .select("event.*")
    )

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        (
            batch.groupBy("user")
            .agg(F.count("*").alias("events"), F.sum("amount").alias("amount"))
            .write.mode("overwrite")
            .parquet(os.path.join(output, f"batch_id={batch_id}"))
        )

    return (
        events.writeStream.foreachBatch(write_batch)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def totals(spark: SparkSession, output: str) -> DataFrame:
    """Per user: ``events`` (count) and ``amount`` (sum) over every micro-batch so far."""
    return (
        spark.read.parquet(output)
        .groupBy("user")
        .agg(F.sum("events").alias("events"), F.sum("amount").alias("amount"))
        .orderBy("user")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--output", required=True, help="Parquet folder")
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder")
    parser.add_argument("--format", default="fakebroker-kafka",
                        help="'fakebroker-kafka' (default) or 'kafka' (Spark's JVM connector)")
    parser.add_argument("--max-offsets-per-trigger", type=int)
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.appName("event-totals").getOrCreate()
    if args.format == "fakebroker-kafka":
        from fakebroker.spark import register

        register(spark)
    options = {}
    if args.max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(args.max_offsets_per_trigger)
    query = start(spark, source_format=args.format, bootstrap_servers=args.bootstrap_servers,
                  topic=args.topic, output=args.output, checkpoint=args.checkpoint,
                  options=options)
    query.awaitTermination()
    totals(spark, args.output).show(truncate=False)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
