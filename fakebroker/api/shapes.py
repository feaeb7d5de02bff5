"""The pieces an API module declares where Kafka puts its errors with.

Every module of ``fakebroker.api`` declares ``ERROR_PLACEMENT``, a ``Placement``: what its
requests name is read from it (``fakebroker.api.targets``) and an error (a fault rule's, the
authorizer's) is put where it says (``fakebroker.api.placement``), each API's the first time
a request of it is looked at. A declaration is data; ListOffsets' says
"per partition of each topic, with offset -1 and the rest of ``NOT_FOUND`` beside an error"::

    NOT_FOUND = {"timestamp": -1, "offset": -1, "leader_epoch": -1, "old_style_offsets": ()}
    ERROR_PLACEMENT = Placement(per_topic("topics", "topics", partitions=per_partition(
        "partitions", "partitions", "partition_index", error_fields=NOT_FOUND)))

and OffsetFetch's "per partition of each topic; from v8 per group", with group errors for the
whole request::

    ERROR_PLACEMENT = Placement(
        by_version({0: TOPICS, 8: per_group("groups", "groups", key="group_id", topics=TOPICS,
                                            error_fields=NO_TOPICS)}),
        request_errors=GROUP_ERRORS)

The handler builds its own error entries from the same constants (``NOT_FOUND``), so the
shape of an error answer is written once.

* ``entries``: the lists of the request and of its answer that are answered entry for entry
  (``per_topic``, ``per_partition`` beneath a topic, ``per_group``), with the fields Kafka sets
  beside an error in such an entry; ``by_version`` when that shape changes with the version.
  No entries: the API's errors go at the top level only.
* ``request_errors``: errors Kafka gives for the whole request, at the top level, although the
  API puts its other errors per entry (fetch-session errors, group errors).
* ``top_fields`` and ``echoed``: what an answer made for a top-level error carries besides its
  ``error_code``: fixed fields, and request fields repeated as sent.
* ``when_filtered``: request fields set when some of its entries were taken out because they
  get an error (Fetch: answer at once instead of waiting for the faulted partitions' data).
* ``each``: ``(request list, answer list)`` of an API whose answer has neither a top-level
  error nor entries found by a key (CreateAcls answers its creations by position): an error
  goes on one answer entry per request entry, beside ``top_fields``.
* ``errors_first``: the outermost entries answered for an error alone (taken out of the
  request by the authorizer or a fault rule) come before the handler's, each group in
  request order (OffsetCommit, DescribeGroups: Kafka adds the refused topics or groups to its
  answer, then the coordinator's); else every entry keeps the request's order.
* ``whole_on_both``: an error for the whole request goes at the top level (where the version
  has one) and on every entry the request names, as the ``getErrorResponse`` of ElectLeaders
  and AlterPartitionReassignments puts it; else it goes on the entries when there are any.
* ``keys``: request fields holding keys that name a group or a transactional id by a type
  field beside them (FindCoordinator). Without it a request names its groups by its
  ``group_id`` field and its group entries, its transactional ids by ``transactional_id``.

Field names are those of the protocol specs in snake case (``partition_index``). A value that
is an empty array is written ``()``: declarations are shared by every answer made from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# Errors of a group API that concern the group, not one of the request's partitions.
GROUP_ERRORS = frozenset({
    "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS",
    "GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "INVALID_GROUP_ID",
    "UNKNOWN_MEMBER_ID", "STALE_MEMBER_EPOCH", "NON_EMPTY_GROUP",
})


@dataclass(frozen=True)
class Level:
    """A list of a request and the list answering it, entry for entry.

    An entry of ``request_list`` is found by its ``request_key`` field (``""``: the entries
    are plain values) and answered by the entry of ``response_list`` whose ``response_key``
    holds the same value. ``child``: the level within each entry. ``echoed``: request entry
    fields copied into an error entry made for it. ``error_fields``: the other fields Kafka
    sets in an entry that has an error; ``error_field``: the field the error goes in.
    """

    kind: Literal["topic", "partition", "group"]
    request_list: str
    response_list: str
    request_key: str
    response_key: str
    child: Level | None = None
    echoed: tuple[str, ...] = ()
    error_fields: Mapping[str, Any] = field(default_factory=dict)
    error_field: str = "error_code"
    # A group level whose answer entries have no error field of their own (WriteTxnMarkers'
    # markers): a whole-request error goes on each entry beneath instead.
    entry_error: bool = True


@dataclass(frozen=True)
class Versions:
    """Entries whose shape changes with the version: ``(first version, entries)`` in
    ascending order; each holds until the next one's first version (None: no entries)."""

    steps: tuple[tuple[int, Level | None], ...]

    def at(self, version: int) -> Level | None:
        found = None
        for first, level in self.steps:
            if version >= first:
                found = level
        return found


@dataclass(frozen=True)
class Keys:
    """Request fields (a string, or a list of strings) holding keys whose kind the request's
    ``type_field`` tells: a group id when it is ``groups``, a transactional id when it is
    ``transactional_ids``."""

    fields: tuple[str, ...]
    type_field: str
    groups: int
    transactional_ids: int


@dataclass(frozen=True)
class Placement:
    """Where an API's errors go, as Kafka puts them (see the module docstring)."""

    entries: Level | Versions | None = None
    request_errors: frozenset[str] = frozenset()
    top_fields: Mapping[str, Any] = field(default_factory=dict)
    echoed: tuple[str, ...] = ()
    when_filtered: Mapping[str, Any] = field(default_factory=dict)
    keys: Keys | None = None
    each: tuple[str, str] | None = None
    errors_first: bool = False
    whole_on_both: bool = False

    def entries_at(self, version: int) -> Level | None:
        """The entries an error of this version goes in; None: the top level only."""
        if isinstance(self.entries, Versions):
            return self.entries.at(version)
        return self.entries

    def levels(self) -> list[Level]:
        """Every level declared, at any version, outermost first."""
        tops = [level for _, level in self.entries.steps] \
            if isinstance(self.entries, Versions) else [self.entries]
        found: list[Level] = []
        for level in tops:
            while level is not None:
                found.append(level)
                level = level.child
        return found


TOP_LEVEL = Placement()  # every error of the API goes at the top level


def per_topic(request_list: str, response_list: str, name: str = "name",
              answer_name: str | None = None, *, partitions: Level | None = None,
              echoed: tuple[str, ...] = (), error_fields: Mapping[str, Any] | None = None
              ) -> Level:
    """Topics named by their ``name`` field (``""``: the entries are names) or their
    ``topic_id``, answered by the entry whose ``answer_name`` (default: ``name``) holds it;
    an error entry made for one repeats its topic id and the ``echoed`` fields."""
    return Level("topic", request_list, response_list, name, answer_name or name, partitions,
                 ("topic_id", *echoed), error_fields or {})


def per_partition(request_list: str, response_list: str, index: str,
                  answer_index: str | None = None, *,
                  error_fields: Mapping[str, Any] | None = None,
                  error_field: str = "error_code") -> Level:
    """Partitions of the topic around them, by their ``index`` field (``""``: the entries
    are indexes), answered by the entry whose ``answer_index`` (default: ``index``) holds it,
    its error in ``error_field``."""
    return Level("partition", request_list, response_list, index, answer_index or index,
                 error_fields=error_fields or {}, error_field=error_field)


def per_group(request_list: str, response_list: str, answer_key: str = "group_id", *,
              key: str = "", topics: Level | None = None,
              error_fields: Mapping[str, Any] | None = None, entry_error: bool = True
              ) -> Level:
    """Groups (or coordinator keys, or other keyed entries) by their ``key`` field (``""``:
    the entries are ids), answered by the entry whose ``answer_key`` holds it. A top-level
    error goes on every group of such a request (``entry_error``: the entries have an error
    field; without one it goes on every entry of ``topics``)."""
    return Level("group", request_list, response_list, key, answer_key, topics,
                 error_fields=error_fields or {}, entry_error=entry_error)


def by_version(steps: Mapping[int, Level | None]) -> Versions:
    """Entries by the first version each shape holds for: ``{0: ..., 8: ...}``."""
    return Versions(tuple(sorted(steps.items(), key=lambda step: step[0])))
