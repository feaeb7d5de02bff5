"""Changes to topic, broker, group and client metrics configs, checked and applied as Kafka
4.4 does them.

``alter(cluster, node_id, resource_type, name, ops, replace, validate_only)`` changes one
resource's dynamic configs (IncrementalAlterConfigs' operations, or AlterConfigs' whole set
when ``replace``) or raises ``ConfigChangeError`` with Kafka's error name and message, in the
order Kafka makes its checks: the broker's preprocessing (duplicate keys, null values, the
resource's type and this node's id, which broker configs a running broker may change) then the
controller's (APPEND/SUBTRACT only on lists: a group's or a client metrics subscription's
configs are none, as Kafka's controller types them; the resource's name: no default topic or
group resource "", a legal topic name (``invalid_topic_name``); topic config names and values,
the topic's existence; a client metrics subscription's whole set of configs,
``fakebroker.state.client_metrics``). Nothing is changed when a check fails, or with
``validate_only``; a subscription left with no config is removed.
``alter_loggers`` changes a broker's loggers (IncrementalAlterConfigs on BROKER_LOGGER,
``fakebroker.state.loggers``) after the same preprocessing and Kafka's ALTER_CONFIGS check on
the cluster; AlterConfigs cannot (INVALID_REQUEST "Unknown resource type 8", from ``alter``).

A topic's configs take effect at once (``Topic.config`` reads them); the cluster default
broker configs (resource "") back every topic's unset configs through their broker synonyms
(``message.max.bytes`` for ``max.message.bytes``...), above the brokers' static configs
(``overrides``); a broker's own configs back the topics it leads. Which broker configs a running
broker may change is declared with them (``fakebroker.options.BROKER_CONFIGS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakebroker.options import BROKER_CONFIGS
from fakebroker.protocol.errors import ClusterError
from fakebroker.state import client_metrics
from fakebroker.state.cluster import Cluster, invalid_topic_name
from fakebroker.state.configs import (
    BOOLEAN,
    BROKER_DEFAULTS,
    DOUBLE,
    INT,
    LIST,
    LONG,
    SHORT,
    TOPIC_DEFAULTS,
    TYPE_NAMES,
    ConfigDef,
    InvalidConfigError,
    validate_topic_config,
)
from fakebroker.state.features import ELIGIBLE_LEADER_REPLICAS_VERSION
from fakebroker.state.loggers import LoggerChangeError, node_id

if TYPE_CHECKING:
    from fakebroker.state.share_groups import ShareSettings
    from fakebroker.state.streams_groups import StreamsSettings

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
CLIENT_METRICS = client_metrics.CLIENT_METRICS
SET, DELETE, APPEND, SUBTRACT = range(4)
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
MIN_ISR = "min.insync.replicas"


class ConfigChangeError(Exception):
    """A resource's change refused: Kafka's error name and message."""

    def __init__(self, error: str, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


@dataclass(frozen=True, slots=True)
class Op:
    """One config operation (AlterConfigs' entries are all SET)."""

    name: str
    value: str | None
    op: int = SET


def broker_config_def(name: str) -> ConfigDef | None:
    """The broker config ``name``: one the fake reports, or the broker synonym of a topic
    config (``log.retention.ms``...), typed as that topic config."""
    if name in BROKER_DEFAULTS:
        return BROKER_DEFAULTS[name]
    for d in TOPIC_DEFAULTS.values():
        if d.synonym == name:
            return ConfigDef(name, d.default, d.type)
    return None


def alter(cluster: Cluster, node_id: int, resource_type: int, name: str, ops: Sequence[Op],
          *, replace: bool, validate_only: bool) -> None:
    """Apply ``ops`` to the resource, or raise ``ConfigChangeError`` (module docstring)."""
    _check_entries(ops, replace)
    names = [op.name for op in ops]
    unknown_op = next((op.op for op in ops if op.op not in OP_NAMES), None)
    if unknown_op is not None and resource_type == BROKER:
        raise ConfigChangeError("INVALID_REQUEST", f"Unknown operations type {unknown_op}")
    if unknown_op is not None and resource_type in (TOPIC, GROUP, CLIENT_METRICS):
        raise ConfigChangeError("UNKNOWN_SERVER_ERROR", None)  # the controller's failure
    if resource_type == BROKER:
        current = _broker_configs(cluster, name, node_id)
        updated = _updated(current, ops, replace, _broker_is_list)
        _check_broker_change({op.name: op.value for op in ops if op.value is not None}
                             if replace else {k: v for k, v in updated.items()
                                              if k in names})
        if name == "" and MIN_ISR in current and MIN_ISR not in updated \
                and cluster.features.at_least(ELIGIBLE_LEADER_REPLICAS_VERSION, 1):
            raise ConfigChangeError("INVALID_CONFIG", "Cluster-level min.insync.replicas "
                                                      "cannot be removed while ELR is enabled.")
    elif resource_type == TOPIC:
        topic = cluster.topics.get(name)
        current = topic.configs if topic is not None else {}
        updated = _updated(current, ops, replace, _topic_is_list)
        # Kafka's controller validates the name after the operations, before the configs.
        if name == "":
            raise ConfigChangeError("INVALID_REQUEST", "Default topic resources are not allowed.")
        illegal = invalid_topic_name(name)
        if illegal is not None:
            raise ConfigChangeError(illegal.error, illegal.message)
        for key, value in updated.items():
            try:
                validate_topic_config(key, value, cluster.settings.kafka_version)
            except InvalidConfigError as exc:
                raise ConfigChangeError("INVALID_CONFIG", str(exc)) from None
        if topic is None:
            raise ConfigChangeError("UNKNOWN_TOPIC_OR_PARTITION",
                                    f"The topic '{name}' does not exist.")
    elif resource_type == GROUP:
        current = cluster.groups.share.configs.get(name, {})
        updated = _updated(current, ops, replace, lambda key: False)
        if name == "":  # as a topic's name, after the operations
            raise ConfigChangeError("INVALID_REQUEST", "Default group resources are not allowed.")
        _check_group_configs(updated, cluster.groups.share.settings,
                             cluster.groups.streams.settings, cluster.broker_config)
        if not validate_only:
            current = cluster.groups.share.configs.setdefault(name, current)
    elif resource_type == CLIENT_METRICS:
        updated = _updated(cluster.client_metrics.configs.get(name, {}), ops, replace,
                           lambda key: False)
        try:
            client_metrics.check(name, updated)
        except ClusterError as exc:
            raise ConfigChangeError(exc.error, exc.message) from None
        if not validate_only:
            cluster.client_metrics.update(name, updated)
        return
    else:
        raise ConfigChangeError("INVALID_REQUEST", f"Unknown resource type {resource_type}")
    if not validate_only:
        current.clear()
        current.update(updated)


def alter_loggers(cluster: Cluster, node: int, name: str, ops: Sequence[Op], *,
                  validate_only: bool, allowed: bool) -> None:
    """Apply SET and DELETE ``ops`` to broker ``name``'s loggers, or raise
    ``ConfigChangeError``: Kafka's preprocessing, then CLUSTER_AUTHORIZATION_FAILED unless
    ``allowed`` (ALTER_CONFIGS on the cluster), then the node id's checks (this broker only),
    then the loggers' (``Loggers.change``)."""
    _check_entries(ops, replace=False)
    if not allowed:  # no message: Kafka's ApiError drops one that is the error's default
        raise ConfigChangeError("CLUSTER_AUTHORIZATION_FAILED", None)
    requested = node_id(name)
    if requested is None:
        raise ConfigChangeError("INVALID_REQUEST", f"Node id must be an integer, but it is: {name}")
    if requested != node:
        raise ConfigChangeError("INVALID_REQUEST",
                                f"Unexpected node id. Expected {node}, but received {requested}")
    try:
        cluster.brokers[node].loggers.change(((op.name, op.op, op.value) for op in ops),
                                             validate_only=validate_only)
    except LoggerChangeError as exc:
        raise ConfigChangeError(exc.error, exc.message) from None


def _check_entries(ops: Sequence[Op], replace: bool) -> None:
    """Kafka's first checks of a resource's entries: no key twice, no null value but a
    DELETE's."""
    names = [op.name for op in ops]
    if len(set(names)) != len(names):
        raise ConfigChangeError("INVALID_REQUEST", "Error due to duplicate config keys")
    nulls = [op.name for op in ops if op.value is None and (replace or op.op != DELETE)]
    if nulls:
        raise ConfigChangeError("INVALID_REQUEST",
                                "Null value not supported for : " + ", ".join(nulls))


def _check_group_configs(configs: dict[str, str], settings: ShareSettings,
                         streams_settings: StreamsSettings,
                         broker_config: Callable[[str], str | None]) -> None:
    """A group's configs, each a group config of a value Kafka takes within the broker's
    limits, ``settings``, ``streams_settings`` and ``broker_config``
    (``fakebroker.state.group_configs``)."""
    from fakebroker.state.group_configs import check, check_session_exceeds_heartbeat

    try:
        for key, value in configs.items():
            check(key, value, settings, streams_settings, broker_config)
        check_session_exceeds_heartbeat(configs, broker_config)
    except ClusterError as exc:
        raise ConfigChangeError(exc.error, exc.message) from None


def _broker_configs(cluster: Cluster, name: str, node_id: int) -> dict[str, str]:
    """The dynamic configs of broker resource ``name`` ("" the cluster default), after
    Kafka's check that a named broker is this node."""
    if name == "":
        return cluster.default_broker_configs
    try:
        broker = int(name)
    except ValueError:
        raise ConfigChangeError("INVALID_REQUEST",
                                f"Node id must be an integer, but it is: {name}") from None
    if broker != node_id:
        raise ConfigChangeError("INVALID_REQUEST",
                                f"Unexpected broker id, expected {node_id}, but received {name}")
    return cluster.broker_configs.setdefault(broker, {})


def _topic_is_list(name: str) -> bool:
    d = TOPIC_DEFAULTS.get(name)
    return d is not None and d.type == LIST


def _broker_is_list(name: str) -> bool:
    d = broker_config_def(name)
    return d is not None and d.type == LIST


def _updated(current: dict[str, str], ops: Sequence[Op], replace: bool,
             is_list: Callable[[str], bool]) -> dict[str, str]:
    """The resource's configs after ``ops`` (all of them replaced when ``replace``)."""
    updated = {} if replace else dict(current)
    for op in ops:
        if op.op == SET:
            updated[op.name] = str(op.value)
        elif op.op == DELETE:
            updated.pop(op.name, None)
        else:  # APPEND, SUBTRACT
            if not is_list(op.name):
                raise ConfigChangeError("INVALID_CONFIG",
                                        f"Can't {OP_NAMES[op.op]} to key {op.name} because "
                                        "its type is not LIST.")
            parts = [p for p in _list_value(updated, op.name).split(",") if p]
            for value in str(op.value).split(","):
                if op.op == APPEND and value not in parts:
                    parts.append(value)
                elif op.op == SUBTRACT and value in parts:
                    parts.remove(value)
            updated[op.name] = ",".join(parts)
    return updated


def _list_value(configs: dict[str, str], name: str) -> str:
    if name in configs:
        return configs[name]
    d = TOPIC_DEFAULTS.get(name) or broker_config_def(name)
    return (d.default if d is not None else None) or ""


def _check_broker_change(changed: dict[str, str]) -> None:
    """Kafka's DynamicBrokerConfig: only dynamic configs, each valid by its Kafka validator
    (declared in ``fakebroker.options.BROKER_CONFIGS``; a refusal is INVALID_REQUEST,
    KAFKA-13609)."""
    static = sorted(k for k in changed if (d := BROKER_DEFAULTS.get(k)) is not None
                    and d.read_only)
    if static:
        raise ConfigChangeError("INVALID_REQUEST", "Cannot update these configs dynamically: "
                                                   f"[{', '.join(static)}]")
    for key, value in changed.items():
        declared = BROKER_CONFIGS.get(key)
        d = broker_config_def(key)
        if declared is not None:
            complaint = declared.complaint(value)
        elif d is not None:
            complaint = _type_complaint(d.type, value)
        else:
            continue
        if complaint is not None:
            raise ConfigChangeError("INVALID_REQUEST", f"Invalid value {value} for "
                                                       f"configuration {key}: {complaint}")


def _type_complaint(kind: int, value: str) -> str | None:
    try:
        if kind in (INT, LONG, SHORT):
            int(value)
        elif kind == DOUBLE:
            float(value)
    except ValueError:
        return f"Not a number of type {TYPE_NAMES[kind]}"
    if kind == BOOLEAN and value.lower() not in ("true", "false"):
        return "Expected value to be either true or false"
    return None
