"""What the three ACL APIs share: ACLs and filters as their requests carry them (Kafka's
codes), whether an authorizer is configured (without one they answer SECURITY_DISABLED), and
the refusal of codes Kafka cannot parse."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakebroker.api.context import ConnectionClosed, RequestContext
from fakebroker.state.acls import (
    OPERATIONS,
    PATTERN_TYPES,
    PERMISSIONS,
    RESOURCE_TYPES,
    Acl,
    AclFilter,
    name_of,
)

NO_AUTHORIZER = "No Authorizer is configured."  # Kafka's message (CreateAcls, DeleteAcls)


def authorizing(ctx: RequestContext) -> bool:
    """Whether the cluster runs an authorizer (without one: SECURITY_DISABLED)."""
    return ctx.cluster.settings.authorizer


FILTER_CODES = ("resource_type_filter", "pattern_type_filter", "operation", "permission_type")
CREATION_CODES = ("resource_type", "resource_pattern_type", "operation", "permission_type")


def refuse_unknown(entries: Iterable[Any], fields: tuple[str, ...], what: str) -> None:
    """``ConnectionClosed`` for an entry with one of ``fields`` at UNKNOWN's own code (0):
    Kafka's ACL request classes refuse it as they parse the request, with or without an
    authorizer (measured). Other codes they do not know pass the parsing (``names``)."""
    if any(entry[name] == 0 for entry in entries for name in fields):
        raise ConnectionClosed(f"malformed request: {what} contain UNKNOWN elements")


def names(entry: Any, resource_type: str, pattern_type: str, operation: str,
          permission: str, what: str) -> tuple[str, str, str, str]:
    """An entry's four coded fields by name; ``ConnectionClosed`` for a code Kafka reads as
    UNKNOWN (its request parsing fails, and the broker closes the connection)."""
    found = (name_of(RESOURCE_TYPES, entry[resource_type]),
             name_of(PATTERN_TYPES, entry[pattern_type]),
             name_of(OPERATIONS, entry[operation]), name_of(PERMISSIONS, entry[permission]))
    if "UNKNOWN" in found:
        raise ConnectionClosed(f"malformed request: {what} contain UNKNOWN elements")
    return found


def acl_of(creation: Any) -> Acl:
    """The ACL a CreateAcls creation asks for."""
    resource_type, pattern_type, operation, permission = names(
        creation, "resource_type", "resource_pattern_type", "operation", "permission_type",
        "CreatableAcls")
    return Acl(resource_type, creation.resource_name, pattern_type, creation.principal,
               creation.host, operation, permission)


def filter_of(entry: Any, version: int, what: str) -> AclFilter:
    """The filter of a DescribeAcls request or DeleteAcls filter: v0 knows only literal
    patterns (ANY is read as LITERAL, others refused, as Kafka's request classes do)."""
    resource_type, pattern_type, operation, permission = names(
        entry, "resource_type_filter", "pattern_type_filter", "operation", "permission_type",
        what)
    if version == 0:
        if pattern_type not in ("ANY", "LITERAL"):
            raise ConnectionClosed(f"malformed request: version 0 does not support pattern "
                                   f"type {pattern_type}")
        pattern_type = "LITERAL"
    return AclFilter(resource_type, entry.resource_name_filter, pattern_type,
                     entry.principal_filter, entry.host_filter, operation, permission)


def binding_fields(acl: Acl) -> dict[str, Any]:
    """An ACL as DeleteAcls' matching ACLs carry it (codes)."""
    return {"resource_type": RESOURCE_TYPES[acl.resource_type],
            "resource_name": acl.resource_name,
            "pattern_type": PATTERN_TYPES[acl.pattern_type], "principal": acl.principal,
            "host": acl.host, "operation": OPERATIONS[acl.operation],
            "permission_type": PERMISSIONS[acl.permission]}
