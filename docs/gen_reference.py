"""The reference pages made from the code, at every build (mkdocs-gen-files runs this file).

Each generated part is appended to its hand-written page in docs/reference/ (which says what
the part is for), so a flag, a setting, an operation, a fault field, an API or a route is
described once, where the code declares it:

* ``fakebroker serve``, ``fakebroker ctl`` and ``fakebroker kafka``: their argparse parsers
  (``fakebroker.cli``);
* cluster settings: ``fakebroker.options.CLUSTER_SETTINGS``;
* cluster operations: ``fakebroker.operations.OPERATIONS`` (the ``@operation`` methods);
* fault-rule fields: ``fakebroker.faults.rules.FIELDS``, where errors go: each API module's
  ``ERROR_PLACEMENT``;
* the journal's filters: ``fakebroker.journal.FILTERS`` (its fields: mkdocstrings);
* the HTTP control API: ``fakebroker.control.openapi.document()``, also written as
  ``reference/openapi.json``;
* the APIs served: ``fakebroker.api`` (versions from protocol_specs, each module's summary).

tests/test_docs.py imports this file to check the pages (``PAGES``) without a build.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
from collections.abc import Callable, Iterator
from typing import Any


def _cell(text: Any) -> str:
    """Text fit for a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _code(text: Any) -> str:
    return f"`{text}`"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def serve_parser() -> argparse.ArgumentParser:
    from fakebroker.cli import parser

    return _subcommands(parser())["serve"]


def _usage(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest.upper()
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    metavar = action.metavar or action.dest.upper()
    return f"{flag} {metavar}"


def serve_page() -> str:
    """Every ``fakebroker serve`` flag, its environment variable, default and meaning."""
    from fakebroker.options import CLUSTER_SETTINGS, ClusterSettings

    defaults = {f.name: f.default for f in dataclasses.fields(ClusterSettings)}
    rows = []
    for action in serve_parser()._actions:
        if "--help" in action.option_strings:
            continue
        variable = re.search(r"\[(FAKEBROKER_\w+)([^\]]*)\]", action.help or "")
        meaning = re.sub(r"\s*\[FAKEBROKER_[^\]]*\]", "", action.help or "")
        default = defaults.get(action.dest) if action.dest in CLUSTER_SETTINGS else None
        if isinstance(default, tuple):
            default = ", ".join(default) or None
        rows.append((_code(_usage(action)),
                     _code("".join(variable.groups())) if variable else "—",
                     "—" if default is None else _code(default), meaning))
    return "\n## Flags\n\n" + _table(("flag", "environment variable", "default", "meaning"),
                                     rows)


def _arguments(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    found = []
    for action in parser._actions:
        if "--help" in action.option_strings or isinstance(action,
                                                            argparse._SubParsersAction):
            continue
        meaning = action.help or ""
        if action.choices and not action.option_strings:
            meaning = (meaning + " one of: " + ", ".join(map(str, action.choices))).strip()
        if action.default not in (None, False, [], argparse.SUPPRESS):
            meaning = f"{meaning} (default {action.default})".strip()
        found.append((_code(_usage(action)), meaning))
    return found


def _commands(parser: argparse.ArgumentParser, words: str) -> Iterator[str]:
    commands = _subcommands(parser)
    helps = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
    for name, sub in commands.items():
        here = f"{words} {name}"
        arguments = _arguments(sub)
        yield f"\n### `{here}`\n\n{helps.get(name) or ''}\n\n"
        if arguments:
            yield _table(("argument", "meaning"), arguments)
        yield from _commands(sub, here)


def ctl_page() -> str:
    """Every ``fakebroker ctl`` command and its arguments."""
    from fakebroker.cli import parser

    ctl = _subcommands(parser())["ctl"]
    ctl.format_help()  # its arguments are added when first needed
    parts = ["\n## Options\n\n", _table(("option", "meaning"), _arguments(ctl)),
             "\n## Commands\n"]
    parts += _commands(ctl, "fakebroker ctl")
    return "".join(parts)


def kafka_page() -> str:
    """Every ``fakebroker kafka`` command and its arguments."""
    from fakebroker.cli import parser

    kafka = _subcommands(parser())["kafka"]
    kafka.format_help()  # its arguments are added when first needed
    return "\n## Commands\n" + "".join(_commands(kafka, "fakebroker kafka"))


def settings_page() -> str:
    """Every cluster setting: default, Kafka config, flag and variable, meaning."""
    from fakebroker.options import CLUSTER_SETTINGS, ClusterSettings

    flags = {a.dest for a in serve_parser()._actions}
    defaults = {f.name: f.default for f in dataclasses.fields(ClusterSettings)}
    rows = []
    for name, setting in CLUSTER_SETTINGS.items():
        default = defaults[name]
        if isinstance(default, tuple):
            default = ", ".join(default) or None
        rows.append((_code(name), "—" if default is None else _code(default),
                     _code(setting.kafka) if setting.kafka else "—",
                     f"{_code(setting.flag)}, {_code(setting.env)}" if name in flags
                     else "Python only", setting.help))
    return "\n## Settings\n\n" + _table(
        ("setting", "default", "Kafka config", "flag, variable", "meaning"), rows) \
        + broker_configs_section()


def broker_configs_section() -> str:
    """Every broker config ``overrides`` takes, by Kafka's name: Kafka 4.4's type, default,
    valid values, whether a running broker may change it, and what it changes in the fake."""
    from fakebroker.options import BROKER_CONFIGS, HONOURED, KAFKA_NAMES

    rows = []
    for name, config in BROKER_CONFIGS.items():
        valid = (", ".join(config.allowed) if config.allowed
                 else "[" + ", ".join("…" if bound is None else f"{bound:.15g}"
                                      for bound in (config.low, config.high)) + "]"
                 if config.low is not None else "")
        if config.or_minus_one:
            valid += " or -1"
        effect = HONOURED.get(name, "described only")
        if name in KAFKA_NAMES:
            effect += f" (the setting `{KAFKA_NAMES[name]}`)"
        rows.append((_code(name), config.type,
                     "—" if config.default is None else _code(config.default),
                     valid or "—", "dynamic" if config.dynamic else "read-only", effect))
    others = sorted(set(KAFKA_NAMES) - set(BROKER_CONFIGS))
    return ("\n## Broker configs (`overrides`)\n\n"
            "`overrides` sets broker configs by Kafka's names, as `kafka-server-start.sh "
            "--override` does: `--override message.max.bytes=2000` (repeatable), "
            "`FAKEBROKER_OVERRIDES=message.max.bytes=2000,log.cleanup.policy=compact,delete`, "
            "`FakeKafka(overrides={\"message.max.bytes\": 2000})`, the marker's "
            "`overrides=`, or `overrides = {\"message.max.bytes\" = 2000}` in a scenario's "
            "`[cluster]`. Each value is checked by Kafka's validator; an unknown key is "
            "refused. DescribeConfigs reports them as STATIC_BROKER_CONFIG, for the broker "
            "and where a topic's or a group's config not set on it takes its value from "
            "them (`log.retention.ms` for a topic's `retention.ms`, "
            "`group.consumer.session.timeout.ms` for a group's "
            "`consumer.session.timeout.ms`, `group.share.record.lock.duration.ms` for "
            "`share.record.lock.duration.ms`...), the override and Kafka's default in its "
            "synonyms; the dynamic ones can be changed at run time by "
            "IncrementalAlterConfigs (the cluster default or one broker), and take effect at "
            "once. A config a named setting stands for sets "
            "that setting" + (f"; so do {', '.join(map(_code, others))}" if others else "")
            + ".\n\n" + _table(("config", "type", "default", "valid values", "update",
                                "what it changes"), rows))


def operations_page() -> str:
    """Every cluster operation: the Python call, its HTTP route and ctl command."""
    from fakebroker.operations import OPERATIONS, REQUIRED
    from fakebroker.runtime import FakeCluster

    parts = ["\n## Operations\n"]
    for name, op in OPERATIONS.items():
        method = getattr(FakeCluster, op.method)
        signature = ", ".join(p.name if p.default is REQUIRED else f"{p.name}={p.default!r}"
                              for p in op.parameters)
        options = " ".join(f"--{p.name.replace('_', '-')} {p.name.upper()}"
                           for p in op.parameters)
        answer = f', "{op.result}": …' if op.result else ""
        parts.append(
            f"\n### `{op.method}`\n\n{inspect.getdoc(method)}\n\n"
            f"- Python: `kafka.{op.method}({signature})`"
            f"{' (awaited on FakeCluster)' if op.is_async else ''}\n"
            f"- HTTP: `POST /actions/{name}`, answers `{{\"action\": \"{name}\"{answer}}}`\n"
            f"- ctl: `fakebroker ctl action {name} {options}`\n"
            f"- scenario timeline: `action = \"{name}\"`\n")
    return "".join(parts)


def faults_page() -> str:
    """Every fault-rule field, and where each API puts an ``error``."""
    from fakebroker.api import ERROR_PLACEMENTS, MODULES, served_versions
    from fakebroker.faults.rules import FIELDS
    from fakebroker.protocol.specs import api_spec

    rows = []
    for name, field in FIELDS.items():
        option = ("`--" + name.replace("_", "-") + "`") if field.option is not None else {
            "versions": "`--versions LOW[-HIGH]`", "respond": "`--respond JSON`"}[name]
        rows.append((_code(name), field.kind, field.help, option))
    placed: dict[str, list[str]] = {"partition": [], "topic": [], "group": [], "each": [],
                                    "top": []}
    for module in MODULES:
        placement = ERROR_PLACEMENTS[module.API_KEY]
        versions = served_versions(module.API_KEY) or range(0)
        spans: list[tuple[str, int, int]] = []  # (kind, first, last version)
        for version in versions:
            kinds, level = set(), placement.entries_at(version)
            while level is not None:
                kinds.add(level.kind)
                level = level.child
            kind = next((k for k in ("partition", "topic", "group") if k in kinds),
                        "each" if placement.each else "top")
            if spans and spans[-1][0] == kind:
                spans[-1] = (kind, spans[-1][1], version)
            else:
                spans.append((kind, version, version))
        name = api_spec(module.API_KEY).name
        for kind, first, last in spans:
            whole = len(spans) == 1
            placed[kind].append(name if whole else f"{name} (v{first}–{last})")
    titles = {"group": "per group (or the entry a request names: transactional id, user)",
              "each": "per entry of the request", "top": "at the top level"}
    where = "".join(f"- **{titles.get(kind, 'per ' + kind)}**: {', '.join(names)}\n"
                    for kind, names in placed.items() if names)
    return ("\n## Fields\n\n" + _table(("field", "kind", "meaning", "ctl fault add"), rows)
            + "\n## Where an `error` goes\n\nAs each API's module declares it "
              "(`ERROR_PLACEMENT` in `fakebroker/api/`), by the finest level its answer "
              "has:\n\n" + where)


def journal_page() -> str:
    """The journal's filters (Python keywords, HTTP query, ctl options)."""
    from fakebroker.journal import FILTERS

    rows = [(_code(name), kind.__name__, _code(f"--{name.replace('_', '-')}"))
            for name, kind in FILTERS.items()]
    return "\n## Filters\n\n" + _table(("filter", "type", "ctl journal"), rows)


def control_api_page() -> str:
    """The HTTP routes, from the OpenAPI document."""
    from fakebroker.control.openapi import document

    doc = document()
    parts = ["\n## Routes\n\nThe same as an OpenAPI 3.1 document: "
             "[openapi.json](openapi.json).\n"]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            parts.append(f"\n### `{method.upper()} {path}`\n\n{op['summary']}\n\n")
            parameters = [*item.get("parameters", []), *op.get("parameters", [])]
            if parameters:
                parts.append(_table(("parameter", "in", "type"), [
                    (_code(p["name"]), p["in"], p["schema"]["type"]) for p in parameters]))
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body and "properties" in body["schema"]:
                required = set(body["schema"].get("required", ()))
                parts.append("\nBody (JSON):\n\n" + _table(("field", "type", "default"), [
                    (_code(name), _type_text(schema),
                     "required" if name in required else _code(json.dumps(schema.get(
                         "default"))) if "default" in schema else "—")
                    for name, schema in body["schema"]["properties"].items()]))
            elif body:
                ref = body["schema"]["$ref"].rsplit("/", 1)[1]
                parts.append(f"\nBody (JSON): a [{ref}](#{ref.lower()}).\n")
            codes = "; ".join(f"{code} {answer['description']}"
                              for code, answer in op["responses"].items())
            parts.append(f"\nAnswers: {codes}.\n")
    rule = doc["components"]["schemas"]["FaultRule"]["properties"]
    parts.append("\n## FaultRule\n\n" + _table(("field", "type", "meaning"), [
        (_code(name), _type_text(schema), schema["description"])
        for name, schema in rule.items()]))
    return "".join(parts)


def _type_text(schema: dict[str, Any]) -> str:
    if "oneOf" in schema:
        return " or ".join(_type_text(s) for s in schema["oneOf"])
    kind = schema.get("type", "object")
    if kind == "array":
        return f"array of {_type_text(schema['items'])}"
    return " or ".join(kind) if isinstance(kind, list) else kind


def apis_page() -> str:
    """Every API served, at which versions, with its module's summary."""
    from fakebroker.api import MODULES, served_versions
    from fakebroker.protocol.specs import api_spec

    rows = []
    for module in sorted(MODULES, key=lambda m: m.API_KEY):
        versions = served_versions(module.API_KEY)
        assert versions is not None
        summary = (module.__doc__ or "").split("\n\n", 1)[0]
        summary = summary.split(": ", 1)[-1].replace("\n", " ")
        rows.append((api_spec(module.API_KEY).name, module.API_KEY,
                     f"{versions.start}–{versions.stop - 1}", summary))
    return "\n## APIs\n\n" + _table(("API", "key", "versions", "what it does"), rows)


PAGES: dict[str, Callable[[], str]] = {
    "reference/serve.md": serve_page,
    "reference/ctl.md": ctl_page,
    "reference/kafka.md": kafka_page,
    "reference/settings.md": settings_page,
    "reference/operations.md": operations_page,
    "reference/faults.md": faults_page,
    "reference/journal.md": journal_page,
    "reference/control-api.md": control_api_page,
    "reference/apis.md": apis_page,
}


def write_pages() -> None:
    import mkdocs_gen_files

    for path, page in PAGES.items():
        with mkdocs_gen_files.open(path, "a") as out:
            out.write(page())
    from fakebroker.control.openapi import document

    with mkdocs_gen_files.open("reference/openapi.json", "w") as out:
        json.dump(document(), out, indent=2)


if __name__ == "<run_path>":  # run by mkdocs-gen-files
    write_pages()
