"""DescribeConfigs (key 32): topic and broker configuration, with Kafka's defaults.

Versions: 0-4 (3.9; 4.x keeps 1-4). Flexible from v4.

Behavior:
* Topic resources (type 2): every topic config Kafka 3.9 lists, explicitly set ones with source
  TOPIC_CONFIG, the rest DEFAULT_CONFIG; unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
* Broker resources (type 4): the broker configs this fake honours, with the values the
  cluster runs with (``auto.create.topics.enable=false`` for a cluster started without
  auto-creation), for this broker's id or "" (cluster default); another id: INVALID_REQUEST.
  Broker loggers (type 8): none.
* ``configuration_keys`` filters by name (null = all); v1+ synonyms when asked; v3+ config
  types (and no documentation text).
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.context import RequestContext
from fakebroker.faults.shapes import Placement, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state.configs import (
    BROKER_DEFAULTS,
    DEFAULT_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    TOPIC_DEFAULTS,
)

API_KEY = 32
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
NO_CONFIGS = {"configs": ()}  # a resource's answer before its configs (and beside an error)
# Resources (topics, brokers) are matched by a rule's topic, as topics.
ERROR_PLACEMENT = Placement(per_topic("resources", "results", "resource_name",
                                      echoed=("resource_type",), error_fields=NO_CONFIGS))


def topic_config_entries(
    configs: dict[str, str], names: list[str] | None, synonyms: bool = False
) -> list[dict[str, Any]]:
    """Config entries of a topic with explicit ``configs``, filtered by ``names``."""
    entries = []
    for name, definition in TOPIC_DEFAULTS.items():
        if names is not None and name not in names:
            continue
        explicit = name in configs
        source = TOPIC_CONFIG if explicit else DEFAULT_CONFIG
        value = configs[name] if explicit else definition.default
        entry: dict[str, Any] = {
            "name": name, "value": value, "read_only": False, "is_default": not explicit,
            "config_source": source, "is_sensitive": definition.sensitive,
            "config_type": definition.type, "documentation": None, "synonyms": [],
        }
        if synonyms:
            entry["synonyms"] = [{"name": name, "value": value, "source": source}]
        entries.append(entry)
    return entries


def broker_config_entries(names: list[str] | None, running: dict[str, str]
                          ) -> list[dict[str, Any]]:
    """The broker configs, filtered by ``names``: ``running`` values (the cluster's
    settings) where the cluster has one, Kafka's defaults otherwise."""
    return [
        {"name": d.name, "value": running.get(d.name, d.default), "read_only": True,
         "is_default": False,
         "config_source": STATIC_BROKER_CONFIG, "is_sensitive": d.sensitive,
         "config_type": d.type, "documentation": None, "synonyms": []}
        for d in BROKER_DEFAULTS.values() if names is None or d.name in names
    ]


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    results = []
    for resource in request.resources:
        result: dict[str, Any] = dict(NO_CONFIGS, resource_type=resource.resource_type,
                                      resource_name=resource.resource_name, error_code=0,
                                      error_message=None)
        names = resource.configuration_keys
        if resource.resource_type == TOPIC:
            topic = ctx.cluster.topics.get(resource.resource_name)
            if topic is None:
                result.update(error_code=error_code("UNKNOWN_TOPIC_OR_PARTITION"),
                              error_message=f"Topic {resource.resource_name} does not exist")
            else:
                result["configs"] = topic_config_entries(topic.configs, names,
                                                         request.include_synonyms)
        elif resource.resource_type == BROKER:
            if resource.resource_name not in ("", str(ctx.broker.id)):
                result.update(error_code=error_code("INVALID_REQUEST"),
                              error_message="Unexpected broker id, expected "
                                            f"{ctx.broker.id} or empty string")
            else:
                result["configs"] = broker_config_entries(
                    names, ctx.cluster.settings.kafka_configs())
        elif resource.resource_type != BROKER_LOGGER:
            result.update(error_code=error_code("INVALID_REQUEST"),
                          error_message=f"Unsupported resource type {resource.resource_type}")
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}
