"""Call the methods of Apache Kafka 4.4's Java Admin client: tests/java/AdminCalls.java.

AdminCalls.java is compiled against the kafka-clients 4.4.0 jars (the folder
``.ci/install-kafka`` fills, ``tests/clients/java.py``'s ``java_dir("4.4.0")``), once per hash
of the source, the jars and the JDK (``compile_java``), and run in a JVM of its own per
scenario:

    from tests.clients.admin import admin_calls
    calls = admin_calls("topics", kafka.bootstrap_servers)
    assert calls[0] == {"call": "createTopics", "result": {...}}

Guarantees: ``admin_calls`` returns the scenario's lines in call order, one per Admin call
(``{"call", "result"}`` or ``{"call", "error": <exception's simple class name>}``; see the top of
AdminCalls.java for the scenarios); it raises ``HarnessError`` when the scenario fails outside
an Admin call, exits non-zero, prints something else than JSON lines or outlives
``timeout`` (its JVM killed then).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.clients.java import (
    JVM_FLAGS,
    JVM_LOG_FLAGS,
    HarnessError,
    _compile_lock,
    _jars,
    _java_tool,
    _parse_lines,
    _tail,
    compile_java,
    java_available,
    java_dir,
)

ADMIN_VERSION = "4.4.0"  # the client whose Admin interface tests/admin_methods.py declares
SOURCE = Path(__file__).resolve().parents[1] / "java" / "AdminCalls.java"


def admin_available() -> bool:
    """True when the kafka-clients 4.4.0 jars and a JDK are there."""
    return java_available(ADMIN_VERSION)


def admin_classpath() -> str:
    """The kafka-clients 4.4.0 jars and AdminCalls, compiled, as a class path."""
    jars = _jars(ADMIN_VERSION)
    with _compile_lock:
        compiled = compile_java(SOURCE, jars, java_dir(ADMIN_VERSION) / "admin-calls")
    return ":".join([*map(str, jars), str(compiled)])


def admin_calls(scenario: str, bootstrap: str, *props: str,
                timeout: float = 120) -> list[dict]:
    """Run AdminCalls ``scenario`` against ``bootstrap`` with client ``props`` (key=value)."""
    command = [_java_tool("java"), *JVM_FLAGS, *JVM_LOG_FLAGS, "-cp", admin_classpath(),
               "AdminCalls", scenario, bootstrap, *props]
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as e:
        raise HarnessError(None, _tail(e.stderr), {"error": "HarnessTimeout", "message":
                           f"no exit within {timeout} s"}, subcommand=scenario,
                           lines=_parse_lines(e.stdout)[0]) from None
    lines, bad = _parse_lines(done.stdout)
    if bad is not None:
        raise HarnessError(done.returncode, _tail(done.stderr),
                           {"error": "BadOutput", "message": f"not a JSON line: {bad[:500]!r}"},
                           subcommand=scenario, lines=lines)
    if done.returncode != 0:
        raise HarnessError(done.returncode, _tail(done.stderr), lines[-1] if lines else None,
                           subcommand=scenario, lines=lines)
    return lines
