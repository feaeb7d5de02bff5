"""Seeded mutations of valid requests: field-aware ones on a decoded body, byte-level ones on
the encoded frame.

A ``Mutant`` is one fuzz input: the request it came from (API key, version, body) and the frame
to send (without its size prefix: the server's frame reader takes that off), plus the names of
the mutations applied (they classify the differences of the differential mode). Every choice
comes from the ``random.Random`` passed in, so a seed replays an input exactly, and two brokers
given the same body structure get the same mutation from generators seeded alike.

Field-aware mutations (on the body, then encoded by fakebroker's codec for the request's
version): a number set to a boundary (0, -1, the int16/int32/int64 extremes), a string or
bytes emptied, made null, huge or non-ASCII, a record batch's header field or records changed
with its length and CRC made right again (``tests.fuzz.batches``), an array emptied, made
null, one element dropped or one repeated up to 5,000 times, a boolean flipped, a UUID zeroed
or made random. A body the codec cannot encode (a value out of its field's range) is mutated
at the byte level instead.

Frame mutations: the frame truncated, the header's API version or API key replaced (a version
out of range, an API Kafka does not define), bytes flipped, boundary values (0xFF.., 0x7F..,
0x80..) written over 1, 2 or 4 bytes (lengths and counts), bytes inserted or deleted, an
unknown tagged field appended to a flexible version's top-level tagged fields.
"""

from __future__ import annotations

import random
import struct
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fakebroker.protocol.codec import write_uvarint_into
from fakebroker.protocol.framing import encode_request, is_flexible
from fakebroker.protocol.specs import api_spec
from tests.fuzz.batches import mutate_batch

INTS = (0, -1, 1, -2, 2**15 - 1, -(2**15), 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 2**16,
        1000, 7)
MAX_REPEAT = 5000  # array elements repeated at most this often (a "huge array")
_HEADER = struct.Struct(">hh")


@dataclass(frozen=True)
class Seed:
    """A valid request to mutate: its body as plain data (None: only its bytes are known)."""

    api_key: int
    version: int
    client_id: str | None
    body: Mapping[str, Any] | None
    frame: bytes  # without its size prefix

    @classmethod
    def of(cls, api_key: int, version: int, client_id: str | None, body: Mapping[str, Any]
           ) -> Seed:
        return cls(api_key, version, client_id, body,
                   encode_request(api_key, version, 1, client_id, body)[4:])


@dataclass(frozen=True)
class Mutant:
    """One fuzz input: the seed it came from, what was done to it, the frame to send, and
    the body it encodes if only field-aware mutations made it (a seed for further ones)."""

    seed: Seed
    mutations: tuple[str, ...]
    frame: bytes
    body: Mapping[str, Any] | None

    @property
    def label(self) -> str:
        return f"{api_spec(self.seed.api_key).name} v{self.seed.version}: " + \
            ", ".join(self.mutations)


def mutate(seed: Seed, rng: random.Random, max_repeat: int = MAX_REPEAT) -> Mutant:
    """One to three mutations of ``seed``: a field-aware one first if its body is known
    (two times in three), then frame mutations. An array's element is repeated at most
    ``max_repeat`` times (the same choices from ``rng`` whatever it is)."""
    names: list[str] = []
    body: Mapping[str, Any] | None = None
    frame = seed.frame
    if seed.body is not None and rng.random() < 2 / 3:
        changed, name = mutate_body(seed.body, rng, max_repeat)
        try:
            frame = encode_request(seed.api_key, seed.version, 1, seed.client_id, changed)[4:]
        except (struct.error, OverflowError, ValueError, TypeError, AttributeError,
                KeyError, UnicodeError):
            names.append(f"{name} (not encodable)")
        else:
            names.append(name)
            body = changed
    if not names or names[-1].endswith("(not encodable)") or rng.random() < 1 / 3:
        for _ in range(rng.randint(1, 2)):
            op = rng.choice(FRAME_MUTATIONS)
            frame, name = op(seed.api_key, seed.version, frame, rng)
            names.append(name)
        body = None
    return Mutant(seed, tuple(names), frame, body)


# -- field-aware --------------------------------------------------------------------------


def _slots(value: Any, out: list[tuple[int, Any, Any]], up: int = -1) -> None:
    """Every (container, key) in ``value`` (plain data: dicts, lists, scalars) whose value
    may be replaced, in pre-order, each with the index in ``out`` of the slot holding its
    container (-1: ``value`` itself)."""
    items = value.items() if type(value) is dict else enumerate(value)
    for key, child in items:
        out.append((up, value, key))
        if type(child) is dict or type(child) is list:
            _slots(child, out, len(out) - 1)


def _copy(value: Any) -> Any:
    """A container copied one level deep (a mapping as a dict, a sequence as a list)."""
    return dict(value) if isinstance(value, Mapping) else list(value)


def mutate_body(body: Mapping[str, Any], rng: random.Random, max_repeat: int = MAX_REPEAT
                ) -> tuple[dict[str, Any], str]:
    """A copy of ``body`` with one value replaced, and the mutation's name (``path: what``).
    Only the containers on the replaced value's path are copied: the rest is shared with
    ``body``, which no mutation changes in place."""
    slots: list[tuple[int, Any, Any]] = []
    _slots(dict(body), slots)
    if not slots:
        return dict(body), "empty body"
    up, parent, key = slots[rng.randrange(len(slots))]  # as rng.choice(slots) draws
    new, what = _replacement(parent[key], rng, max_repeat)
    chain = [(parent, key)]
    while up >= 0:
        up, parent, key = slots[up]
        chain.append((parent, key))
    copy = container = _copy(body)
    for parent, key in reversed(chain[1:]):
        container[key] = container = _copy(parent[key])
    container[chain[0][1]] = new
    path = "".join(f".{key}" if isinstance(parent, Mapping) else f"[{key}]"
                   for parent, key in reversed(chain))
    return copy, f"{path.lstrip('.')}: {what}"


def _replacement(value: Any, rng: random.Random, max_repeat: int) -> tuple[Any, str]:
    """A mutated ``value`` and what was done."""
    if isinstance(value, bool):
        return not value, "flipped"
    if isinstance(value, int):
        new = rng.choice(INTS + (value + 1, value - 1, -value))
        return new, f"int {new}"
    if isinstance(value, str):
        choice = rng.randrange(5)
        if choice == 0:
            return "", "empty string"
        if choice == 1:
            return None, "null string"
        if choice == 2:
            size = rng.choice((255, 256, 32768, 40000))
            return "x" * size, f"huge string ({size} x)"
        if choice == 3:
            return value + "\u00e9\u2603", "non-ASCII string"
        return value[: len(value) // 2], "shortened string"
    if isinstance(value, bytes | bytearray):
        if rng.random() < 0.5:  # a record batch mutated inside, framed again
            inside = mutate_batch(bytes(value), rng)
            if inside is not None:
                return inside
        choice = rng.randrange(4)
        if choice == 0:
            return b"", "empty bytes"
        if choice == 1:
            return None, "null bytes"
        if choice == 2 and value:
            data = bytearray(value)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            return bytes(data), "bytes flipped"
        return bytes(value[: rng.randrange(len(value) + 1)]), "bytes truncated"
    if isinstance(value, uuid.UUID):
        if rng.random() < 0.5:
            return uuid.UUID(int=0), "zero uuid"
        return uuid.UUID(int=rng.getrandbits(128)), "random uuid"
    if isinstance(value, list):
        choice = rng.randrange(4)
        if choice == 0:
            return [], "empty array"
        if choice == 1:
            return None, "null array"
        if choice == 2 and value:
            times = min(rng.choice((2, 3, 100, MAX_REPEAT)), max_repeat)
            return [value[rng.randrange(len(value))] for _ in range(times)] + list(value), \
                "repeated element"
        if value:
            rest = list(value)
            del rest[rng.randrange(len(rest))]
            return rest, "element dropped"
        return [], "empty array"
    if isinstance(value, dict):
        return None, "null struct"
    if value is None:
        return rng.choice((0, -1, "", b"", [])), "null replaced"
    return value, "unchanged"


# -- frame mutations ----------------------------------------------------------------------

FrameMutation = Callable[[int, int, bytes, random.Random], tuple[bytes, str]]


def truncate(api_key: int, version: int, frame: bytes, rng: random.Random
             ) -> tuple[bytes, str]:
    cut = rng.randrange(len(frame)) if frame else 0
    return frame[:cut], f"truncated to {cut} bytes"


def wrong_version(api_key: int, version: int, frame: bytes, rng: random.Random
                  ) -> tuple[bytes, str]:
    if len(frame) < 4:
        return frame, "version (too short)"
    new = rng.choice((version + 1, version - 1, -1, 999, 32767, rng.randrange(20)))
    new = max(-(2**15), min(2**15 - 1, new))
    return frame[:2] + struct.pack(">h", new) + frame[4:], f"api version {new}"


def bad_api_key(api_key: int, version: int, frame: bytes, rng: random.Random
                ) -> tuple[bytes, str]:
    if len(frame) < 2:
        return frame, "api key (too short)"
    new = rng.choice((-1, 32767, rng.randrange(100)))
    return struct.pack(">h", new) + frame[2:], f"api key {new}"


def flip(api_key: int, version: int, frame: bytes, rng: random.Random) -> tuple[bytes, str]:
    if not frame:
        return frame, "flip (empty)"
    data = bytearray(frame)
    count = rng.randint(1, 8)
    for _ in range(count):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data), f"{count} bits flipped"


BOUNDARIES = (b"\xff", b"\x7f", b"\x80", b"\x00", b"\xff\xff", b"\x7f\xff", b"\x80\x00",
              b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\x00\x00\x00\x00")


def boundary(api_key: int, version: int, frame: bytes, rng: random.Random
             ) -> tuple[bytes, str]:
    value = rng.choice(BOUNDARIES)
    if len(frame) < len(value):
        return frame, "boundary (too short)"
    at = rng.randrange(len(frame) - len(value) + 1)
    return frame[:at] + value + frame[at + len(value):], f"{value.hex()} at {at}"


def insert(api_key: int, version: int, frame: bytes, rng: random.Random) -> tuple[bytes, str]:
    at = rng.randrange(len(frame) + 1)
    data = rng.randbytes(rng.randint(1, 16))
    return frame[:at] + data + frame[at:], f"{len(data)} bytes inserted"


def delete(api_key: int, version: int, frame: bytes, rng: random.Random) -> tuple[bytes, str]:
    if not frame:
        return frame, "delete (empty)"
    at = rng.randrange(len(frame))
    count = rng.randint(1, 16)
    return frame[:at] + frame[at + count:], f"{count} bytes deleted"


def unknown_tagged_field(api_key: int, version: int, frame: bytes, rng: random.Random
                         ) -> tuple[bytes, str]:
    """A tagged field appended to the body's top-level ones (a flexible version whose body
    ends in an empty tagged-field section): an unknown tag is skipped by Kafka."""
    if not is_flexible(api_key, version) or not frame.endswith(b"\x00"):
        return flip(api_key, version, frame, rng)
    tag = rng.choice((rng.randrange(16), 1000, 2**31 - 1))
    data = rng.randbytes(rng.randrange(8))
    out = bytearray(frame[:-1])
    out.append(1)
    write_uvarint_into(out, tag)
    write_uvarint_into(out, len(data))
    out += data
    return bytes(out), f"tagged field {tag}"


FRAME_MUTATIONS: tuple[FrameMutation, ...] = (
    truncate, wrong_version, bad_api_key, flip, flip, boundary, boundary, boundary, insert,
    delete, unknown_tagged_field, unknown_tagged_field)
