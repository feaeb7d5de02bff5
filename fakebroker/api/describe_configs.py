"""DescribeConfigs (key 32): topic, broker, group and client metrics configuration, with
Kafka's defaults; a broker's loggers and their levels.

Versions: 0-4 (3.9; 4.x keeps 1-4). Flexible from v4.

Behavior (a new Kafka 4.4 cluster's answers):
* Topic resources (type 2): every topic config Kafka 4.4 lists; explicitly set ones with
  source TOPIC_CONFIG (Kafka's DYNAMIC_TOPIC_CONFIG), then from this broker's dynamic
  config of the broker synonym (DYNAMIC_BROKER_CONFIG), the cluster's dynamic default
  (DYNAMIC_DEFAULT_BROKER_CONFIG: min.insync.replicas, as a formatted 4.x cluster has it, and
  whatever IncrementalAlterConfigs / AlterConfigs set), the broker's static config
  (STATIC_BROKER_CONFIG: an override it started with), the rest DEFAULT_CONFIG; an illegal
  name: INVALID_TOPIC_EXCEPTION with Kafka's message, checked first as Kafka's ConfigHelper
  does; unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
* Broker resources (type 4): the broker configs this fake knows (``fakebroker.options.
  BROKER_CONFIGS``), with the values the cluster runs with
  (``auto.create.topics.enable=false`` for a cluster started without auto-creation):
  STATIC_BROKER_CONFIG where that is not Kafka's default, DEFAULT_CONFIG where it is, a
  dynamic value (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG) before
  either; read-only unless Kafka can change it on a running broker. A dynamic config Kafka
  does not know is listed as Kafka lists it: type UNKNOWN, sensitive (no value), read-only.
  For this broker's id only; another id: INVALID_REQUEST. The cluster default resource ("")
  lists the cluster's dynamic defaults.
* Broker loggers (type 8, KIP-412): this broker's loggers (``fakebroker.state.loggers``: the
  two Kafka 4.4 lists when it logs as the project's real broker does, ``root`` and
  ``org.apache.kafka.server.logger.LoggingController``) with their levels, as Kafka's
  ConfigHelper answers them: source DYNAMIC_BROKER_LOGGER_CONFIG (6), not read-only, not
  sensitive, no synonyms, config type UNKNOWN, documentation "" (whatever was asked);
  ``configuration_keys`` null or empty lists all. The resource is named by this broker's id as
  Java's ``Integer.parseInt`` reads it ("01", "+1" too); INVALID_REQUEST "Broker id must not be
  empty", "Broker id must be an integer, but it is: x", "Unexpected broker id, expected 1
  but received 2".
* Group resources (type 32): every group config of Kafka 4.4, existing group or not, those
  set on the group (IncrementalAlterConfigs) with source DYNAMIC_GROUP_CONFIG (8), the others
  from the broker config backing each (``fakebroker.state.group_configs``) as this broker
  runs with it: its dynamic config, the cluster's dynamic default, the static config (an
  override it started with), else DEFAULT_CONFIG; the synonyms list each of those set, then
  the default. The empty name: INVALID_REQUEST "Group name must not be empty".
* Client metrics subscriptions (type 16, KIP-714; ``fakebroker.state.client_metrics``), as
  Kafka 4.4's ConfigHelper describes them (measured): for any name, subscribed or not, its
  three configs in Kafka's order, ``interval.ms`` (INT), ``match``, ``metrics`` (LIST), each
  set one as Kafka parsed it (``described``) with source CLIENT_METRICS_CONFIG (7) and itself
  as its one synonym, the others their default (DEFAULT_CONFIG, no synonym); not read-only,
  not sensitive; their documentation when asked (v3+), else null. The empty name:
  INVALID_REQUEST "Client metrics subscription name must not be empty". DESCRIBE_CONFIGS on
  the cluster, as a broker's.
* ``configuration_keys`` filters by name (null or empty: all, measured); v1+ synonyms when
  asked (Kafka's order: the topic's own value, the broker's dynamic config, the cluster's
  dynamic default, the static config, the broker default; a config with several names,
  log.retention.ms / .minutes / .hours, lists each set one per level, from the first entry of
  its own name, as Kafka's ConfigHelper does); v3+ config types (documentation text for
  client metrics configs alone). A result's error message is "", as Kafka sends.
* A resource of any other type fails the whole request, as Kafka 4.4 fails it (measured):
  every resource INVALID_REQUEST with Kafka's text for a malformed request, no configs.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import ERRORS, MESSAGES, in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state import client_metrics
from fakebroker.state.acls import CLUSTER_NAME
from fakebroker.state.cluster import NEW_CLUSTER_DEFAULTS, Topic, invalid_topic_name
from fakebroker.state.config_changes import broker_config_def
from fakebroker.state.configs import (
    BROKER_DEFAULTS,
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_BROKER_LOGGER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    FIXED,
    STATIC_BROKER_CONFIG,
    UNKNOWN,
    ConfigDef,
    synonym_chain,
    topic_config,
    topic_config_defs,
)
from fakebroker.state.loggers import Loggers, node_id

API_KEY = 32
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
CLIENT_METRICS, CLIENT_METRICS_CONFIG = client_metrics.CLIENT_METRICS, 7
NO_CONFIGS = {"configs": ()}  # a resource's answer before its configs (and beside an error)
# Resources (topics, brokers) are matched by a rule's topic, as topics.
ERROR_PLACEMENT = Placement(per_topic("resources", "results", "resource_name",
                                      echoed=("resource_type",), error_fields=NO_CONFIGS))
AUTHORIZES = (in_handler(
    "DESCRIBE_CONFIGS on each resource: a topic's TOPIC_AUTHORIZATION_FAILED, a group's "
    "GROUP_AUTHORIZATION_FAILED, the cluster's (a broker, a broker's loggers, a client "
    "metrics subscription) CLUSTER_AUTHORIZATION_FAILED"),)


def _entry(d: ConfigDef, value: str | None, source: int, read_only: bool,
           synonyms: list[tuple[str, str | None, int]]) -> dict[str, Any]:
    if d.sensitive:  # Kafka hides a sensitive value, its synonyms' too
        value, synonyms = None, [(n, None, s) for n, _, s in synonyms]
    return {"name": d.name, "value": value, "read_only": read_only,
            "is_default": source == DEFAULT_CONFIG, "config_source": source,
            "is_sensitive": d.sensitive, "config_type": d.type, "documentation": None,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in synonyms]}


def topic_config_entries(topic: Topic, names: list[str] | None, synonyms: bool = False,
                         broker: int | None = None, release: str | None = None
                         ) -> list[dict[str, Any]]:
    """Config entries of ``topic`` on ``broker``, filtered by ``names``: set on the topic,
    else from its broker synonym (that broker's dynamic configs, the cluster's dynamic
    defaults, the static configs), else Kafka's default; those of release line ``release``
    (``message.format.version`` before 4.0)."""
    layers = topic.config_layers(broker)
    entries = []
    for name, d in topic_config_defs(release).items():
        if names is not None and name not in names:
            continue
        value, source, chain = topic_config(name, topic.configs, layers, release)
        entries.append(_entry(d, value, source, False, chain if synonyms else []))
    return entries


def broker_config_entries(names: list[str] | None, running: dict[str, str],
                          synonyms: bool = False, dynamic: dict[str, str] | None = None,
                          defaults: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The broker configs, filtered by ``names``, each from the first of: the broker's
    dynamic configs (``dynamic``), the cluster's dynamic defaults (``defaults``, a new
    cluster's when None), the ``running`` values (the cluster's static configs) or the fake's
    fixed values where not Kafka's default, Kafka's default; synonyms as Kafka lists them
    (``log.retention.ms`` with ``log.retention.hours``). Dynamic configs the fake does not
    report otherwise are listed too."""
    dynamic = dynamic or {}
    defaults = NEW_CLUSTER_DEFAULTS if defaults is None else defaults
    static = {**FIXED, **{k: v for k, v in running.items()
                          if k not in BROKER_DEFAULTS or v != BROKER_DEFAULTS[k].default}}
    layers = [(dynamic, DYNAMIC_BROKER_CONFIG), (defaults, DYNAMIC_DEFAULT_BROKER_CONFIG),
              (static, STATIC_BROKER_CONFIG)]
    entries = []
    listed = list(BROKER_DEFAULTS.values()) + [
        _broker_def(name) for name in sorted({*dynamic, *defaults} - set(BROKER_DEFAULTS))]
    for d in listed:
        if names is not None and d.name not in names:
            continue
        if d.type == UNKNOWN:
            chain = [(d.name, values[d.name], source) for values, source in layers
                     if d.name in values]
        else:
            chain = synonym_chain(d.name, layers)
        _, value, source = chain[0] if chain else (d.name, d.default, DEFAULT_CONFIG)
        entries.append(_entry(d, value, source, d.read_only, chain if synonyms else []))
    return entries


def cluster_default_entries(names: list[str] | None, synonyms: bool = False,
                            defaults: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The cluster's dynamic default broker configs (the resource named ""; a new
    cluster's when ``defaults`` is None)."""
    defaults = NEW_CLUSTER_DEFAULTS if defaults is None else defaults
    return [_entry(d, value, DYNAMIC_DEFAULT_BROKER_CONFIG, d.read_only,
                   [(name, value, DYNAMIC_DEFAULT_BROKER_CONFIG)] if synonyms else [])
            for name, value in defaults.items()
            if (names is None or name in names) and (d := _broker_def(name))]


def group_config_entries(configs: dict[str, str], names: list[str] | None,
                         synonyms: bool = False,
                         layers: list[tuple[dict[str, str], int]] | None = None
                         ) -> list[dict[str, Any]]:
    """Every group config of a group (whether or not it exists), each from the first of:
    set on the group (DYNAMIC_GROUP_CONFIG), the broker config backing it in the broker's
    ``layers`` (its dynamic configs, the cluster's dynamic defaults, the static configs:
    values and source, highest first), Kafka's default; the synonyms list them all, as
    Kafka 4.4 describes them (measured). Kafka's internal group configs come first, only
    those set on the group, in the order set."""
    from fakebroker.state.group_configs import (
        BY_NAME,
        DYNAMIC_GROUP_CONFIG,
        GROUP_CONFIGS,
        INTERNAL_GROUP_CONFIGS,
    )

    entries = []
    internal = [BY_NAME[n] for n in configs if BY_NAME.get(n) in INTERNAL_GROUP_CONFIGS]
    for d in internal + list(GROUP_CONFIGS):
        if names is not None and d.name not in names:
            continue
        synonym = d.synonym or d.name
        chain = [link for link in synonym_chain(synonym, layers or [])
                 if link[2] != DEFAULT_CONFIG] + [(synonym, d.default, DEFAULT_CONFIG)]
        if d.name in configs:
            chain.insert(0, (d.name, configs[d.name], DYNAMIC_GROUP_CONFIG))
        _, value, source = chain[0]
        entries.append(_entry(d, value, source, False, chain if synonyms else []))
    return entries


def client_metrics_entries(configs: dict[str, str], names: list[str] | None,
                           synonyms: bool = False, documentation: bool = False
                           ) -> list[dict[str, Any]]:
    """A client metrics subscription's configs (``configs``: those set, as given), filtered
    by ``names`` (null or empty: all): each set one as Kafka parsed it, from the
    subscription, the others their default; with its documentation when ``documentation``."""
    entries = []
    for d in client_metrics.CONFIGS:
        if names and d.name not in names:
            continue
        if d.name in configs:
            value = client_metrics.described(d.name, configs[d.name])
            chain = [(d.name, value, CLIENT_METRICS_CONFIG)]
        else:
            value, chain = d.default, []
        entry = _entry(d, value, chain[0][2] if chain else DEFAULT_CONFIG, False,
                       chain if synonyms else [])
        if documentation:
            entry["documentation"] = client_metrics.DOCUMENTATION[d.name]
        entries.append(entry)
    return entries


def broker_logger_entries(loggers: Loggers, names: list[str] | None) -> list[dict[str, Any]]:
    """A broker's loggers, filtered by ``names`` (null or empty: all), each with its level."""
    return [{"name": name, "value": level, "read_only": False, "is_default": False,
             "config_source": DYNAMIC_BROKER_LOGGER_CONFIG, "is_sensitive": False,
             "config_type": UNKNOWN, "documentation": "", "synonyms": []}
            for name, level in loggers.levels().items() if not names or name in names]


def _broker_logger_refusal(name: str, broker: int) -> str | None:
    """Kafka's message refusing broker loggers resource ``name`` on ``broker``, if it does."""
    if name == "":
        return "Broker id must not be empty"
    if node_id(name) is None:
        return f"Broker id must be an integer, but it is: {name}"
    if node_id(name) != broker:
        return f"Unexpected broker id, expected {broker} but received {name}"
    return None


def _broker_def(name: str) -> ConfigDef:
    """A broker config's definition; a name Kafka does not know (yet can be set dynamically)
    is described as Kafka describes it: type UNKNOWN, sensitive (no value), read-only."""
    return broker_config_def(name) or ConfigDef(name, None, UNKNOWN, sensitive=True,
                                                read_only=True)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if any(r.resource_type not in CHECKED for r in request.resources):
        return {"throttle_time_ms": 0, "results": [
            dict(NO_CONFIGS, resource_type=r.resource_type, resource_name=r.resource_name,
                 error_code=error_code("INVALID_REQUEST"), error_message=MALFORMED)
            for r in request.resources]}
    results, refused = [], []
    for resource in request.resources:
        result: dict[str, Any] = dict(NO_CONFIGS, resource_type=resource.resource_type,
                                      resource_name=resource.resource_name, error_code=0,
                                      error_message="")
        names = resource.configuration_keys or None  # null or empty: every config
        refusal = _refusal(ctx, resource.resource_type, resource.resource_name)
        if refusal is not None:
            result.update(error_code=error_code(refusal[0]), error_message=refusal[1])
            refused.append(result)
            continue
        if resource.resource_type == TOPIC:
            topic = ctx.cluster.topics.get(resource.resource_name)
            illegal = invalid_topic_name(resource.resource_name)
            if illegal is not None:
                result.update(error_code=illegal.code, error_message=illegal.message)
            elif topic is None:
                result["error_code"] = error_code("UNKNOWN_TOPIC_OR_PARTITION")
            else:
                result["configs"] = topic_config_entries(
                    topic, names, request.include_synonyms, ctx.broker.id,
                    ctx.cluster.settings.kafka_version)
        elif resource.resource_type == BROKER:
            if resource.resource_name == "":
                result["configs"] = cluster_default_entries(
                    names, request.include_synonyms, ctx.cluster.default_broker_configs)
            elif resource.resource_name != str(ctx.broker.id):
                result.update(error_code=error_code("INVALID_REQUEST"),
                              error_message="Unexpected broker id, expected "
                                            f"{ctx.broker.id} or empty string, but received "
                                            f"{resource.resource_name}")
            else:
                result["configs"] = broker_config_entries(
                    names, ctx.cluster.static_broker_configs, request.include_synonyms,
                    ctx.cluster.broker_configs.get(ctx.broker.id),
                    ctx.cluster.default_broker_configs)
        elif resource.resource_type == GROUP and not resource.resource_name:
            result.update(error_code=error_code("INVALID_REQUEST"),
                          error_message="Group name must not be empty")
        elif resource.resource_type == GROUP:
            cluster = ctx.cluster
            result["configs"] = group_config_entries(
                cluster.groups.share.configs.get(resource.resource_name, {}), names,
                request.include_synonyms, [
                    (cluster.broker_configs.get(ctx.broker.id, {}), DYNAMIC_BROKER_CONFIG),
                    (cluster.default_broker_configs, DYNAMIC_DEFAULT_BROKER_CONFIG),
                    (cluster.static_broker_configs, STATIC_BROKER_CONFIG)])
        elif resource.resource_type == CLIENT_METRICS and not resource.resource_name:
            result.update(error_code=error_code("INVALID_REQUEST"),
                          error_message="Client metrics subscription name must not be empty")
        elif resource.resource_type == CLIENT_METRICS:
            result["configs"] = client_metrics_entries(
                ctx.cluster.client_metrics.configs.get(resource.resource_name, {}), names,
                request.include_synonyms, request.include_documentation)
        elif resource.resource_type == BROKER_LOGGER:
            message = _broker_logger_refusal(resource.resource_name, ctx.broker.id)
            if message is not None:
                result.update(error_code=error_code("INVALID_REQUEST"), error_message=message)
            else:
                result["configs"] = broker_logger_entries(ctx.broker.loggers, names)
        results.append(result)
    return {"throttle_time_ms": 0, "results": results + refused}


# The text Kafka answers for a request it fails whole as malformed (INVALID_REQUEST's own).
MALFORMED = ("This most likely occurs because of a request being malformed by the client "
             "library or the message was sent to an incompatible broker. See the broker logs "
             "for more details.")
# Resource type -> the ACL resource its DESCRIBE_CONFIGS is checked on (every type described).
CHECKED = {TOPIC: "TOPIC", GROUP: "GROUP", BROKER: "CLUSTER", BROKER_LOGGER: "CLUSTER",
           CLIENT_METRICS: "CLUSTER"}


def _refusal(ctx: RequestContext, resource_type: int, name: str) -> tuple[str, str] | None:
    """Kafka's ConfigHelper: DESCRIBE_CONFIGS on the topic, the group or (a broker, a client
    metrics subscription) the cluster, else its error and message; refused resources are
    answered after the rest."""
    acl_type = CHECKED.get(resource_type)
    if acl_type is None or ctx.authorizer is None:
        return None
    resource = CLUSTER_NAME if acl_type == "CLUSTER" else name
    if ctx.allowed("DESCRIBE_CONFIGS", acl_type, resource):
        return None
    return ERRORS[acl_type], MESSAGES[ERRORS[acl_type]]
