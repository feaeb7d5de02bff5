"""Kafka error codes by name, from ``protocol_specs/errors.json``.

``ErrorCode.NOT_LEADER_OR_FOLLOWER == 6``; ``error_code("OFFSET_OUT_OF_RANGE") == 1``;
``error_name(6) == "NOT_LEADER_OR_FOLLOWER"``.

The table is read the first time a code or name is looked up, and the ``ErrorCode`` enum is
made the first time it is used: importing this module (every broker does, at start) reads
nothing.
"""

from __future__ import annotations

import enum
import functools
from typing import Any


@functools.cache
def _tables() -> tuple[dict[str, int], dict[int, str]]:
    """(code by name, name by code), read once."""
    from fakebroker.protocol.specs import error_table  # the spec reader: with the first lookup

    rows = error_table()
    return {name: code for code, name, _ in rows}, {code: name for code, name, _ in rows}


@functools.cache
def _error_code_enum() -> type[enum.IntEnum]:
    from fakebroker.protocol.specs import error_table

    return enum.IntEnum("ErrorCode", [(name, code) for code, name, _ in error_table()],
                        module=__name__)


def __getattr__(name: str) -> Any:
    if name == "ErrorCode":  # made on first use, then the same class every time
        return _error_code_enum()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def error_code(error: int | str) -> int:
    """A Kafka error given by name (any case) or code, as its code; ``ValueError`` if unknown."""
    by_name, by_code = _tables()
    if isinstance(error, int):
        if error not in by_code:
            raise ValueError(f"{error} is not a valid ErrorCode")
        return error
    try:
        return by_name[error.upper()]
    except KeyError:
        raise ValueError(f"unknown Kafka error {error!r}") from None


def error_name(code: int) -> str:
    """The Kafka name of an error code, or ``"UNKNOWN(<code>)"``."""
    name = _tables()[1].get(code)
    return name if name is not None else f"UNKNOWN({code})"


class ClusterError(Exception):
    """The one error type of the broker's state: an operation or request refused with a
    Kafka error, by name (``error``, e.g. ``"TOPIC_ALREADY_EXISTS"``), with its ``code``, a
    ``message`` (None: Kafka sends none; ``str()`` is then the error's name) and
    ``answer_fields``, what Kafka's answer sets beside this error (e.g. Produce's
    ``log_start_offset`` for a sequence refusal). Raised by cluster operations
    (``FakeKafka.create_topic``, ``move_leader`` ...), group coordinators, producer state and
    handlers alike."""

    def __init__(self, error: str, message: str | None = None, **answer_fields: Any):
        super().__init__(message or error)
        self.error = error
        self.code = error_code(error)
        self.message = message
        self.answer_fields = answer_fields
