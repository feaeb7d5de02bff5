"""construct codecs for every Kafka message version, built from ``protocol_specs/``.

``request_codec(api_key, version)`` and ``response_codec(api_key, version)`` return a construct
``Construct`` whose ``parse(bytes)`` gives a ``Container`` with snake_case field names and whose
``build(dict)`` gives wire bytes. Codecs are built once per (api, version, kind) and cached.

Guarantees:

* Classic versions use int16/int32 length prefixes; flexible versions use compact (unsigned
  varint length+1) strings, bytes, records and arrays, and end every struct with a tagged-field
  section.
* Parsed messages are containers: fields read by key or as attributes (``Parsed``, cheap
  attribute reads, unless the message may carry bytes or records).
* Parsing fills every field of the message's whole field tree, including fields absent from the
  version and tagged fields not sent, with their defaults (0, ``""``, ``False``, ``[]``, zero
  UUID, ``None`` for null defaults), so handlers never branch on a field's presence.
* Building takes any mapping; a missing field is written as its default. A tagged field is
  written only when it differs from its default, ascending by tag, as Kafka brokers do.
* UUIDs are ``uuid.UUID``; strings are ``str`` (UTF-8); bytes and records are ``bytes``. For
  building, a bytes or records field also takes a ``list`` of bytes-like chunks, written one
  after another as one value (a fetch answer's stored batches, without joining them first).
* An array given as a ``FrozenArray`` (a value that never changes, such as ApiVersions' list of
  APIs) is encoded once per codec and its bytes reused.
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
    write_uvarint_into(out, value)
    stream.write(out)


def write_uvarint_into(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_uvarint_at(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at ``pos``: (value, position after it). IndexError if truncated."""
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 35:
            raise DecodeError("varint too long")


class Parsed(Container):
    """A parsed message: a construct ``Container`` that is also its own ``__dict__``, so a
    field read as an attribute (``request.topics``) is a plain instance-dict hit instead of
    Container's ``__getattr__`` fallback (about ten times cheaper). The self-reference makes
    each parsed message a reference cycle, freed by the garbage collector's next young pass,
    so messages that may carry bytes or records (a produced batch) stay plain Containers."""


class FrozenArray(tuple):
    """An array value its maker promises never to change (nor the entries in it), so each
    array codec encodes it once and keeps the bytes. Keep one instance alive and reuse it."""

    __slots__ = ()


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
        self._parser: Callable[[bytes, int], tuple[Container, int]] | None = None
        self._builder: Callable[[Mapping[str, Any], bytearray], None] | None = None

    def parse_from(self, data: bytes, pos: int = 0) -> tuple[Container, int]:
        """Parse one message from ``data`` at ``pos``: (message, position after it).

        ``DecodeError`` when the bytes are truncated or malformed (``UnicodeDecodeError`` for
        a string that is not UTF-8).
        """
        if not isinstance(data, bytes):
            data = bytes(data)
        try:
            return self.compiled_parser()(data, pos)
        except (IndexError, struct.error) as exc:
            raise DecodeError(f"truncated or malformed message: {exc}") from exc

    def build_into(self, obj: Mapping[str, Any], out: bytearray) -> None:
        """Append ``obj``'s wire bytes to ``out``."""
        self.compiled_builder()(obj, out)

    def compiled_parser(self) -> Callable[[bytes, int], tuple[Container, int]]:
        if self._parser is None:
            self._parser = _compile_parser(self)
        return self._parser

    def compiled_builder(self) -> Callable[[Mapping[str, Any], bytearray], None]:
        if self._builder is None:
            self._builder = _compile_builder(self)
        return self._builder

    def _parse(self, stream, context, path):
        start = stream.tell()
        data = stream.getvalue() if isinstance(stream, io.BytesIO) else stream.read()
        offset = start if isinstance(stream, io.BytesIO) else 0
        obj, end = self.parse_from(data, offset)
        stream.seek(start + end - offset)
        return obj

    def _build(self, obj, stream, context, path):
        out = bytearray()
        self.build_into(obj, out)
        stream.write(out)
        return obj

    def parse_tagged(self, data: bytes, pos: int, obj: Container) -> int:
        """The tagged-field section at ``pos`` into ``obj`` (unknown tags skipped, missing ones
        at their defaults); the position after it."""
        count, pos = read_uvarint_at(data, pos)
        for _ in range(count):
            tag, pos = read_uvarint_at(data, pos)
            size, pos = read_uvarint_at(data, pos)
            end = pos + size
            if end > len(data):
                raise DecodeError(f"tagged field {tag} needs {size} bytes")
            if tag in self.tags:
                name, codec = self.tags[tag]
                obj[name] = codec._parsereport(io.BytesIO(data[pos:end]), None, "(tagged)")
            pos = end
        for _, name, _, default in self.tagged or ():
            if name not in obj:
                obj[name] = default()
        return pos

    def build_tagged(self, obj: Mapping[str, Any], out: bytearray) -> None:
        """The tagged-field section: fields that differ from their default, ascending by tag."""
        present = []
        for tag, name, codec, default in self.tagged or ():
            value = obj.get(name)
            if value is not None and value != default():
                sub = io.BytesIO()
                codec._build(value, sub, None, "(tagged)")
                present.append((tag, sub.getvalue()))
        write_uvarint_into(out, len(present))
        for tag, payload in present:
            write_uvarint_into(out, tag)
            write_uvarint_into(out, len(payload))
            out += payload


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
    if isinstance(codec, Message):
        try:
            return codec.parse_from(data)[0]
        except UnicodeDecodeError as exc:
            raise DecodeError(str(exc)) from exc
    stream = io.BytesIO(data)
    try:
        value = codec._parsereport(stream, None, "(message)")
    except (StreamError, struct.error, UnicodeDecodeError) as exc:
        raise DecodeError(str(exc)) from exc
    return value


# --- compiled parsers and builders -------------------------------------------------------------
#
# Each Message gets a parse and a build function generated as Python source (once, on first
# use): fixed-size runs of primitive fields are read and written with one precompiled
# ``struct.Struct``, lengths and counts inline, nested messages through their own compiled
# functions, on a ``bytes`` buffer and a position instead of a stream. Same wire format and
# same values as the Construct classes above, which stay the reference for single fields.

_FORMATS = {
    "bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H",
    "uint32": "I", "float64": "d",
}
_FORMAT_OF = {id(PRIMITIVE_CODECS[kind]): fmt for kind, fmt in _FORMATS.items()}
_MISSING = object()
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_NULL_INT16 = _I16.pack(-1)
_NULL_INT32 = _I32.pack(-1)


def _uvarint_rest(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of an unsigned varint whose first byte ``first`` (>= 0x80) was just read."""
    result, shift = first & 0x7F, 7
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 35:
            raise DecodeError("varint too long")


def _short(needed: int, left: int) -> DecodeError:
    return DecodeError(f"needed {needed} bytes, {left} left")


def _null(path: str) -> DecodeError:
    return DecodeError(f"null in a non-nullable field at {path}")


class _Source:
    """Lines of one generated function and the objects it refers to."""

    def __init__(self, header: str):
        self.lines = [header]
        self.names: dict[str, Any] = {
            "Container": Container, "Parsed": Parsed, "_self_dict": object.__setattr__,
            "DecodeError": DecodeError,
            "UUID": uuid.UUID,
            "ZERO_UUID": ZERO_UUID, "_uvarint_rest": _uvarint_rest, "_short": _short,
            "_null": _null, "_MISSING": _MISSING, "_pack": struct.pack,
            "_uvarint_into": write_uvarint_into, "_I16": _I16, "_I32": _I32,
            "_NULL_INT16": _NULL_INT16, "_NULL_INT32": _NULL_INT32,
            "FrozenArray": FrozenArray,
        }
        self.counter = 0

    def bind(self, value: Any) -> str:
        self.counter += 1
        name = f"_k{self.counter}"
        self.names[name] = value
        return name

    def temp(self) -> str:
        self.counter += 1
        return f"_t{self.counter}"

    def add(self, indent: int, *lines: str) -> None:
        self.lines.extend(" " * (4 * indent) + line for line in lines)

    def function(self, name: str) -> Callable[..., Any]:
        exec("\n".join(self.lines), self.names)  # noqa: S102 - source generated above
        return self.names[name]


def _primitive_runs(fields: list[tuple[str, Construct, Default]]):
    """Fields grouped into runs of fixed-size primitives (format string) and single others."""
    run: list[tuple[str, Construct, Default]] = []
    for field in fields:
        if id(field[1]) in _FORMAT_OF:
            run.append(field)
            continue
        if run:
            yield "".join(_FORMAT_OF[id(c)] for _, c, _ in run), run
            run = []
        yield None, [field]
    if run:
        yield "".join(_FORMAT_OF[id(c)] for _, c, _ in run), run


def _parse_length(src: _Source, ind: int, var: str, compact: bool, classic: struct.Struct):
    """Read a compact (uvarint + 1) or classic length into ``var``."""
    if compact:
        src.add(ind, f"{var} = data[pos]", "pos += 1",
                f"if {var} >= 0x80:", f"    {var}, pos = _uvarint_rest(data, pos, {var})",
                f"{var} -= 1")
    else:
        src.add(ind, f"{var} = {src.bind(classic.unpack_from)}(data, pos)[0]",
                f"pos += {classic.size}")


def _emit_parse(src: _Source, codec: Construct, target: str, ind: int, path: str) -> None:
    """Lines that parse one value of ``codec`` at ``pos`` into ``target`` and advance ``pos``."""
    fmt = _FORMAT_OF.get(id(codec))
    if fmt is not None:
        unpack = struct.Struct(">" + fmt)
        src.add(ind, f"{target} = {src.bind(unpack.unpack_from)}(data, pos)[0]",
                f"pos += {unpack.size}")
    elif isinstance(codec, Uuid):
        src.add(ind, "if pos + 16 > len(data):", "    raise _short(16, len(data) - pos)",
                f"{target} = UUID(bytes=data[pos:pos + 16])", "pos += 16")
    elif isinstance(codec, Sized):
        n = src.temp()
        _parse_length(src, ind, n, codec.compact, codec.prefix)
        src.add(ind, f"if {n} < 0:")
        src.add(ind + 1, f"{target} = None" if codec.nullable else f"raise _null({path!r})")
        src.add(ind, "else:", f"    if pos + {n} > len(data):",
                f"        raise _short({n}, len(data) - pos)",
                f"    {target} = data[pos:pos + {n}]" + (".decode()" if codec.text else ""),
                f"    pos += {n}")
    elif isinstance(codec, Array):
        n, item = src.temp(), src.temp()
        _parse_length(src, ind, n, codec.compact, _I32)
        src.add(ind, f"if {n} < 0:")
        src.add(ind + 1, f"{target} = None" if codec.nullable
                else f"raise DecodeError('null array in a non-nullable field at {path}')")
        src.add(ind, "else:", f"    {target} = []", f"    for _ in range({n}):")
        _emit_parse(src, codec.element, item, ind + 2, path)
        src.add(ind + 2, f"{target}.append({item})")
    elif isinstance(codec, NullableStruct):
        inner = src.bind(codec.inner.compiled_parser())
        src.add(ind, "if data[pos] >= 0x80:", f"    {target} = None", "    pos += 1",
                "else:", f"    {target}, pos = {inner}(data, pos + 1)")
    elif isinstance(codec, Message):
        src.add(ind, f"{target}, pos = {src.bind(codec.compiled_parser())}(data, pos)")
    else:
        raise TypeError(f"no compiled parser for {codec!r}")


def _carries_bytes(codec: Construct) -> bool:
    """Whether a value of ``codec`` may hold bytes or records (a batch can be megabytes)."""
    if isinstance(codec, Sized):
        return not codec.text
    if isinstance(codec, Array):
        return _carries_bytes(codec.element)
    if isinstance(codec, NullableStruct):
        return _carries_bytes(codec.inner)
    if isinstance(codec, Message):
        return any(_carries_bytes(c) for _, c, _ in codec.fields) or any(
            _carries_bytes(c) for _, _, c, _ in codec.tagged or ())
    return False


def _compile_parser(message: Message) -> Callable[[bytes, int], tuple[Container, int]]:
    src = _Source("def parse(data, pos):")
    if _carries_bytes(message):  # no reference cycle: its bytes go as soon as it does
        src.add(1, "o = Container()")
    else:
        src.add(1, "o = Parsed()", "_self_dict(o, '__dict__', o)")
    for fmt, run in _primitive_runs(message.fields):
        if fmt is None:
            name, codec, _ = run[0]
            value = src.temp()
            _emit_parse(src, codec, value, 1, name)
            src.add(1, f"o[{name!r}] = {value}")
            continue
        unpack = struct.Struct(">" + fmt)
        values = [src.temp() for _ in run]
        src.add(1, f"{', '.join(values)}, = {src.bind(unpack.unpack_from)}(data, pos)",
                f"pos += {unpack.size}")
        src.add(1, *(f"o[{name!r}] = {v}" for (name, _, _), v in zip(run, values, strict=True)))
    if message.tagged == []:  # flexible, no tagged fields of its own: usually one 0 byte
        src.add(1, "if data[pos]:", f"    pos = {src.bind(message.parse_tagged)}(data, pos, o)",
                "else:", "    pos += 1")
    elif message.tagged is not None:
        src.add(1, f"pos = {src.bind(message.parse_tagged)}(data, pos, o)")
    for name, default in message.absent:
        src.add(1, f"o[{name!r}] = {src.bind(default)}()")
    src.add(1, "return o, pos")
    return src.function("parse")


def _build_length(src: _Source, ind: int, size: str, compact: bool, classic: struct.Struct):
    if compact:
        src.add(ind, f"if {size} < 0x7F:", f"    out.append({size} + 1)",
                "else:", f"    _uvarint_into(out, {size} + 1)")
    else:
        src.add(ind, f"out += {src.bind(classic.pack)}({size})")


def _emit_build(src: _Source, codec: Construct, value: str, ind: int) -> None:
    """Lines that append ``value`` encoded by ``codec`` to ``out``."""
    fmt = _FORMAT_OF.get(id(codec))
    if fmt is not None:
        src.add(ind, f"out += {src.bind(struct.Struct('>' + fmt).pack)}({value})")
    elif isinstance(codec, Uuid):
        src.add(ind, f"out += ({value} or ZERO_UUID).bytes")
    elif isinstance(codec, Sized) and codec.text:
        data = src.temp()
        null = "b'\\x00'" if codec.compact else "_NULL_INT16"
        src.add(ind, f"if {value} is None:", f"    out += {null}", "else:",
                f"    {data} = {value}.encode()")
        _build_length(src, ind + 1, f"len({data})", codec.compact, codec.prefix)
        src.add(ind + 1, f"out += {data}")
    elif isinstance(codec, Sized):  # bytes: one bytes-like value, or a list of them in a row
        chunk = src.temp()
        null = "b'\\x00'" if codec.compact else "_NULL_INT32"
        src.add(ind, f"if {value} is None:", f"    out += {null}",
                f"elif {value}.__class__ is list:")
        _build_length(src, ind + 1, f"sum(map(len, {value}))", codec.compact, codec.prefix)
        src.add(ind + 1, f"for {chunk} in {value}:", f"    out += {chunk}")
        src.add(ind, "else:")
        _build_length(src, ind + 1, f"len({value})", codec.compact, codec.prefix)
        src.add(ind + 1, f"out += {value}")
    elif isinstance(codec, Array):
        null = "b'\\x00'" if codec.compact else "_NULL_INT32"
        frozen = src.bind(_FrozenArrays(codec).encoded)
        src.add(ind, f"if {value} is None:", f"    out += {null}",
                f"elif {value}.__class__ is FrozenArray:", f"    out += {frozen}({value})",
                "else:")
        _emit_array(src, codec, value, ind + 1)
    elif isinstance(codec, NullableStruct):
        build = src.bind(codec.inner.compiled_builder())
        src.add(ind, f"if {value} is None:", "    out.append(0xFF)", "else:",
                "    out.append(1)", f"    {build}({value}, out)")
    elif isinstance(codec, Message):
        src.add(ind, f"{src.bind(codec.compiled_builder())}({value}, out)")
    else:
        raise TypeError(f"no compiled builder for {codec!r}")


def _emit_array(src: _Source, codec: Array, value: str, ind: int) -> None:
    """Lines that append the (non-null) array ``value``: its length, then each element."""
    item = src.temp()
    _build_length(src, ind, f"len({value})", codec.compact, _I32)
    element_fmt = _FORMAT_OF.get(id(codec.element))
    if element_fmt is not None:
        src.add(ind, f"out += _pack('>%d{element_fmt}' % len({value}), *{value})")
    elif isinstance(codec.element, Message):
        build = src.bind(codec.element.compiled_builder())
        src.add(ind, f"for {item} in {value}:", f"    {build}({item}, out)")
    else:
        src.add(ind, f"for {item} in {value}:")
        _emit_build(src, codec.element, item, ind + 1)


class _FrozenArrays:
    """The encodings of the ``FrozenArray`` values one array codec was given, each made once
    (held with the value, so its id stays its own)."""

    def __init__(self, codec: Array):
        self.codec = codec
        self.known: dict[int, tuple[FrozenArray, bytes]] = {}
        self._build: Callable[[FrozenArray, bytearray], None] | None = None

    def encoded(self, value: FrozenArray) -> bytes:
        known = self.known.get(id(value))
        if known is None:
            if self._build is None:
                src = _Source("def build(value, out):")
                _emit_array(src, self.codec, "value", 1)
                self._build = src.function("build")
            out = bytearray()
            self._build(value, out)
            known = self.known[id(value)] = (value, bytes(out))
        return known[1]


_IMMUTABLE = (int, float, str, bytes, uuid.UUID, type(None))


def _compile_builder(message: Message) -> Callable[[Mapping[str, Any], bytearray], None]:
    src = _Source("def build(obj, out):")
    src.add(1, "get = obj.get")
    for fmt, run in _primitive_runs(message.fields):
        values = []
        for name, _, default in run:
            value = src.temp()
            values.append(value)
            constant = default()
            if isinstance(constant, _IMMUTABLE):  # the same value every time: no call
                src.add(1, f"{value} = get({name!r}, {src.bind(constant)})")
            else:
                src.add(1, f"{value} = get({name!r}, _MISSING)", f"if {value} is _MISSING:",
                        f"    {value} = {src.bind(default)}()")
        if fmt is None:
            _emit_build(src, run[0][1], values[0], 1)
        else:
            pack = struct.Struct(">" + fmt).pack
            src.add(1, f"out += {src.bind(pack)}({', '.join(values)})")
    if message.tagged == []:
        src.add(1, "out.append(0)")
    elif message.tagged is not None:
        src.add(1, f"{src.bind(message.build_tagged)}(obj, out)")
    return src.function("build")
