"""A real client running in the background as a separate process that prints JSON lines.

Used for group members (tests/java/Harness.java ``group-consume``, tests/node/group_consume.js),
which a test starts, watches and stops while they run:

    from tests.clients.java import start_harness
    with start_harness("group-consume", "--bootstrap", addr, "--topic", "t", "--group", "g") as m:
        m.wait_for({"event": "assigned"}, timeout=30)
        ...
        lines = m.stop()
    assert lines[-1]["done"] == len(m.records())

A reader thread collects stdout's JSON lines (a line that is not a JSON object is kept as
{"unparsed": <text>}), another keeps stderr (client logs). The process's stdin is a pipe: the
clients stop gracefully on a line "stop" and on end of file, so a member left behind by a dead
test process stops too. Leaving the ``with`` block (or interpreter exit) kills what still runs.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence

Predicate = Callable[[dict], bool] | Mapping[str, object]

_running: weakref.WeakSet[GroupMember] = weakref.WeakSet()


class MemberError(Exception):
    """A background client did not do what was waited for: timeout, early exit or error line.

    returncode: the exit code, None if it still runs. stderr_tail: the end of its stderr.
    error_obj: its last {"error": ...} line, or None. lines: all its JSON lines so far.
    """

    def __init__(self, member: GroupMember, what: str) -> None:
        self.member_name = member.name
        self.returncode = member.returncode
        self.lines = member.lines()
        self.stderr_tail = member.stderr_tail()
        self.error_obj = next((x for x in reversed(self.lines) if "error" in x), None)
        last = "\n".join(json.dumps(x) for x in self.lines[-10:])
        super().__init__(
            f"{member.name} (pid {member.pid}, exit {self.returncode}): {what}\n"
            f"--- last lines ---\n{last}\n--- stderr tail ---\n{self.stderr_tail}"
        )


def _matcher(predicate: Predicate) -> Callable[[dict], bool]:
    if callable(predicate):
        return predicate
    want = dict(predicate)
    return lambda line: all(k in line and line[k] == v for k, v in want.items())


class GroupMember:
    """A client process in the background (any command printing JSON lines on stdout).

    Times are seconds since the process was started (time.monotonic based).
    """

    def __init__(
        self,
        cmd: Sequence[str],
        *,
        name: str = "",
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
    ) -> None:
        self.cmd = list(cmd)
        self.name = name or os.path.basename(self.cmd[0])
        self._cond = threading.Condition()
        self._lines: list[tuple[float, dict]] = []
        self._stderr: list[str] = []
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            self.cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else dict(env),
            cwd=cwd,
        )
        self.pid = self.proc.pid
        self._readers = [
            threading.Thread(target=self._read_stdout, name=f"{self.name}-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"{self.name}-stderr", daemon=True),
        ]
        for t in self._readers:
            t.start()
        _running.add(self)

    # ---------------------------------------------------------------- readers

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                obj = json.loads(text)
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                obj = {"unparsed": text}
            with self._cond:
                self._lines.append((time.monotonic() - self.started, obj))
                self._cond.notify_all()
        self.proc.wait()  # stdout closed: the process is (about to be) gone
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            with self._cond:
                self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    # ---------------------------------------------------------------- observing

    @property
    def returncode(self) -> int | None:
        """The exit code (negative: killed by that signal), None while it runs."""
        return self.proc.poll()

    def running(self) -> bool:
        return self.proc.poll() is None

    def lines(self) -> list[dict]:
        """The JSON lines printed so far (a copy)."""
        with self._cond:
            return [line for _, line in self._lines]

    def timed_lines(self) -> list[tuple[float, dict]]:
        """(seconds since start when the line was read, line) for each line so far."""
        with self._cond:
            return list(self._lines)

    def records(self) -> list[dict]:
        """The record lines so far."""
        return [x for x in self.lines() if "offset" in x and "partition" in x]

    def events(self, kind: str | None = None) -> list[dict]:
        """The {"event": ...} lines so far, or only those of that kind ("assigned"...)."""
        return [x for x in self.lines() if "event" in x and (kind is None or x["event"] == kind)]

    def assignment(self) -> set[int]:
        """The partitions it owns now, from its assigned/revoked/lost events (eager or not)."""
        owned: set[int] = set()
        for e in self.events():
            if e["event"] == "assigned":
                owned |= set(e["partitions"])
            elif e["event"] in ("revoked", "lost"):
                owned -= set(e["partitions"])
        return owned

    def committed(self) -> dict[int, int]:
        """Partition -> next offset, from its successful commit events."""
        out: dict[int, int] = {}
        for e in self.events("committed"):
            out.update({int(p): o for p, o in e["offsets"].items()})
        return out

    def stderr(self) -> str:
        with self._cond:
            return "\n".join(self._stderr)

    def stderr_tail(self, max_lines: int = 60, max_chars: int = 8000) -> str:
        with self._cond:
            return "\n".join(self._stderr[-max_lines:])[-max_chars:]

    def wait_for(self, predicate: Predicate, timeout: float = 30, *, start: int = 0) -> dict:
        """The first line (from index ``start`` of lines()) matching predicate: a function of the
        line, or a dict of key/values the line must contain, e.g. {"event": "assigned"}.

        Waits up to ``timeout`` seconds; raises MemberError on timeout, or if the process
        exits without having printed such a line.
        """
        match = _matcher(predicate)
        deadline = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                for _, line in self._lines[i:]:
                    if match(line):
                        return line
                i = max(i, len(self._lines))
                if not self._readers[0].is_alive():
                    raise MemberError(self, f"exited without a line matching {predicate!r}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise MemberError(self, f"no line matching {predicate!r} within {timeout} s")
                self._cond.wait(min(left, 0.5))

    # ---------------------------------------------------------------- ending

    def wait(self, timeout: float = 30) -> list[dict]:
        """Waits for it to exit by itself (--max-records, --idle-exit-ms); returns all lines.
        Raises MemberError (and kills it) if it still runs after ``timeout``."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise MemberError(self, f"still running after {timeout} s (killed)") from None
        return self._finish()

    def stop(self, timeout: float = 30, *, check: bool = False) -> list[dict]:
        """Asks it to stop (a line "stop" on stdin, then end of file): a group member commits,
        closes (leaving the group unless static) and prints {"done": n}. Kills it if it is
        still running after ``timeout``. Returns all lines. check: raise MemberError unless it
        exited with code 0 by itself."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"stop\n")
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass  # already gone, or stdin already closed
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            if check:
                raise MemberError(self, f"no exit within {timeout} s of 'stop' (killed)") from None
        lines = self._finish()
        if check and self.returncode != 0:
            raise MemberError(self, "exited with an error after 'stop'")
        return lines

    def kill(self) -> list[dict]:
        """SIGKILL, as a crash: no commit, no LeaveGroup. Returns all lines."""
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        return self._finish()

    def _finish(self) -> list[dict]:
        for t in self._readers:
            t.join(5)
        _running.discard(self)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        return self.lines()

    def __enter__(self) -> GroupMember:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.kill()
        else:
            self._finish()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} pid={self.pid} exit={self.returncode}>"


def wait_until(
    condition: Callable[[], bool],
    timeout: float = 30,
    *,
    members: Iterable[GroupMember] = (),
    what: str = "condition",
) -> None:
    """Polls condition() (every 50 ms) until true, e.g. "the members printed 300 records in all";
    on timeout raises MemberError about the first of ``members`` (or AssertionError)."""
    members = list(members)
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            detail = "".join(
                f"\n  {m!r}: {len(m.records())} records, assignment {sorted(m.assignment())}"
                for m in members
            )
            if members:
                raise MemberError(members[0], f"{what}: not met within {timeout} s{detail}")
            raise AssertionError(f"{what}: not met within {timeout} s")
        time.sleep(0.05)


@atexit.register
def _kill_leftovers() -> None:
    for m in list(_running):
        if m.proc.poll() is None:
            try:
                os.kill(m.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
