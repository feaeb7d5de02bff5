"""The cluster's ACLs, as Kafka's controller keeps them (``AclControlManager``): plain objects.

An ``Acl`` is a resource pattern (resource type, name, pattern type) and an entry (principal,
host, operation, permission), all named as Kafka names them (``"TOPIC"``, ``"PREFIXED"``,
``"READ"``, ``"ALLOW"``). ``AclStore`` holds them once each, in the order they were created;
``AclFilter`` selects them as Kafka's ``AclBindingFilter`` does (DescribeAcls, DeleteAcls).
The wire codes of each name are here too (``RESOURCE_TYPES`` ...), the one table the ACL APIs
and the authorizer read.

Guarantees: ``create`` refuses what Kafka's controller refuses, with its messages
(``AclError``); creating an ACL that exists changes nothing and succeeds; ``delete`` matches
every filter against the ACLs as they were before the request (a binding matched by two
filters is listed under both), as Kafka deletes atomically.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# Kafka's codes (ResourceType, PatternType, AclOperation, AclPermissionType); UNKNOWN is 0.
RESOURCE_TYPES = {"ANY": 1, "TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5,
                  "DELEGATION_TOKEN": 6, "USER": 7}
PATTERN_TYPES = {"ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"ANY": 1, "ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7,
              "DESCRIBE": 8, "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11,
              "IDEMPOTENT_WRITE": 12, "CREATE_TOKENS": 13, "DESCRIBE_TOKENS": 14,
              "TWO_PHASE_COMMIT": 15}
PERMISSIONS = {"ANY": 1, "DENY": 2, "ALLOW": 3}
CLUSTER_NAME = "kafka-cluster"  # the one name of the CLUSTER resource
WILDCARD = "*"  # a resource name or host matching any; "User:*" matches any principal


def name_of(table: dict[str, int], code: int) -> str:
    """The name of a code of ``table``; ``"UNKNOWN"`` for a code it lacks (Kafka's
    ``fromCode``)."""
    for name, value in table.items():
        if value == code:
            return name
    return "UNKNOWN"


class AclError(ValueError):
    """An ACL or filter Kafka refuses (INVALID_REQUEST), with Kafka's message."""


@dataclass(frozen=True, slots=True)
class Acl:
    """One ACL binding."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    def covers(self, resource_type: str, name: str) -> bool:
        """Whether this ACL's pattern applies to the resource ``resource_type:name`` (a
        literal name, the literal wildcard ``*``, or a prefix of the name)."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == "PREFIXED":
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD)

    def as_dict(self) -> dict[str, str]:
        return {"resource_type": self.resource_type, "resource_name": self.resource_name,
                "pattern_type": self.pattern_type, "principal": self.principal,
                "host": self.host, "operation": self.operation, "permission": self.permission}


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Selects ACLs as Kafka's ``AclBindingFilter``: None or ``ANY`` matches any value; a
    name with pattern type ``MATCH`` selects the ACLs that would apply to that name
    (literal, wildcard and prefixed); with ``ANY`` or one pattern type, that exact name."""

    resource_type: str = "ANY"
    resource_name: str | None = None
    pattern_type: str = "ANY"
    principal: str | None = None
    host: str | None = None
    operation: str = "ANY"
    permission: str = "ANY"

    def matches(self, acl: Acl) -> bool:
        return self._pattern_matches(acl) and (
            self.principal is None or self.principal == acl.principal) and (
            self.host is None or self.host == acl.host) and (
            self.operation in ("ANY", acl.operation)) and (
            self.permission in ("ANY", acl.permission))

    def _pattern_matches(self, acl: Acl) -> bool:
        if self.resource_type not in ("ANY", acl.resource_type):
            return False
        if self.pattern_type not in ("ANY", "MATCH", acl.pattern_type):
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in ("ANY", acl.pattern_type):
            return self.resource_name == acl.resource_name
        if acl.pattern_type == "PREFIXED":
            return self.resource_name.startswith(acl.resource_name)
        return self.resource_name == acl.resource_name or acl.resource_name == WILDCARD


def check_new_acl(acl: Acl) -> None:
    """Refuse an ACL as Kafka does (the broker's AclApis, then the controller's
    ``validateNewAcl``): ``AclError`` with Kafka's message."""
    if acl.resource_type == "CLUSTER" and acl.resource_name != CLUSTER_NAME:
        raise AclError(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not acl.resource_name:
        raise AclError("Invalid empty resource name")
    if acl.resource_type in ("UNKNOWN", "ANY"):
        raise AclError(f"Invalid resourceType {acl.resource_type}")
    if acl.pattern_type not in ("LITERAL", "PREFIXED"):
        raise AclError(f"Invalid patternType {acl.pattern_type}")
    if acl.operation in ("UNKNOWN", "ANY"):
        raise AclError(f"Invalid operation {acl.operation}")
    if acl.permission not in ("DENY", "ALLOW"):
        raise AclError(f"Invalid permissionType {acl.permission}")
    if ":" not in acl.principal:
        raise AclError(f"Could not parse principal from `{acl.principal}` (no colon is present "
                       "separating the principal type from the principal name)")


class AclStore:
    """Every ACL of the cluster, once each, in creation order."""

    def __init__(self) -> None:
        self._acls: dict[Acl, None] = {}
        self.version = 0  # bumped by every change (answers that depend on ACLs)

    def __iter__(self) -> Iterator[Acl]:
        return iter(self._acls)

    def __len__(self) -> int:
        return len(self._acls)

    def of_type(self, resource_type: str) -> list[Acl]:
        """The ACLs on resources of ``resource_type``."""
        return [acl for acl in self._acls if acl.resource_type == resource_type]

    def create(self, acl: Acl) -> None:
        """Add ``acl`` (``AclError`` if Kafka refuses it; nothing if it exists)."""
        check_new_acl(acl)
        if acl not in self._acls:
            self._acls[acl] = None
            self.version += 1

    def describe(self, selecting: AclFilter) -> list[Acl]:
        """The ACLs ``selecting`` matches, in creation order."""
        return [acl for acl in self._acls if selecting.matches(acl)]

    def delete(self, filters: list[AclFilter]) -> list[list[Acl]]:
        """Remove the ACLs each filter matches; per filter, the ACLs it matched."""
        matched = [self.describe(f) for f in filters]
        for acls in matched:
            for acl in acls:
                if self._acls.pop(acl, 0) is None:
                    self.version += 1
        return matched
