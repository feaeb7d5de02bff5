"""Kafka error codes by name, from ``protocol_specs/errors.json``.

``ErrorCode.NOT_LEADER_OR_FOLLOWER == 6``; ``error_code("OFFSET_OUT_OF_RANGE") == 1``;
``error_name(6) == "NOT_LEADER_OR_FOLLOWER"``.
"""

from __future__ import annotations

import enum
from typing import Any

from fakebroker.protocol.specs import error_table

ErrorCode = enum.IntEnum(  # type: ignore[misc]
    "ErrorCode", [(name, code) for code, name, _ in error_table()]
)


def error_code(error: int | str) -> int:
    """A Kafka error given by name (any case) or code, as its code; ``ValueError`` if unknown."""
    if isinstance(error, int):
        ErrorCode(error)
        return error
    try:
        return ErrorCode[error.upper()].value
    except KeyError:
        raise ValueError(f"unknown Kafka error {error!r}") from None


def error_name(code: int) -> str:
    """The Kafka name of an error code, or ``"UNKNOWN(<code>)"``."""
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"UNKNOWN({code})"


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
