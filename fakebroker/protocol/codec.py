"""construct codecs for every Kafka message version, built from ``protocol_specs/``.

``request_codec(api_key, version)`` and ``response_codec(api_key, version)`` return a construct
``Construct`` whose ``parse(bytes)`` gives a ``Container`` with snake_case field names and whose
``build(dict)`` gives wire bytes. Codecs are built once per (api, version, kind) and cached.

Guarantees:

* Classic versions use int16/int32 length prefixes; flexible versions use compact (unsigned
  varint length+1) strings, bytes, records and arrays, and end every struct with a tagged-field
  section.
* Parsing fills every field of the message's whole field tree, including fields absent from the
  version and tagged fields not sent, with their defaults (0, ``""``, ``False``, ``[]``, zero
  UUID, ``None`` for null defaults), so handlers never branch on a field's presence.
* Building takes any mapping; a missing field is written as its default. A tagged field is
  written only when it differs from its default, ascending by tag, as Kafka brokers do.
* UUIDs are ``uuid.UUID``; strings are ``str`` (UTF-8); bytes and records are ``bytes``.
"""

from __future__ import annotations

import functools
import io
import re
import struct
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from construct import (
    Construct,
    Container,
    Flag,
    Float64b,
    Int8sb,
    Int16sb,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    StreamError,
)

from fakebroker.protocol.specs import api_spec, data_spec, header_spec, parse_range

ZERO_UUID = uuid.UUID(int=0)


class DecodeError(ValueError):
    """The bytes do not form a valid message of the expected API version."""


def snake(name: str) -> str:
    """Kafka's CamelCase field name as a Python name: ``TopicId`` -> ``topic_id``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _read(stream: io.BytesIO, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise DecodeError(f"needed {n} bytes, {len(data)} left")
    return data


def read_uvarint(stream: io.BytesIO) -> int:
    result = shift = 0
    while True:
        byte = stream.read(1)
        if not byte:
            raise DecodeError("truncated varint")
        b = byte[0]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result
        shift += 7
        if shift > 35:
            raise DecodeError("varint too long")


def write_uvarint(stream: io.BytesIO, value: int) -> None:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    stream.write(out)


class Uuid(Construct):
    """16 bytes as ``uuid.UUID``; never null (all zeros means no id)."""

    def _parse(self, stream, context, path):
        return uuid.UUID(bytes=_read(stream, 16))

    def _build(self, obj, stream, context, path):
        stream.write((obj or ZERO_UUID).bytes)
        return obj


class Sized(Construct):
    """A length-prefixed string or byte string.

    ``compact``: unsigned varint of length+1 (0 = null); otherwise an int16 (strings) or int32
    (bytes) length with -1 = null. Strings decode as UTF-8.
    """

    def __init__(self, *, text: bool, compact: bool, nullable: bool):
        super().__init__()
        self.text, self.compact, self.nullable = text, compact, nullable
        self.prefix = struct.Struct(">h" if text else ">i")

    def _parse(self, stream, context, path):
        if self.compact:
            length = read_uvarint(stream) - 1
        else:
            length = self.prefix.unpack(_read(stream, self.prefix.size))[0]
        if length < 0:
            if not self.nullable:
                raise DecodeError(f"null in a non-nullable field at {path}")
            return None
        data = _read(stream, length)
        return data.decode("utf-8") if self.text else data

    def _build(self, obj, stream, context, path):
        if obj is None:
            if self.compact:
                stream.write(b"\x00")
            else:
                stream.write(self.prefix.pack(-1))
            return obj
        data = obj.encode("utf-8") if self.text else obj
        if self.compact:
            write_uvarint(stream, len(data) + 1)
        else:
            stream.write(self.prefix.pack(len(data)))
        stream.write(data)
        return obj


class Array(Construct):
    """An int32-counted (classic) or compact-counted array; ``None`` is the null array."""

    def __init__(self, element: Construct, *, compact: bool, nullable: bool):
        super().__init__()
        self.element, self.compact, self.nullable = element, compact, nullable

    def _parse(self, stream, context, path):
        if self.compact:
            count = read_uvarint(stream) - 1
        else:
            count = struct.unpack(">i", _read(stream, 4))[0]
        if count < 0:
            if not self.nullable:
                raise DecodeError(f"null array in a non-nullable field at {path}")
            return None
        parse = self.element._parsereport
        return [parse(stream, context, path) for _ in range(count)]

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\x00" if self.compact else b"\xff\xff\xff\xff")
            return obj
        if self.compact:
            write_uvarint(stream, len(obj) + 1)
        else:
            stream.write(struct.pack(">i", len(obj)))
        build = self.element._build
        for item in obj:
            build(item, stream, context, path)
        return obj


class NullableStruct(Construct):
    """A nullable struct (classic and flexible versions alike): int8 -1 for null, 1 then it."""

    def __init__(self, inner: Construct):
        super().__init__()
        self.inner = inner

    def _parse(self, stream, context, path):
        marker = struct.unpack(">b", _read(stream, 1))[0]
        return None if marker < 0 else self.inner._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\xff")
        else:
            stream.write(b"\x01")
            self.inner._build(obj, stream, context, path)
        return obj


Default = Callable[[], Any]


class Message(Construct):
    """A struct of one message version: regular fields, then (if flexible) tagged fields.

    ``fields``: (name, codec, default) in wire order. ``tagged``: (tag, name, codec, default)
    ascending by tag. ``absent``: (name, default) for fields of the tree not in this version.
    """

    def __init__(
        self,
        fields: list[tuple[str, Construct, Default]],
        tagged: list[tuple[int, str, Construct, Default]] | None,
        absent: list[tuple[str, Default]],
    ):
        super().__init__()
        self.fields, self.tagged, self.absent = fields, tagged, absent
        self.tags = {tag: (name, codec) for tag, name, codec, _ in tagged or ()}

    def _parse(self, stream, context, path):
        obj = Container()
        for name, codec, _ in self.fields:
            obj[name] = codec._parsereport(stream, context, path)
        if self.tagged is not None:
            for _ in range(read_uvarint(stream)):
                tag = read_uvarint(stream)
                payload = _read(stream, read_uvarint(stream))
                if tag in self.tags:
                    name, codec = self.tags[tag]
                    obj[name] = codec._parsereport(io.BytesIO(payload), context, path)
            for _, name, _, default in self.tagged:
                if name not in obj:
                    obj[name] = default()
        for name, default in self.absent:
            obj[name] = default()
        return obj

    def _build(self, obj, stream, context, path):
        get = obj.get
        for name, codec, default in self.fields:
            value = get(name)
            codec._build(default() if value is None and name not in obj else value,
                         stream, context, path)
        if self.tagged is not None:
            present = []
            for tag, name, codec, default in self.tagged:
                value = get(name)
                if value is not None and value != default():
                    sub = io.BytesIO()
                    codec._build(value, sub, context, path)
                    present.append((tag, sub.getvalue()))
            write_uvarint(stream, len(present))
            for tag, payload in present:
                write_uvarint(stream, tag)
                write_uvarint(stream, len(payload))
                stream.write(payload)
        return obj


PRIMITIVE_CODECS: dict[str, Construct] = {
    "bool": Flag,
    "int8": Int8sb,
    "int16": Int16sb,
    "int32": Int32sb,
    "int64": Int64sb,
    "uint16": Int16ub,
    "uint32": Int32ub,
    "float64": Float64b,
    "uuid": Uuid(),
}

ZERO_DEFAULTS: dict[str, Any] = {
    "bool": False, "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint16": 0, "uint32": 0,
    "float64": 0.0, "uuid": ZERO_UUID, "string": "", "bytes": b"", "records": None,
}


def literal_default(kafka_type: str, text: str | None) -> Any:
    """A schema ``default`` string as a Python value of ``kafka_type``."""
    if text is None:
        return ZERO_DEFAULTS[kafka_type]
    if text == "null":
        return None
    if kafka_type == "bool":
        return text == "true"
    if kafka_type == "float64":
        return float(text)
    if kafka_type == "string":
        return text
    return int(text, 0)


def field_codec(row: list[Any], version: int, flexible: bool) -> tuple[Construct, Default]:
    """The codec and default factory of one field row at one version."""
    name, kafka_type, _, *rest = row
    extras = rest[0] if rest else {}
    if "flexible" in extras:
        flexible = version in parse_range(extras["flexible"])
    nullable = version in parse_range(extras.get("nullable", ""))
    array_default: Default = (lambda: None) if extras.get("default") == "null" else list
    if kafka_type in ("struct", "[]struct"):
        inner, inner_default = message_codec(extras["fields"], version, flexible)
        if kafka_type == "[]struct":
            return Array(inner, compact=flexible, nullable=nullable), array_default
        if extras.get("default") == "null":
            inner_default = array_default
        return (NullableStruct(inner) if nullable else inner), inner_default
    if kafka_type.startswith("[]"):
        element = PRIMITIVE_CODECS.get(kafka_type[2:]) or Sized(
            text=kafka_type == "[]string", compact=flexible, nullable=False
        )
        return Array(element, compact=flexible, nullable=nullable), array_default
    value = literal_default(kafka_type, extras.get("default"))
    if kafka_type in ("string", "bytes", "records"):
        codec: Construct = Sized(text=kafka_type == "string", compact=flexible, nullable=nullable)
    else:
        codec = PRIMITIVE_CODECS[kafka_type]
    return codec, (lambda: value)


def tree_default(rows: list[list[Any]]) -> Default:
    """A factory for a struct of ``rows`` with every field at its default."""
    parts = [(snake(r[0]), field_codec(r, max(parse_range(r[2])), False)[1]) for r in rows]
    return lambda: Container((name, make()) for name, make in parts)


def message_codec(rows: list[list[Any]], version: int, flexible: bool) -> tuple[Message, Default]:
    """The codec for a field tree at one version, and a factory of its default value."""
    fields, tagged, absent = [], [], []
    for row in rows:
        name = snake(row[0])
        extras = row[3] if len(row) > 3 else {}
        if version not in parse_range(row[2]):
            absent.append((name, field_codec(row, max(parse_range(row[2])), False)[1]))
            continue
        codec, default = field_codec(row, version, flexible)
        if version in parse_range(extras.get("tagged", "")):
            tagged.append((extras["tag"], name, codec, default))
        else:
            fields.append((name, codec, default))
    tagged.sort(key=lambda t: t[0])
    return Message(fields, tagged if flexible else None, absent), tree_default(rows)


def _versioned(spec: Mapping[str, Any], version: int) -> Message:
    if version not in parse_range(spec["versions"]):
        raise KeyError(f"version {version} not defined")
    flexible = version in parse_range(spec["flexible"])
    return message_codec(spec["fields"], version, flexible)[0]


@functools.cache
def request_codec(api_key: int, version: int) -> Message:
    """The body codec of API ``api_key``'s request at ``version``; ``KeyError`` if undefined."""
    return _versioned(api_spec(api_key).request, version)


@functools.cache
def response_codec(api_key: int, version: int) -> Message:
    """The body codec of API ``api_key``'s response at ``version``; ``KeyError`` if undefined."""
    return _versioned(api_spec(api_key).response, version)


@functools.cache
def header_codec(name: str, version: int) -> Message:
    """``RequestHeader`` (v1, v2) or ``ResponseHeader`` (v0, v1)."""
    return _versioned(header_spec(name), version)


@functools.cache
def data_codec(name: str, version: int) -> Message:
    """A data message such as ``ConsumerProtocolAssignment`` at ``version``."""
    return _versioned(data_spec(name), version)


def decode(codec: Construct, data: bytes) -> Container:
    """Parse ``data`` with ``codec``; ``DecodeError`` when it is malformed or too short."""
    stream = io.BytesIO(data)
    try:
        value = codec._parsereport(stream, None, "(message)")
    except (StreamError, struct.error, UnicodeDecodeError) as exc:
        raise DecodeError(str(exc)) from exc
    return value
