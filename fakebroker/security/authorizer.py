"""Kafka's StandardAuthorizer over the cluster's ACLs (``fakebroker.state.acls``).

``Authorizer.allowed(principal, host, operation, resource_type, name)`` decides as Kafka's
``StandardAuthorizerData.authorize``:

* a super user (``super_users``, e.g. ``User:admin``) may do anything;
* the ACLs that apply are those of the resource type whose pattern covers the name (literal,
  the literal wildcard ``*``, or a prefix), for the principal or ``User:*``, from the client's
  host or ``*``;
* any such DENY for the operation (or ALL) refuses, whatever ALLOWs say;
* else an ALLOW for the operation (or ALL) allows; an ALLOW of READ, WRITE, DELETE or ALTER
  also allows DESCRIBE, one of ALTER_CONFIGS also DESCRIBE_CONFIGS (never a DENY's);
* else, when no ACL at all covers the resource, ``allow_everyone_if_no_acl_found`` decides
  (default: refuse); a resource with ACLs, none of them matching, is refused.

``allowed_on_some(principal, host, operation, resource_type)`` is Kafka's
``authorizeByResourceType`` (InitProducerId's "WRITE on any topic"); ``operations`` the
authorized-operations bit field answers carry.
"""

from __future__ import annotations

from fakebroker.state.acls import OPERATIONS, WILDCARD, Acl, AclStore

IMPLIES_DESCRIBE = frozenset({"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"})
IMPLIES_DESCRIBE_CONFIGS = frozenset({"DESCRIBE_CONFIGS", "ALTER_CONFIGS"})
ANY_PRINCIPAL = "User:*"
# The operations each resource type supports (Kafka's AclEntry.supportedOperations).
SUPPORTED_OPERATIONS = {
    "TOPIC": ("READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS",
              "ALTER_CONFIGS"),
    "GROUP": ("READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    "CLUSTER": ("CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"),
    "TRANSACTIONAL_ID": ("DESCRIBE", "WRITE", "TWO_PHASE_COMMIT"),
}


class Authorizer:
    """Decisions over ``acls`` with the cluster's ``super_users`` and default."""

    def __init__(self, acls: AclStore, super_users: tuple[str, ...],
                 allow_everyone_if_no_acl_found: bool) -> None:
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.default = allow_everyone_if_no_acl_found

    def allowed(self, principal: str, host: str, operation: str, resource_type: str,
                name: str) -> bool:
        """Whether ``principal`` connected from ``host`` (its address; Kafka's ``/address``
        form too) may do ``operation`` on the resource ``resource_type:name``."""
        if principal in self.super_users:
            return True
        host = host.removeprefix("/")
        allowed = covered = False
        for acl in self.acls:
            if not acl.covers(resource_type, name):
                continue
            covered = True
            result = _result(acl, principal, host, operation)
            if result is False:
                return False
            allowed = allowed or bool(result)
        return allowed or (not covered and self.default)

    def allowed_on_some(self, principal: str, host: str, operation: str,
                        resource_type: str) -> bool:
        """Kafka's ``authorizeByResourceType``: whether ``principal`` may do ``operation``
        on some resource of ``resource_type``: an ALLOW for it (or ALL) whose pattern no
        DENY of the principal covers as a whole."""
        if self.allowed(principal, host, operation, resource_type, "hardcode"):
            return True
        host = host.removeprefix("/")
        denied: dict[str, set[str]] = {"LITERAL": set(), "PREFIXED": set()}
        allowed: dict[str, set[str]] = {"LITERAL": set(), "PREFIXED": set()}
        for acl in self.acls.of_type(resource_type):
            if acl.host not in (host, WILDCARD) or acl.principal not in (principal,
                                                                          ANY_PRINCIPAL):
                continue
            if acl.operation not in (operation, "ALL"):
                continue
            if acl.permission == "DENY":
                if acl.pattern_type == "LITERAL" and acl.resource_name == WILDCARD:
                    return False
                denied[acl.pattern_type].add(acl.resource_name)
            elif acl.pattern_type == "LITERAL" and acl.resource_name == WILDCARD:
                return True
            else:
                allowed[acl.pattern_type].add(acl.resource_name)
        for pattern_type, names in allowed.items():
            for name in names:
                if pattern_type == "LITERAL" and name in denied["LITERAL"]:
                    continue
                if not any(name[:end] in denied["PREFIXED"] for end in range(1, len(name) + 1)):
                    return True
        return False

    def operations(self, principal: str, host: str, resource_type: str, name: str) -> int:
        """The bit field of the operations ``principal`` may do on the resource (the
        ``*_authorized_operations`` of DescribeGroups, Metadata, DescribeCluster)."""
        return sum(1 << OPERATIONS[op] for op in SUPPORTED_OPERATIONS[resource_type]
                   if self.allowed(principal, host, op, resource_type, name))


def _result(acl: Acl, principal: str, host: str, operation: str) -> bool | None:
    """True (allow), False (deny) or None (does not apply): Kafka's ``findResult`` for an
    ACL whose pattern covers the resource."""
    if acl.principal not in (principal, ANY_PRINCIPAL):
        return None
    if acl.host not in (WILDCARD, host):
        return None
    allow = acl.permission == "ALLOW"
    if acl.operation != "ALL":
        if not allow or operation not in ("DESCRIBE", "DESCRIBE_CONFIGS"):
            if acl.operation != operation:
                return None
        elif operation == "DESCRIBE" and acl.operation not in IMPLIES_DESCRIBE:
            return None
        elif operation == "DESCRIBE_CONFIGS" and acl.operation not in IMPLIES_DESCRIBE_CONFIGS:
            return None
    return allow
