"""Turn Kafka's message schemas into ``protocol_specs/``, the project's compact protocol facts.

Usage::

    python -m fakebroker.protocol.importer ../shared/kafka-protocol protocol_specs

Input is a folder holding Kafka's ``message/`` schemas (current versions), ``message-3.9/``
(the 3.9 schemas, for versions 4.x removed), ``apis.tsv`` and ``errors.tsv``.

Output, facts only (names, types, version ranges, defaults, tags):

* ``apis/<Name>.json`` — one file per API key: ``key``, ``name``, served ``versions``,
  ``flexible`` versions, ``unstable_latest``, and the ``request`` and ``response`` field trees.
* ``headers.json`` — the request and response header field trees.
* ``data/<Name>.json`` — the data messages (consumer protocol, control records, ...).
* ``errors.json`` — ``[code, name, retriable]`` rows.

A field is ``[name, type, versions, extras]``; ``versions`` is a range string such as
``"0-13"`` or ``"0-2,5-9"`` with concrete bounds; ``extras`` may hold ``nullable``, ``tagged``
(the versions it is tagged in), ``tag``, ``default`` (as written in the schema), ``flexible``
(a per-field override of the message's flexible versions) and ``fields``
for struct and struct-array types (``"struct"`` / ``"[]struct"``; common structs are inlined).

Guarantee: for every served version, the fields present in the output (and their order,
types, nullability and tags) are exactly those of the schema Kafka defines for that version:
the current schema for the versions it covers, the 3.9 schema for older ones. The importer
checks this itself and fails rather than write a merged tree that disagrees with a source.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PRIMITIVES = frozenset(
    "bool int8 int16 int32 int64 uint16 uint32 float64 uuid string bytes records".split()
)

VersionSet = frozenset[int]


# -- version strings -------------------------------------------------------------------------


def parse_versions(text: str | None, top: int) -> VersionSet:
    """Kafka's ``N``, ``N-M``, ``N+`` or ``none`` as a set, ``+`` bounded by ``top``."""
    if text is None or text == "none":
        return frozenset()
    if text.endswith("+"):
        return frozenset(range(int(text[:-1]), top + 1))
    if "-" in text:
        lo, hi = text.split("-")
        return frozenset(range(int(lo), int(hi) + 1))
    return frozenset({int(text)})


def format_versions(versions: VersionSet) -> str:
    """A set of versions as ``"a-b,c-d"`` (``""`` when empty)."""
    runs: list[str] = []
    ordered = sorted(versions)
    start = prev = None
    for v in ordered + [None]:
        if start is not None and (v is None or v != prev + 1):
            runs.append(f"{start}-{prev}")
            start = None
        if v is not None and start is None:
            start = v
        prev = v
    return ",".join(runs)


# -- schema reading -------------------------------------------------------------------------


def load_schema(path: Path) -> dict[str, Any]:
    """Read a Kafka schema file: JSON with ``//`` comments outside strings."""
    return parse_schema(path.read_text())


def parse_schema(text: str) -> dict[str, Any]:
    """A schema's text as Kafka's generator reads it: ``//`` comments outside strings skipped,
    the first JSON value taken and anything after it ignored (Kafka 2.8's
    DescribeProducersRequest.json ends with a stray ``]}``)."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    schema, _ = json.JSONDecoder().raw_decode("".join(out).strip())
    return schema


@dataclass
class Field:
    """One field of a message tree, with the versions it is present in."""

    name: str
    type: str  # primitive, "[]primitive", "struct" or "[]struct"
    versions: set[int]
    nullable: set[int] = field(default_factory=set)
    tagged: set[int] = field(default_factory=set)
    tag: int | None = None
    default: Any = None
    flexible: set[int] | None = None  # per-field override of the message's flexible versions
    fields: list[Field] = field(default_factory=list)

    def to_json(self) -> list[Any]:
        extras: dict[str, Any] = {}
        if self.nullable:
            extras["nullable"] = format_versions(frozenset(self.nullable))
        if self.tag is not None:
            extras["tag"] = self.tag
            extras["tagged"] = format_versions(frozenset(self.tagged))
        if self.default is not None:
            extras["default"] = self.default
        if self.flexible is not None:
            extras["flexible"] = format_versions(frozenset(self.flexible))
        if self.fields:
            extras["fields"] = [f.to_json() for f in self.fields]
        row: list[Any] = [self.name, self.type, format_versions(frozenset(self.versions))]
        if extras:
            row.append(extras)
        return row


def read_fields(
    raw_fields: list[dict[str, Any]],
    structs: dict[str, list[dict[str, Any]]],
    keep: VersionSet,
    top: int,
) -> list[Field]:
    """Fields of one schema, each limited to the versions in ``keep``; absent ones dropped."""
    result = []
    for raw in raw_fields:
        versions = parse_versions(raw["versions"], top) & keep
        if not versions:
            continue
        kafka_type: str = raw["type"]
        element = kafka_type[2:] if kafka_type.startswith("[]") else kafka_type
        children: list[Field] = []
        if element not in PRIMITIVES:
            sub = raw.get("fields") or structs[element]
            children = read_fields(sub, structs, versions, top)
            kafka_type = "[]struct" if kafka_type.startswith("[]") else "struct"
        default = raw.get("default")
        result.append(
            Field(
                name=raw["name"],
                type=kafka_type,
                versions=set(versions),
                nullable=set(parse_versions(raw.get("nullableVersions"), top) & versions),
                tagged=set(parse_versions(raw.get("taggedVersions"), top) & versions),
                tag=raw.get("tag"),
                default=str(default) if isinstance(default, (bool, int)) else default,
                fields=children,
                flexible=(
                    set(parse_versions(raw["flexibleVersions"], top) & versions)
                    if "flexibleVersions" in raw
                    else None
                ),
            )
        )
    return result


def common_structs(schema: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Named structs of a schema: ``commonStructs`` and every inline struct type."""
    found: dict[str, list[dict[str, Any]]] = {}

    def walk(raw_fields: list[dict[str, Any]]) -> None:
        for raw in raw_fields:
            if "fields" in raw:
                found.setdefault(raw["type"].removeprefix("[]"), raw["fields"])
                walk(raw["fields"])

    for struct in schema.get("commonStructs", []):
        found[struct["name"]] = struct["fields"]
        walk(struct["fields"])
    walk(schema.get("fields", []))
    return found


# -- merging the current and 3.9 trees ------------------------------------------------------


def merge_fields(current: list[Field], older: list[Field]) -> list[Field]:
    """Fold the 3.9 tree (older versions only) into the current one, keeping field order."""
    merged = list(current)
    position = 0
    for old in older:
        match = next(
            (i for i, f in enumerate(merged) if f.name == old.name and f.type == old.type), None
        )
        if match is None:
            merged.insert(position, old)
            position += 1
            continue
        mine = merged[match]
        if mine.tag != old.tag and mine.tagged and old.tagged:
            raise ValueError(f"field {old.name}: tag differs between schemas")
        mine.versions |= old.versions
        mine.nullable |= old.nullable
        mine.tagged |= old.tagged
        mine.tag = mine.tag if mine.tag is not None else old.tag
        mine.default = mine.default if mine.default is not None else old.default
        mine.fields = merge_fields(mine.fields, old.fields)
        position = match + 1
    return merged


def shape_at(fields: list[Field], version: int) -> list[Any]:
    """What a tree looks like on the wire at one version: the comparison key for checks."""
    return [
        (
            f.name,
            f.type,
            version in f.nullable,
            f.tag if version in f.tagged else None,
            shape_at(f.fields, version),
        )
        for f in fields
        if version in f.versions
    ]


# -- whole messages --------------------------------------------------------------------------


@dataclass
class Message:
    """A schema's versions and field tree, possibly merged from two sources."""

    name: str
    versions: set[int]
    flexible: set[int]
    fields: list[Field]
    unstable_latest: bool = False


def read_message(schema: dict[str, Any], keep: VersionSet | None = None) -> Message:
    valid = schema["validVersions"]
    top = max(parse_versions(valid, 10_000)) if valid != "none" else -1
    versions = parse_versions(valid, top)
    if keep is not None:
        versions &= keep
    return Message(
        name=schema["name"],
        versions=set(versions),
        flexible=set(parse_versions(schema.get("flexibleVersions"), top) & versions),
        fields=read_fields(schema.get("fields", []), common_structs(schema), versions, top),
        unstable_latest=bool(schema.get("latestVersionUnstable", False)),
    )


def merge_message(current: dict[str, Any], old: dict[str, Any] | None) -> Message:
    """The current schema, extended down to the 3.9 minimum with the 3.9 schema."""
    message = read_message(current)
    if old is None or not message.versions:
        return message
    older_versions = frozenset(range(0, min(message.versions)))
    legacy = read_message(old, keep=older_versions)
    if not legacy.versions:
        return message
    merged = Message(
        name=message.name,
        versions=message.versions | legacy.versions,
        flexible=message.flexible | legacy.flexible,
        fields=merge_fields(read_message(current).fields, legacy.fields),
        unstable_latest=message.unstable_latest,
    )
    for version in sorted(merged.versions):
        source = message if version in message.versions else legacy
        if shape_at(merged.fields, version) != shape_at(source.fields, version):
            raise ValueError(f"{message.name} v{version}: merged tree disagrees with its source")
    return merged


def message_json(message: Message) -> dict[str, Any]:
    return {
        "versions": format_versions(frozenset(message.versions)),
        "flexible": format_versions(frozenset(message.flexible)),
        "fields": [f.to_json() for f in message.fields],
    }


# -- the whole import ------------------------------------------------------------------------


def build_specs(source: Path) -> dict[str, Any]:
    """Every output file's content, keyed by relative path."""
    current_dir, old_dir = source / "message", source / "message-3.9"
    by_key: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {}
    for path in sorted(current_dir.glob("*.json")):
        schema = load_schema(path)
        old_path = old_dir / path.name
        old = load_schema(old_path) if old_path.exists() else None
        kind = schema["type"]
        message = merge_message(schema, old)
        if kind in ("request", "response"):
            if not message.versions:
                continue  # placeholders for APIs removed in 4.0
            entry = by_key.setdefault(schema["apiKey"], {"key": schema["apiKey"]})
            entry["name"] = schema["name"].removesuffix("Request").removesuffix("Response")
            entry[kind] = message_json(message)
            if kind == "request":
                entry["versions"] = format_versions(frozenset(message.versions))
                entry["flexible"] = format_versions(frozenset(message.flexible))
                entry["unstable_latest"] = message.unstable_latest
        elif kind == "header":
            out.setdefault("headers.json", {})[schema["name"]] = message_json(message)
        else:
            out[f"data/{schema['name']}.json"] = message_json(message)
    for key, entry in by_key.items():
        ordered = {k: entry[k] for k in ("key", "name", "versions", "flexible", "unstable_latest")}
        ordered.update(request=entry["request"], response=entry["response"])
        out[f"apis/{key:03d}_{entry['name']}.json"] = ordered
    with (source / "errors.tsv").open() as f:
        rows = csv.DictReader(f, delimiter="\t")
        out["errors.json"] = [
            [int(r["code"]), r["name"], r["retriable"] == "true"] for r in rows
        ]
    return out


def render(content: Any, indent: str = "") -> str:
    """Stable, diff-friendly JSON: one line per field row, children indented below it."""
    inner = indent + "  "
    if isinstance(content, dict):
        items = [f"{inner}{json.dumps(k)}: {render(v, inner)}" for k, v in content.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(content, list) and content and isinstance(content[0], list):
        rows = ",\n".join(inner + render(row, inner) for row in content)
        return "[\n" + rows + "\n" + indent + "]"
    if (isinstance(content, list) and len(content) == 4 and isinstance(content[3], dict)
            and "fields" in content[3]):
        extras = {k: v for k, v in content[3].items() if k != "fields"}
        head = json.dumps(content[:3] + [extras])[:-2] + (", " if extras else "")
        return head + '"fields": ' + render(content[3]["fields"], indent) + "}]"
    return json.dumps(content)


def write_specs(source: Path, target: Path) -> list[Path]:
    """Regenerate ``target`` from ``source``; returns the files written."""
    written = []
    for relative, content in build_specs(source).items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(content) + "\n")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m fakebroker.protocol.importer KAFKA_PROTOCOL_DIR SPECS_DIR")
        return 2
    written = write_specs(Path(argv[0]), Path(argv[1]))
    print(f"wrote {len(written)} files to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
