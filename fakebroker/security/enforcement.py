"""The authorization seam: each request's API declaration (``AUTHORIZES``,
``fakebroker.api.access``) checked against the authorizer, before the fault rules and the
handler.

``Enforcement.refusals(...)`` returns None when the principal may do all the request asks,
else the ``ErrorLayout`` of its refusals (``fakebroker.api.placement``): the pipeline then
answers a whole-request refusal without running anything, or takes the refused entries out of
the request before the handler sees it and puts their errors in its answer, where the API's
``ERROR_PLACEMENT`` says Kafka puts them.

Checks are made in the order declared; a whole-request refusal ends them (Kafka answers it at
once); per-entry refusals add up. Only the pipeline imports this module, and only when the
cluster's ``authorizer`` setting is on.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api import ByApiKey
from fakebroker.api.access import Authorizes, Check
from fakebroker.api.placement import ErrorLayout, layout_errors
from fakebroker.api.targets import (
    Target,
    entries_of,
    request_groups,
    request_transactional_ids,
)
from fakebroker.protocol.errors import error_code
from fakebroker.security.authorizer import Authorizer
from fakebroker.state.acls import CLUSTER_NAME

DECLARED: ByApiKey[Authorizes] = ByApiKey(lambda module: module.AUTHORIZES)


class Enforcement:
    """The authorization seam of a broker's pipeline, over the cluster's authorizer."""

    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def refusals(self, api_key: int, version: int, request: Any, targets: list[Target],
                 principal: str, host: str) -> ErrorLayout | None:
        """Where the request's refusals go (None: nothing refused)."""
        target_errors: dict[Target, int] = {}
        whole: int | None = None
        for check in DECLARED[api_key]:
            if not isinstance(check, Check) or not check.applies(version):
                continue
            if check.unless_cluster and self._may(principal, host, check.unless_cluster,
                                                  "CLUSTER", CLUSTER_NAME):
                continue
            if check.resource == "TOPIC":
                self._topics(check, targets, principal, host, target_errors)
                continue
            if check.resource == "CLUSTER":
                if not self._cluster(check, request, principal, host):
                    whole = error_code(check.error)
                    break
                continue
            names = self._names(check, api_key, request, targets)
            refused = {name for name in names
                       if not self._may(principal, host, check.operation, check.resource, name)}
            if not refused:
                continue
            level = entries_of(api_key, version)
            if level is not None and level.kind == "group":
                for name in refused:
                    target_errors.setdefault(Target(group=name), error_code(check.error))
                continue
            whole = error_code(check.error)
            break
        if whole is None and not target_errors:
            return None
        return layout_errors(api_key, version, targets, whole, target_errors)

    def _may(self, principal: str, host: str, operation: str, resource_type: str,
             name: str) -> bool:
        return self.authorizer.allowed(principal, host, operation, resource_type, name)

    def _topics(self, check: Check, targets: list[Target], principal: str, host: str,
                target_errors: dict[Target, int]) -> None:
        decided: dict[str, bool] = {}
        refused = False
        for target in targets:
            if target.topic is None:
                continue  # an unknown topic id: the handler's UNKNOWN_TOPIC_ID
            if target in target_errors or Target(group=target.group) in target_errors:
                continue  # refused already, or beneath a refused group
            allowed = decided.get(target.topic)
            if allowed is None:
                allowed = decided[target.topic] = self._may(
                    principal, host, check.operation, "TOPIC", target.topic)
            if not allowed:
                target_errors[target] = error_code(check.error)
                refused = True
        if refused and check.others:
            for target in targets:
                target_errors.setdefault(target, error_code(check.others))

    def _cluster(self, check: Check, request: Any, principal: str, host: str) -> bool:
        if check.idempotent:
            if request.get("transactional_id"):
                return True  # a transactional producer: its transactional id is checked
            return self._may(principal, host, "IDEMPOTENT_WRITE", "CLUSTER", CLUSTER_NAME) \
                or self.authorizer.allowed_on_some(principal, host, "WRITE", "TOPIC")
        return self._may(principal, host, check.operation, "CLUSTER", CLUSTER_NAME)

    @staticmethod
    def _names(check: Check, api_key: int, request: Any, targets: list[Target]) -> set[str]:
        if check.resource == "GROUP":
            return request_groups(api_key, request)
        if check.entries:
            return {target.group for target in targets if target.group}
        return request_transactional_ids(api_key, request)
