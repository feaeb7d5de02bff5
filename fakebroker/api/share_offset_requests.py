"""What AlterShareGroupOffsets and DeleteShareGroupOffsets share: the whole-request refusal
before any topic is looked at.

Guarantees: ``refusal`` answers INVALID_GROUP_ID ("The group id is invalid.") for an empty
group id (``invalid_group_id``) first, as Kafka's group coordinator does, then NOT_COORDINATOR
on a broker that is not the group's coordinator, else the error (code and message) the share
groups' ``check`` raises for the group (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP ...), else None:
the request goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakebroker.api.context import RequestContext
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.groups import invalid_group_id


def refusal(group_id: str, ctx: RequestContext,
            check: Callable[[str], None]) -> dict[str, Any] | None:
    """The answer refusing the whole request for ``group_id``, or None when it may go on."""
    if invalid_group_id(group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("INVALID_GROUP_ID"),
                "error_message": "The group id is invalid.", "responses": []}
    if not ctx.is_coordinator(group_id):
        return {"throttle_time_ms": 0, "error_code": error_code("NOT_COORDINATOR"),
                "responses": []}
    try:
        check(group_id)
    except ClusterError as exc:
        return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": exc.message,
                "responses": []}
    return None
