"""Where an injected error goes in each API's answer, as Kafka places its own errors.

* Partition-scoped APIs (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords,
  OffsetCommit, OffsetFetch, OffsetDelete): per partition, with the fields Kafka sets beside an
  error (offsets -1, no records). Errors Kafka reports for the whole request of such an API go
  at top level instead: fetch-session errors for Fetch, group errors (coordinator, unknown
  group or member) for OffsetFetch (per group from v8) and OffsetDelete.
* Entry-scoped APIs: per topic (Metadata, CreateTopics, DeleteTopics, CreatePartitions,
  DescribeConfigs) or per group (FindCoordinator v4+, DescribeGroups, DeleteGroups,
  ConsumerGroupDescribe).
* Every other API: the top-level ``error_code`` (the handler is not run).

A rule naming no topic, partition or group faults every partition or entry of the request.
Without ``apply_then`` the faulted partitions or entries are taken out of the request before
the handler sees it (so nothing is appended, stored, created or deleted for them) and their
error entries are added to the answer; with ``apply_then`` the whole request is handled and
the errors then overwrite the answer's entries.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from construct import Container, ListContainer

from fakebroker.faults.rules import FaultPlan, Target
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_name
from fakebroker.protocol.specs import api_spec

GROUP_ERRORS = frozenset({
    "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS",
    "GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "INVALID_GROUP_ID",
    "UNKNOWN_MEMBER_ID", "STALE_MEMBER_EPOCH", "NON_EMPTY_GROUP",
})
FETCH_SESSION_ERRORS = frozenset({
    "FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH", "FETCH_SESSION_TOPIC_ID_ERROR",
})
NO_LEADER = {"leader_id": -1, "leader_epoch": -1}


@dataclass(frozen=True)
class Level:
    """A list of a request and the list answering it, entry for entry.

    ``request_key`` names an entry in the request (``""``: the entries are plain values);
    ``response_key`` in the answer. ``copy`` lists (request field, response field) pairs
    copied into an error entry made for a request entry; ``defaults`` are the other fields
    Kafka sets in an error entry.
    """

    request_list: str
    response_list: str
    request_key: str
    response_key: str
    kind: str  # "topic", "partition" or "group"
    child: Level | None = None
    copy: tuple[tuple[str, str], ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Placement:
    level: Level
    top_errors: frozenset[str] = frozenset()
    # Request fields set when some of its partitions were taken out (Fetch: answer at once).
    when_filtered: dict[str, Any] = field(default_factory=dict)


def _topics(request_list: str, response_list: str, name: str, child: Level | None,
            **defaults: Any) -> Level:
    return Level(request_list, response_list, name, name, "topic", child,
                 copy=((name, name), ("topic_id", "topic_id")), defaults=defaults)


def _partitions(request_list: str, response_list: str, key: str, response_key: str,
                **defaults: Any) -> Level:
    return Level(request_list, response_list, key, response_key, "partition",
                 defaults=defaults)


def _groups(request_list: str, response_list: str, response_key: str = "group_id",
            **defaults: Any) -> Level:
    return Level(request_list, response_list, "", response_key, "group", defaults=defaults)


_PRODUCE = Placement(_topics("topic_data", "responses", "name", _partitions(
    "partition_data", "partition_responses", "index", "index", base_offset=-1,
    log_append_time_ms=-1, log_start_offset=-1, record_errors=[])))
_FETCH = Placement(
    _topics("topics", "responses", "topic", _partitions(
        "partitions", "partitions", "partition", "partition_index", high_watermark=-1,
        last_stable_offset=-1, log_start_offset=-1, records=b"", aborted_transactions=None,
        current_leader=NO_LEADER)),
    top_errors=FETCH_SESSION_ERRORS, when_filtered={"max_wait_ms": 0})
_LIST_OFFSETS = Placement(_topics("topics", "topics", "name", _partitions(
    "partitions", "partitions", "partition_index", "partition_index", timestamp=-1, offset=-1,
    leader_epoch=-1, old_style_offsets=[])))
_OFFSET_FOR_LEADER_EPOCH = Placement(_topics("topics", "topics", "topic", _partitions(
    "partitions", "partitions", "partition", "partition", leader_epoch=-1, end_offset=-1)))
_DELETE_RECORDS = Placement(_topics("topics", "topics", "name", _partitions(
    "partitions", "partitions", "partition_index", "partition_index", low_watermark=-1)))
_OFFSET_COMMIT = Placement(_topics("topics", "topics", "name", _partitions(
    "partitions", "partitions", "partition_index", "partition_index")))
_OFFSET_FETCH_TOPICS = _topics("topics", "topics", "name", _partitions(
    "partition_indexes", "partitions", "", "partition_index", committed_offset=-1,
    committed_leader_epoch=-1, metadata=""))
_OFFSET_FETCH = Placement(_OFFSET_FETCH_TOPICS, top_errors=GROUP_ERRORS)
_OFFSET_FETCH_GROUPS = Placement(
    Level("groups", "groups", "group_id", "group_id", "group", _OFFSET_FETCH_TOPICS,
          copy=(("group_id", "group_id"),), defaults={"topics": []}),
    top_errors=GROUP_ERRORS)
_OFFSET_DELETE = Placement(_topics("topics", "topics", "name", _partitions(
    "partitions", "partitions", "partition_index", "partition_index")),
    top_errors=GROUP_ERRORS)
_METADATA = Placement(_topics("topics", "topics", "name", None, partitions=[],
                              is_internal=False))
_CREATE_TOPICS = Placement(_topics("topics", "topics", "name", None, num_partitions=-1,
                                   replication_factor=-1, configs=None))
_DELETE_TOPICS_NAMES = Placement(Level("topic_names", "responses", "", "name", "topic"))
_DELETE_TOPICS = Placement(_topics("topics", "responses", "name", None))
_CREATE_PARTITIONS = Placement(_topics("topics", "results", "name", None))
_DESCRIBE_CONFIGS = Placement(Level(
    "resources", "results", "resource_name", "resource_name", "topic",
    copy=(("resource_name", "resource_name"), ("resource_type", "resource_type")),
    defaults={"configs": []}))
_FIND_COORDINATOR = Placement(_groups("coordinator_keys", "coordinators", "key", node_id=-1,
                                      host="", port=-1))
_DESCRIBE_GROUPS = Placement(_groups("groups", "groups", group_state="", protocol_type="",
                                     protocol_data="", members=[]))
_DELETE_GROUPS = Placement(_groups("groups_names", "results"))
_CONSUMER_GROUP_DESCRIBE = Placement(_groups("group_ids", "groups", group_state="",
                                             group_epoch=0, assignment_epoch=0,
                                             assignor_name="", members=[]))

# api key -> [(first version, placement)], the last entry whose first version <= v applies.
PLACEMENTS: dict[int, list[tuple[int, Placement | None]]] = {
    0: [(0, _PRODUCE)],
    1: [(0, _FETCH)],
    2: [(0, _LIST_OFFSETS)],
    3: [(0, _METADATA)],
    8: [(0, _OFFSET_COMMIT)],
    9: [(0, _OFFSET_FETCH), (8, _OFFSET_FETCH_GROUPS)],
    10: [(0, None), (4, _FIND_COORDINATOR)],
    15: [(0, _DESCRIBE_GROUPS)],
    19: [(0, _CREATE_TOPICS)],
    20: [(0, _DELETE_TOPICS_NAMES), (6, _DELETE_TOPICS)],
    21: [(0, _DELETE_RECORDS)],
    23: [(0, _OFFSET_FOR_LEADER_EPOCH)],
    32: [(0, _DESCRIBE_CONFIGS)],
    37: [(0, _CREATE_PARTITIONS)],
    42: [(0, _DELETE_GROUPS)],
    47: [(0, _OFFSET_DELETE)],
    69: [(0, _CONSUMER_GROUP_DESCRIBE)],
}
# Fields an error answer carries besides error_code, for APIs answered at top level.
TOP_LEVEL_EXTRAS: dict[int, dict[str, Any]] = {
    10: {"node_id": -1, "host": "", "port": -1},
    11: {"generation_id": -1},
    22: {"producer_id": -1, "producer_epoch": -1},
    68: {"member_epoch": -1},
}


@functools.cache
def placement_of(api_key: int, version: int) -> Placement | None:
    """The entry placement of an API version, or None when errors go at top level."""
    found = None
    for first, placement in PLACEMENTS.get(api_key, ()):
        if version >= first:
            found = placement
    return found


def has_top_level_error(api_key: int, version: int) -> bool:
    return any(row[0] == "ErrorCode" and version in _range(row[2])
               for row in api_spec(api_key).response["fields"])


def _range(text: str) -> range:
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


# -- targets ------------------------------------------------------------------------------

TopicResolver = Callable[[uuid.UUID], str | None]


def request_targets(api_key: int, version: int, request: Any,
                    topic_name: TopicResolver) -> list[Target]:
    """The partitions or entries a request names, in request order."""
    placement = placement_of(api_key, version)
    if placement is None:
        return []
    found: list[Target] = []
    _collect_targets(placement.level, request, topic_name, _NO_TARGET, found)
    return found


_NO_TARGET = Target()


def _collect_targets(level: Level, container: Any, topic_name: TopicResolver, parent: Target,
                     found: list[Target]) -> None:
    for entry in container.get(level.request_list) or ():
        target = _target(level, entry, topic_name, parent)
        if level.child is None:
            found.append(target)
        else:
            _collect_targets(level.child, entry, topic_name, target, found)


def _target(level: Level, entry: Any, topic_name: TopicResolver, parent: Target) -> Target:
    value = entry.get(level.request_key) if level.request_key else entry
    if level.kind == "partition":
        return Target(parent.topic, parent.topic_id, value, parent.group)
    if level.kind == "group":
        return Target(group=value)
    topic_id = entry.get("topic_id") if isinstance(entry, dict) else None
    if topic_id is not None and topic_id != ZERO_UUID:
        return Target(topic_name(topic_id) or value or None, topic_id, None, parent.group)
    return Target(value or None, None, None, parent.group)


def request_groups(api_key: int, request: Any) -> set[str]:
    """Group ids a request names (FindCoordinator: keys of type group)."""
    found: set[str] = set()
    if api_key == 10:
        if request.get("key_type", 0) == 0:
            found.update(k for k in [request.get("key")] + list(
                request.get("coordinator_keys") or []) if k)
        return found
    group_id = request.get("group_id")
    if isinstance(group_id, str) and group_id:
        found.add(group_id)
    for name in ("groups", "groups_names", "group_ids"):
        for entry in request.get(name) or ():
            value = entry if isinstance(entry, str) else entry.get("group_id")
            if value:
                found.add(value)
    return found


def request_transactional_ids(api_key: int, request: Any) -> set[str]:
    found = {request.get("transactional_id")} - {None, ""}
    if api_key == 10 and request.get("key_type", 0) == 1:
        found.update(k for k in [request.get("key")] + list(
            request.get("coordinator_keys") or []) if k)
    return found  # type: ignore[return-value]


# -- applying -----------------------------------------------------------------------------

@dataclass
class ErrorLayout:
    """The plan's errors resolved for one request: per entry, or the whole request."""

    top: int | None = None  # at top level (or, with groups outermost, on every group)
    entries: dict[Target, int] = field(default_factory=dict)
    every_entry: int | None = None  # a whole-request error for an entry request naming none


def layout_errors(plan: FaultPlan, api_key: int, version: int, targets: list[Target]
                  ) -> ErrorLayout:
    placement = placement_of(api_key, version)
    layout = ErrorLayout()
    if placement is None:
        layout.top = plan.whole_error or next(iter(plan.target_errors.values()), None)
        return layout
    errors = dict(plan.target_errors)
    top_field = has_top_level_error(api_key, version) or placement.level.kind == "group"
    if plan.whole_error is not None:
        if error_name(plan.whole_error) in placement.top_errors and top_field:
            layout.top = plan.whole_error
        elif targets:
            for target in targets:
                errors.setdefault(target, plan.whole_error)
        elif top_field:
            layout.top = plan.whole_error
        else:
            layout.every_entry = plan.whole_error
    layout.entries = errors
    return layout


def filter_request(api_key: int, version: int, request: Any, layout: ErrorLayout,
                   topic_name: TopicResolver) -> Any:
    """A copy of ``request`` without the entries that get an error."""
    placement = placement_of(api_key, version)
    if placement is None or not layout.entries:
        return request
    copy = _filtered(placement.level, request, layout.entries, topic_name, Target())
    copy.update(placement.when_filtered)
    return copy


def _filtered(level: Level, container: Any, errors: dict[Target, int],
              topic_name: TopicResolver, parent: Target) -> Any:
    copy = Container(container)
    kept = ListContainer()
    for entry in container.get(level.request_list) or ():
        target = _target(level, entry, topic_name, parent)
        if level.child is None:
            if target not in errors:
                kept.append(entry)
            continue
        inner = _filtered(level.child, entry, errors, topic_name, target)
        if inner.get(level.child.request_list) or not entry.get(level.child.request_list):
            kept.append(inner)
    if container.get(level.request_list) is not None:
        copy[level.request_list] = kept
    return copy


def inject_errors(api_key: int, version: int, request: Any, response: dict[str, Any],
                  layout: ErrorLayout, topic_name: TopicResolver) -> dict[str, Any]:
    """Put the layout's errors into ``response`` (entries made where missing)."""
    placement = placement_of(api_key, version)
    if layout.top is not None:
        if placement is not None and placement.level.kind == "group":
            level = placement.level
            answers = response.setdefault(level.response_list, [])
            for entry in request.get(level.request_list) or ():
                answer = _answer_for(level, entry, answers)
                answer.update(level.defaults)
                answer["error_code"] = layout.top
        else:
            response["error_code"] = layout.top
    if placement is None:
        return response
    if layout.every_entry is not None:
        for entry in response.get(placement.level.response_list) or ():
            entry["error_code"] = layout.every_entry
    if layout.entries:
        _inject(placement.level, request, response, layout.entries, topic_name, Target())
    return response


def _inject(level: Level, request: Any, response: dict[str, Any],
            errors: dict[Target, int], topic_name: TopicResolver, parent: Target) -> None:
    answers = response.setdefault(level.response_list, [])
    if answers is None:
        answers = response[level.response_list] = []
    for entry in request.get(level.request_list) or ():
        target = _target(level, entry, topic_name, parent)
        if level.child is None:
            if target in errors:
                answer = _answer_for(level, entry, answers)
                answer.update(level.defaults)
                answer["error_code"] = errors[target]
            continue
        if any(_under(t, target) for t in errors):
            answer = _answer_for(level, entry, answers)
            _inject(level.child, entry, answer, errors, topic_name, target)
    _in_request_order(level, request, answers)


def _in_request_order(level: Level, request: Any, answers: list[Any]) -> None:
    """Sort answer entries in the order their request entries came, as Kafka answers."""
    order: dict[Any, int] = {}
    for position, entry in enumerate(request.get(level.request_list) or ()):
        order.setdefault(_key(level, entry), position)
    answers.sort(key=lambda a: order.get(
        a.get("topic_id") if _has_id(a) else a.get(level.response_key), len(order)))


def _has_id(entry: Any) -> bool:
    topic_id = entry.get("topic_id") if isinstance(entry, Mapping) else None
    return topic_id is not None and topic_id != ZERO_UUID


def _key(level: Level, entry: Any) -> Any:
    if _has_id(entry):
        return entry.get("topic_id")
    return entry if not level.request_key else entry.get(level.request_key)


def _under(target: Target, parent: Target) -> bool:
    if parent.group is not None and target.group != parent.group:
        return False
    if parent.topic_id is not None:
        return target.topic_id == parent.topic_id
    return parent.topic is None or target.topic == parent.topic


def _answer_for(level: Level, entry: Any, answers: list[Any]) -> dict[str, Any]:
    """The answer entry for a request entry: found by key (and topic id), or made."""
    value = entry if not level.request_key else entry.get(level.request_key)
    topic_id = entry.get("topic_id") if isinstance(entry, Mapping) else None
    for answer in answers:
        if topic_id is not None and topic_id != ZERO_UUID:
            if answer.get("topic_id") == topic_id:
                return answer
        elif answer.get(level.response_key) == value:
            return answer
    made: dict[str, Any] = {level.response_key: value}
    for request_field, response_field in level.copy:
        if isinstance(entry, Mapping) and entry.get(request_field) is not None:
            made[response_field] = entry.get(request_field)
    if level.child is not None:
        made[level.child.response_list] = []
    made.update({k: v for k, v in level.defaults.items() if k not in made})
    answers.append(made)
    return made
