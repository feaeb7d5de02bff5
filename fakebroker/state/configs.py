"""Topic and broker configuration names with Kafka's defaults.

``TOPIC_DEFAULTS`` holds the topic-level configs a Kafka 3.9 broker describes, each with its
default value and type (DescribeConfigs v3+ ``config_type``). ``BROKER_DEFAULTS`` holds the
broker configs the fake broker reports or honours.
"""

from __future__ import annotations

from dataclasses import dataclass

# DescribeConfigs ConfigType values.
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

# DescribeConfigs ConfigSource values.
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    default: str | None
    type: int
    sensitive: bool = False


TOPIC_DEFAULTS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef("cleanup.policy", "delete", LIST),
        ConfigDef("compression.type", "producer", STRING),
        ConfigDef("compression.gzip.level", "-1", INT),
        ConfigDef("compression.lz4.level", "9", INT),
        ConfigDef("compression.zstd.level", "3", INT),
        ConfigDef("delete.retention.ms", "86400000", LONG),
        ConfigDef("file.delete.delay.ms", "60000", LONG),
        ConfigDef("flush.messages", "9223372036854775807", LONG),
        ConfigDef("flush.ms", "9223372036854775807", LONG),
        ConfigDef("follower.replication.throttled.replicas", "", LIST),
        ConfigDef("index.interval.bytes", "4096", INT),
        ConfigDef("leader.replication.throttled.replicas", "", LIST),
        ConfigDef("local.retention.bytes", "-2", LONG),
        ConfigDef("local.retention.ms", "-2", LONG),
        ConfigDef("max.compaction.lag.ms", "9223372036854775807", LONG),
        ConfigDef("max.message.bytes", "1048588", INT),
        ConfigDef("message.downconversion.enable", "true", BOOLEAN),
        ConfigDef("message.format.version", "3.0-IV1", STRING),
        ConfigDef("message.timestamp.after.max.ms", "9223372036854775807", LONG),
        ConfigDef("message.timestamp.before.max.ms", "9223372036854775807", LONG),
        ConfigDef("message.timestamp.difference.max.ms", "9223372036854775807", LONG),
        ConfigDef("message.timestamp.type", "CreateTime", STRING),
        ConfigDef("min.cleanable.dirty.ratio", "0.5", DOUBLE),
        ConfigDef("min.compaction.lag.ms", "0", LONG),
        ConfigDef("min.insync.replicas", "1", INT),
        ConfigDef("preallocate", "false", BOOLEAN),
        ConfigDef("remote.storage.enable", "false", BOOLEAN),
        ConfigDef("retention.bytes", "-1", LONG),
        ConfigDef("retention.ms", "604800000", LONG),
        ConfigDef("segment.bytes", "1073741824", INT),
        ConfigDef("segment.index.bytes", "10485760", INT),
        ConfigDef("segment.jitter.ms", "0", LONG),
        ConfigDef("segment.ms", "604800000", LONG),
        ConfigDef("unclean.leader.election.enable", "false", BOOLEAN),
    )
}

# Broker configs DescribeConfigs reports. A default of None: the value is the running
# cluster's setting (``ClusterSettings.kafka_configs``), so the broker reports the
# configuration it really runs with.
BROKER_DEFAULTS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef("auto.create.topics.enable", None, BOOLEAN),
        ConfigDef("default.replication.factor", "1", INT),
        ConfigDef("num.partitions", None, INT),
        ConfigDef("message.max.bytes", "1048588", INT),
        ConfigDef("socket.request.max.bytes", None, INT),
        ConfigDef("log.message.timestamp.type", "CreateTime", STRING),
        ConfigDef("min.insync.replicas", "1", INT),
        ConfigDef("offsets.topic.replication.factor", "1", SHORT),
        ConfigDef("transaction.state.log.replication.factor", "1", SHORT),
        ConfigDef("group.initial.rebalance.delay.ms", None, INT),
        ConfigDef("group.min.session.timeout.ms", None, INT),
    )
}


class InvalidConfigError(ValueError):
    """A config name the topic does not have, or a value of the wrong type."""


def validate_topic_config(name: str, value: str | None) -> None:
    """Raise ``InvalidConfigError`` unless ``name=value`` is a valid topic config."""
    definition = TOPIC_DEFAULTS.get(name)
    if definition is None:
        raise InvalidConfigError(f"Unknown topic config name: {name}")
    if value is None:
        return
    try:
        if definition.type in (INT, LONG, SHORT):
            int(value)
        elif definition.type == DOUBLE:
            float(value)
        elif definition.type == BOOLEAN and value.lower() not in ("true", "false"):
            raise ValueError(value)
    except ValueError:
        raise InvalidConfigError(f"Invalid value {value} for configuration {name}") from None
    if name == "message.timestamp.type" and value not in ("CreateTime", "LogAppendTime"):
        raise InvalidConfigError(f"Invalid value {value} for configuration {name}")
