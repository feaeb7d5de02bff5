"""The options of Spark's Kafka source, parsed and checked as Spark checks them.

Everything here is plain data (picklable): Spark ships the reader, options included, to its
Python workers.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

EARLIEST = -2
"""In a JSON offsets option, as in Spark: the partition's earliest offset."""
LATEST = -1
"""In a JSON offsets option, as in Spark: the partition's latest offset (end of log)."""

# Spark's Kafka source options this source does not implement: refused by name rather than
# silently ignored, so a pipeline never runs with a setting it asked for and did not get.
UNSUPPORTED_OPTIONS = (
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "minPartitions",
    "maxRecordsPerPartition",
)

# Consumer settings the source owns, refused as Spark refuses them.
OWNED_KAFKA_SETTINGS = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead",
    "enable.auto.commit": "the source commits no offsets to Kafka; the checkpoint has them",
    "key.deserializer": "keys are always read as bytes; cast or parse the 'key' column",
    "value.deserializer": "values are always read as bytes; cast or parse the 'value' column",
}

# Spark's default for kafkaConsumer.pollTimeoutMs (spark.network.timeout).
DEFAULT_POLL_TIMEOUT_MS = 120_000

OffsetSpec = str | dict[str, dict[int, int]]
"""'earliest', 'latest', or {topic: {partition: offset, EARLIEST or LATEST}}."""


class KafkaOptionError(ValueError):
    """An option is missing, malformed, or not supported (the message names it)."""


@dataclass(frozen=True)
class Subscription:
    """Which partitions to read: exactly one of Spark's subscribe, subscribePattern, assign."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[tuple[str, int], ...] = ()

    def selects(self, topic: str) -> bool:
        """Whether a topic of the cluster is read (assign: see ``assigned``)."""
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        return topic in self.topics


@dataclass(frozen=True)
class SourceOptions:
    """A Kafka source's options, checked. Build with :meth:`parse`."""

    bootstrap_servers: str
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    max_offsets_per_trigger: int | None
    fail_on_data_loss: bool
    include_headers: bool
    poll_timeout_ms: int
    group_id: str
    kafka_settings: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
        """Checks Spark's Kafka source options (keys case-insensitive) for a streaming or a
        batch query; raises :class:`KafkaOptionError` naming the option at fault."""
        opts = {k.lower(): v for k, v in options.items()}
        for name in UNSUPPORTED_OPTIONS:
            if name.lower() in opts:
                raise KafkaOptionError(
                    f"option '{name}' of Spark's Kafka source is not supported by "
                    "fakebroker.spark; use startingOffsets / endingOffsets with offsets"
                )
        settings = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")}
        for name, instead in OWNED_KAFKA_SETTINGS.items():
            if name in settings:
                raise KafkaOptionError(f"Kafka option 'kafka.{name}' is not supported: {instead}")
        bootstrap = settings.pop("bootstrap.servers", "").strip()
        if not bootstrap:
            raise KafkaOptionError(
                "option 'kafka.bootstrap.servers' must be specified for configuring the "
                "Kafka consumer"
            )
        group_id = settings.pop("group.id", "") or (
            f"{opts.get('groupidprefix', 'spark-kafka-source')}-{uuid.uuid4()}-executor"
        )

        if "endingoffsets" in opts and streaming:
            raise KafkaOptionError("option 'endingOffsets' is for batch queries only")
        starting = _offset_spec(opts, "startingOffsets", "latest" if streaming else "earliest")
        ending = _offset_spec(opts, "endingOffsets", "latest")
        if not streaming:
            _check_batch_bounds(starting, ending)

        limit = opts.get("maxoffsetspertrigger")
        max_offsets = None
        if limit is not None:
            max_offsets = _positive_int("maxOffsetsPerTrigger", limit)
        return cls(
            bootstrap_servers=bootstrap,
            subscription=_subscription(opts),
            starting=starting,
            ending=ending,
            max_offsets_per_trigger=max_offsets,
            fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
            include_headers=include_headers(opts),
            poll_timeout_ms=_positive_int(
                "kafkaConsumer.pollTimeoutMs",
                opts.get("kafkaconsumer.polltimeoutms", str(DEFAULT_POLL_TIMEOUT_MS)),
            ),
            group_id=group_id,
            kafka_settings=settings,
        )


def include_headers(options: Mapping[str, str]) -> bool:
    """The includeHeaders option: whether rows have a ``headers`` column."""
    return _bool({k.lower(): v for k, v in options.items()}, "includeHeaders", False)


def _subscription(opts: dict[str, str]) -> Subscription:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if name in opts]
    if len(given) != 1:
        what = "Only one" if given else "One"
        raise KafkaOptionError(
            f"{what} of the options 'subscribe', 'subscribePattern', 'assign' must be "
            f"specified for the Kafka source (given: {given or 'none'})"
        )
    (name,) = given
    value = opts[name]
    if name == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise KafkaOptionError(f"no topics to subscribe to in 'subscribe': {value!r}")
        return Subscription(topics=topics)
    if name == "subscribepattern":
        if not value.strip():
            raise KafkaOptionError("pattern to subscribe is empty")
        try:
            re.compile(value)
        except re.error as e:
            raise KafkaOptionError(f"'subscribePattern' is not a regular expression: {e}") from e
        return Subscription(pattern=value)
    try:
        parsed = json.loads(value)
        assigned = tuple(sorted(
            (topic, int(p)) for topic, parts in parsed.items() for p in parts
        ))
    except (ValueError, TypeError, AttributeError) as e:
        raise KafkaOptionError(
            f"'assign' must be JSON like {{\"topicA\":[0,1],\"topicB\":[2,4]}}, got {value!r}"
        ) from e
    if not assigned:
        raise KafkaOptionError(f"no partitions to assign in 'assign': {value!r}")
    return Subscription(assigned=assigned)


def _offset_spec(opts: dict[str, str], name: str, default: str) -> OffsetSpec:
    value = opts.get(name.lower(), default).strip()
    if value.lower() in ("earliest", "latest"):
        return value.lower()
    try:
        parsed = json.loads(value)
        return {t: {int(p): int(o) for p, o in parts.items()} for t, parts in parsed.items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise KafkaOptionError(
            f"option '{name}' must be 'earliest', 'latest' or JSON like "
            f"{{\"topicA\":{{\"0\":23,\"1\":-1}}}} (-2: earliest, -1: latest), got {value!r}"
        ) from e


def _check_batch_bounds(starting: OffsetSpec, ending: OffsetSpec) -> None:
    if starting == "latest" or (isinstance(starting, dict) and any(
            o == LATEST for parts in starting.values() for o in parts.values())):
        raise KafkaOptionError("startingOffsets can't be latest for batch queries on Kafka")
    if ending == "earliest" or (isinstance(ending, dict) and any(
            o == EARLIEST for parts in ending.values() for o in parts.values())):
        raise KafkaOptionError("endingOffsets can't be earliest for batch queries on Kafka")


def _bool(opts: dict[str, str], name: str, default: bool) -> bool:
    value = opts.get(name.lower())
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise KafkaOptionError(f"option '{name}' must be 'true' or 'false', got {value!r}")
    return value.strip().lower() == "true"


def _positive_int(name: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise KafkaOptionError(f"option '{name}' must be a positive integer, got {value!r}")
    return number
