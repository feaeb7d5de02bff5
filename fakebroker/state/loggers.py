"""A broker's loggers (Kafka's BROKER_LOGGER config resource, KIP-412), kept as Kafka 4.4's
log4j2 keeps them, without log4j.

Kafka 4.4 answers for its loggers from its log4j2 context (``LoggingController``): the loggers
of its log4j2 configuration and those made through the log4j2 API, each with its level, and
``root``. Which loggers those are depends on how the broker logs. Kafka 4.4 as the project
runs it (its jars from Maven Central, logging through slf4j-simple, no log4j2 configuration:
``fakebroker.real.launch``) lists two, measured: ``root`` at ERROR (log4j2's default
configuration) and ``org.apache.kafka.server.logger.LoggingController`` (the logger the
logging controller makes for itself), which has root's level; no other class of its jars logs
through log4j2, so the list stays those two whatever the broker did. A fake broker starts with the
same two (``Loggers()``), so a test reads and sets the same loggers on both brokers; Kafka
started from its distribution with its log4j2.yaml lists every logger its classes made
(``kafka.server.ReplicaManager``...), and answers "does not exist" for those here, as the
project's Kafka does.

Levels follow log4j2: a logger SET has its own level; one without (never set, or DELETEd)
has its nearest ancestor's that has one, here root's (the only one listed). Only a listed
logger may be SET or DELETEd; root cannot be DELETEd; the levels are
Kafka's ``LogLevelConfig.VALID_LOG_LEVELS`` (upper case; not OFF or ALL). ``change`` checks
every operation before it applies any, as Kafka's ``RuntimeLoggerManager`` does, and raises
``LoggerChangeError`` with Kafka's error and message. Kafka keeps no level across a restart:
a fake broker back up (``failures.broker_up``) has its first levels again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

ROOT = "root"
CONTROLLER = "org.apache.kafka.server.logger.LoggingController"
LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")  # sorted, as Kafka names them
SET, DELETE, APPEND, SUBTRACT = range(4)
_OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
_INT = re.compile(r"[+-]?[0-9]+")


class LoggerChangeError(Exception):
    """A change refused: Kafka's error name and message."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def node_id(name: str) -> int | None:
    """The broker id a resource name gives, read as Java's ``Integer.parseInt`` reads it
    (None where that throws)."""
    if not _INT.fullmatch(name):
        return None
    value = int(name)
    return value if -2**31 <= value < 2**31 else None


@dataclass(slots=True, eq=False)
class Loggers:
    """One broker's loggers: the level each was given (None: its ancestors')."""

    own: dict[str, str | None] = field(
        default_factory=lambda: {ROOT: "ERROR", CONTROLLER: None})

    def levels(self) -> dict[str, str]:
        """Every logger with the level it logs at, root first."""
        return {name: self.level(name) for name in self.own}

    def level(self, name: str) -> str:
        """``name``'s level: its own, else root's."""
        return self.own[name] or str(self.own[ROOT])

    def change(self, ops: Iterable[tuple[str, int, str | None]], *,
               validate_only: bool) -> None:
        """Apply ``(logger, operation, level)`` operations (SET, DELETE) once all are
        valid; raise ``LoggerChangeError`` for the first that is not."""
        ops = list(ops)
        for name, op, level in ops:
            self._check(name, op, level)
        if validate_only:
            return
        for name, op, level in ops:
            self.own[name] = level if op == SET else None

    def _check(self, name: str, op: int, level: str | None) -> None:
        if op in _OP_NAMES:
            raise LoggerChangeError("INVALID_REQUEST", f"{_OP_NAMES[op]} operation is not "
                                                       "allowed for the BROKER_LOGGER resource")
        if op not in (SET, DELETE):
            raise LoggerChangeError("INVALID_REQUEST", f"Unknown operation type {op} is not "
                                                       "allowed for the BROKER_LOGGER resource")
        if name not in self.own:
            raise LoggerChangeError("INVALID_CONFIG", f"Logger {name} does not exist!")
        if op == SET and level not in LEVELS:
            raise LoggerChangeError(
                "INVALID_CONFIG", f"Cannot set the log level of {name} to {level} as it is not "
                                  f"a supported log level. Valid log levels are "
                                  f"{', '.join(LEVELS)}")
        if op == DELETE and name == ROOT:
            raise LoggerChangeError("INVALID_REQUEST",
                                    "Removing the log level of the root logger is not allowed")
