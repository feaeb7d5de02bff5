"""The request journal: one entry per request a broker read, with its outcome.

Guarantees:

* Every request that reaches a handler (and every one that closed its connection instead) is
  recorded once, when it ends — answered, left unanswered (acks=0), dropped, hung or held
  until its connection closed, or refused — with its broker, connection, client id, listener
  and principal, API and version, correlation id, the error codes of its answer, elapsed time,
  and the faults applied.
* ``JournalEntry`` declares the fields, in their one order: the stored entries, ``add`` and
  the filters of ``query`` follow it.
* The journal keeps the last ``capacity`` entries (a ring buffer); coverage counts (which
  API/version pairs, error codes and faults were seen) cover every request since start.
* With a sink (``fakebroker serve --journal FILE``) each entry is also written to it as one
  JSON line as it is recorded, for CI artifacts.
"""

from __future__ import annotations

import collections
import functools
import itertools
import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TextIO

from fakebroker.options import ClusterSettings
from fakebroker.protocol.errors import error_name
from fakebroker.protocol.specs import api_spec, parse_range

DEFAULT_CAPACITY = ClusterSettings.journal_capacity


@dataclass(slots=True)
class JournalEntry:
    """One request a broker read, recorded when it ended."""

    seq: int
    """Its number, in the order requests were read (``since=`` filters by it)."""
    time: float
    """Wall clock, seconds since the epoch, when the request was read."""
    broker: int
    """The id of the broker that read it."""
    connection: int
    """The number of the connection it came on."""
    client_id: str | None
    """The client id of its request header."""
    client_host: str
    """The client's address."""
    listener: str
    """The name of the listener it came on (PLAINTEXT, SASL_SSL, ...)."""
    principal: str
    """Who sent it, as authenticated on its connection (User:ANONYMOUS, ...)."""
    api: str
    """The API's name (Fetch)."""
    api_key: int
    """The API's key (1)."""
    version: int
    """The request's API version."""
    correlation_id: int
    """The correlation id of its header."""
    targets: list[str] = field(default_factory=list)
    """What it named: ``"topic/partition"``, ``"topic"``, ``"group:g"``."""
    errors: list[str] = field(default_factory=list)
    """The distinct error names in its answer."""
    elapsed_ms: float = 0.0
    """From read to answered (or ended), in milliseconds."""
    fault: str | None = None
    """The fault rules applied and their actions (``#1 NOT_LEADER_OR_FOLLOWER``, ``#2 hold``)."""
    outcome: str = "answered"
    """``answered``, ``no answer`` (acks=0), ``dropped``, ``hung`` or ``held`` until its
    connection closed, ``closed: <reason>``, ``answered, then closed: <reason>`` (a failed
    SASL authentication), or ``cancelled: connection closed``."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# The fields that hold an error code (AddPartitionsToTxn names its partitions' otherwise).
ERROR_CODE_FIELDS = frozenset({"ErrorCode", "PartitionErrorCode"})


@dataclass(frozen=True, slots=True)
class _ErrorPath:
    """Where a response version's error code fields sit: the name of this level's (None:
    none), and the nested fields (name, whether an array, their own path) that lead to more."""

    here: str | None
    below: tuple[tuple[str, bool, _ErrorPath], ...]


def _error_path(rows: list[list[Any]], version: int) -> _ErrorPath | None:
    # The request path's (answers' field names): the codec is imported with the first answer.
    from fakebroker.protocol.codec import snake

    here, below = None, []
    for row in rows:
        if version not in parse_range(row[2]):
            continue
        if row[0] in ERROR_CODE_FIELDS:
            here = snake(row[0])
        elif len(row) > 3 and "fields" in row[3]:
            child = _error_path(row[3]["fields"], version)
            if child is not None:
                below.append((snake(row[0]), row[1].startswith("[]"), child))
    return _ErrorPath(here, tuple(below)) if here is not None or below else None


@functools.cache
def error_path(api_key: int, version: int) -> _ErrorPath | None:
    """The ``error_code`` fields of API ``api_key``'s answer at ``version`` (from its spec)."""
    return _error_path(api_spec(api_key).response["fields"], version)


def answer_errors(api_key: int, version: int, response: Mapping[str, Any]) -> list[str]:
    """Distinct names of the non-zero ``error_code`` fields an answer carries, in the order
    they are encoded. Only the fields the version has are read (a handler may fill more)."""
    path = error_path(api_key, version)
    if path is None:
        return []
    found: dict[int, None] = {}
    _collect(response, path, found)
    return [error_name(code) for code in found]


def _collect(entry: Mapping[str, Any], path: _ErrorPath, found: dict[int, None]) -> None:
    if path.here is not None and (code := entry.get(path.here)):
        found[code] = None
    for name, is_array, child in path.below:
        value = entry.get(name)
        if not value:
            continue
        if is_array:
            for item in value:
                _collect(item, child, found)
        else:
            _collect(value, child, found)


# A recorded entry, kept as a tuple of plain values (JournalEntry's fields in order, targets
# and errors as tuples): the garbage collector stops tracking such tuples, so a full ring of
# them costs the broker nothing per request; entries are made again when queried.
_Stored = tuple[Any, ...]
FIELDS = tuple(f.name for f in fields(JournalEntry))
_AT = {name: index for index, name in enumerate(FIELDS)}
_LISTS = frozenset((_AT["targets"], _AT["errors"]))
_SEQ, _BROKER, _CLIENT_ID, _LISTENER, _PRINCIPAL, _API, _API_KEY, _VERSION, _ERRORS, _FAULT = (
    _AT[name] for name in ("seq", "broker", "client_id", "listener", "principal", "api",
                           "api_key", "version", "errors", "fault"))

# ``query``'s filters (also ``GET /journal``'s query and ``fakebroker ctl journal``'s options):
# name -> the type of its value.
FILTERS: dict[str, type] = {"api": str, "broker": int, "client_id": str, "listener": str,
                            "principal": str, "error": str, "faulted": bool, "since": int,
                            "limit": int}


def _entry(stored: _Stored) -> JournalEntry:
    return JournalEntry(*(list(value) if index in _LISTS else value
                          for index, value in enumerate(stored)))


class Journal:
    """A bounded, queryable record of requests, with lifetime coverage counts."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, sink: TextIO | None = None):
        self._entries: collections.deque[_Stored] = collections.deque(maxlen=capacity)
        self.sink = sink
        self.api_versions: collections.Counter[tuple[str, int]] = collections.Counter()
        self.error_counts: collections.Counter[str] = collections.Counter()
        self.fault_counts: collections.Counter[str] = collections.Counter()
        self._seq = itertools.count(1)

    def begin(self) -> tuple[int, float]:
        """The sequence number (read order) and wall-clock time of a request just read."""
        return next(self._seq), time.time()

    def add(self, *stored: Any) -> None:
        """Keep an entry given as the values of ``JournalEntry``'s fields, in their order
        (``targets`` and ``errors`` as tuples; ``begin`` gave its ``seq`` and time, when the
        request was read), without an entry object: the broker's request path records every
        request this way (``fakebroker.pipeline``)."""
        if len(stored) != len(FIELDS):
            raise TypeError(f"a journal entry has {len(FIELDS)} fields, got {len(stored)}")
        self._entries.append(stored)
        api, errors, fault = stored[_API], stored[_ERRORS], stored[_FAULT]
        self.api_versions[(api, stored[_VERSION])] += 1
        if errors:
            self.error_counts.update(errors)
        if fault:
            self.fault_counts[fault] += 1
        if self.sink is not None:
            self.sink.write(json.dumps(_entry(stored).as_dict(), default=str) + "\n")
            self.sink.flush()

    def query(self, api: str | int | None = None, broker: int | None = None,
              client_id: str | None = None, listener: str | None = None,
              principal: str | None = None, error: str | None = None,
              faulted: bool | None = None, since: int = 0,
              limit: int | None = None) -> list[JournalEntry]:
        """Entries (oldest first) matching every given filter (``FILTERS``): ``api`` (name
        or key), ``broker``, ``client_id``, ``listener``, ``principal``, ``error`` (an error
        name in the answer), ``faulted`` (whether a fault applied), ``since`` (entries with
        ``seq`` above it); the last ``limit`` of them."""
        apis = None if api is None else (
            {api.lower()} if isinstance(api, str) else {api})
        found = [
            stored for stored in list(self._entries)
            if stored[_SEQ] > since
            and (apis is None or stored[_API_KEY] in apis or stored[_API].lower() in apis)
            and (broker is None or stored[_BROKER] == broker)
            and (client_id is None or stored[_CLIENT_ID] == client_id)
            and (listener is None or stored[_LISTENER] == listener)
            and (principal is None or stored[_PRINCIPAL] == principal)
            and (error is None or error.upper() in stored[_ERRORS])
            and (faulted is None or bool(stored[_FAULT]) == faulted)
        ]
        return [_entry(stored) for stored in (found[-limit:] if limit else found)]

    def coverage(self) -> dict[str, Any]:
        """What the requests since start exercised: ``{"apis": {api: {version: count}},
        "errors": {name: count}, "faults": {description: count}, "requests": total}``."""
        apis: dict[str, dict[int, int]] = {}
        for (api, version), count in sorted(self.api_versions.items()):
            apis.setdefault(api, {})[version] = count
        return {"requests": sum(self.api_versions.values()), "apis": apis,
                "errors": dict(sorted(self.error_counts.items())),
                "faults": dict(sorted(self.fault_counts.items()))}
