"""Codecs for every Kafka message version, built from ``protocol_specs/``.

``request_codec(api_key, version)`` and ``response_codec(api_key, version)`` return a
``Message`` whose ``parse(bytes)`` gives a ``Container`` with snake_case field names and whose
``build(mapping)`` gives wire bytes. Codecs are built once per (api, version, kind) and cached;
each generates its parse and build functions (Python source, compiled once, on first use), and
those generated functions are the only code that reads or writes a message, its fields and its
tagged fields.

Guarantees:

* Classic versions use int16/int32 length prefixes; flexible versions use compact (unsigned
  varint length+1) strings, bytes, records and arrays, and end every struct with a tagged-field
  section.
* Parsed messages are containers: fields read by key or as attributes (``Parsed``, cheap
  attribute reads, unless the message may carry bytes or records; see ``message_types``).
  Importing this module does not import construct; building the first codec does.
* Parsing fills every field of the message's whole field tree, including fields absent from the
  version and tagged fields not sent, with their defaults (0, ``""``, ``False``, ``[]``, zero
  UUID, ``None`` for null defaults), so handlers never branch on a field's presence.
* Parsing reads as Kafka's generated readers do (``MessageDataGenerator``; a request they
  refuse closes its connection on Kafka): varints of at most 5 bytes read as a Java ``int``
  (a compact length read negative is null); a string of more than 32,767 bytes is refused,
  compact ones too, and an array of more elements than bytes left or over 1,000,000; a
  tagged-field section's count must be 0 to 10,000 and no more than the bytes left; a known
  tagged field is read where it starts (its size not checked against it), an unknown one
  skipped by its size, and a tag the struct has at other versions only is refused.
* Bytes that do not parse raise ``DecodeError`` from ``parse`` and ``parse_from``.
* Building takes any mapping; a missing field is written as its default. Tagged fields follow
  Kafka's rule (some clients, librdkafka 2.0.2 among them, fail on a default-valued tagged
  field): one is written only when it differs from its default, ascending by tag. A number,
  bool or UUID differs when it compares unequal; any other value when its bytes differ from its
  default's. A tagged field that is missing, or ``None`` where the field is not nullable, is
  not written.
* UUIDs are ``uuid.UUID``; strings are ``str`` (UTF-8; a malformed sequence decodes to
  U+FFFD, as Java's ``new String(bytes, UTF_8)`` in Kafka does); bytes and records are
  ``bytes``. For building, a bytes or records field also takes a ``list`` of bytes-like
  chunks, written one after another as one value (a fetch answer's stored batches, without
  joining them first).
* An array given as a ``FrozenArray`` (a value that never changes, such as ApiVersions' list of
  APIs) is encoded once per codec and its bytes reused.
"""

from __future__ import annotations

import functools
import re
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fakebroker.protocol.specs import api_spec, data_spec, header_spec, parse_range

if TYPE_CHECKING:
    from construct import Container

ZERO_UUID = uuid.UUID(int=0)


class DecodeError(ValueError):
    """The bytes do not form a valid message of the expected API version."""


def snake(name: str) -> str:
    """Kafka's CamelCase field name as a Python name: ``TopicId`` -> ``topic_id``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def write_uvarint_into(out: bytearray, value: int) -> None:
    """Append ``value`` (>= 0) as an unsigned varint."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_uvarint_at(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at ``pos`` as Kafka reads one (``ByteUtils.readUnsignedVarint``):
    (value, position after it). At most 5 bytes (``DecodeError`` if the fifth continues), the
    value a Java ``int``: bits above 32 dropped, 2^31 and more read negative. IndexError if
    truncated."""
    first = data[pos]
    if first < 0x80:
        return first, pos + 1
    return _uvarint_rest(data, pos + 1, first)


@functools.cache
def message_types() -> tuple[type[Container], type[Container]]:
    """(``Container``, ``Parsed``): the types of parsed messages, made the first time a codec
    is built, so importing the codec does not import construct: a broker listens without it
    (``fakebroker serve`` then imports it ahead of the first request, ``cli._import_ahead``).

    construct earns its place only as the type of a parsed message: ``Container`` is a dict
    whose fields also read as attributes, and handlers, fault placement and tests read and
    build messages as Containers. No construct parser or builder runs: construct's field
    classes used to read and write tagged fields (a stream per field), and the generated
    functions below do it in less time (measured: encoding answers with tagged fields set
    ~0.5x, parsing a Fetch v16 answer with them ~0.9x; the figures are in the commit that
    made the change)."""
    from construct import Container

    class Parsed(Container):
        """A parsed message: a construct ``Container`` that is also its own ``__dict__``, so
        a field read as an attribute (``request.topics``) is a plain instance-dict hit instead
        of Container's ``__getattr__`` fallback (about ten times cheaper). The self-reference
        makes each parsed message a reference cycle, freed by the garbage collector's next
        young pass, so messages that may carry bytes or records (a produced batch) stay plain
        Containers."""

    return Container, Parsed


class FrozenArray(tuple):
    """An array value its maker promises never to change (nor the entries in it), so each
    array codec encodes it once and keeps the bytes. Keep one instance alive and reuse it."""

    __slots__ = ()


# --- field types -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Primitive:
    """A fixed-size number or bool, as one big-endian ``struct`` format character."""

    fmt: str


@dataclass(frozen=True, slots=True)
class Uuid:
    """16 bytes as ``uuid.UUID``; never null (all zeros means no id)."""


@dataclass(frozen=True, slots=True)
class Sized:
    """A length-prefixed string (``str``, UTF-8) or byte string.

    ``compact``: unsigned varint of length+1 (0 = null); otherwise an int16 (strings) or int32
    (bytes) length with -1 = null.
    """

    text: bool
    compact: bool
    nullable: bool

    @property
    def prefix(self) -> struct.Struct:
        return _I16 if self.text else _I32


@dataclass(frozen=True, slots=True)
class Array:
    """An int32-counted (classic) or compact-counted array; ``None`` is the null array."""

    element: FieldType
    compact: bool
    nullable: bool


@dataclass(frozen=True, slots=True)
class NullableStruct:
    """A nullable struct (classic and flexible versions alike): int8 -1 for null, 1 then it."""

    inner: Message


Default = Callable[[], Any]


class Message:
    """A struct of one message version: regular fields, then (if flexible) tagged fields.

    ``fields``: (name, type, default) in wire order. ``tagged``: (tag, name, type, default)
    ascending by tag, or None for a classic struct (no tagged-field section). ``absent``:
    (name, default) for fields of the tree not in this version. ``misplaced``: the tags of
    fields tagged at other versions only, which Kafka refuses at this one.
    """

    __slots__ = ("_builder", "_parser", "absent", "fields", "misplaced", "tagged")

    def __init__(
        self,
        fields: list[tuple[str, FieldType, Default]],
        tagged: list[tuple[int, str, FieldType, Default]] | None,
        absent: list[tuple[str, Default]],
        misplaced: frozenset[int] = frozenset(),
    ):
        self.fields, self.tagged, self.absent = fields, tagged, absent
        self.misplaced = misplaced
        self._parser: Callable[[bytes, int], tuple[Container, int]] | None = None
        self._builder: Callable[[Mapping[str, Any], bytearray], None] | None = None

    def parse(self, data: bytes) -> Container:
        """The message at the start of ``data``; ``DecodeError`` if it does not parse."""
        return self.parse_from(data)[0]

    def parse_from(self, data: bytes, pos: int = 0) -> tuple[Container, int]:
        """Parse one message from ``data`` at ``pos``: (message, position after it);
        ``DecodeError`` when the bytes are truncated or malformed."""
        if not isinstance(data, bytes):
            data = bytes(data)
        try:
            return self.compiled_parser()(data, pos)
        except (IndexError, struct.error) as exc:
            raise DecodeError(f"truncated or malformed message: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise DecodeError(str(exc)) from exc

    def build(self, obj: Mapping[str, Any]) -> bytes:
        """``obj``'s wire bytes."""
        out = bytearray()
        self.build_into(obj, out)
        return bytes(out)

    def build_into(self, obj: Mapping[str, Any], out: bytearray) -> None:
        """Append ``obj``'s wire bytes to ``out``."""
        self.compiled_builder()(obj, out)

    def compiled_parser(self) -> Callable[[bytes, int], tuple[Container, int]]:
        """The generated parse function: (bytes, position) -> (message, position after it);
        raises ``IndexError``, ``struct.error``, ``DecodeError`` or ``UnicodeDecodeError``
        for bytes that do not parse."""
        if self._parser is None:
            self._parser = _compile_parser(self)
        return self._parser

    def compiled_builder(self) -> Callable[[Mapping[str, Any], bytearray], None]:
        """The generated build function: (message, bytearray) appends the message's bytes."""
        if self._builder is None:
            self._builder = _compile_builder(self)
        return self._builder


FieldType = Primitive | Uuid | Sized | Array | NullableStruct | Message

_FORMATS = {
    "bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H",
    "uint32": "I", "float64": "d",
}
PRIMITIVES: dict[str, FieldType] = {kind: Primitive(fmt) for kind, fmt in _FORMATS.items()}
PRIMITIVES["uuid"] = Uuid()

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


def field_codec(row: list[Any], version: int, flexible: bool) -> tuple[FieldType, Default]:
    """The type and default factory of one field row at one version."""
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
        element = PRIMITIVES.get(kafka_type[2:]) or Sized(
            text=kafka_type == "[]string", compact=flexible, nullable=False
        )
        return Array(element, compact=flexible, nullable=nullable), array_default
    value = literal_default(kafka_type, extras.get("default"))
    if kafka_type in ("string", "bytes", "records"):
        codec: FieldType = Sized(text=kafka_type == "string", compact=flexible, nullable=nullable)
    else:
        codec = PRIMITIVES[kafka_type]
    return codec, (lambda: value)


def tree_default(rows: list[list[Any]]) -> Default:
    """A factory for a struct of ``rows`` with every field at its default."""
    parts = [(snake(r[0]), field_codec(r, max(parse_range(r[2])), False)[1]) for r in rows]
    container = message_types()[0]
    return lambda: container((name, make()) for name, make in parts)


def message_codec(rows: list[list[Any]], version: int, flexible: bool) -> tuple[Message, Default]:
    """The codec for a field tree at one version, and a factory of its default value."""
    fields, tagged, absent, misplaced = [], [], [], set()
    for row in rows:
        name = snake(row[0])
        extras = row[3] if len(row) > 3 else {}
        if "tag" in extras and version not in parse_range(row[2]) & parse_range(
                extras.get("tagged", "")):
            misplaced.add(extras["tag"])
        if version not in parse_range(row[2]):
            absent.append((name, field_codec(row, max(parse_range(row[2])), False)[1]))
            continue
        codec, default = field_codec(row, version, flexible)
        if version in parse_range(extras.get("tagged", "")):
            tagged.append((extras["tag"], name, codec, default))
        else:
            fields.append((name, codec, default))
    tagged.sort(key=lambda t: t[0])
    return (Message(fields, tagged if flexible else None, absent, frozenset(misplaced)),
            tree_default(rows))


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


# --- generated parsers and builders ------------------------------------------------------------
#
# Each Message gets a parse and a build function generated as Python source (once, on first
# use): fixed-size runs of primitive fields are read and written with one precompiled
# ``struct.Struct``, lengths and counts inline, nested messages through their own generated
# functions, on a ``bytes`` buffer and a position instead of a stream. A tagged field's value is
# read and written by a generated function of its own type, as the payload its size prefixes.

_MISSING = object()
MAX_ARRAY = 1_000_000  # elements in an array Kafka 4.4's readers read (its kafka-clients jar)
MAX_TAGGED = 10_000  # tagged fields in one section Kafka 4.4's readers read
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_NULL_INT16 = _I16.pack(-1)
_NULL_INT32 = _I32.pack(-1)
_IMMUTABLE = (int, float, str, bytes, uuid.UUID, type(None))


def _uvarint_rest(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of an unsigned varint whose first byte ``first`` (>= 0x80) was just read, as
    ``read_uvarint_at`` reads it (a Java ``int``)."""
    result = first & 0x7F
    for shift in (7, 14, 21):
        b = data[pos]
        pos += 1
        if b < 0x80:
            return result | (b << shift), pos
        result |= (b & 0x7F) << shift
    b = data[pos]
    if b >= 0x80:
        raise DecodeError("varint longer than 5 bytes")
    result = (result | (b << 28)) & 0xFFFF_FFFF
    return (result - 0x1_0000_0000 if result >= 0x8000_0000 else result), pos + 1


def _length_rest(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """A compact length (a varint of length + 1) whose first byte ``first`` (>= 0x80) was just
    read: the length, subtracted as Java's ``int`` does (a varint read as -2^31 gives 2^31-1);
    negative means null."""
    value, pos = _uvarint_rest(data, pos, first)
    return (0x7FFF_FFFF if value == -0x8000_0000 else value - 1), pos


def _short(needed: int, left: int) -> DecodeError:
    return DecodeError(f"needed {needed} bytes, {left} left")


def _too_many(count: int, left: int, path: str) -> DecodeError:
    """An array Kafka's readers refuse: more elements than bytes left, or over a million."""
    return DecodeError(f"array of {count} at {path}: {left} bytes left (or over {MAX_ARRAY})")


def _tagged_count(data: bytes, pos: int) -> tuple[int, int]:
    """The count of a tagged-field section at ``pos`` (and the position after it); Kafka
    4.4's readers refuse a negative one, one over the bytes left and one over 10,000."""
    count, pos = read_uvarint_at(data, pos)
    if count < 0 or count > len(data) - pos or count > MAX_TAGGED:
        raise DecodeError(f"{count} tagged fields, {len(data) - pos} bytes left")
    return count, pos


def _too_long(length: int, path: str) -> DecodeError:
    """A string longer than Kafka reads one: its generated readers refuse a length over
    0x7fff bytes (an int16's maximum) in compact strings too."""
    return DecodeError(f"string of {length} bytes at {path}: more than 32,767")


def _null(path: str) -> DecodeError:
    return DecodeError(f"null in a non-nullable field at {path}")


def _skip_unknown(data: bytes, pos: int, tag: int, size: int, misplaced: frozenset[int]) -> int:
    """Past the payload of a tagged field the struct does not read at this version, whose
    tag and size were just read: ``DecodeError`` as Kafka refuses it, for a tag the struct
    has at other versions only, a negative size or one past the end."""
    if tag in misplaced:
        raise DecodeError(f"tag {tag} is not valid for this version")
    if size < 0 or pos + size > len(data):
        raise DecodeError(f"tagged field {tag} needs {size} bytes, {len(data) - pos} left")
    return pos + size


def _skip_tagged(data: bytes, pos: int, misplaced: frozenset[int] = frozenset()) -> int:
    """Past a tagged-field section none of whose tags the struct reads at this version."""
    count, pos = _tagged_count(data, pos)
    for _ in range(count):
        tag, pos = read_uvarint_at(data, pos)
        size, pos = read_uvarint_at(data, pos)
        pos = _skip_unknown(data, pos, tag, size, misplaced)
    return pos


def _tagged_into(out: bytearray, fields: Iterable[tuple[int, bytearray | None]]) -> None:
    """Append a tagged-field section: the fields whose payload is not None, in the given
    (ascending) tag order, each as tag, size, payload."""
    present = [(tag, payload) for tag, payload in fields if payload is not None]
    write_uvarint_into(out, len(present))
    for tag, payload in present:
        write_uvarint_into(out, tag)
        write_uvarint_into(out, len(payload))
        out += payload


class _Source:
    """Lines of one generated function and the objects it refers to."""

    def __init__(self, header: str):
        self.lines = [header]
        container, parsed = message_types()
        self.names: dict[str, Any] = {
            "Container": container, "Parsed": parsed, "_self_dict": object.__setattr__,
            "DecodeError": DecodeError, "UUID": uuid.UUID, "ZERO_UUID": ZERO_UUID,
            "_length_rest": _length_rest, "_short": _short, "_null": _null,
            "_too_long": _too_long, "_too_many": _too_many, "_tagged_count": _tagged_count,
            "_MISSING": _MISSING, "_pack": struct.pack, "_uvarint_into": write_uvarint_into,
            "_uvarint_at": read_uvarint_at, "_skip_unknown": _skip_unknown,
            "_skip_tagged": _skip_tagged, "_tagged_into": _tagged_into,
            "_I16": _I16, "_I32": _I32, "_NULL_INT16": _NULL_INT16, "_NULL_INT32": _NULL_INT32,
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

    def default(self, default: Default) -> str:
        """An expression for a fresh default value: the value itself when it is immutable."""
        constant = default()
        if isinstance(constant, _IMMUTABLE):
            return self.bind(constant)
        return f"{self.bind(default)}()"

    def add(self, indent: int, *lines: str) -> None:
        self.lines.extend(" " * (4 * indent) + line for line in lines)

    def function(self, name: str) -> Callable[..., Any]:
        exec("\n".join(self.lines), self.names)  # noqa: S102 - source generated above
        return self.names[name]


def _primitive_runs(fields: list[tuple[str, FieldType, Default]]):
    """Fields grouped into runs of fixed-size primitives (format string) and single others."""
    run: list[tuple[str, Primitive, Default]] = []
    for name, codec, default in fields:
        if isinstance(codec, Primitive):
            run.append((name, codec, default))
            continue
        if run:
            yield "".join(c.fmt for _, c, _ in run), run
            run = []
        yield None, [(name, codec, default)]
    if run:
        yield "".join(c.fmt for _, c, _ in run), run


def _nullable(codec: FieldType) -> bool:
    if isinstance(codec, (Sized, Array)):
        return codec.nullable
    return isinstance(codec, NullableStruct)


def _carries_bytes(codec: FieldType) -> bool:
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


# --- parsing -----------------------------------------------------------------------------------


def _parse_length(src: _Source, ind: int, var: str, compact: bool, classic: struct.Struct):
    """Read a compact (uvarint + 1) or classic length into ``var``."""
    if compact:
        src.add(ind, f"{var} = data[pos]", "pos += 1",
                f"if {var} >= 0x80:", f"    {var}, pos = _length_rest(data, pos, {var})",
                "else:", f"    {var} -= 1")
    else:
        src.add(ind, f"{var} = {src.bind(classic.unpack_from)}(data, pos)[0]",
                f"pos += {classic.size}")


def _emit_parse(src: _Source, codec: FieldType, target: str, ind: int, path: str) -> None:
    """Lines that parse one value of ``codec`` at ``pos`` into ``target`` and advance ``pos``."""
    if isinstance(codec, Primitive):
        unpack = struct.Struct(">" + codec.fmt)
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
        if codec.text and codec.compact:  # a classic (int16) length is at most 0x7fff
            src.add(ind, f"elif {n} > 0x7FFF:", f"    raise _too_long({n}, {path!r})")
        src.add(ind, "else:", f"    if pos + {n} > len(data):",
                f"        raise _short({n}, len(data) - pos)",
                f"    {target} = data[pos:pos + {n}]"
                + (".decode('utf-8', 'replace')" if codec.text else ""),
                f"    pos += {n}")
    elif isinstance(codec, Array):
        n, item = src.temp(), src.temp()
        _parse_length(src, ind, n, codec.compact, _I32)
        src.add(ind, f"if {n} < 0:")
        src.add(ind + 1, f"{target} = None" if codec.nullable
                else f"raise DecodeError('null array in a non-nullable field at {path}')")
        src.add(ind, f"elif {n} > len(data) - pos or {n} > {MAX_ARRAY}:",
                f"    raise _too_many({n}, len(data) - pos, {path!r})")
        src.add(ind, "else:", f"    {target} = []", f"    for _ in range({n}):")
        _emit_parse(src, codec.element, item, ind + 2, path)
        src.add(ind + 2, f"{target}.append({item})")
    elif isinstance(codec, NullableStruct):
        inner = src.bind(codec.inner.compiled_parser())
        src.add(ind, "if data[pos] >= 0x80:", f"    {target} = None", "    pos += 1",
                "else:", f"    {target}, pos = {inner}(data, pos + 1)")
    else:
        src.add(ind, f"{target}, pos = {src.bind(codec.compiled_parser())}(data, pos)")


def _value_parser(codec: FieldType, path: str) -> Callable[[bytes, int], tuple[Any, int]]:
    """A generated function reading one value of ``codec``: (bytes, position) -> (value,
    position after it)."""
    if isinstance(codec, Message):
        return codec.compiled_parser()
    src = _Source("def parse(data, pos):")
    _emit_parse(src, codec, "value", 1, path)
    src.add(1, "return value, pos")
    return src.function("parse")


def _emit_tagged_parse(src: _Source, message: Message) -> None:
    """Lines that read the tagged-field section at ``pos`` into ``o`` as Kafka's generated
    readers do: a known tag's value read where it starts (its size not checked against it),
    others skipped by their size, the ones not sent at their defaults."""
    misplaced = src.bind(message.misplaced)
    if not message.tagged:  # no tagged fields of its own: usually a single 0 byte
        src.add(1, "if data[pos]:", f"    pos = _skip_tagged(data, pos, {misplaced})",
                "else:", "    pos += 1")
        return
    for _, name, _, default in message.tagged:
        src.add(1, f"o[{name!r}] = {src.default(default)}")
    count, tag, size = src.temp(), src.temp(), src.temp()
    src.add(1, f"{count}, pos = _tagged_count(data, pos)", f"for _ in range({count}):",
            f"    {tag}, pos = _uvarint_at(data, pos)",
            f"    {size}, pos = _uvarint_at(data, pos)")
    for i, (number, name, codec, _) in enumerate(message.tagged):
        parse = src.bind(_value_parser(codec, name))
        src.add(2, f"{'if' if i == 0 else 'elif'} {tag} == {number}:",
                f"    o[{name!r}], pos = {parse}(data, pos)")
    src.add(2, "else:", f"    pos = _skip_unknown(data, pos, {tag}, {size}, {misplaced})")


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
    if message.tagged is not None:
        _emit_tagged_parse(src, message)
    for name, default in message.absent:
        src.add(1, f"o[{name!r}] = {src.default(default)}")
    src.add(1, "return o, pos")
    return src.function("parse")


# --- building ----------------------------------------------------------------------------------


# True while an answer is encoded (``fakebroker.pipeline``): Kafka's generated writers refuse
# a string of more than 32,767 bytes, compact ones too ("field is too long to be
# serialized"), so an answer holding one is never sent. The requests the fake's own clients
# and tests encode are not held to it: tests and the fuzzer send such strings on purpose.
WRITING_ANSWER: ContextVar[bool] = ContextVar("WRITING_ANSWER", default=False)


def _long_string(size: int) -> None:
    if WRITING_ANSWER.get():
        raise OverflowError(f"a string of {size} bytes, more than 32,767")


def _build_length(src: _Source, ind: int, size: str, compact: bool, classic: struct.Struct):
    if compact:
        src.add(ind, f"if {size} < 0x7F:", f"    out.append({size} + 1)",
                "else:", f"    _uvarint_into(out, {size} + 1)")
    else:
        src.add(ind, f"out += {src.bind(classic.pack)}({size})")


def _emit_build(src: _Source, codec: FieldType, value: str, ind: int) -> None:
    """Lines that append ``value`` encoded by ``codec`` to ``out``."""
    if isinstance(codec, Primitive):
        src.add(ind, f"out += {src.bind(struct.Struct('>' + codec.fmt).pack)}({value})")
    elif isinstance(codec, Uuid):
        src.add(ind, f"out += ({value} or ZERO_UUID).bytes")
    elif isinstance(codec, Sized) and codec.text:
        data = src.temp()
        null = "b'\\x00'" if codec.compact else "_NULL_INT16"
        src.add(ind, f"if {value} is None:", f"    out += {null}", "else:",
                f"    {data} = {value}.encode()")
        if codec.compact:  # a classic length's int16 refuses it by itself (struct.error)
            src.add(ind + 1, f"if len({data}) > 0x7FFF:",
                    f"    {src.bind(_long_string)}(len({data}))")
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
    else:
        src.add(ind, f"{src.bind(codec.compiled_builder())}({value}, out)")


def _emit_array(src: _Source, codec: Array, value: str, ind: int) -> None:
    """Lines that append the (non-null) array ``value``: its length, then each element."""
    item = src.temp()
    _build_length(src, ind, f"len({value})", codec.compact, _I32)
    element = codec.element
    if isinstance(element, Primitive):
        src.add(ind, f"out += _pack('>%d{element.fmt}' % len({value}), *{value})")
    elif isinstance(element, Message):
        build = src.bind(element.compiled_builder())
        src.add(ind, f"for {item} in {value}:", f"    {build}({item}, out)")
    else:
        src.add(ind, f"for {item} in {value}:")
        _emit_build(src, element, item, ind + 1)


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


def _value_builder(codec: FieldType) -> Callable[[Any, bytearray], None]:
    """A generated function appending one value of ``codec``: (value, bytearray)."""
    if isinstance(codec, Message):
        return codec.compiled_builder()
    src = _Source("def build(value, out):")
    _emit_build(src, codec, "value", 1)
    return src.function("build")


def _emit_tagged_build(src: _Source, message: Message) -> None:
    """Lines that append the tagged-field section of ``obj``: each field that differs from its
    default, ascending by tag (the module's guarantee), as tag, size, payload."""
    if not message.tagged:
        src.add(1, "out.append(0)")
        return
    payloads = []
    for number, name, codec, default in message.tagged:
        value, payload = src.temp(), src.temp()
        payloads.append((number, payload))
        given = f"{value} is not _MISSING"
        if not _nullable(codec):
            given += f" and {value} is not None"
        build = _value_builder(codec)
        src.add(1, f"{value} = get({name!r}, _MISSING)", f"{payload} = None")
        if isinstance(codec, (Primitive, Uuid)):
            src.add(1, f"if {given} and {value} != {src.bind(default())}:")
            src.add(2, f"{payload} = bytearray()", f"{src.bind(build)}({value}, {payload})")
            continue
        encoded_default = bytearray()
        build(default(), encoded_default)
        src.add(1, f"if {given}:", f"    {payload} = bytearray()",
                f"    {src.bind(build)}({value}, {payload})",
                f"    if {payload} == {src.bind(bytes(encoded_default))}:",
                f"        {payload} = None")
    present = " or ".join(f"{payload} is not None" for _, payload in payloads)
    fields = ", ".join(f"({number}, {payload})" for number, payload in payloads)
    src.add(1, f"if {present}:", f"    _tagged_into(out, ({fields},))",
            "else:", "    out.append(0)")


def _compile_builder(message: Message) -> Callable[[Mapping[str, Any], bytearray], None]:
    src = _Source("def build(obj, out):")
    src.add(1, "get = obj.get")
    for fmt, run in _primitive_runs(message.fields):
        values = []
        for name, _, default in run:
            value = src.temp()
            values.append(value)
            if isinstance(default(), _IMMUTABLE):  # the same value every time: no call
                src.add(1, f"{value} = get({name!r}, {src.default(default)})")
            else:
                src.add(1, f"{value} = get({name!r}, _MISSING)", f"if {value} is _MISSING:",
                        f"    {value} = {src.default(default)}")
        if fmt is None:
            _emit_build(src, run[0][1], values[0], 1)
        else:
            pack = struct.Struct(">" + fmt).pack
            src.add(1, f"out += {src.bind(pack)}({', '.join(values)})")
    if message.tagged is not None:
        _emit_tagged_build(src, message)
    return src.function("build")
