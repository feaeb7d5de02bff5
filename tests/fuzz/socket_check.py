"""The check over real sockets that a fuzz input harms only its own connection.

``SocketCheck.check(frame)`` sends one request frame (size prefix added) on a new connection
to a running one-broker fake (``FakeKafka``, started at the first check), reads until it is
answered or closed, then asks ApiVersions on a second connection. Its findings (none: the
broker is fine) name what went wrong: a line the broker logged at ERROR (a traceback), more
than one warning line for the closed connection, no answer to the second connection (the
broker stopped or is stuck), or the fuzzed connection neither answered nor closed in time.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading

from fakebroker import FakeKafka
from fakebroker.wire_client import WireClient

TIMEOUT = 5.0  # s a connection may take to be answered or closed


class _Lines(logging.Handler):
    """The fakebroker logger's lines at WARNING and above (the broker thread logs them)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[logging.LogRecord] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._lock:
            self.lines.append(record)

    def take(self) -> list[logging.LogRecord]:
        with self._lock:
            lines, self.lines = self.lines, []
        return lines


class SocketCheck:
    """A fake broker over TCP, checked after one frame at a time."""

    def __init__(self) -> None:
        self._fake: FakeKafka | None = None
        self._lines = _Lines()

    @property
    def address(self) -> str:
        if self._fake is None:
            self._fake = FakeKafka(brokers=1, topics={"orders": 2})
            self._fake.start()
            logging.getLogger("fakebroker").addHandler(self._lines)
        return self._fake.bootstrap_servers

    def __enter__(self) -> SocketCheck:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fake is not None:
            logging.getLogger("fakebroker").removeHandler(self._lines)
            self._fake.stop()
            self._fake = None

    def check(self, frame: bytes, sized: bool = True) -> list[str]:
        """What went wrong when ``frame`` (given its size prefix unless ``sized`` is False:
        the frame's own bytes carry it) is sent on a connection of its own."""
        host, port = self.address.rsplit(":", 1)
        self._lines.take()
        findings = []
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            try:
                sock.sendall(struct.pack(">i", len(frame)) + frame if sized else frame)
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):
                    pass
            except TimeoutError:
                pass  # a request that waits (a long poll): its connection is left open
            except (ConnectionResetError, BrokenPipeError):
                pass  # closed by the broker before the whole frame was sent or read
        try:
            with WireClient(self.address, timeout=TIMEOUT) as other:
                other.request("ApiVersions", 3, {"client_software_name": "fuzz",
                                                 "client_software_version": "1"})
        except (OSError, ConnectionError, AssertionError) as exc:
            findings.append(f"another connection was not served after it: {exc!r}")
        lines = self._lines.take()
        errors = [r for r in lines if r.levelno >= logging.ERROR]
        warnings = [r for r in lines if r.levelno == logging.WARNING]
        findings += [f"logged at ERROR: {logging.Formatter().format(r)}" for r in errors]
        if len(warnings) > 1:
            findings.append("more than one warning line: " +
                            " | ".join(r.getMessage() for r in warnings))
        return findings
