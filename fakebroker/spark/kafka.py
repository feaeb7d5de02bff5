"""The Kafka side of the source, on confluent-kafka (librdkafka).

The driver lists partitions and their earliest and latest offsets with the AdminClient
(Metadata and ListOffsets requests: exact offsets, as Spark's KafkaOffsetReaderAdmin gets
them); each task reads one partition's offset range with a consumer that is assigned the
partition at the range's start and never joins a group or commits (librdkafka wants a
group.id all the same; Spark's executors have one too). Clients are created where they are
used, never pickled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from fakebroker.spark.offsets import TP
from fakebroker.spark.options import SourceOptions

log = logging.getLogger("fakebroker.spark")

ADMIN_TIMEOUT_S = 60.0
"""How long the driver retries a retriable Metadata or ListOffsets failure (leader moves, a
broker restarting): the Java Admin's default.api.timeout.ms."""

_RETRIABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,  # NOT_LEADER_OR_FOLLOWER
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.BROKER_NOT_AVAILABLE,
}

_POLL_BATCH = 10_000  # messages per consume() call
_POLL_WAIT_S = 0.5  # how long one consume() call waits for them

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# confluent-kafka's timestamp types -> Kafka's (Java TimestampType.id: what Spark shows).
_TIMESTAMP_TYPES = {1: 0, 2: 1}  # CreateTime, LogAppendTime; else -1 (NO_TIMESTAMP_TYPE)

DATA_LOSS_ADVICE = (
    "Some data may have been lost because they are not available in Kafka any more; either "
    "the data was aged out by Kafka or the topic may have been deleted before all the data in "
    "the topic was processed. If you don't want your streaming query to fail on such cases, "
    "set the source option \"failOnDataLoss\" to \"false\"."
)

T = TypeVar("T")


class KafkaDataLossError(RuntimeError):
    """Records the query was to read are gone (failOnDataLoss is true).

    ``topic``, ``partition`` and ``lost`` (the offsets [from, until) that cannot be read, or
    None when the partition itself is gone) say what was lost; the message names them.
    """

    def __init__(self, topic: str, partition: int, lost: tuple[int, int] | None, why: str):
        self.topic, self.partition, self.lost = topic, partition, lost
        what = f"offsets [{lost[0]}, {lost[1]})" if lost else "all offsets"
        self.detail = f"Cannot fetch {what} of {topic}-{partition}: {why}."
        super().__init__(f"{self.detail} {DATA_LOSS_ADVICE}")


def report_data_loss(
    options: SourceOptions, topic: str, partition: int, lost: tuple[int, int] | None, why: str
) -> None:
    """Raises KafkaDataLossError if failOnDataLoss is true; else logs a warning and returns."""
    error = KafkaDataLossError(topic, partition, lost, why)
    if options.fail_on_data_loss:
        raise error
    log.warning("%s Skipped (failOnDataLoss is false).", error.detail)


def client_config(options: SourceOptions) -> dict[str, object]:
    """librdkafka settings: bootstrap servers, then the ``kafka.*`` options as given."""
    return {
        "bootstrap.servers": options.bootstrap_servers,
        "log.connection.close": False,
        **options.kafka_settings,
    }


def _retrying(what: str, call: Callable[[], T]) -> T:
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while True:
        try:
            return call()
        except KafkaException as e:
            error = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
            retriable = error is not None and (error.retriable() or error.code() in _RETRIABLE)
            if not retriable or time.monotonic() > deadline:
                raise
            log.info("%s failed (%s); retrying", what, error)
            time.sleep(0.2)


class OffsetReader:
    """The driver's Kafka client: partitions of the subscription and their offsets.

    Creates its AdminClient on first use; a pickled copy carries none.
    """

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._admin: AdminClient | None = None

    def __getstate__(self) -> dict:
        return {"options": self.options, "_admin": None}

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient(client_config(self.options))
        return self._admin

    def partitions(self) -> list[TP]:
        """The partitions read now: those assigned, or every partition of each subscribed
        topic (or topic matching the pattern) that the cluster has."""
        subscription = self.options.subscription
        if subscription.assigned:
            return list(subscription.assigned)
        metadata = _retrying(
            "Metadata", lambda: self.admin.list_topics(timeout=ADMIN_TIMEOUT_S / 4)
        )
        return sorted(
            (name, p)
            for name, topic in metadata.topics.items()
            if topic.error is None and subscription.selects(name)
            for p in topic.partitions
        )

    def earliest(self, tps: Iterable[TP]) -> dict[TP, int]:
        """Each partition's log start offset (ListOffsets, earliest)."""
        return self._list_offsets(tps, OffsetSpec.earliest())

    def latest(self, tps: Iterable[TP]) -> dict[TP, int]:
        """Each partition's end offset, the high watermark (ListOffsets, latest)."""
        return self._list_offsets(tps, OffsetSpec.latest())

    def _list_offsets(self, tps: Iterable[TP], spec: OffsetSpec) -> dict[TP, int]:
        wanted = list(tps)
        if not wanted:
            return {}

        def call() -> dict[TP, int]:
            futures = self.admin.list_offsets(
                {TopicPartition(t, p): spec for t, p in wanted},
                request_timeout=ADMIN_TIMEOUT_S / 4,
            )
            return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

        return _retrying("ListOffsets", call)


def read_range(
    options: SourceOptions, topic: str, partition: int, start: int, end: int
) -> Iterator[tuple]:
    """The rows of the records of ``topic``-``partition`` at offsets [start, end), in order,
    each once. Offsets without a record (compacted away) are passed over. Records gone from
    the log are reported as data loss (raised, or skipped when failOnDataLoss is false).
    Raises TimeoutError when no record, end of log or error arrives for
    kafkaConsumer.pollTimeoutMs."""
    consumer = Consumer({
        **client_config(options),
        "group.id": options.group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "error",
    })
    position = start
    try:
        consumer.assign([TopicPartition(topic, partition, position)])
        progressed = time.monotonic()
        last_error: KafkaError | None = None
        while position < end:
            # Asking for no more than the range holds returns as soon as it has arrived.
            wanted = min(_POLL_BATCH, end - position)
            for message in consumer.consume(wanted, timeout=_POLL_WAIT_S):
                error = message.error()
                if error is None:
                    offset = message.offset()
                    if offset < position:
                        continue
                    if offset >= end:
                        position = end
                        break
                    yield _row(message, options.include_headers)
                    position = offset + 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    # Everything below the high watermark has been delivered: offsets below
                    # `end` not seen have no record (compacted, or transaction markers).
                    if message.offset() >= end or _truncated(consumer, options, topic,
                                                             partition, position, end):
                        position = end
                elif error.code() == KafkaError._AUTO_OFFSET_RESET:
                    position = _after_out_of_range(consumer, options, topic, partition,
                                                   position, end)
                    if position < end:
                        consumer.assign([TopicPartition(topic, partition, position)])
                elif error.fatal():
                    raise KafkaException(error)
                else:
                    last_error = error  # librdkafka retries these itself
                    continue
                progressed = time.monotonic()
            if position < end and time.monotonic() - progressed > options.poll_timeout_ms / 1000:
                raise TimeoutError(
                    f"Cannot fetch records in [{position}, {end}) of {topic}-{partition} within "
                    f"{options.poll_timeout_ms} ms (kafkaConsumer.pollTimeoutMs); last Kafka "
                    f"error: {last_error}"
                )
    finally:
        consumer.close()


def _after_out_of_range(
    consumer: Consumer, options: SourceOptions, topic: str, partition: int, position: int, end: int
) -> int:
    """Where to go on after OFFSET_OUT_OF_RANGE at ``position``: reports the lost records."""
    low, high = consumer.get_watermark_offsets(
        TopicPartition(topic, partition), timeout=ADMIN_TIMEOUT_S / 4
    )
    if position < low:
        resume = min(low, end)
        report_data_loss(options, topic, partition, (position, resume),
                         f"the log now starts at offset {low}")
        return resume
    if position > high:
        report_data_loss(options, topic, partition, (position, end),
                         f"the log now ends at offset {high}")
        return end
    return position  # in range again (the leader moved): fetch it again


def _truncated(
    consumer: Consumer, options: SourceOptions, topic: str, partition: int, position: int, end: int
) -> bool:
    """At the end of the log below ``end``: whether the leader confirms its log now ends
    before ``end`` (truncated by an unclean leader election), which is reported as data loss
    of [max(position, log end), end). False if it does not (a new leader catching up)."""
    _, high = consumer.get_watermark_offsets(
        TopicPartition(topic, partition), timeout=ADMIN_TIMEOUT_S / 4
    )
    if high >= end:
        return False
    report_data_loss(options, topic, partition, (max(position, high), end),
                     f"the log now ends at offset {high}")
    return True


def _row(message: Message, include_headers: bool) -> tuple:
    timestamp_type, timestamp = message.timestamp()
    row = (
        message.key(),
        message.value(),
        message.topic(),
        message.partition(),
        message.offset(),
        _EPOCH + timedelta(milliseconds=timestamp),
        _TIMESTAMP_TYPES.get(timestamp_type, -1),
    )
    if include_headers:
        return (*row, message.headers() or None)
    return row
