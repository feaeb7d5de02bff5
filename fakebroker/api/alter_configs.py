"""AlterConfigs (key 33): replace a topic's, a broker's or a client metrics subscription's
whole set of dynamic configs.

Versions: 0-2. Flexible from v2.

Behavior (Kafka 4.4's broker preprocessing, then its controller's checks;
``fakebroker.state.config_changes``): each resource's given configs become its whole dynamic
set (the ones left out are deleted), or the resource gets an error and is left as it was: a
resource named twice, INVALID_REQUEST "Each resource must appear at most once."; a duplicate
key or a null value, INVALID_REQUEST; a broker other than this one, or a config a running
broker cannot change ("Cannot update these configs dynamically: [...]"), or a value of the
wrong type, INVALID_REQUEST; an unknown topic config or a bad value, INVALID_CONFIG with
Kafka's text; a topic that does not exist, UNKNOWN_TOPIC_OR_PARTITION; a client metrics
subscription (type 16, KIP-714) whose configs Kafka refuses, with its error and text
(``fakebroker.state.client_metrics``; the set given replaces the subscription's, an empty one
removes it); other resource types, INVALID_REQUEST "Unknown resource type 8" (broker loggers:
only IncrementalAlterConfigs sets log levels, measured). ``validate_only`` checks and changes
nothing. A topic config's value is read as Kafka's ConfigDef reads it: trimmed of every
character up to U+0020 (control characters too), a list's items split at commas, none empty
("Configuration 'cleanup.policy' values must not be empty."). A topic's configs take effect at
once (produce limits, timestamps); DescribeConfigs then reports them as Kafka parsed them
("+5000" as 5000) (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG).
Answers in the request's order, error_message null on success.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fakebroker.api.access import ERRORS, MESSAGES, in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.protocol.errors import error_code
from fakebroker.state.acls import CLUSTER_NAME
from fakebroker.state.config_changes import (
    BROKER,
    BROKER_LOGGER,
    CLIENT_METRICS,
    TOPIC,
    ConfigChangeError,
    Op,
    alter,
    alter_loggers,
)

API_KEY = 33
# Resources (topics, brokers) are matched by a rule's topic, as topics.
ERROR_PLACEMENT = Placement(per_topic("resources", "responses", "resource_name",
                                      echoed=("resource_type",)))
AUTHORIZES = (in_handler(
    "ALTER_CONFIGS on each resource: a topic's TOPIC_AUTHORIZATION_FAILED, the cluster's "
    "(a broker, a client metrics subscription) CLUSTER_AUTHORIZATION_FAILED"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "responses": alter_resources(
        request, ctx, lambda r: [Op(c.name, c.value) for c in r.configs], replace=True,
        allowed=lambda kind, name: ctx.allowed("ALTER_CONFIGS", kind, name))}


Allowed = Callable[[str, str], bool]  # (ACL resource type, name) -> may ALTER_CONFIGS


def alter_resources(request: Any, ctx: RequestContext, ops_of: Callable[[Any], Sequence[Op]],
                    *, replace: bool, allowed: Allowed) -> list[dict[str, Any]]:
    """Each resource's answer, its change applied unless refused (shared with
    IncrementalAlterConfigs, which alone changes broker loggers); with an authorizer on,
    ``allowed`` says which resources the principal may alter."""
    keys = [(r.resource_type, r.resource_name) for r in request.resources]
    answers = []
    for resource, key in zip(request.resources, keys, strict=True):
        answer = {"resource_type": resource.resource_type,
                  "resource_name": resource.resource_name,
                  "error_code": 0, "error_message": None}
        try:
            if keys.count(key) > 1:
                raise ConfigChangeError("INVALID_REQUEST",
                                        "Each resource must appear at most once.")
            if resource.resource_type == BROKER_LOGGER and not replace:
                alter_loggers(ctx.cluster, ctx.broker.id, resource.resource_name,
                              ops_of(resource), validate_only=request.validate_only,
                              allowed=ctx.authorizer is None or allowed("CLUSTER", CLUSTER_NAME))
            else:
                _authorize(ctx, allowed, resource.resource_type, resource.resource_name)
                alter(ctx.cluster, ctx.broker.id, resource.resource_type, resource.resource_name,
                      ops_of(resource), replace=replace, validate_only=request.validate_only)
        except ConfigChangeError as exc:
            answer.update(error_code=error_code(exc.error), error_message=exc.message)
        answers.append(answer)
    return answers


def _authorize(ctx: RequestContext, allowed: Allowed, resource_type: int, name: str) -> None:
    """Kafka's ALTER_CONFIGS check: on the topic, or (a broker, a client metrics
    subscription: the controller's authorizeAlterResource) on the cluster."""
    acl_type = {TOPIC: "TOPIC", BROKER: "CLUSTER", CLIENT_METRICS: "CLUSTER"}.get(resource_type)
    if acl_type is None or ctx.authorizer is None:
        return
    if not allowed(acl_type, CLUSTER_NAME if acl_type == "CLUSTER" else name):
        raise ConfigChangeError(ERRORS[acl_type], MESSAGES[ERRORS[acl_type]])
