"""Client metrics subscriptions (KIP-714): the CLIENT_METRICS config resources (type 16), each
a subscription name with its configs, as Kafka 4.4 keeps and checks them (its
ClientMetricsConfigs and ClientMetricsManager; measured).

``CONFIGS`` declares the three configs, in the order DescribeConfigs lists them: ``interval.ms``
(INT, default 300000), ``match`` and ``metrics`` (LIST, default empty), with their
documentation. ``check(name, configs)`` raises ``ClusterError`` unless a subscription's whole
set of configs is one Kafka's controller takes, in its order: a name (INVALID_REQUEST
"Subscription name can't be empty"), only those three configs (INVALID_REQUEST "Unknown client
metrics configuration: x"), then each value as ConfigDef parses it, ``metrics``,
``interval.ms``, ``match`` in turn (INVALID_CONFIG: a list item empty, "Configuration 'metrics'
values must not be empty."; an interval not a Java int, "Invalid value x for configuration
interval.ms: Not a number of type INT"), an interval from 100 to 3600000 (INVALID_REQUEST
"Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"), each
``match`` item ``key=regex`` with a key Kafka matches clients by and a regex that compiles
(INVALID_CONFIG "Illegal client matching pattern: item"). An item twice is allowed; a regex
is compiled by Python's ``re``, not Java's Pattern (they differ at the edges: Java takes
``\\p{L}``, refuses ``(?P<n>a)`` and a ``{`` opening no repetition).

``Subscriptions`` holds each subscription's configs as given; a subscription left with no
config is none (ListConfigResources no longer lists it) and names are listed as Kafka's
``ConcurrentHashMap`` of subscriptions lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fakebroker.options import java_number, java_trim
from fakebroker.protocol.errors import ClusterError
from fakebroker.state.configs import (
    INT,
    LIST,
    ConfigDef,
    InvalidConfigError,
    check_list,
    list_items,
)
from fakebroker.state.features import java_bucket

CLIENT_METRICS = 16  # the config resource type
INTERVAL_MS, MATCH, METRICS = "interval.ms", "match", "metrics"
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
CONFIGS: tuple[ConfigDef, ...] = (
    ConfigDef(INTERVAL_MS, "300000", INT),
    ConfigDef(MATCH, "", LIST),
    ConfigDef(METRICS, "", LIST),
)
DOCUMENTATION = {INTERVAL_MS: "Metrics push interval in milliseconds",
                 MATCH: "Client match criteria", METRICS: "Telemetry metric name prefix list"}
# What a match item may select clients by (ClientMetricsConfigs.ALLOWED_MATCH_PARAMS).
MATCH_KEYS = frozenset({"client_instance_id", "client_id", "client_software_name",
                        "client_software_version", "client_source_address",
                        "client_source_port"})
_PARSE_ORDER = (METRICS, INTERVAL_MS, MATCH)  # ClientMetricsConfigs' ConfigDef order


@dataclass
class Subscriptions:
    """Client metrics subscriptions: name -> its configs as given (none empty)."""

    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    # The size of Kafka's ConcurrentHashMap table: 16, doubled each time it holds three
    # quarters of that, never shrunk.
    _buckets: int = 16

    def update(self, name: str, configs: dict[str, str]) -> None:
        """Subscription ``name`` now has ``configs`` (none: it is removed)."""
        if not configs:
            self.configs.pop(name, None)
            return
        self.configs[name] = dict(configs)
        while len(self.configs) >= self._buckets * 3 // 4:
            self._buckets *= 2

    def names(self) -> list[str]:
        """The subscriptions, as Kafka lists them: by bucket of its table, each bucket in
        the order subscribed."""
        return sorted(self.configs, key=lambda name: java_bucket(name, self._buckets))


def check(name: str, configs: dict[str, str]) -> None:
    """Raise ``ClusterError`` unless subscription ``name`` may have ``configs`` (module
    docstring)."""
    if not name:
        raise ClusterError("INVALID_REQUEST", "Subscription name can't be empty")
    unknown = next((key for key in configs if key not in _PARSE_ORDER), None)
    if unknown is not None:
        raise ClusterError("INVALID_REQUEST", f"Unknown client metrics configuration: {unknown}")
    interval = None
    for key in _PARSE_ORDER:
        if key not in configs:
            continue
        try:
            if key == INTERVAL_MS:
                interval = _interval(configs[key])
            else:
                check_list(key, java_trim(configs[key]))
        except InvalidConfigError as exc:
            raise ClusterError("INVALID_CONFIG", str(exc)) from None
    if interval is not None and not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise ClusterError("INVALID_REQUEST", f"Invalid value {interval} for {INTERVAL_MS}, "
                                              f"interval must be between {MIN_INTERVAL_MS} and "
                                              f"{MAX_INTERVAL_MS} (1 hour)")
    for item in list_items(java_trim(configs.get(MATCH, ""))):
        if not _legal_match(item):
            raise ClusterError("INVALID_CONFIG", f"Illegal client matching pattern: {item}")


def described(name: str, value: str) -> str:
    """A valid value of config ``name`` as DescribeConfigs shows it (parsed, then written
    anew): an interval as a plain number ("+0500" is 500), a list's items trimmed, each once,
    joined by bare commas (" a , b ,a" is "a,b")."""
    if name == INTERVAL_MS:
        return str(_interval(value))
    return ",".join(dict.fromkeys(list_items(java_trim(value))))


def _interval(value: str) -> int:
    try:
        return int(java_number(java_trim(value), 32))
    except ValueError:
        raise InvalidConfigError(f"Invalid value {value} for configuration {INTERVAL_MS}: "
                                 "Not a number of type INT") from None


def _legal_match(item: str) -> bool:
    """Whether ``item`` is ``key=regex`` as Kafka reads it: split at each "=" as Java's
    ``String.split`` (trailing empty parts dropped) into two parts, a known key and a regex
    that compiles, each trimmed."""
    parts = item.split("=")
    while parts and not parts[-1]:
        parts.pop()
    if len(parts) != 2 or java_trim(parts[0]) not in MATCH_KEYS:
        return False
    try:
        re.compile(java_trim(parts[1]))
    except re.error:
        return False
    return True
