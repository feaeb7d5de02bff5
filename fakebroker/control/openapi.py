"""The HTTP control API (``fakebroker.control.http``) as an OpenAPI 3.1 document.

The parts that grow are generated from their one declaration: each ``POST /actions/{name}``
from the declared cluster operation (``fakebroker.operations``: its parameters, types,
defaults and docstring), a fault rule's body from ``fakebroker.faults.rules.FIELDS``, the
journal's query from ``fakebroker.journal.FILTERS`` and its entries from ``JournalEntry``.
The fixed routes (health, cluster, topics, faults, journal, coverage) are described here;
tests/test_openapi.py checks that the document names exactly the routes and methods the
server routes.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from fakebroker.journal import FILTERS, JournalEntry
from fakebroker.operations import OPERATIONS, REQUIRED
from fakebroker.runtime import FakeCluster  # declares the operations
from fakebroker.version import __version__

_TYPES = {int: "integer", str: "string", bool: "boolean", float: "number"}
_JSON = "application/json"


def _schema(kind: Any) -> dict[str, Any]:
    """A JSON schema for a Python type hint of the declared APIs (int, str, list[str] ...)."""
    if kind in _TYPES:
        return {"type": _TYPES[kind]}
    members = [m for m in typing.get_args(kind) if m is not type(None)]
    if typing.get_origin(kind) is list:
        return {"type": "array", "items": _schema(members[0])}
    if len(members) < len(typing.get_args(kind)):  # X | None
        return {"type": [_schema(members[0])["type"], "null"]}
    return {}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": description,
            "content": {_JSON: {"schema": schema or {"type": "object"}}}}


_REFUSED = {"400": _answer("bad input, or an operation the cluster refuses: nothing changed",
                           _ref("Error"))}
_UNAUTHORIZED = _answer("the API has a token and the request lacks it: nothing changed",
                        _ref("Error"))


def _body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {_JSON: {"schema": schema}}}


def _fault_rule_schema() -> dict[str, Any]:
    from fakebroker.faults.rules import FIELDS

    shapes: dict[str, dict[str, Any]] = {
        "api": {"type": ["string", "integer"]},
        "versions": {"oneOf": [{"type": "integer"},
                               {"type": "array", "items": {"type": "integer"},
                                "minItems": 2, "maxItems": 2}]},
        "count": {"type": ["integer", "null"]},
        "error": {"type": ["string", "integer"]},
        "respond": {"type": "object"},
    }
    properties = {name: {**shapes.get(name, _schema(spec.option)),
                         "description": f"{spec.kind}: {spec.help}"}
                  for name, spec in FIELDS.items()}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _operation_paths() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for name, op in OPERATIONS.items():
        properties: dict[str, Any] = {}
        required = []
        for parameter in op.parameters:
            schema = _schema(parameter.type)
            if parameter.optional:
                schema = {"type": [schema["type"], "null"]}
            if parameter.default is REQUIRED and not parameter.optional:
                required.append(parameter.name)
            elif parameter.default is not REQUIRED:
                schema["default"] = parameter.default
            properties[parameter.name] = schema
        result = {"action": {"const": name}}
        if op.result:
            returned = typing.get_type_hints(getattr(FakeCluster, op.method))["return"]
            result[op.result] = _schema(returned)
        paths[f"/actions/{name}"] = {"post": {
            "summary": op.summary,
            "operationId": op.method,
            "tags": ["actions"],
            "requestBody": _body({"type": "object", "properties": properties,
                                  "required": required, "additionalProperties": False},
                                 required=bool(required)),
            "responses": {"200": _answer("what it did",
                                         {"type": "object", "properties": result}),
                          **_REFUSED},
        }}
    paths["/actions/fault"] = {"post": {
        "summary": "Add a fault rule (as POST /faults; a scenario timeline's way to add one).",
        "operationId": "add_fault_action",
        "tags": ["actions"],
        "requestBody": _body(_ref("FaultRule")),
        "responses": {"200": _answer("the rule, with action and id"), **_REFUSED},
    }}
    return paths


def document() -> dict[str, Any]:
    """The OpenAPI document of the control API."""
    fault_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
    not_found = {"404": _answer("no such rule", _ref("Error"))}
    rule = _answer("the rule, with id, hits and active (held for hold rules)", _ref("Rule"))
    journal_query = [{"name": name, "in": "query", "required": False,
                      "schema": {"type": _TYPES[kind]}} for name, kind in FILTERS.items()]
    hints = typing.get_type_hints(JournalEntry)
    entry = {"type": "object", "properties": {f.name: _schema(hints[f.name])
                                              for f in dataclasses.fields(JournalEntry)}}
    paths: dict[str, Any] = {
        "/health": {"get": {"summary": "Is the control API up.", "operationId": "health",
                            "responses": {"200": _answer("{\"status\": \"ok\"}")}}},
        "/cluster": {"get": {
            "summary": "The cluster as data: brokers (up, latency), topics with partitions "
                       "(leader, epoch, replicas, ISR, log start, high watermark, last stable "
                       "offset), groups with members and assignments, transactional ids.",
            "operationId": "cluster", "responses": {"200": _answer("the cluster")}}},
        "/topics": {"post": {
            "summary": "Create a topic.", "operationId": "create_topic",
            "requestBody": _body({"type": "object", "required": ["name"],
                                  "additionalProperties": False, "properties": {
                                      "name": {"type": "string"},
                                      "partitions": {"type": "integer", "default": 1},
                                      "replication_factor": {"type": "integer", "default": 1},
                                      "configs": {"type": "object", "additionalProperties":
                                                  {"type": "string"}}}}),
            "responses": {"201": _answer("the topic: name, id, partitions"), **_REFUSED}}},
        "/faults": {
            "get": {"summary": "Every rule, with hits and active (held for hold rules).",
                    "operationId": "list_faults",
                    "responses": {"200": _answer("the rules", {"type": "array",
                                                               "items": _ref("Rule")})}},
            "post": {"summary": "Add a fault rule.", "operationId": "add_fault",
                     "requestBody": _body(_ref("FaultRule")),
                     "responses": {"201": rule, **_REFUSED}},
            "delete": {"summary": "Remove every rule (what they hold is released).",
                       "operationId": "clear_faults",
                       "responses": {"200": _answer("{\"removed\": n}")}}},
        "/faults/{id}": {
            "parameters": [fault_id],
            "get": {"summary": "One rule.", "operationId": "show_fault",
                    "responses": {"200": rule, **not_found}},
            "delete": {"summary": "Remove one rule (what it holds is released).",
                       "operationId": "remove_fault",
                       "responses": {"200": rule, **not_found}}},
        "/faults/{id}/release": {
            "parameters": [fault_id],
            "post": {"summary": "Let what a hold rule holds go on: the count oldest, or all "
                                "without a body.",
                     "operationId": "release_fault",
                     "requestBody": _body({"type": "object", "additionalProperties": False,
                                           "properties": {"count": {"type": "integer"}}},
                                          required=False),
                     "responses": {"200": _answer("the rule, with released", _ref("Rule")),
                                   **not_found, **_REFUSED}}},
        "/journal": {"get": {
            "summary": "The requests the brokers read, oldest first, filtered by the query.",
            "operationId": "journal", "parameters": journal_query,
            "responses": {"200": _answer("journal entries",
                                         {"type": "array", "items": _ref("JournalEntry")}),
                          **_REFUSED}}},
        "/coverage": {"get": {
            "summary": "API versions, error codes and faults seen since start.",
            "operationId": "coverage", "responses": {"200": _answer("coverage counts")}}},
        **_operation_paths(),
    }
    for item in paths.values():  # with a token, any route refuses a request without it
        for method, op in item.items():
            if method != "parameters":
                op["responses"]["401"] = _UNAUTHORIZED
    return {
        "openapi": "3.1.0",
        "info": {"title": "fakebroker control API", "version": __version__,
                 "description": "Served by `fakebroker serve --control-port P`, on loopback "
                                "unless `--control-host` says otherwise (then with a token)."},
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {"type": "object", "required": ["error", "message"],
                          "properties": {"error": {"type": "string"},
                                         "message": {"type": "string"}}},
                "FaultRule": _fault_rule_schema(),
                "Rule": {"allOf": [_ref("FaultRule"), {"type": "object", "properties": {
                    "id": {"type": "integer"}, "hits": {"type": "integer"},
                    "active": {"type": "boolean"}, "held": {"type": "integer"}}}]},
                "JournalEntry": entry,
            },
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"token": []}],
    }
