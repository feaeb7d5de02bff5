"""What a request names: its partitions, topics, groups and transactional ids, read from its
API's declaration (``ERROR_PLACEMENT``, ``fakebroker.api.shapes``).

The one home of this knowledge: the fault rules match requests by it (``fakebroker.faults``),
the error placement puts errors on its entries (``fakebroker.api.placement``), the authorizer
checks the resources it names (``fakebroker.security``). An API's tables are read once, the
first time a request of that API is looked at (``_tables``), so naming a request's targets
costs a lookup per request, and no declaration of an API nobody calls is read.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from fakebroker.api import ERROR_PLACEMENTS, served_versions
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.specs import api_spec, parse_range

if TYPE_CHECKING:
    from fakebroker.api.shapes import Level


class Target(NamedTuple):
    """One partition (``partition`` set) or one named entry (topic or group) of a request
    (a named tuple: built for every request, so it must be cheap)."""

    topic: str | None = None
    topic_id: uuid.UUID | None = None
    partition: int | None = None
    group: str | None = None


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
        target = target_of(level, entry, topic_name, parent)
        if level.child is None:
            found.append(target)
        else:
            _collect_targets(level.child, entry, topic_name, target, found)


def target_of(level: Level, entry: Any, topic_name: TopicResolver, parent: Target) -> Target:
    """The target an entry of ``level`` names, beneath ``parent``."""
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


