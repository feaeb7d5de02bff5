"""What one fuzz input got, in words both modes and both brokers share.

An ``Outcome`` is ``closed`` (the connection closed with no answer), ``answered`` with the
distinct error names its answer carries (``fakebroker.journal.answer_errors``: every
``error_code`` field the version has), ``no answer`` (the request asks for none: acks=0), or
``pending`` (no answer within the mode's wait; the connection is then given up). A fake's
answer that fakebroker's own codec cannot decode is ``undecodable``: a bug, like a crash.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from fakebroker.journal import answer_errors
from fakebroker.protocol.codec import DecodeError
from fakebroker.protocol.framing import API_VERSIONS_KEY, decode_response, peek_header
from fakebroker.protocol.specs import api_spec

CLOSED = "closed"
ANSWERED = "answered"
NO_ANSWER = "no answer"
PENDING = "pending"
UNDECODABLE = "undecodable"


@dataclass(frozen=True)
class Outcome:
    kind: str
    errors: frozenset[str] = frozenset()

    def __str__(self) -> str:
        if self.kind == ANSWERED:
            return f"answered {', '.join(sorted(self.errors)) or 'NONE'}"
        return f"{self.kind} {', '.join(sorted(self.errors))}".rstrip()


def answered(request: bytes, frame: bytes | bytearray) -> Outcome:
    """The outcome of an answer frame (without its size prefix) to the request frame
    ``request``: read at the API and version its header names (ApiVersions above the
    served range is answered at v0, KIP-511)."""
    try:
        api_key, version, _ = peek_header(request)
        if api_key == API_VERSIONS_KEY and version not in api_spec(api_key).versions:
            version = 0
        _, body = decode_response(api_key, version, bytes(frame))
    except (DecodeError, ValueError, IndexError, KeyError, struct.error) as exc:
        return Outcome(UNDECODABLE, frozenset({f"{type(exc).__name__}: {exc}"[:200]}))
    return Outcome(ANSWERED, frozenset(answer_errors(api_key, version, body)))
