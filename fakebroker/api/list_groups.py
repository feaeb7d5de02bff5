"""ListGroups (key 16): the groups this broker coordinates.

Versions: 0-5. Flexible from v3; v4 filters by state, v5 by type ("classic").

Behavior: lists groups whose coordinator is this broker, as every Kafka broker answers for
its own groups, classic ones with type "classic", KIP-848 ones with type "consumer" and
share groups with type and protocol type "share", streams groups with "streams";
state and type filters compare case-insensitively, as Kafka does. A classic group only a
commit that stored nothing made is left out until its ``__consumer_offsets`` partition is
written, as DescribeGroups leaves it (Kafka's reads; measured on 4.4). With an authorizer, a
principal without DESCRIBE on the cluster sees only the groups it may DESCRIBE.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.state.acls import CLUSTER_NAME

API_KEY = 16
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (in_handler(
    "DESCRIBE on the cluster, or on each group: the others are left out"),)
CLASSIC, CONSUMER, SHARE, STREAMS = "classic", "consumer", "share", "streams"


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    states = {s.lower() for s in request.states_filter}
    types = {t.lower() for t in request.types_filter}
    groups = ctx.cluster.groups
    every = ctx.allowed("DESCRIBE", "CLUSTER", CLUSTER_NAME)
    found = [(g.group_id, g.protocol_type or "", g.state.value, CLASSIC)
             for g in groups.classic.groups.values() if not g.unwritten]
    found += [(g.group_id, CONSUMER, g.state, CONSUMER) for g in groups.consumer.groups.values()]
    found += [(g.group_id, SHARE, g.state, SHARE) for g in groups.share.groups.values()]
    found += [(g.group_id, STREAMS, g.state, STREAMS) for g in groups.streams.groups.values()]
    groups = [{"group_id": group_id, "protocol_type": protocol_type, "group_state": state,
               "group_type": group_type}
              for group_id, protocol_type, state, group_type in found
              if ctx.is_coordinator(group_id)
              and (not states or state.lower() in states)
              and (not types or group_type in types)
              and (every or ctx.allowed("DESCRIBE", "GROUP", group_id))]
    return {"throttle_time_ms": 0, "error_code": 0, "groups": groups}
