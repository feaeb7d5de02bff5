"""Each ``fakebroker/api/<name>.py`` holds everything about its API, and says it truly: its
docstring names the API and its key, its ``Versions:`` line is what ApiVersions serves, its
``ERROR_PLACEMENT`` names lists and fields that the API's messages have, and its ``AUTHORIZES``
says what the authorizer checks."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from fakebroker.api import ERROR_PLACEMENTS, MODULES, served_versions
from fakebroker.api.access import ERRORS, Check, InHandler
from fakebroker.api.shapes import Level, Placement
from fakebroker.api.targets import has_top_level_error
from fakebroker.protocol.codec import snake
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.specs import api_spec, parse_range
from fakebroker.state.acls import OPERATIONS
from fakebroker.wire_client import WireClient

BY_NAME = {m.__name__.rsplit(".", 1)[1]: m for m in MODULES}


def documented_versions(doc: str) -> set[int]:
    """The versions a ``Versions:`` line names: the leading version or range of each item
    (notes in parentheses are Kafka's history, not more versions)."""
    line = re.search(r"^Versions: (.*?)\.(?: |$)", doc, flags=re.M | re.S)
    assert line, "no 'Versions:' line"
    items = re.sub(r"\([^)]*\)", "", line.group(1)).split(",")
    versions: set[int] = set()
    for item in items:
        low, _, high = item.strip().partition("-")
        versions.update(range(int(low), int(high or low) + 1))
    return versions


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_an_api_module_docstring_starts_with_its_api_name_and_key(name):
    module = BY_NAME[name]
    spec = api_spec(module.API_KEY)
    assert module.__doc__.startswith(f"{spec.name} (key {module.API_KEY}): ")
    assert snake(spec.name) == name
    assert "Behavior" in module.__doc__


def test_every_versions_line_is_what_api_versions_serves_on_the_wire(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        answer = client.request("ApiVersions", 3, {"client_software_name": "wire",
                                                   "client_software_version": "1.0"})
    advertised = {k.api_key: set(range(k.min_version, k.max_version + 1))
                  for k in answer.api_keys}
    documented = {m.API_KEY: documented_versions(m.__doc__) for m in MODULES}
    assert documented == advertised
    assert all(set(served_versions(key)) == versions for key, versions in documented.items())


def test_a_versions_line_is_read_as_its_leading_ranges():
    doc = ("Versions: 0-5 (3.9), 6-7 (4.x, not in 3.9: v7 by id). Flexible from v2.\n"
           "Behavior: Versions 9-12 are not this line.")
    assert documented_versions(doc) == set(range(8))
    assert documented_versions("Versions: 0. Not flexible.") == {0}


# -- error placement --------------------------------------------------------------------------

def fields(rows: list[list[Any]], version: int) -> dict[str, list[Any]]:
    """A message's fields at ``version``, by snake-case name."""
    return {snake(row[0]): row for row in rows if version in parse_range(row[2])}


def fields_any_version(rows: list[list[Any]], versions: range) -> set[str]:
    return {name for version in versions for name in fields(rows, version)}


def entry_rows(rows: list[list[Any]], name: str, version: int) -> list[list[Any]] | None:
    """The fields of the entries of list ``name`` at ``version``; None if it has no such list."""
    row = fields(rows, version).get(name)
    if row is None or not row[1].startswith("[]"):
        return None
    return row[3]["fields"] if row[1] == "[]struct" else []


def keyed_by(level: Level, key: str, names: set[str]) -> bool:
    """Whether entries with fields ``names`` hold ``key`` (a topic's may hold its id instead;
    no key: the entries are plain values)."""
    return not key or key in names or (level.kind == "topic" and "topic_id" in names)


def levels_at(placement: Placement, version: int) -> list[Level]:
    level, found = placement.entries_at(version), []
    while level is not None:
        found.append(level)
        level = level.child
    return found


# Versions at which Kafka's own error answer (its getErrorResponse) carries no error: a
# whole-request error has nowhere to go. DescribeLogDirs before v3 has no top-level error
# code (the answer is an empty list of directories).
NOWHERE = {"describe_log_dirs": range(3)}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_api_module_declares_where_its_errors_go(name):
    """A module declares ``ERROR_PLACEMENT``: at the top level only where every served
    version has a top-level error_code; otherwise lists (by version) whose names and keys
    exist in that version's request and answer, answered with an error_code, and error
    fields that the answer's entries have at some version."""
    module = BY_NAME[name]
    placement = module.ERROR_PLACEMENT
    assert isinstance(placement, Placement)
    assert ERROR_PLACEMENTS[module.API_KEY] is placement
    spec = api_spec(module.API_KEY)
    versions = served_versions(module.API_KEY)
    entry_fields: dict[int, set[str]] = {id(level): set() for level in placement.levels()}
    for version in versions:
        request_rows, response_rows = spec.request["fields"], spec.response["fields"]
        levels = levels_at(placement, version)
        if not levels and placement.each is None and version not in NOWHERE.get(name, ()) \
                and getattr(module, "refused_answer", None) is None:
            assert has_top_level_error(module.API_KEY, version), f"v{version}: nowhere to go"
        if placement.each is not None:
            assert entry_rows(request_rows, placement.each[0], version) is not None
            assert "error_code" in fields(entry_rows(response_rows, placement.each[1], version)
                                          or [], version)
        for level in levels:
            request_rows = entry_rows(request_rows, level.request_list, version)
            response_rows = entry_rows(response_rows, level.response_list, version)
            assert request_rows is not None, f"v{version}: request has no {level.request_list}"
            assert response_rows is not None, f"v{version}: answer has no {level.response_list}"
            answer_fields = set(fields(response_rows, version))
            assert keyed_by(level, level.request_key, set(fields(request_rows, version)))
            assert keyed_by(level, level.response_key, answer_fields)
            if level.child is None:
                assert level.error_field in answer_fields, f"v{version}: no error field"
            entry_fields[id(level)] |= answer_fields
    for level in placement.levels():
        assert entry_fields[id(level)], f"{level.response_list}: at no served version"
        assert set(level.error_fields) <= entry_fields[id(level)], level.response_list
        echoed = set(level.echoed) - {"topic_id"}  # a topic level repeats an id if it has one
        assert echoed <= entry_fields[id(level)], level.response_list
    answer_fields = fields_any_version(spec.response["fields"], versions)
    request_fields = fields_any_version(spec.request["fields"], versions)
    assert set(placement.top_fields) <= answer_fields
    assert set(placement.echoed) <= answer_fields & request_fields
    assert set(placement.when_filtered) <= request_fields
    assert all(error_code(error) for error in placement.request_errors)
    if placement.keys is not None:
        assert {*placement.keys.fields, placement.keys.type_field} <= request_fields


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_api_module_declares_what_it_authorizes(name):
    """A module declares ``AUTHORIZES``: checks of the access vocabulary, each for versions
    the module serves, or a check its handler makes (then its handler asks
    ``ctx.allowed``)."""
    module = BY_NAME[name]
    assert isinstance(module.AUTHORIZES, tuple)
    served = set(served_versions(module.API_KEY))
    for check in module.AUTHORIZES:
        assert isinstance(check, Check | InHandler)
        if isinstance(check, Check):
            assert check.resource in ERRORS
            assert check.operation in OPERATIONS
            assert check.unless_cluster in (None, *OPERATIONS)
            assert check.versions is None or served & set(check.versions)
        else:
            assert check.what
            assert "ctx.allowed" in inspect.getsource(module) or \
                "ctx.authorized_operations" in inspect.getsource(module)
    if name not in CALLED_BY_ANYONE:
        assert module.AUTHORIZES, f"{name} authorizes nothing, and is not one of {CALLED_BY_ANYONE}"


# The APIs Kafka authorizes by no ACL: ApiVersions and the SASL exchange come before any
# principal exists; a delegation token's owner or renewers renew and expire it.
CALLED_BY_ANYONE = ("api_versions", "sasl_handshake", "sasl_authenticate",
                    "renew_delegation_token", "expire_delegation_token")
