"""IncrementalAlterConfigs (key 44): SET, DELETE, APPEND or SUBTRACT single configs of a
topic, a broker, the cluster default (broker resource ""), a group or a client metrics
subscription; SET or DELETE a broker's log levels.

Versions: 0-1. Flexible from v1.

Behavior: as AlterConfigs (``fakebroker.api.alter_configs``), but each config entry is an
operation on the resource's current dynamic configs: SET (0) a value, DELETE (1) it (back to
the broker or cluster default; deleting one never set is no error), APPEND (2) or SUBTRACT
(3) comma-separated items of a list config (``cleanup.policy``: starting from its default),
else INVALID_CONFIG "Can't APPEND to key ... because its type is not LIST."; a null value
is allowed only for DELETE; an unknown operation, INVALID_REQUEST.

Client metrics subscriptions (type 16, KIP-714; ``fakebroker.state.client_metrics``), as Kafka
4.4's controller changes them (measured): SET and DELETE only (APPEND/SUBTRACT: INVALID_CONFIG
"Can't APPEND to key metrics because its type is not LIST.", its lists too; an unknown
operation UNKNOWN_SERVER_ERROR, no message), then the subscription's whole new set of configs
is checked as Kafka does (a name, only ``metrics``, ``interval.ms``, ``match``, values Kafka
takes: errors and texts in that module); deleting a config never set is no error, deleting
its last config removes the subscription. ``validate_only`` checks and changes nothing.

Broker loggers (type 8, KIP-412; ``fakebroker.state.loggers``), as Kafka 4.4's broker handles
them itself (measured): after the checks above (each resource once, no key twice, no null
value but a DELETE's), ALTER_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED, message
null), then the resource names this broker ("Node id must be an integer, but it is: x",
"Unexpected node id. Expected 1, but received 2": INVALID_REQUEST); every operation is checked
before any applies: SET a listed logger to DEBUG, ERROR, FATAL, INFO, TRACE or WARN (upper
case), DELETE one but root (it takes its ancestors' level again); INVALID_CONFIG "Logger x does
not exist!" or "Cannot set the log level of root to OFF as it is not a supported log level.
Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"; INVALID_REQUEST "Removing the
log level of the root logger is not allowed", "APPEND operation is not allowed for the
BROKER_LOGGER resource" (SUBTRACT alike), "Unknown operation type 7 is not allowed for the
BROKER_LOGGER resource". ``validate_only`` checks and changes nothing. DescribeConfigs reports
the new levels at once.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.alter_configs import alter_resources
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.state.config_changes import Op

API_KEY = 44
# Resources (topics, brokers) are matched by a rule's topic, as topics.
ERROR_PLACEMENT = Placement(per_topic("resources", "responses", "resource_name",
                                      echoed=("resource_type",)))
AUTHORIZES = (in_handler(
    "ALTER_CONFIGS on each resource: a topic's TOPIC_AUTHORIZATION_FAILED, the cluster's "
    "(a broker, a broker's loggers, a client metrics subscription) "
    "CLUSTER_AUTHORIZATION_FAILED"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "responses": alter_resources(
        request, ctx, lambda r: [Op(c.name, c.value, c.config_operation) for c in r.configs],
        replace=False, allowed=lambda kind, name: ctx.allowed("ALTER_CONFIGS", kind, name))}
