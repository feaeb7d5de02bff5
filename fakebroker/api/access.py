"""The pieces an API module declares what it authorizes with: ``AUTHORIZES``.

Every module of ``fakebroker.api`` declares ``AUTHORIZES``, a tuple of checks in the order
Kafka's ``KafkaApis`` makes them; with the cluster's ``authorizer`` on, the authorization seam
(``fakebroker.security.enforcement``) makes them before the fault rules and the handler, so
nothing is appended, stored, created or deleted for what a check refuses, and puts each
refusal where the API's ``ERROR_PLACEMENT`` puts errors (``fakebroker.api.placement``).
OffsetCommit's "READ on the group, then READ on each topic"::

    AUTHORIZES = (groups("READ"), topics("READ"))

* ``topics(op)``: each topic the request's entries name (``fakebroker.api.targets``); a
  refused one gets TOPIC_AUTHORIZATION_FAILED on its entries (per partition, per topic), the
  others go on. A topic named by an unknown id is left to the handler (UNKNOWN_TOPIC_ID).
* ``groups(op)`` / ``transactional_ids(op)``: the groups or transactional ids the request
  names; refused: GROUP_AUTHORIZATION_FAILED / TRANSACTIONAL_ID_AUTHORIZATION_FAILED on that
  entry where the API answers groups (or keys) entry by entry, else for the whole request, and
  no later check is made. ``transactional_ids(op, entries=True)``: the request's entries are
  the transactional ids (DescribeTransactions).
* ``cluster(op)``: the cluster resource; refused: CLUSTER_AUTHORIZATION_FAILED for the whole
  request.
* ``idempotent_write()``: InitProducerId without a transactional id: IDEMPOTENT_WRITE on the
  cluster, or WRITE on some topic (Kafka's ``authorizeByResourceType``), else
  CLUSTER_AUTHORIZATION_FAILED.
* ``in_handler(what)``: a rule too irregular for a declaration (Metadata lists only the
  topics the principal may describe, ListGroups only the groups): the handler asks
  ``RequestContext.allowed`` itself; ``what`` says what it checks.

``unless_cluster=OP``: the check passes for every resource when the principal may do ``OP``
on the cluster (CreateTopics: CREATE). ``others=ERROR``: when some entries are refused, the
rest get ``ERROR`` and the request is not applied (AddPartitionsToTxn: OPERATION_NOT_ATTEMPTED).
``versions``: the versions the check applies to (default: all).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Resource = Literal["TOPIC", "GROUP", "TRANSACTIONAL_ID", "CLUSTER"]
ERRORS: dict[str, str] = {
    "TOPIC": "TOPIC_AUTHORIZATION_FAILED", "GROUP": "GROUP_AUTHORIZATION_FAILED",
    "TRANSACTIONAL_ID": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    "CLUSTER": "CLUSTER_AUTHORIZATION_FAILED",
}
# Kafka's default message of each (an answer with a top-level error_message carries it).
MESSAGES: dict[str, str] = {
    "TOPIC_AUTHORIZATION_FAILED": "Topic authorization failed.",
    "GROUP_AUTHORIZATION_FAILED": "Group authorization failed.",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "Transactional Id authorization failed.",
    "CLUSTER_AUTHORIZATION_FAILED": "Cluster authorization failed.",
}


@dataclass(frozen=True)
class Check:
    """One authorization an API makes (see the module docstring)."""

    resource: Resource
    operation: str
    versions: range | None = None
    unless_cluster: str | None = None
    others: str | None = None
    entries: bool = False  # the request's keyed entries are the resources checked
    idempotent: bool = False  # IDEMPOTENT_WRITE, or WRITE on some topic; no transactional id

    @property
    def error(self) -> str:
        return ERRORS[self.resource]

    def applies(self, version: int) -> bool:
        return self.versions is None or version in self.versions


@dataclass(frozen=True)
class InHandler:
    """A check the API's handler makes itself, through ``RequestContext.allowed``."""

    what: str


Authorizes = tuple[Check | InHandler, ...]
NOTHING: Authorizes = ()  # an API anyone may call (ApiVersions)


def topics(operation: str, *, unless_cluster: str | None = None, others: str | None = None,
           versions: range | None = None) -> Check:
    return Check("TOPIC", operation, versions, unless_cluster, others)


def groups(operation: str, *, versions: range | None = None) -> Check:
    return Check("GROUP", operation, versions)


def transactional_ids(operation: str, *, versions: range | None = None,
                      entries: bool = False) -> Check:
    return Check("TRANSACTIONAL_ID", operation, versions, entries=entries)


def cluster(operation: str, *, versions: range | None = None,
            unless_cluster: str | None = None) -> Check:
    return Check("CLUSTER", operation, versions, unless_cluster)


def idempotent_write() -> Check:
    return Check("CLUSTER", "IDEMPOTENT_WRITE", idempotent=True)


def in_handler(what: str) -> InHandler:
    return InHandler(what)
