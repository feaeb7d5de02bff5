"""The PySpark data source: a streaming reader (micro-batches, Trigger.AvailableNow,
maxOffsetsPerTrigger) and a batch reader over Kafka topics, with the options, offsets and
columns of Spark's own Kafka source."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from fakebroker.spark.kafka import OffsetReader, read_range, report_data_loss
from fakebroker.spark.offsets import TP, Offsets, from_json, rate_limit, to_json
from fakebroker.spark.options import (
    EARLIEST,
    LATEST,
    KafkaOptionError,
    SourceOptions,
    include_headers,
)

FORMAT = "fakebroker-kafka"
"""The format name: ``spark.readStream.format(FORMAT)`` after :func:`register`."""

SCHEMA = StructType([
    StructField("key", BinaryType()),
    StructField("value", BinaryType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    StructField("timestamp", TimestampType()),
    StructField("timestampType", IntegerType()),
])
"""Spark's Kafka source columns; with includeHeaders also HEADERS."""
HEADERS = StructField("headers", ArrayType(StructType([
    StructField("key", StringType()),
    StructField("value", BinaryType()),
])))

class KafkaInputPartition(InputPartition):
    """One task's work: the records of topic-partition at offsets [start, end)."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


class KafkaDataSource(DataSource):
    """Reads Kafka topics over the wire protocol, as Spark's Kafka source does.

    Options (Spark's names): ``kafka.bootstrap.servers``; one of ``subscribe``,
    ``subscribePattern``, ``assign``; ``startingOffsets``; ``endingOffsets`` (batch);
    ``maxOffsetsPerTrigger``; ``failOnDataLoss``; ``includeHeaders``;
    ``kafkaConsumer.pollTimeoutMs``; ``groupIdPrefix``; any ``kafka.<setting>`` for the
    librdkafka clients.
    """

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        if include_headers(self.options):
            return StructType([*SCHEMA.fields, HEADERS])
        return SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        self._check_schema(schema)
        return KafkaBatchReader(SourceOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        self._check_schema(schema)
        return KafkaStreamReader(SourceOptions.parse(self.options, streaming=True))

    def _check_schema(self, schema: StructType) -> None:
        if schema != self.schema():
            raise KafkaOptionError("the Kafka source has a fixed schema; it cannot be set")


class _Reading:
    """What the batch and streaming readers share: the driver's offset resolution and the
    tasks' reading. Only ``options`` and an unopened OffsetReader are pickled to tasks."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.kafka = OffsetReader(options)

    def resolve(self, spec: str | dict, tps: Sequence[TP], option: str) -> dict[TP, int]:
        """Offsets for 'earliest', 'latest' or Spark's JSON (-2 earliest, -1 latest), which
        must name exactly the partitions read."""
        if spec == "earliest":
            return self.kafka.earliest(tps)
        if spec == "latest":
            return self.kafka.latest(tps)
        given = {(t, p): o for t, parts in spec.items() for p, o in parts.items()}
        if set(given) != set(tps):
            raise KafkaOptionError(
                f"If {option} contains specific offsets, you must specify all "
                f"TopicPartitions. Use -1 for latest, -2 for earliest. Specified: "
                f"{sorted(given)} Assigned: {sorted(tps)}"
            )
        earliest = self.kafka.earliest(tp for tp, o in given.items() if o == EARLIEST)
        latest = self.kafka.latest(tp for tp, o in given.items() if o == LATEST)
        return {tp: earliest.get(tp, latest.get(tp, o)) for tp, o in given.items()}

    def plan(self, start: Mapping[TP, int], end: Mapping[TP, int]) -> list[KafkaInputPartition]:
        """One task per partition with records in [start, end); partitions new since
        ``start`` are read from offset 0. An end below its start (the log was truncated or
        the topic re-created) is data loss."""
        tasks = []
        for (topic, partition), until in sorted(end.items()):
            since = start.get((topic, partition), 0)
            if until < since:
                report_data_loss(self.options, topic, partition, None,
                                 f"its latest offset went back from {since} to {until}")
            elif since < until:
                tasks.append(KafkaInputPartition(topic, partition, since, until))
        return tasks

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        """A task: the rows of its partition's range (kafka.read_range), in offset order."""
        if not isinstance(partition, KafkaInputPartition):
            return iter(())  # Spark's placeholder when a batch read has no task
        return read_range(self.options, partition.topic, partition.partition,
                          partition.start, partition.end)


class KafkaBatchReader(_Reading, DataSourceReader):
    """``spark.read``: the records between startingOffsets (default earliest) and
    endingOffsets (default latest), resolved once when the query is planned."""

    def partitions(self) -> list[KafkaInputPartition]:
        tps = self.kafka.partitions()
        start = self.resolve(self.options.starting, tps, "startingOffsets")
        end = self.resolve(self.options.ending, tps, "endingOffsets")
        for (topic, partition), until in sorted(end.items()):
            if until < start[topic, partition]:
                raise KafkaOptionError(
                    f"startingOffsets {start[topic, partition]} is after endingOffsets "
                    f"{until} for {topic}-{partition}"
                )
        return self.plan(start, end)


class KafkaStreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: each micro-batch reads from the previous batch's end offsets to
    the partitions' latest offsets (ListOffsets), at most maxOffsetsPerTrigger records spread
    over the partitions as Spark spreads them. Partitions added to a topic are picked up and
    read from offset 0. With Trigger.AvailableNow it stops at the latest offsets of the moment
    the query started."""

    def __init__(self, options: SourceOptions) -> None:
        super().__init__(options)
        self._target: dict[TP, int] | None = None
        self._latest: dict[TP, int] | None = None

    def initialOffset(self) -> Offsets:
        tps = self.kafka.partitions()
        return to_json(self.resolve(self.options.starting, tps, "startingOffsets"))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self.kafka.latest(self.kafka.partitions())

    def latestOffset(self, start: Offsets, limit: ReadLimit) -> Offsets:
        begin = from_json(start)
        if self._target is not None:
            latest = self._target
        else:
            latest = self.kafka.latest(self.kafka.partitions())
        for topic, partition in sorted(set(begin) - set(latest)):
            report_data_loss(self.options, topic, partition, None,
                             "the partition is gone from the cluster")
        self._latest = latest
        if isinstance(limit, ReadMaxRows):
            return to_json(rate_limit(limit.max_rows, begin, latest))
        return to_json(latest)

    def reportLatestOffset(self) -> Offsets | None:
        return None if self._latest is None else to_json(self._latest)

    def partitions(self, start: Offsets, end: Offsets) -> list[KafkaInputPartition]:
        return self.plan(from_json(start), from_json(end))
