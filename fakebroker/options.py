"""Every setting of a fake cluster and of ``fakebroker serve``, declared once.

A setting is declared here with its Python name, type, default, help text and (where Kafka has
one) the Kafka broker config it stands for. From that one declaration come:

* the keyword arguments ``open_cluster``, ``FakeKafka`` and the ``fake_kafka`` marker take
  (``ClusterSettings.from_kwargs``: an unknown name is a ``TypeError``, a bad value an
  ``OptionError``),
* the ``[cluster]`` table of a scenario file (same names, same checks),
* the ``fakebroker serve`` flags (``--advertised-host``) and their environment variables
  (``FAKEBROKER_ADVERTISED_HOST``): a flag given on the command line wins over its variable,
  and a variable over the default.

A ``repeatable`` setting holds a tuple: its flag may be given again (``--listener SSL
--listener SASL_SSL``), its variable is a comma-separated list (``FAKEBROKER_LISTENERS=SSL,
SASL_SSL``), its ``parse`` reads one item, and Python takes any sequence of items.

Kafka's broker configs are declared here too (``BROKER_CONFIGS``: Kafka 4.4's names, types,
defaults, validators and update modes); the ``overrides`` setting (``--override KEY=VALUE``,
``FAKEBROKER_OVERRIDES``, ``overrides={...}``) sets them by those names, as
``kafka-server-start.sh --override`` does. A config a named setting stands for is that setting
under its second name (``num.partitions`` is ``default_partitions``).

Guarantee: a value that reaches a running cluster has passed its setting's check, so a bad
value is refused with one line naming the setting, before anything starts.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

ENV_PREFIX = "FAKEBROKER_"


class OptionError(ValueError):
    """A setting with a value it cannot take; the message names the setting and the value."""


def parse_bool(text: str) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``), any case."""
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def parse_int(text: str) -> int:
    """A whole number, in decimal."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None


def parse_topic(text: str) -> tuple[str, int]:
    """``name`` or ``name:partitions`` (partitions >= 1)."""
    name, colon, partitions = text.strip().partition(":")
    if not name:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}: no topic name")
    if colon and not partitions:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}: no partition count "
                         "after ':'")
    try:
        count = int(partitions) if colon else 1
    except ValueError:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}") from None
    if count < 1:
        raise ValueError(f"expected NAME or NAME:PARTITIONS (partitions >= 1), got {text!r}")
    return name, count


def topic_counts(topics: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Topic name -> partitions from ``(name, partitions)`` pairs; a topic given twice with
    different counts is a ``ValueError`` (which one was meant?)."""
    counts: dict[str, int] = {}
    for name, count in topics:
        if counts.setdefault(name, count) != count:
            raise ValueError(f"topic {name!r} given twice, with {counts[name]} and {count} "
                             "partitions")
    return counts


def parse_topics(text: str) -> dict[str, int]:
    """A comma-separated list of ``name[:partitions]`` (the environment's form of --topic);
    an empty entry (``a:3,,b:1``) is a ``ValueError``, as in ``topic_counts``."""
    if not text.strip():
        return {}
    entries = text.split(",")
    if not all(entry.strip() for entry in entries):
        raise ValueError(f"expected NAME[:PARTITIONS],... got an empty entry in {text!r}")
    return topic_counts(parse_topic(entry) for entry in entries)


class Setting(NamedTuple):
    """One setting: its name, how text becomes its value, its check and its help (a named
    tuple: every command needs the class at start, and it is declared in a tenth of a frozen
    dataclass's time)."""

    name: str
    parse: Callable[[str], Any]
    help: str
    check: Callable[[Any], str | None] = lambda _value: None  # a complaint, or None
    kafka: str | None = None  # the Kafka broker config it stands for
    metavar: str | None = None
    repeatable: bool = False  # a tuple of items: the flag repeats, the variable lists them
    item: str | None = None  # a repeatable setting's flag names one item: --listener
    # how the text of a flag or variable splits into items (a repeatable setting)
    items: Callable[[str], list[str]] = lambda text: text.split(",")
    # makes a Python value the setting's form (a ValueError says why it cannot), or None
    convert: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        return "--" + (self.item or self.name).replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    def from_text(self, text: str) -> Any:
        """The value of ``text`` (from a flag or the environment), checked; for a repeatable
        setting, of a comma-separated list of items."""
        try:
            if self.repeatable:
                value: Any = tuple(self.parse(item.strip()) for item in self.items(text)
                                   if item.strip())
            else:
                value = self.parse(text)
        except ValueError as exc:
            raise OptionError(f"{self.name}: {exc}") from None
        return self.checked(value)

    def checked(self, value: Any) -> Any:
        """``value`` if the setting can take it (a repeatable setting's sequence as a tuple),
        else ``OptionError`` naming the setting."""
        if self.repeatable and isinstance(value, (list, tuple)):
            value = tuple(value)
        if self.convert is not None:
            try:
                value = self.convert(value)
            except ValueError as exc:
                raise OptionError(f"{self.name}: {exc}") from None
        complaint = self.check(value)
        if complaint is not None:
            raise OptionError(f"{self.name}: {complaint}, got {value!r}")
        return value


def _at_least(low: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return None if whole and value >= low else f"expected a whole number >= {low}"
    return check


def _port(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 65535
    return None if ok else "expected a port from 0 to 65535"


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda v: None if v is None else check(v)


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "expected a non-empty string"


def _release(value: Any) -> str | None:
    """A Kafka release (``"3.9"``, ``"3.9.1"``, ``"0.10.2"``) as its line in the release table
    (``protocol_specs/releases.json``); ``ValueError`` naming the lines for another."""
    if value is None:
        return None
    from fakebroker.protocol.releases import release_line

    return release_line(str(value))


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "expected true or false"


def _each(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    """A tuple of distinct items, each one of ``allowed``."""
    def check(value: Any) -> str | None:
        ok = (isinstance(value, tuple) and all(item in allowed for item in value)
              and len(set(value)) == len(value))
        return None if ok else f"expected distinct items of {', '.join(allowed)}"
    return check


def _one_of(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda value: None if value in allowed else f"expected one of {', '.join(allowed)}"


def _pairs(what: str) -> Callable[[Any], str | None]:
    """A tuple of ``LEFT:RIGHT`` texts, both sides non-empty (``what`` names the form)."""
    def check(value: Any) -> str | None:
        ok = isinstance(value, tuple) and all(
            isinstance(item, str) and all(item.partition(":")[0::2]) for item in value)
        return None if ok else f"expected items of the form {what}"
    return check


SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
SSL_CLIENT_AUTH = ("required", "requested", "none")


def _advertisable(value: Any) -> str | None:
    if _text(value):
        return _text(value)
    try:
        if ipaddress.ip_address(value).is_unspecified:
            return "cannot advertise the non-routable meta-address (clients cannot reach it)"
    except ValueError:
        pass  # a host name
    return None


# -- Kafka's broker configs ----------------------------------------------------------------
#
# The broker configs the fake honours or reports, by Kafka's names, with Kafka 4.4's type,
# default (None: Kafka has none), validator and update mode (``dynamic``: IncrementalAlterConfigs
# may change it on a running broker, at the cluster default or one broker; else read-only).
# ``overrides`` (``--override KEY=VALUE``) sets them as a broker's server.properties does; a
# config a named setting stands for (``num.partitions``: ``default_partitions``) sets that
# setting. Every one is described by DescribeConfigs; those in ``HONOURED`` change what the
# fake does, the rest are declared for the code that will honour them (retention and
# compaction, share and streams groups).

BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")
_BITS = {INT: 32, SHORT: 16, LONG: 64}
# Java's String.trim(): every character up to U+0020 (controls too), as ConfigDef.parseType
# trims a value before it parses or validates it (measured on 4.4: "10\t\x13" is retention.ms
# 10, "2000\0\0\0" message.max.bytes 2000; "4000\xa0" is no number).
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))


def java_trim(text: str) -> str:
    """``text`` as Java's String.trim() leaves it (Kafka trims every config value it parses)."""
    return text.strip(_JAVA_TRIMMED)


def java_number(text: str, bits: int | None) -> float:
    """A trimmed config value as Java parses it: a whole number of ``bits`` bits
    (Long.parseLong: a sign and decimal digits, no "1_0", no other spaces), or for None a
    double (Double.parseDouble: no "0_5"); ``ValueError`` when it is none."""
    if bits is None:
        if "_" in text:
            raise ValueError(text)
        return float(text)
    if re.fullmatch(r"[+-]?\d+", text) is None:
        raise ValueError(text)
    number = int(text)
    if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
        raise ValueError(text)
    return number


class BrokerConfig(NamedTuple):
    """One Kafka broker config: name, type, default text, validator, update mode."""

    name: str
    type: str
    default: str | None
    low: float | None = None  # Kafka's Range validator
    high: float | None = None
    allowed: tuple[str, ...] = ()  # Kafka's ValidString (each item, for a LIST)
    any_case: bool = False  # CaseInsensitiveValidString
    or_minus_one: bool = False  # compression.gzip.level: the range, or -1
    dynamic: bool = False
    internal: bool = False  # Kafka's defineInternal: set, never described

    def complaint(self, text: str) -> str | None:
        """Kafka's complaint about ``text`` as this config's value (its ConfigException's
        message after the name), or None."""
        number: float | None = None
        try:
            if self.type in _BITS or self.type == DOUBLE:
                number = java_number(java_trim(text), _BITS.get(self.type))
        except ValueError:
            return f"Not a number of type {self.type}"
        if self.type == BOOLEAN and java_trim(text).lower() not in ("true", "false"):
            return "Expected value to be either true or false"
        if number is not None and self.or_minus_one:
            ok = number == -1 or self.low <= number <= self.high  # type: ignore[operator]
            return None if ok else (f"Value must be between {self.low} and {self.high} or "
                                    "equal to -1")
        if number is not None and self.low is not None and number < self.low:
            return f"Value must be at least {_java_number(self.low)}"
        if number is not None and self.high is not None and number > self.high:
            return f"Value must be no more than {_java_number(self.high)}"
        items = [i.strip() for i in text.split(",") if i.strip()] if self.type == LIST \
            else [text]
        allowed = [a.upper() for a in self.allowed] if self.any_case else self.allowed
        if self.allowed and any((i.upper() if self.any_case else i) not in allowed
                                for i in items):
            case = " (case insensitive)" if self.any_case else ""
            return f"String must be one of{case}: {', '.join(self.allowed)}"
        return None

    def text(self, value: Any) -> str:
        """``value`` (Python's int, bool, float, sequence, or text) as Kafka's text of this
        config, checked: ``ValueError`` with Kafka's message naming the config."""
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, (int, float, str)):
            text = str(value)
        elif isinstance(value, (list, tuple)) and self.type == LIST:
            text = ",".join(str(item) for item in value)
        else:
            raise ValueError(f"Invalid value {value!r} for configuration {self.name}: "
                             f"expected a value of type {self.type}")
        if self.type == LIST:
            text = ",".join(i.strip() for i in text.split(",") if i.strip())
        elif self.type != STRING:
            text = text.strip()
        complaint = self.complaint(text)
        if complaint is not None:
            raise ValueError(f"Invalid value {text} for configuration {self.name}: "
                             f"{complaint}")
        return text


def _java_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _k(name: str, kind: str, default: str | None, **validator: Any) -> BrokerConfig:
    return BrokerConfig(name, kind, default, **validator)


BROKER_CONFIGS: dict[str, BrokerConfig] = {c.name: c for c in (
    _k("log.cleanup.policy", LIST, "delete", allowed=("compact", "delete"), dynamic=True),
    _k("compression.type",
       STRING, "producer",
       allowed=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), dynamic=True),
    _k("compression.gzip.level", INT, "-1", low=1, high=9, or_minus_one=True, dynamic=True),
    _k("compression.lz4.level", INT, "9", low=1, high=17, dynamic=True),
    _k("compression.zstd.level", INT, "3", low=-131072, high=22, dynamic=True),
    _k("log.cleaner.delete.retention.ms", LONG, "86400000", low=0, dynamic=True),
    _k("log.segment.delete.delay.ms", LONG, "60000", low=0, dynamic=True),
    _k("log.retention.check.interval.ms", LONG, "300000", low=1),
    _k("log.initial.task.delay.ms", LONG, "30000", low=0, internal=True),
    _k("log.cleaner.backoff.ms", LONG, "15000", low=0, dynamic=True),
    _k("log.flush.interval.messages", LONG, "9223372036854775807", low=1, dynamic=True),
    _k("log.flush.interval.ms", LONG, None, dynamic=True),
    _k("log.flush.scheduler.interval.ms", LONG, "9223372036854775807"),
    _k("log.index.interval.bytes", INT, "4096", low=0, dynamic=True),
    _k("log.local.retention.bytes", LONG, "-2", low=-2, dynamic=True),
    _k("log.local.retention.ms", LONG, "-2", low=-2, dynamic=True),
    _k("log.cleaner.max.compaction.lag.ms", LONG, "9223372036854775807", low=1, dynamic=True),
    _k("max.decompressed.message.bytes", INT, "2147483639", low=1, high=2147483639, dynamic=True),
    _k("message.max.bytes", INT, "1048588", low=0, dynamic=True),
    _k("fetch.max.bytes", INT, "57671680", low=1024),
    _k("max.incremental.fetch.session.cache.slots", INT, "1000", low=0),
    _k("log.message.timestamp.after.max.ms", LONG, "3600000", low=0, dynamic=True),
    _k("log.message.timestamp.before.max.ms", LONG, "9223372036854775807", low=0, dynamic=True),
    _k("log.message.timestamp.type",
       STRING, "CreateTime", allowed=("CreateTime", "LogAppendTime"), dynamic=True),
    _k("log.cleaner.min.cleanable.ratio", DOUBLE, "0.5", low=0, high=1, dynamic=True),
    _k("log.cleaner.min.compaction.lag.ms", LONG, "0", low=0, dynamic=True),
    _k("min.insync.replicas", INT, "1", low=1, dynamic=True),
    _k("log.preallocate", BOOLEAN, "false", dynamic=True),
    _k("log.remote.copy.lag.bytes", LONG, "-1", low=-1, dynamic=True),
    _k("log.remote.copy.lag.ms", LONG, "0", low=-1, dynamic=True),
    _k("log.retention.bytes", LONG, "-1", dynamic=True),
    _k("log.retention.ms", LONG, None, dynamic=True),
    _k("log.retention.minutes", INT, None),
    _k("log.retention.hours", INT, "168"),
    _k("log.segment.bytes", INT, "1073741824", low=1048576, dynamic=True),
    _k("log.index.size.max.bytes", INT, "10485760", low=4, dynamic=True),
    _k("log.roll.ms", LONG, None, dynamic=True),
    _k("log.roll.hours", INT, "168", low=1),
    _k("log.roll.jitter.ms", LONG, None, dynamic=True),
    _k("log.roll.jitter.hours", INT, "0", low=0),
    _k("unclean.leader.election.enable", BOOLEAN, "false", dynamic=True),
    _k("auto.create.topics.enable", BOOLEAN, "true"),
    _k("num.partitions", INT, "1", low=1),
    _k("default.replication.factor", INT, "1"),
    _k("socket.request.max.bytes", INT, "104857600", low=1),
    _k("transaction.max.timeout.ms", INT, "900000", low=1),
    _k("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, "10000", low=1),
    _k("offsets.retention.check.interval.ms", LONG, "600000", low=1),
    _k("group.min.session.timeout.ms", INT, "6000"),
    _k("group.max.session.timeout.ms", INT, "1800000"),
    _k("group.initial.rebalance.delay.ms", INT, "3000"),
    _k("group.max.size", INT, "2147483647", low=1),
    _k("group.consumer.session.timeout.ms", INT, "45000", low=1),
    _k("group.consumer.min.session.timeout.ms", INT, "45000", low=1),
    _k("group.consumer.max.session.timeout.ms", INT, "60000", low=1),
    _k("group.consumer.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.consumer.min.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.consumer.max.heartbeat.interval.ms", INT, "15000", low=1),
    _k("group.consumer.max.size", INT, "2147483647", low=1),
    _k("group.consumer.assignors", LIST, "uniform,range"),
    _k("group.consumer.migration.policy",
       STRING, "bidirectional",
       allowed=("DISABLED", "DOWNGRADE", "UPGRADE", "BIDIRECTIONAL"), any_case=True),
    _k("group.consumer.assignment.interval.ms", INT, "1000", low=0, dynamic=True),
    _k("group.consumer.min.assignment.interval.ms", INT, "0", low=0),
    _k("group.consumer.max.assignment.interval.ms", INT, "15000", low=0),
    _k("group.consumer.assignor.offload.enable", BOOLEAN, "true"),
    _k("group.consumer.regex.refresh.interval.ms", INT, "600000", low=10000),
    _k("group.share.session.timeout.ms", INT, "45000", low=1),
    _k("group.share.min.session.timeout.ms", INT, "45000", low=1),
    _k("group.share.max.session.timeout.ms", INT, "60000", low=1),
    _k("group.share.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.share.min.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.share.max.heartbeat.interval.ms", INT, "15000", low=1),
    _k("group.share.max.size", INT, "200", low=1, high=1000),
    _k("group.share.assignors", LIST, "simple"),
    _k("group.share.assignment.interval.ms", INT, "1000", low=0, dynamic=True),
    _k("group.share.min.assignment.interval.ms", INT, "0", low=0),
    _k("group.share.max.assignment.interval.ms", INT, "15000", low=0),
    _k("group.share.assignor.offload.enable", BOOLEAN, "true"),
    _k("group.share.initialize.retry.interval.ms", INT, "30000", low=1),
    _k("group.streams.session.timeout.ms", INT, "45000", low=1),
    _k("group.streams.min.session.timeout.ms", INT, "45000", low=1),
    _k("group.streams.max.session.timeout.ms", INT, "60000", low=1),
    _k("group.streams.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.streams.min.heartbeat.interval.ms", INT, "5000", low=1),
    _k("group.streams.max.heartbeat.interval.ms", INT, "15000", low=1),
    _k("group.streams.max.size", INT, "2147483647", low=1),
    _k("group.streams.num.standby.replicas", INT, "0", low=0),
    _k("group.streams.max.standby.replicas", INT, "2", low=0),
    _k("group.streams.initial.rebalance.delay.ms", INT, "3000", low=0),
    _k("group.streams.assignment.interval.ms", INT, "1000", low=0, dynamic=True),
    _k("group.streams.min.assignment.interval.ms", INT, "0", low=0),
    _k("group.streams.max.assignment.interval.ms", INT, "15000", low=0),
    _k("group.streams.assignors", LIST, "sticky"),
    _k("group.streams.assignor.offload.enable", BOOLEAN, "true"),
    _k("group.streams.task.offset.interval.ms", INT, "60000", low=1),
    _k("group.streams.min.task.offset.interval.ms", INT, "15000", low=1),
    _k("group.streams.num.warmup.replicas", INT, "2", low=0),
    _k("group.streams.max.warmup.replicas", INT, "20", low=0),
    _k("group.streams.rack.aware.assignment.tags", LIST, ""),
    _k("group.streams.acceptable.recovery.lag", LONG, "10000", low=0),
    _k("group.share.delivery.count.limit", INT, "5", low=2, high=10),
    _k("group.share.max.delivery.count.limit", INT, "10", low=5, high=25),
    _k("group.share.min.delivery.count.limit", INT, "2", low=2, high=5),
    _k("group.share.record.lock.duration.ms", INT, "30000", low=1000, high=3600000),
    _k("group.share.min.record.lock.duration.ms", INT, "15000", low=1000, high=30000),
    _k("group.share.max.record.lock.duration.ms", INT, "60000", low=30000, high=3600000),
    _k("group.share.partition.max.record.locks", INT, "2000", low=100, high=10000),
    _k("group.share.max.partition.max.record.locks", INT, "4000", low=2000, high=10000),
    _k("group.share.min.partition.max.record.locks", INT, "100", low=100, high=2000),
    _k("group.share.max.share.sessions", INT, "2000", low=1),
)}

# What each honoured config changes in the fake (the rest are declared and described only).
HONOURED: dict[str, str] = {
    "auto.create.topics.enable": "whether unknown topics a client asks for are created",
    "num.partitions": "partitions of a topic created without a count",
    "default.replication.factor": "replicas of a topic created without a factor",
    "socket.request.max.bytes": "largest request frame accepted",
    "message.max.bytes": "largest record batch a topic takes (MESSAGE_TOO_LARGE)",
    "fetch.max.bytes": "most a Fetch answer holds (beyond its first batch)",
    "max.incremental.fetch.session.cache.slots": "fetch sessions a broker keeps (KIP-227), "
                                                 "in 8 shards of slots / 8",
    "log.message.timestamp.type": "CreateTime, or LogAppendTime: the broker stamps batches",
    "log.message.timestamp.before.max.ms": "oldest CreateTime accepted (INVALID_TIMESTAMP)",
    "log.message.timestamp.after.max.ms": "newest CreateTime accepted (INVALID_TIMESTAMP)",
    "min.insync.replicas": "acks=all produce to a partition with a smaller ISR: "
                           "NOT_ENOUGH_REPLICAS",
    "transaction.max.timeout.ms": "longest transaction timeout (INVALID_TRANSACTION_TIMEOUT)",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms":
        "how often timed-out transactions are looked for and aborted",
    "offsets.retention.check.interval.ms": "how often empty groups holding no committed "
                                           "offset are deleted",
    "group.min.session.timeout.ms": "shortest classic member session "
                                    "(INVALID_SESSION_TIMEOUT)",
    "group.max.session.timeout.ms": "longest classic member session "
                                    "(INVALID_SESSION_TIMEOUT)",
    "group.initial.rebalance.delay.ms": "how long a new classic group waits for members",
    "group.consumer.session.timeout.ms": "session of a consumer group (KIP-848) member",
    "group.consumer.heartbeat.interval.ms": "heartbeat interval a consumer group member is "
                                            "given",
    "group.max.size": "members a classic group holds (GROUP_MAX_SIZE_REACHED)",
    "group.consumer.max.size": "members a consumer group (KIP-848) holds "
                               "(GROUP_MAX_SIZE_REACHED)",
    "group.consumer.migration.policy": "which online conversions between classic and "
                                       "consumer groups run (upgrade, downgrade, both, none)",
    "group.streams.max.size": "members a streams group (KIP-1071) holds "
                              "(GROUP_MAX_SIZE_REACHED)",
    "log.retention.check.interval.ms": "how often retention deletes old segments",
    "log.initial.task.delay.ms": "when the first retention check runs, after start",
    "log.retention.ms": "topics' retention.ms: how long segments are kept",
    "log.retention.minutes": "topics' retention.ms, in minutes (below log.retention.ms)",
    "log.retention.hours": "topics' retention.ms, in hours (below log.retention.minutes)",
    "log.retention.bytes": "topics' retention.bytes: the bytes a partition keeps",
    "log.segment.bytes": "topics' segment.bytes: the size a segment rolls at",
    "log.roll.ms": "topics' segment.ms: the age (by record timestamps) a segment rolls at",
    "log.roll.hours": "topics' segment.ms, in hours (below log.roll.ms)",
    "log.cleanup.policy": "topics' cleanup.policy: delete (retention), compact",
    "log.cleaner.backoff.ms": "how long the cleaner idles when no log is due",
    "log.cleaner.min.cleanable.ratio": "topics' min.cleanable.dirty.ratio: the dirty share "
                                       "a log is cleaned at",
    "log.cleaner.min.compaction.lag.ms": "topics' min.compaction.lag.ms: how young a record "
                                         "stays uncleaned",
    "log.cleaner.max.compaction.lag.ms": "topics' max.compaction.lag.ms: how old a dirty "
                                         "record is cleaned at whatever ratio",
    "log.cleaner.delete.retention.ms": "topics' delete.retention.ms: how long tombstones stay",
}

# Kafka's cross-checks of the group coordinator's configs (GroupCoordinatorConfig,
# ShareGroupConfig): (least, value, greatest) triples, and a heartbeat shorter than its
# session. A broker refuses to start when one fails.
_GROUP_TRIPLES = tuple(
    (f"group.{kind}.min.{what}", f"group.{kind}.{what}", f"group.{kind}.max.{what}")
    for kind in ("consumer", "share", "streams")
    for what in ("session.timeout.ms", "heartbeat.interval.ms")
) + tuple((f"group.share.min.{what}", f"group.share.{what}", f"group.share.max.{what}")
          for what in ("record.lock.duration.ms", "delivery.count.limit",
                       "partition.max.record.locks"))


def _cross_check(configs: Mapping[str, str]) -> None:
    """``ValueError`` with Kafka's message for configs a broker refuses together."""
    def value(name: str) -> int:
        text = configs.get(name, BROKER_CONFIGS[name].default)
        return int(text or 0)

    for least, name, greatest in _GROUP_TRIPLES:
        if value(greatest) < value(least):
            raise ValueError(f"{greatest} must be greater than or equal to {least}")
        if value(name) < value(least):
            raise ValueError(f"{name} must be greater than or equal to {least}")
        if value(greatest) < value(name):
            raise ValueError(f"{name} must be less than or equal to {greatest}")
    for kind in ("consumer", "share", "streams"):
        beat, session = f"group.{kind}.heartbeat.interval.ms", f"group.{kind}.session.timeout.ms"
        if value(beat) >= value(session):
            raise ValueError(f"{beat} must be less than {session}")


def _kafka_check(name: str) -> Callable[[Any], str | None]:
    """A named setting's check: a value of its Kafka config's type, valid by its Kafka
    validator (``BROKER_CONFIGS[name]``: one fact for both spellings)."""
    config = BROKER_CONFIGS[name]

    def check(value: Any) -> str | None:
        if config.type == BOOLEAN:
            return _flag(value)
        if config.type in _BITS and (not isinstance(value, int) or isinstance(value, bool)):
            return "expected a whole number"
        return config.complaint(_kafka_text(value))
    return check


def parse_override(text: str) -> tuple[str, str]:
    """``KEY=VALUE``: a broker config and its value, as server.properties has it."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _override_items(text: str) -> list[str]:
    """``a=1,b=x,y``: items split at commas, a part without ``=`` continuing the value before
    it (a LIST config's value: ``log.cleanup.policy=compact,delete``)."""
    items: list[str] = []
    for part in text.split(","):
        if items and "=" not in part:
            items[-1] += "," + part
        else:
            items.append(part)
    return items


def _overrides(value: Any) -> tuple[tuple[str, str], ...]:
    """Broker config overrides (a mapping, or ``(key, value)`` pairs) as ``(key, text)``
    pairs, each key a config the fake knows (``BROKER_CONFIGS``, or one a named setting stands
    for) and each value checked by Kafka's validator; ``ValueError`` naming the key."""
    pairs = list(value.items()) if isinstance(value, Mapping) else list(value)
    checked: dict[str, str] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise ValueError(f"expected KEY=VALUE pairs, got {pair!r}")
        key, item = pair
        if key in BROKER_CONFIGS:
            checked[key] = BROKER_CONFIGS[key].text(item)
        elif key in KAFKA_NAMES:
            setting = CLUSTER_SETTINGS[KAFKA_NAMES[key]]
            text = item if isinstance(item, str) else _kafka_text(
                tuple(item) if isinstance(item, list) else item)
            try:
                setting.from_text(text)
            except OptionError as exc:
                raise ValueError(f"Invalid value {text} for configuration {key}: "
                                 f"{str(exc).partition(': ')[2]}") from None
            checked[key] = text
        else:
            raise ValueError(f"unknown broker config {key!r} (the broker configs fakebroker "
                             "knows: docs/reference/settings.md)")
    _cross_check(checked)
    return tuple(checked.items())


@dataclass(frozen=True, eq=False)
class ClusterSettings:
    """The settings of one fake cluster, with Kafka's defaults where Kafka has one."""

    brokers: int = 1
    host: str = "127.0.0.1"
    advertised_host: str | None = None
    port: int = 0
    auto_create_topics: bool = True
    default_partitions: int = 1
    cluster_id: str | None = None  # None: a fresh random Kafka-style id per cluster
    max_request_bytes: int = 100 * 1024 * 1024
    group_initial_rebalance_delay_ms: int = 0
    group_min_session_timeout_ms: int = 6000
    transaction_max_timeout_ms: int = 900_000
    transaction_version: int = 2
    kafka_version: str | None = None  # a release line of protocol_specs/releases.json
    seed: int | None = None
    journal_capacity: int = 10_000
    max_stored_bytes: int | None = None  # no cap
    listeners: tuple[str, ...] = ()
    ssl_client_auth: str = "none"
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_ca: str | None = None
    sasl_users: tuple[str, ...] = ()
    sasl_mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
    connections_max_reauth_ms: int = 0
    authorizer: bool = False
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False
    delegation_token_secret_key: str | None = field(default=None, repr=False)  # a secret
    delegation_token_max_lifetime_ms: int = 7 * 24 * 3600 * 1000
    delegation_token_expiry_time_ms: int = 24 * 3600 * 1000
    overrides: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any]) -> ClusterSettings:
        """Settings from keyword arguments; every value checked (``OptionError``), an unknown
        name refused (``TypeError``, as a function's signature would)."""
        unknown = sorted(set(options) - set(CLUSTER_SETTINGS))
        if unknown:
            raise TypeError(f"unknown cluster option(s): {', '.join(unknown)} "
                            f"(known: {', '.join(CLUSTER_SETTINGS)})")
        values = {name: CLUSTER_SETTINGS[name].checked(value) for name, value in options.items()}
        values.update(_named_overrides(values))
        settings = cls(**values)
        if (settings.ssl_cert is None) != (settings.ssl_key is None):
            raise OptionError("ssl_cert and ssl_key: give both or neither")
        if not settings.sasl_mechanisms and {"SASL_PLAINTEXT", "SASL_SSL"} & set(
                settings.listeners):
            raise OptionError("sasl_mechanisms: a SASL listener needs at least one (Kafka will "
                              "not start: No SASL mechanisms are enabled)")
        check_advertised(settings.host, settings.advertised_host)
        return settings

    @property
    def advertised(self) -> str:
        """The host name or address the brokers give clients (Metadata, FindCoordinator)."""
        return self.advertised_host or self.host

    def kafka_configs(self) -> dict[str, str]:
        """The Kafka broker configs these settings stand for, as DescribeConfigs reports:
        the named settings' and the overrides."""
        values = {name: getattr(self, name) for name in CLUSTER_SETTINGS}
        named = {s.kafka: _kafka_text(values[s.name]) for s in CLUSTER_SETTINGS.values()
                 if s.kafka is not None}
        return {**named, **dict(self.overrides)}

    def broker_config(self, name: str) -> str | None:
        """The value a broker starts with for Kafka config ``name`` (a ``BROKER_CONFIGS``
        one): set (by a named setting or an override), else Kafka's default."""
        return self.kafka_configs().get(name, BROKER_CONFIGS[name].default)


def _named_overrides(values: dict[str, Any]) -> dict[str, Any]:
    """The ``overrides`` of configs a named setting stands for, as that setting (one fact,
    two spellings: ``num.partitions`` sets ``default_partitions``), and the overrides left;
    ``OptionError`` when both spellings are given different values."""
    left, named = [], {}
    for key, text in values.get("overrides", ()):
        name = KAFKA_NAMES.get(key)
        if name is None:
            left.append((key, text))
            continue
        value = CLUSTER_SETTINGS[name].from_text(text)
        if name in values and values[name] != value:
            raise OptionError(f"{name} and overrides {key}: two values, {values[name]!r} and "
                              f"{text!r}")
        named[name] = value
    return {**named, "overrides": tuple(left)} if "overrides" in values else {}


def check_advertised(host: str, advertised_host: str | None,
                     named: Callable[[str], str] = str) -> None:
    """``OptionError`` if brokers bound to ``host`` cannot give it to clients and no
    ``advertised_host`` is given; ``named`` spells a setting's name where it was given
    (``--advertised-host`` on a command line)."""
    if advertised_host is None and _advertisable(host) is not None:
        raise OptionError(f"{named('host')}: binding {host!r} needs "
                          f"{named('advertised_host')}, the name or address clients use to "
                          "reach the brokers")


def _kafka_text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


CLUSTER_SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("brokers", parse_int, "number of brokers", _at_least(1), metavar="N"),
    Setting("host", str, "address every broker listens on (0.0.0.0: all interfaces)", _text),
    Setting("advertised_host", str,
            "host name or address the brokers give clients (default: --host)",
            _optional(_advertisable)),
    Setting("port", parse_int, "first broker's port; brokers use consecutive ports, each "
            "listener's after the previous listener's (0 = any free)", _port),
    Setting("auto_create_topics", parse_bool,
            "create unknown topics a client asks for (false: refuse them)",
            _kafka_check("auto.create.topics.enable"), kafka="auto.create.topics.enable",
            metavar="true|false"),
    Setting("default_partitions", parse_int, "partitions of auto-created topics",
            _kafka_check("num.partitions"), kafka="num.partitions", metavar="N"),
    Setting("cluster_id", str, "the cluster id (default: a fresh random one in Kafka's "
            "form, 22 characters of URL-safe base64)", _optional(_text)),
    Setting("max_request_bytes", parse_int, "largest request frame accepted",
            _kafka_check("socket.request.max.bytes"), kafka="socket.request.max.bytes",
            metavar="BYTES"),
    Setting("group_initial_rebalance_delay_ms", parse_int,
            "how long a new classic group waits for more members", _at_least(0),
            kafka="group.initial.rebalance.delay.ms", metavar="MS"),
    Setting("group_min_session_timeout_ms", parse_int, "smallest session timeout a member may ask",
            _at_least(0), kafka="group.min.session.timeout.ms", metavar="MS"),
    Setting("transaction_max_timeout_ms", parse_int,
            "longest transaction timeout a producer may ask (longer: INVALID_TRANSACTION_TIMEOUT)",
            _kafka_check("transaction.max.timeout.ms"), kafka="transaction.max.timeout.ms",
            metavar="MS"),
    Setting("transaction_version", parse_int,
            "the transaction.version feature finalized at start (UpdateFeatures changes it): 2 "
            "(Kafka 4's default) lets clients run transactions v2 (KIP-890), 0 or 1 the older "
            "protocol",
            lambda v: None if v in (0, 1, 2) and not isinstance(v, bool)
            else "expected 0, 1 or 2", metavar="LEVEL"),
    Setting("kafka_version", str,
            "the Kafka release to answer as, 0.10.0 to 4.4 (or one of its releases: 3.9.1): "
            "ApiVersions lists exactly what that release's broker lists, and an API it lacks "
            "is refused as it refused one (the connection closed). Unset: every API at every "
            "version from Kafka 3.9's oldest to 4.4's newest, which accepts every client "
            "generation but is no release",
            convert=_release, metavar="X.Y"),
    Setting("seed", parse_int, "seed of probabilistic faults (reproducible chaos)",
            _optional(lambda v: None if isinstance(v, int) else "expected a whole number"),
            metavar="N"),
    Setting("journal_capacity", parse_int, "how many requests the journal keeps", _at_least(1),
            metavar="N"),
    Setting("max_stored_bytes", parse_int,
            "the most bytes of records the cluster's partition logs may hold together (unset: "
            "no cap, as Kafka has none); a Produce that would pass it is refused with "
            "POLICY_VIOLATION and a message naming this setting, until retention, "
            "DeleteRecords or a topic's deletion frees bytes",
            _optional(_at_least(0)), metavar="BYTES"),
    Setting("listeners", str,
            "a listener of each broker for this security protocol (repeatable: PLAINTEXT, SSL, "
            "SASL_PLAINTEXT, SASL_SSL), each on its own port; none: one PLAINTEXT listener",
            _each(SECURITY_PROTOCOLS), metavar="PROTOCOL", repeatable=True,
            item="listener"),
    Setting("ssl_client_auth", str,
            "whether the SSL listener asks clients for a certificate (required, requested, none)",
            _one_of(SSL_CLIENT_AUTH), kafka="ssl.client.auth", metavar="MODE"),
    Setting("ssl_cert", str, "the brokers' certificate chain, PEM (default: generated at start)",
            _optional(_text), metavar="FILE"),
    Setting("ssl_key", str, "the private key of --ssl-cert, PEM (unencrypted)",
            _optional(_text), metavar="FILE"),
    Setting("ssl_ca", str, "CA certificates, PEM, that client certificates must chain to "
            "(default: the generated CA)", _optional(_text), metavar="FILE"),
    Setting("sasl_users", str,
            "a SASL user and password, valid for PLAIN and SCRAM (repeatable)",
            _pairs("NAME:PASSWORD"), metavar="NAME:PASSWORD", repeatable=True,
            item="sasl_user"),
    Setting("sasl_mechanisms", str,
            "a SASL mechanism the SASL listeners enable (repeatable: PLAIN, SCRAM-SHA-256, "
            "SCRAM-SHA-512, OAUTHBEARER; default the first three)",
            _each(SASL_MECHANISMS), kafka="sasl.enabled.mechanisms", metavar="MECHANISM",
            repeatable=True,
            item="sasl_mechanism"),
    Setting("connections_max_reauth_ms", parse_int,
            "longest SASL session before the client must re-authenticate (0: no limit)",
            _at_least(0), kafka="connections.max.reauth.ms", metavar="MS"),
    Setting("authorizer", parse_bool, "authorize every request by the ACLs (Kafka's "
            "StandardAuthorizer); off: the ACL APIs answer SECURITY_DISABLED", _flag,
            metavar="true|false"),
    Setting("super_users", str, "a principal every ACL allows (repeatable: User:admin)",
            _pairs("TYPE:NAME"), metavar="PRINCIPAL", repeatable=True,
            item="super_user"),
    Setting("allow_everyone_if_no_acl_found", parse_bool,
            "allow a request on a resource no ACL matches (Kafka's default: deny)", _flag,
            kafka="allow.everyone.if.no.acl.found", metavar="true|false"),
    Setting("delegation_token_secret_key", str,
            "the key delegation tokens are signed with (HMAC-SHA512); unset: no tokens "
            "(DELEGATION_TOKEN_AUTH_DISABLED)", _optional(_text),
            kafka="delegation.token.secret.key", metavar="SECRET"),
    Setting("delegation_token_max_lifetime_ms", parse_int,
            "longest a delegation token lives, renewals included", _at_least(1),
            kafka="delegation.token.max.lifetime.ms", metavar="MS"),
    Setting("delegation_token_expiry_time_ms", parse_int,
            "how long a delegation token lives unless renewed, and its longest renewal",
            _at_least(1), kafka="delegation.token.expiry.time.ms", metavar="MS"),
    Setting("overrides", parse_override,
            "a Kafka broker config, as server.properties sets it (repeatable; KEY=VALUE, e.g. "
            "message.max.bytes=2000); checked by Kafka's validator; the keys: "
            "docs/reference/settings.md", metavar="KEY=VALUE", repeatable=True,
            item="override", items=_override_items, convert=_overrides),
)}

assert list(CLUSTER_SETTINGS) == [f.name for f in fields(ClusterSettings)]
# Kafka config name -> the named setting that stands for it.
KAFKA_NAMES: dict[str, str] = {s.kafka: s.name for s in CLUSTER_SETTINGS.values() if s.kafka}
