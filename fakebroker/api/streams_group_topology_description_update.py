"""StreamsGroupTopologyDescriptionUpdate (key 93): a Kafka Streams member pushes its topology's
description, for a broker-side description plugin to keep.

Versions: 0 (4.4). Flexible.

Behavior: as a Kafka 4.4 broker without a topology description plugin (its default): every
request is answered UNSUPPORTED_VERSION, "The broker has no streams group topology description
plugin configured.", checked before the group or the member (measured); a heartbeat never asks
for a description (TopologyDescriptionRequired stays false) and StreamsGroupDescribe v1
reports none. Group READ is checked first, as Kafka's; streams.version finalized at 0:
UNSUPPORTED_VERSION with a null message.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.state.features import STREAMS_VERSION

API_KEY = 93
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (groups("READ"),)
NO_PLUGIN = "The broker has no streams group topology description plugin configured."


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if not ctx.cluster.features.at_least(STREAMS_VERSION, 1):  # streams groups turned off
        return {"throttle_time_ms": 0, "error_code": error_code("UNSUPPORTED_VERSION")}
    return {"throttle_time_ms": 0, "error_code": error_code("UNSUPPORTED_VERSION"),
            "error_message": NO_PLUGIN}
