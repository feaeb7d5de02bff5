"""Putting an error where Kafka puts it, by each API's declaration (``ERROR_PLACEMENT``).

Fault rules (``fakebroker.faults.seam``) and the authorizer (``fakebroker.security``) both
place their errors here; what a request names comes from ``fakebroker.api.targets``.

* An API version with entries (partitions beneath topics, topics, groups) gets an error per
  entry; an error for the whole request of such a version goes on every entry of the request.
  An error the API declares a whole-request error goes at the top level instead when the
  version has a top-level ``error_code`` (with groups outermost: on every group).
* Every other API version gets it in the top-level ``error_code``, beside the fields its
  declaration gives such an answer (``top_level_answer``); its handler is not run. An API
  version with no top-level ``error_code`` whose module builds Kafka's whole-request error
  answer (``refused_answer``: AlterReplicaLogDirs, errors per partition beneath directories)
  gets that answer.

``filter_request`` takes the entries that get an error out of the request before the handler
sees it (so nothing is appended, stored, created or deleted for them) and ``inject_errors``
adds their error entries to the answer; or the whole request is handled and the errors then
overwrite the answer's entries. Answer entries keep the request's order. ``without_arrays``
empties the arrays a fault rule ignores (``ignore``) in the entries it covers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fakebroker.api import ERROR_PLACEMENTS, REFUSED_ANSWERS
from fakebroker.api.targets import (
    Target,
    TopicResolver,
    entries_of,
    has_top_level_error,
    request_targets,
    target_of,
)
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_name

if TYPE_CHECKING:
    from fakebroker.api.shapes import Level


@dataclass
class ErrorLayout:
    """The plan's errors resolved for one request: per entry, or the whole request."""

    top: int | None = None  # at top level (or, with groups outermost, on every group)
    entries: dict[Target, int] = field(default_factory=dict)
    every_entry: int | None = None  # a whole-request error for an entry request naming none


def layout_errors(api_key: int, version: int, targets: list[Target], whole_error: int | None,
                  target_errors: Mapping[Target, int]) -> ErrorLayout:
    """Where the errors for one request go: ``whole_error`` for the whole request (None:
    none), ``target_errors`` for some of its ``targets`` (``request_targets``)."""
    level = entries_of(api_key, version)
    layout = ErrorLayout()
    if level is None:
        layout.top = whole_error or next(iter(target_errors.values()), None)
        return layout
    errors = dict(target_errors)
    top_field = has_top_level_error(api_key, version) or (
        level.kind == "group" and level.entry_error)
    if whole_error is not None and ERROR_PLACEMENTS[api_key].whole_on_both:
        if top_field:
            layout.top = whole_error
        for target in targets:
            errors.setdefault(target, whole_error)
    elif whole_error is not None:
        if error_name(whole_error) in ERROR_PLACEMENTS[api_key].request_errors and top_field:
            layout.top = whole_error
        elif targets:
            for target in targets:
                errors.setdefault(target, whole_error)
        elif top_field:
            layout.top = whole_error
        else:
            layout.every_entry = whole_error
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
        target = target_of(level, entry, topic_name, parent)
        if level.child is None or target in errors:
            if target not in errors:
                kept.append(entry)
            continue
        inner = _filtered(level.child, entry, errors, topic_name, target)
        if inner.get(level.child.request_list) or not entry.get(level.child.request_list):
            kept.append(inner)
    if container.get(level.request_list) is not None:
        copy[level.request_list] = kept
    return copy


def without_arrays(api_key: int, version: int, request: Any,
                   ignored: list[tuple[tuple[str, ...], list[Target]]],
                   topic_name: TopicResolver) -> Any:
    """A copy of ``request`` with arrays emptied: for each (field names, targets) of
    ``ignored``, every array of those names within the entries of the targets, or anywhere
    in the request when the targets are []. A null array stays null."""
    level = entries_of(api_key, version)
    for names, targets in ignored:
        if not targets:
            request = _emptied(request, names)
        elif level is not None:
            request = _emptied_in(level, request, names, set(targets), topic_name, Target())
    return request


def _emptied(value: Any, names: tuple[str, ...]) -> Any:
    from construct import Container, ListContainer  # as parsed requests are (codec)

    if isinstance(value, dict):
        return Container({key: ListContainer() if key in names and item is not None
                          else _emptied(item, names) for key, item in value.items()})
    if isinstance(value, list):
        return ListContainer(_emptied(item, names) for item in value)
    return value


def _emptied_in(level: Level, container: Any, names: tuple[str, ...], targets: set[Target],
                topic_name: TopicResolver, parent: Target) -> Any:
    from construct import Container, ListContainer

    entries = container.get(level.request_list)
    if entries is None:
        return container
    kept = ListContainer()
    for entry in entries:
        target = target_of(level, entry, topic_name, parent)
        if target in targets:
            kept.append(_emptied(entry, names))
        elif level.child is not None and isinstance(entry, dict):
            kept.append(_emptied_in(level.child, entry, names, targets, topic_name, target))
        else:
            kept.append(entry)
    copy = Container(container)
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
        elif (each := ERROR_PLACEMENTS[api_key].each) is not None:
            response[each[1]] = [{**ERROR_PLACEMENTS[api_key].top_fields,
                                  "error_code": layout.top}
                                 for _ in request.get(each[0]) or ()]
        elif not has_top_level_error(api_key, version) and (
                made := REFUSED_ANSWERS[api_key]) is not None:
            response.update(made(request, version, error_name(layout.top)))
        else:
            response["error_code"] = layout.top
    if level is None:
        return response
    if layout.every_entry is not None:
        for entry in response.get(level.response_list) or ():
            entry[level.error_field] = layout.every_entry
    if layout.entries:
        handled = {id(answer) for answer in _answer_list(response, level.response_list)}
        _inject(level, request, response, layout.entries, topic_name, Target())
        if ERROR_PLACEMENTS[api_key].errors_first:  # the entries made for errors first
            _answer_list(response, level.response_list).sort(key=lambda a: id(a) in handled)
    return response


def _inject(level: Level, request: Any, response: dict[str, Any],
            errors: dict[Target, int], topic_name: TopicResolver, parent: Target) -> None:
    answers = _answer_list(response, level.response_list)
    for entry in request.get(level.request_list) or ():
        target = target_of(level, entry, topic_name, parent)
        if level.child is None or target in errors:  # an entry with entries beneath: itself
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
    def position(answer: Any) -> int:  # by the topic id the request named, else the name
        if _has_id(answer) and answer.get("topic_id") in order:
            return order[answer.get("topic_id")]
        return order.get(answer.get(level.response_key), len(order))

    answers.sort(key=position)


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


def whole_request_answer(api_key: int, version: int, request: Any, error: int,
                         topic_name: TopicResolver) -> dict[str, Any]:
    """The answer putting ``error`` wherever the API puts an error for the whole request
    (Kafka's ``getErrorResponse``: every entry of the request, as its ``ERROR_PLACEMENT``
    says)."""
    targets = request_targets(api_key, version, request, topic_name)
    layout = layout_errors(api_key, version, targets, error, {})
    answer = top_level_answer(api_key, request) if layout.top is not None else {}
    return inject_errors(api_key, version, request, answer, layout, topic_name)
