"""The machinery that puts an injected error where Kafka puts it, by each API's declaration.

Each module of ``fakebroker.api`` declares its ``ERROR_PLACEMENT`` with the pieces of
``fakebroker.faults.shapes``; an API's is read here once, the first time a request of that API
is placed (``_Tables``), so placing an error, and finding what a request names, costs a lookup
per request, and a broker reads no declaration of an API nobody calls.

* An API version with entries (partitions beneath topics, topics, groups) gets an error per
  entry; a rule naming no topic, partition or group faults every entry of the request. An
  error the API declares a whole-request error goes at the top level instead when the version
  has a top-level ``error_code`` (with groups outermost: on every group).
* Every other API version gets it in the top-level ``error_code``, beside the fields its
  declaration gives such an answer (``top_level_answer``); its handler is not run.

Without ``apply_then`` the faulted partitions or entries are taken out of the request before
the handler sees it (so nothing is appended, stored, created or deleted for them) and their
error entries are added to the answer; with ``apply_then`` the whole request is handled and
the errors then overwrite the answer's entries. Answer entries keep the request's order.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fakebroker.api import ERROR_PLACEMENTS, served_versions
from fakebroker.faults.rules import FaultPlan, Target
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_name
from fakebroker.protocol.specs import api_spec, parse_range

if TYPE_CHECKING:
    from fakebroker.faults.shapes import Level


@dataclass(frozen=True, slots=True)
class _Tables:
    """What placing an API's errors needs, read once from its declaration and spec."""

    # version -> the entries its errors go in; None: the top level only.
    entries: dict[int, Level | None]
    # every served version whose answer has a top-level error_code.
    top_error_versions: frozenset[int]
    # (request list, key of its entries) of the lists that name groups, any version.
    group_lists: tuple[tuple[str, str], ...]


_NOTHING = _Tables({}, frozenset(), ())


@functools.cache
def _tables(api_key: int) -> _Tables:
    """The API's tables (an API not served has none)."""
    versions = served_versions(api_key)
    if versions is None:
        return _NOTHING
    placement = ERROR_PLACEMENTS[api_key]
    return _Tables(
        entries={version: placement.entries_at(version) for version in versions},
        top_error_versions=frozenset(
            version for row in api_spec(api_key).response["fields"] if row[0] == "ErrorCode"
            for version in parse_range(row[2]) if version in versions),
        group_lists=tuple(dict.fromkeys((level.request_list, level.request_key)
                                        for level in placement.levels()
                                        if level.kind == "group")))


def entries_of(api_key: int, version: int) -> Level | None:
    """The entries an API version's errors go in, or None when they go at top level."""
    return _tables(api_key).entries.get(version)


def has_top_level_error(api_key: int, version: int) -> bool:
    """Whether the answer of this served API version has a top-level ``error_code``."""
    return version in _tables(api_key).top_error_versions


# -- what a request names -----------------------------------------------------------------

TopicResolver = Callable[[uuid.UUID], str | None]


def request_targets(api_key: int, version: int, request: Any,
                    topic_name: TopicResolver) -> list[Target]:
    """The partitions or entries a request names, in request order."""
    level = _tables(api_key).entries.get(version)
    if level is None:
        return []
    found: list[Target] = []
    _collect_targets(level, request, topic_name, _NO_TARGET, found)
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
    """Group ids a request names: its ``group_id`` and its group entries, or the keys its
    API declares group keys by their type (FindCoordinator)."""
    keys = ERROR_PLACEMENTS[api_key].keys
    if keys is not None:
        return _keys(request, keys.fields, keys.type_field, keys.groups)
    found: set[str] = set()
    group_id = request.get("group_id")
    if isinstance(group_id, str) and group_id:
        found.add(group_id)
    for request_list, key in _tables(api_key).group_lists:
        for entry in request.get(request_list) or ():
            value = entry.get(key) if key else entry
            if value:
                found.add(value)
    return found


def request_transactional_ids(api_key: int, request: Any) -> set[str]:
    """Transactional ids a request names: its ``transactional_id`` (AddPartitionsToTxn's
    ``v3_and_below_transactional_id``, and those of its ``transactions`` from v4), and the
    keys its API declares transactional keys by their type (FindCoordinator)."""
    found = {request.get("transactional_id"), request.get("v3_and_below_transactional_id"),
             *(entry.get("transactional_id") for entry in request.get("transactions") or ())
             } - {None, ""}
    keys = ERROR_PLACEMENTS[api_key].keys
    if keys is not None:
        found |= _keys(request, keys.fields, keys.type_field, keys.transactional_ids)
    return found  # type: ignore[return-value]


def _keys(request: Any, fields: tuple[str, ...], type_field: str, key_type: int) -> set[str]:
    if request.get(type_field) != key_type:
        return set()
    found: set[str] = set()
    for name in fields:
        value = request.get(name)
        found.update([value] if isinstance(value, str) else value or ())
    return found - {""}


# -- applying -----------------------------------------------------------------------------

@dataclass
class ErrorLayout:
    """The plan's errors resolved for one request: per entry, or the whole request."""

    top: int | None = None  # at top level (or, with groups outermost, on every group)
    entries: dict[Target, int] = field(default_factory=dict)
    every_entry: int | None = None  # a whole-request error for an entry request naming none


def layout_errors(plan: FaultPlan, api_key: int, version: int, targets: list[Target]
                  ) -> ErrorLayout:
    level = entries_of(api_key, version)
    layout = ErrorLayout()
    if level is None:
        layout.top = plan.whole_error or next(iter(plan.target_errors.values()), None)
        return layout
    errors = dict(plan.target_errors)
    top_field = has_top_level_error(api_key, version) or (
        level.kind == "group" and level.entry_error)
    if plan.whole_error is not None:
        if error_name(plan.whole_error) in ERROR_PLACEMENTS[api_key].request_errors \
                and top_field:
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
    level = entries_of(api_key, version)
    if level is None or not layout.entries:
        return request
    copy = _filtered(level, request, layout.entries, topic_name, Target())
    copy.update(ERROR_PLACEMENTS[api_key].when_filtered)
    return copy


def _filtered(level: Level, container: Any, errors: dict[Target, int],
              topic_name: TopicResolver, parent: Target) -> Any:
    from construct import Container, ListContainer  # as parsed requests are (codec)

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
    level = entries_of(api_key, version)
    if layout.top is not None:
        if level is not None and level.kind == "group" and level.entry_error:
            answers = _answer_list(response, level.response_list)
            for entry in request.get(level.request_list) or ():
                answer = _answer_for(level, entry, answers)
                answer.update(level.error_fields)
                answer[level.error_field] = layout.top
        else:
            response["error_code"] = layout.top
    if level is None:
        return response
    if layout.every_entry is not None:
        for entry in response.get(level.response_list) or ():
            entry[level.error_field] = layout.every_entry
    if layout.entries:
        _inject(level, request, response, layout.entries, topic_name, Target())
    return response


def _inject(level: Level, request: Any, response: dict[str, Any],
            errors: dict[Target, int], topic_name: TopicResolver, parent: Target) -> None:
    answers = _answer_list(response, level.response_list)
    for entry in request.get(level.request_list) or ():
        target = _target(level, entry, topic_name, parent)
        if level.child is None:
            if target in errors:
                answer = _answer_for(level, entry, answers)
                answer.update(level.error_fields)
                answer[level.error_field] = errors[target]
            continue
        if any(_under(t, target) for t in errors):
            answer = _answer_for(level, entry, answers)
            _inject(level.child, entry, answer, errors, topic_name, target)
    _in_request_order(level, request, answers)


def _answer_list(response: dict[str, Any], name: str) -> list[Any]:
    """``response[name]`` as a list of its own that entries can be added to (an absent,
    null or declared empty ``()`` list becomes one)."""
    answers = response.get(name)
    if not isinstance(answers, list):
        answers = response[name] = list(answers or ())
    return answers


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
    for name in level.echoed:
        if isinstance(entry, Mapping) and entry.get(name) is not None:
            made[name] = entry.get(name)
    if level.child is not None:
        made[level.child.response_list] = []
    made.update({k: v for k, v in level.error_fields.items() if k not in made})
    answers.append(made)
    return made


def top_level_answer(api_key: int, request: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to ``request`` that a top-level error is put in: the fields its API
    declares beside such an error, and the request fields it repeats as sent (JoinGroup's
    member id)."""
    placement = ERROR_PLACEMENTS[api_key]
    answer = dict(placement.top_fields)
    for name in placement.echoed:
        answer[name] = request.get(name)
    return answer
