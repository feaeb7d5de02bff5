"""ListConfigResources (key 74): the resources a client may describe configs of
(ListClientMetricsResources before KIP-1142).

Versions: 0-1 (4.x). Flexible from v0.

Behavior, as Kafka 4.4's KafkaApis answers (measured, and read from its bytecode): v0 lists
client metrics subscriptions only (``fakebroker.state.client_metrics``: each with a config
set; deleting its last config removes it), in the order Kafka's map of them lists them. v1
lists the types asked for (an empty list: every type), in this order whatever the request's:
groups with configs (32: those with a config set through IncrementalAlterConfigs) and client
metrics subscriptions (16, as v0 lists them); broker loggers (8) and brokers (4), each
registered broker by id (a stopped one too, as Kafka's ``getBrokerNodes`` lists fenced
brokers); topics (2), every topic. A type not among
those gets UNSUPPORTED_VERSION and no resources. DESCRIBE_CONFIGS on the cluster, else
CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import error_code

API_KEY = 74
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
# Every type listed, in the order Kafka lists them.
LISTED = (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)
ERROR_PLACEMENT = Placement(top_fields={"config_resources": ()})
AUTHORIZES = (cluster("DESCRIBE_CONFIGS"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "config_resources": []}
    if ctx.version == 0:
        answer["config_resources"] = [{"resource_name": name, "resource_type": CLIENT_METRICS}
                                      for name in ctx.cluster.client_metrics.names()]
        return answer
    asked = set(request.resource_types) or set(LISTED)
    if not asked <= set(LISTED):
        answer["error_code"] = error_code("UNSUPPORTED_VERSION")
        return answer
    brokers = [str(b) for b in sorted(ctx.cluster.brokers)]
    names = {BROKER_LOGGER: brokers, BROKER: brokers, TOPIC: list(ctx.cluster.topics),
             GROUP: [g for g, configs in ctx.cluster.groups.share.configs.items() if configs],
             CLIENT_METRICS: ctx.cluster.client_metrics.names()}
    answer["config_resources"] = [{"resource_name": name, "resource_type": kind}
                                  for kind in LISTED if kind in asked for name in names[kind]]
    return answer
