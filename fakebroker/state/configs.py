"""Topic and broker configuration names with Kafka's defaults.

``TOPIC_DEFAULTS`` holds the topic-level configs a Kafka 4.4 broker describes, each with its
default value, type (DescribeConfigs v3+ ``config_type``) and the broker config Kafka lists as
its synonym. ``BROKER_DEFAULTS`` holds the broker configs the fake broker reports or honours
(declared in ``fakebroker.options.BROKER_CONFIGS``), and ``topic_config`` / ``synonym_chain``
give a value, its source and synonyms as Kafka's ConfigHelper lists them. The cluster-wide
dynamic broker configs a new Kafka 4.4 cluster has are declared beside the cluster state,
which starts with them: ``fakebroker.state.cluster.NEW_CLUSTER_DEFAULTS``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal

from fakebroker.options import BROKER_CONFIGS, java_number, java_trim
from fakebroker.state import message_format

# DescribeConfigs ConfigType values.
UNKNOWN = 0
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)
TYPE_NAMES = {INT: "INT", SHORT: "SHORT", LONG: "LONG", DOUBLE: "DOUBLE"}

# DescribeConfigs ConfigSource values.
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_BROKER_LOGGER_CONFIG = 4, 5, 6


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """A config: its name, Kafka's default (None: the running cluster's setting, for broker
    configs), its type, whether it is sensitive, whether a running broker can change it
    (broker configs: read-only when not), and for a topic config the broker config Kafka
    falls back to and lists as its synonym (None when it lists none: no such broker config,
    or one without a default value)."""

    name: str
    default: str | None
    type: int
    sensitive: bool = False
    read_only: bool = False
    synonym: str | None = None


def _topic(name: str, default: str, kind: int, synonym: str | None = None) -> ConfigDef:
    return ConfigDef(name, default, kind, synonym=synonym)


TOPIC_DEFAULTS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _topic("cleanup.policy", "delete", LIST, "log.cleanup.policy"),
        _topic("compression.gzip.level", "-1", INT, "compression.gzip.level"),
        _topic("compression.lz4.level", "9", INT, "compression.lz4.level"),
        _topic("compression.type", "producer", STRING, "compression.type"),
        _topic("compression.zstd.level", "3", INT, "compression.zstd.level"),
        _topic("delete.retention.ms", "86400000", LONG, "log.cleaner.delete.retention.ms"),
        _topic("errors.deadletterqueue.group.enable", "false", BOOLEAN),
        _topic("file.delete.delay.ms", "60000", LONG, "log.segment.delete.delay.ms"),
        _topic("flush.messages", "9223372036854775807", LONG, "log.flush.interval.messages"),
        _topic("flush.ms", "9223372036854775807", LONG),
        _topic("follower.replication.throttled.replicas", "", LIST),
        _topic("index.interval.bytes", "4096", INT, "log.index.interval.bytes"),
        _topic("leader.replication.throttled.replicas", "", LIST),
        _topic("local.retention.bytes", "-2", LONG, "log.local.retention.bytes"),
        _topic("local.retention.ms", "-2", LONG, "log.local.retention.ms"),
        _topic("max.compaction.lag.ms", "9223372036854775807", LONG,
               "log.cleaner.max.compaction.lag.ms"),
        _topic("max.decompressed.message.bytes", "2147483639", INT,
               "max.decompressed.message.bytes"),
        _topic("max.message.bytes", "1048588", INT, "message.max.bytes"),
        _topic("message.timestamp.after.max.ms", "3600000", LONG,
               "log.message.timestamp.after.max.ms"),
        _topic("message.timestamp.before.max.ms", "9223372036854775807", LONG,
               "log.message.timestamp.before.max.ms"),
        _topic("message.timestamp.type", "CreateTime", STRING, "log.message.timestamp.type"),
        _topic("min.cleanable.dirty.ratio", "0.5", DOUBLE, "log.cleaner.min.cleanable.ratio"),
        _topic("min.compaction.lag.ms", "0", LONG, "log.cleaner.min.compaction.lag.ms"),
        _topic("min.insync.replicas", "1", INT, "min.insync.replicas"),
        _topic("preallocate", "false", BOOLEAN, "log.preallocate"),
        _topic("remote.copy.lag.bytes", "-1", LONG, "log.remote.copy.lag.bytes"),
        _topic("remote.copy.lag.ms", "0", LONG, "log.remote.copy.lag.ms"),
        _topic("remote.log.copy.disable", "false", BOOLEAN),
        _topic("remote.log.delete.on.disable", "false", BOOLEAN),
        _topic("remote.storage.enable", "false", BOOLEAN),
        _topic("retention.bytes", "-1", LONG, "log.retention.bytes"),
        _topic("retention.ms", "604800000", LONG),
        _topic("segment.bytes", "1073741824", INT, "log.segment.bytes"),
        _topic("segment.index.bytes", "10485760", INT, "log.index.size.max.bytes"),
        _topic("segment.jitter.ms", "0", LONG),
        _topic("segment.ms", "604800000", LONG),
        _topic("unclean.leader.election.enable", "false", BOOLEAN,
               "unclean.leader.election.enable"),
    )
}


@functools.cache
def topic_config_defs(release: str | None = None) -> dict[str, ConfigDef]:
    """The topic configs a broker of release line ``release`` lists, in name order: Kafka
    4.4's (``TOPIC_DEFAULTS``; also for no release), and those of legacy formats the release
    has (``fakebroker.state.message_format``): ``message.format.version`` before 4.0, with
    that release's default, ``message.downconversion.enable`` from 2.0 to 3.9."""
    if not message_format.has_config(release):
        return TOPIC_DEFAULTS
    assert release is not None
    extra = [ConfigDef(message_format.CONFIG, message_format.default(release), STRING,
                       synonym=message_format.BROKER_CONFIG)]
    if message_format.has_down_conversion_config(release):
        extra.append(ConfigDef(message_format.DOWN_CONVERSION_CONFIG, "true", BOOLEAN,
                               synonym=message_format.DOWN_CONVERSION_BROKER_CONFIG))
    return dict(sorted({**TOPIC_DEFAULTS, **{d.name: d for d in extra}}.items()))


# Broker configs DescribeConfigs reports, with Kafka's defaults: every one the fake knows
# (``fakebroker.options.BROKER_CONFIGS``, declared there once), read-only unless Kafka can
# change it on a running broker. The running cluster's settings (``ClusterSettings.
# kafka_configs``: the named settings and the overrides) are its static configs. ``FIXED``
# holds the values this fake runs with where they are not Kafka's default.
_TYPES = {"BOOLEAN": BOOLEAN, "STRING": STRING, "INT": INT, "SHORT": SHORT, "LONG": LONG,
          "DOUBLE": DOUBLE, "LIST": LIST, "CLASS": CLASS, "PASSWORD": PASSWORD}
BROKER_DEFAULTS: dict[str, ConfigDef] = {
    **{c.name: ConfigDef(c.name, c.default, _TYPES[c.type], sensitive=c.type == "PASSWORD",
                         read_only=not c.dynamic) for c in BROKER_CONFIGS.values()
       if not c.internal},
    **{d.name: d for d in (
        ConfigDef("offsets.topic.replication.factor", "3", SHORT, read_only=True),
        ConfigDef("transaction.state.log.replication.factor", "3", SHORT, read_only=True),
    )},
}
FIXED: dict[str, str] = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
}

# Broker configs that are one setting under several names, in Kafka's order of precedence
# (DynamicBrokerConfig.brokerConfigSynonyms): each name's synonyms are its group.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)
# A topic config whose broker synonym is one of a group (ServerTopicConfigSynonyms), and the
# factor of each synonym's unit to the topic config's milliseconds.
TOPIC_SYNONYM_GROUPS: dict[str, str] = {
    "segment.ms": "log.roll.ms", "segment.jitter.ms": "log.roll.jitter.ms",
    "flush.ms": "log.flush.interval.ms", "retention.ms": "log.retention.ms",
}
UNIT_MS = {"log.retention.minutes": 60_000, "log.retention.hours": 3_600_000,
           "log.roll.hours": 3_600_000, "log.roll.jitter.hours": 3_600_000}


def broker_synonyms(name: str) -> tuple[str, ...]:
    """The names of broker config ``name``, Kafka's order (``name`` alone for most)."""
    return next((group for group in SYNONYM_GROUPS if name == group[0]), (name,))


@functools.cache
def broker_names(topic_config_name: str) -> tuple[str, ...]:
    """The broker configs a topic config takes its value from when not set on the topic
    (none: Kafka's default alone)."""
    d = TOPIC_DEFAULTS[topic_config_name]
    synonym = TOPIC_SYNONYM_GROUPS.get(topic_config_name, d.synonym)
    return broker_synonyms(synonym) if synonym is not None else ()


def synonym_chain(name: str, layers: list[tuple[dict[str, str], int]]
                  ) -> list[tuple[str, str | None, int]]:
    """Kafka's synonyms of broker config ``name`` (ConfigHelper.configSynonyms): for each
    layer (its values and source, highest first) each synonym it has, then each default
    that is not null; the list starts at the first entry named ``name`` (none without one)."""
    chain: list[tuple[str, str | None, int]] = []
    names = broker_synonyms(name)
    for values, source in layers:
        chain += [(n, values[n], source) for n in names if n in values]
    chain += [(n, d.default, DEFAULT_CONFIG) for n in names
              if (d := BROKER_DEFAULTS.get(n)) is not None and d.default is not None]
    while chain and chain[0][0] != name:
        chain.pop(0)
    return chain


def topic_config(name: str, configs: dict[str, str], layers: list[tuple[dict[str, str], int]],
                 release: str | None = None
                 ) -> tuple[str | None, int, list[tuple[str, str | None, int]]]:
    """Topic config ``name``'s value, source and synonyms (ConfigHelper.
    createTopicConfigEntry): set on the topic (``configs``), else from its broker synonym in
    the broker's ``layers`` (dynamic, cluster default, static: values and source, highest
    first), else Kafka's default (release line ``release``'s); a synonym with several names
    (``log.retention.ms``, ``.minutes``, ``.hours``) gives its value in milliseconds, one the
    fake runs no broker config for (``log.message.format.version``) its default."""
    d = topic_config_defs(release)[name]
    synonym = TOPIC_SYNONYM_GROUPS.get(name, d.synonym)
    chain = synonym_chain(synonym, layers) if synonym is not None else []
    if synonym is not None and synonym not in BROKER_DEFAULTS:
        chain.append((synonym, d.default, DEFAULT_CONFIG))
    if name in configs:
        chain.insert(0, (name, kafka_value(name, configs[name]), TOPIC_CONFIG))
    if chain:  # a broker synonym's value as the broker parsed it (its synonyms as given)
        top = chain[0][1]
        return (None if top is None else kafka_value(name, top)), chain[0][2], chain
    value = d.default
    if synonym is not None:
        merged: dict[str, str] = {}
        for values, _ in reversed(layers):
            merged.update(values)
        value = next((str(int(java_trim(merged[n])) * UNIT_MS.get(n, 1))
                      for n in broker_synonyms(synonym) if merged.get(n) is not None), d.default)
    return value, DEFAULT_CONFIG, chain


class InvalidConfigError(ValueError):
    """A config name the topic does not have, or a value of the wrong type."""


# Kafka's validators of topic config values (LogConfig): the least number, the greatest
# (min.cleanable.dirty.ratio), or the strings allowed.
AT_LEAST: dict[str, int] = {
    "delete.retention.ms": 0, "file.delete.delay.ms": 0, "flush.messages": 1, "flush.ms": 0,
    "index.interval.bytes": 0, "local.retention.bytes": -2, "local.retention.ms": -2,
    "max.compaction.lag.ms": 1, "max.message.bytes": 0, "message.timestamp.after.max.ms": 0,
    "message.timestamp.before.max.ms": 0, "min.cleanable.dirty.ratio": 0,
    "min.compaction.lag.ms": 0, "min.insync.replicas": 1, "retention.ms": -1,
    "segment.bytes": 1048576, "segment.index.bytes": 4, "segment.jitter.ms": 0,
    "segment.ms": 1,
}
NO_MORE_THAN: dict[str, int] = {"min.cleanable.dirty.ratio": 1}
ONE_OF: dict[str, tuple[str, ...]] = {
    "cleanup.policy": ("compact", "delete"),
    "compression.type": ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "message.timestamp.type": ("CreateTime", "LogAppendTime"),
}
BITS = {INT: 32, SHORT: 16, LONG: 64}


def validate_topic_config(name: str, value: str | None, release: str | None = None) -> None:
    """Raise ``InvalidConfigError`` unless ``name=value`` is a valid topic config of a broker
    of release line ``release`` (Kafka's messages for an unknown name, a value of the wrong
    type, out of range or not allowed)."""
    definition = topic_config_defs(release).get(name)
    if definition is None:
        raise InvalidConfigError(f"Unknown topic config name: {name}")
    if value is None:
        return
    if definition.type == LIST and name in ONE_OF:
        check_list(name, java_trim(value))
    complaint = message_format.complaint(release, value) \
        if name == message_format.CONFIG and release is not None \
        else _complaint(name, definition.type, java_trim(value))
    if complaint is not None:
        shown = _java_double(value) if definition.type == DOUBLE and "Value" in complaint \
            else value
        raise InvalidConfigError(f"Invalid value {shown} for configuration {name}: {complaint}")


# Java's \s, around the commas ConfigDef splits a list at (COMMA_WITH_WHITESPACE).
_LIST_COMMA = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")


def list_items(value: str) -> list[str]:
    """A trimmed LIST value's items as ConfigDef.parseType splits them: none for the empty
    string, else every item, empty ones too ("delete," is ["delete", ""])."""
    return _LIST_COMMA.split(value) if value else []


def check_list(name: str, value: str) -> None:
    """Kafka 4.4's ConfigDef.ValidList, before each item's ValidString: no empty item (a bare
    message, measured: "Configuration 'cleanup.policy' values must not be empty."; an item
    twice is allowed, "delete,delete")."""
    if "" in list_items(value):
        raise InvalidConfigError(f"Configuration '{name}' values must not be empty.")


def kafka_value(name: str, value: str) -> str:
    """A valid value of topic config ``name`` as Kafka's broker reads and describes it
    (ConfigDef.parseType, then convertToString; measured on 4.4): trimmed, a number or a
    boolean written anew ("+5000" is 5000, " TRUE" true, "1" 1.0 for a double), a list's items
    joined by bare commas. Kafka's controller keeps the value as given, which APPEND and
    SUBTRACT start from."""
    d = TOPIC_DEFAULTS.get(name)
    text = java_trim(value)
    if d is None:
        return text
    if d.type in BITS:
        return str(int(text))
    if d.type == DOUBLE:
        return _java_double(text)
    if d.type == BOOLEAN:
        return text.lower()
    if d.type == LIST:
        return ",".join(list_items(text))
    return text


def _complaint(name: str, kind: int, value: str) -> str | None:
    """Why Kafka refuses the (trimmed) ``value`` of config ``name`` of type ``kind``, or
    None."""
    number: float | None = None
    try:
        if kind in BITS or kind == DOUBLE:
            number = java_number(value, BITS.get(kind))
    except ValueError:
        return f"Not a number of type {TYPE_NAMES[kind]}"
    if kind == BOOLEAN and value.lower() not in ("true", "false"):
        return "Expected value to be either true or false"
    if number is not None and name in AT_LEAST and number < AT_LEAST[name]:
        return f"Value must be at least {AT_LEAST[name]}"
    if number is not None and name in NO_MORE_THAN and number > NO_MORE_THAN[name]:
        return f"Value must be no more than {NO_MORE_THAN[name]}"
    allowed = ONE_OF.get(name)
    items = list_items(value) if kind == LIST else [value]
    if allowed is not None and any(i not in allowed for i in items):
        return "String must be one of: " + ", ".join(allowed)
    if name == "compression.gzip.level" and number is not None \
            and not (1 <= number <= 9 or number == -1):
        return "Value must be between 1 and 9 or equal to -1"
    return None


def _java_double(value: str) -> str:
    """A double as Java's Double.toString prints it: 2 -> 2.0, and below 10^-3 or from 10^7
    on in its scientific form (0.0001 -> 1.0E-4), with the shortest digits, as Python's."""
    number = float(value)
    if number == 0 or 1e-3 <= abs(number) < 1e7 or not math.isfinite(number):
        return repr(number).replace("inf", "Infinity").replace("nan", "NaN")
    sign, digits, exponent = Decimal(repr(number)).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    return (f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}"
            f"E{len(digits) + exponent - 1}")

