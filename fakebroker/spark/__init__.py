"""Read Kafka from PySpark without Spark's JVM Kafka connector.

A PySpark (4.2+) Python data source with the options and columns of Spark's Kafka source,
reading any Kafka-compatible cluster over the wire protocol (the fake one included) with
confluent-kafka::

    from fakebroker.spark import register

    fmt = register(spark)                      # "fakebroker-kafka"
    events = (spark.readStream.format(fmt)     # instead of .format("kafka")
              .option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", "events")
              .option("startingOffsets", "earliest")
              .load())

Spark reserves the name ``kafka`` for its JVM connector (registering a Python source under
it is refused, and lookups of ``kafka`` fail when the jar is missing), so pipelines take the
format name as a parameter. Needs ``pip install fakebroker[spark]``.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from fakebroker.spark.kafka import KafkaDataLossError
from fakebroker.spark.options import KafkaOptionError
from fakebroker.spark.source import FORMAT, KafkaDataSource

__all__ = ["FORMAT", "KafkaDataLossError", "KafkaDataSource", "KafkaOptionError", "register"]


def register(spark: SparkSession) -> str:
    """Registers the source with ``spark`` (idempotent) and returns its format name."""
    spark.dataSource.register(KafkaDataSource)
    return FORMAT
