"""A ``fakebroker serve`` process starts on what serving needs, and nothing a run may not use.

Not a timing test (the figures are in BENCHMARKS.md, start-up): these read, in the serving
process itself, which modules are imported at the moment it writes its ready file, so they
pass or fail the same on an idle machine and on a loaded one. What is listed here comes later,
when a run uses it: the control API and scenario files with their flags, an API's module and
record batches (crc32c, cramjam) with its first request, construct with the first codec.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakebroker.api import MODULE_NAMES
from tests.conftest import OUTSIDE

# Runs ``fakebroker serve`` as the console script does (``cli.command``); when the ready file
# is written, records ``sys.modules`` in OUT and stops the process with SIGTERM.
PROBE = """
import json, os, signal, sys
from pathlib import Path

import fakebroker.cli as cli

ready, out, *args = sys.argv[1:]
write_ready_file = cli.write_ready_file


def write_and_record(path, *rest):
    write_ready_file(path, *rest)
    Path(out).write_text(json.dumps(sorted(sys.modules)))
    os.kill(os.getpid(), signal.SIGTERM)


cli.write_ready_file = write_and_record
sys.argv = ["fakebroker", "serve", "--ready-file", ready, *args]
cli.command()
"""

NOT_AT_START = (
    "fakebroker.control.ctl", "fakebroker.control.http", "fakebroker.control.scenario",
    "fakebroker.control.actions", "fakebroker.spark", "fakebroker.bench", "fakebroker.sync",
    "fakebroker.protocol.records", "fakebroker.protocol.legacy_records",
    "fakebroker.protocol.compression", "fakebroker.state.views",
    "h11", "tomllib", "construct", "crc32c", "cramjam", "importlib.metadata",
    "urllib.request", "http.client", "email",
)


def modules_when_ready(tmp_path: Path, *args: str) -> set[str]:
    """The modules a ``fakebroker serve ARGS`` process has imported when it writes its ready
    file; the process must then stop cleanly on SIGTERM (exit status 0, ready file gone)."""
    ready, out = tmp_path / "ready.json", tmp_path / "modules.json"
    result = subprocess.run([sys.executable, "-c", PROBE, str(ready), str(out), *args],
                            capture_output=True, text=True, timeout=120, cwd=OUTSIDE,
                            env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert not ready.exists()
    return set(json.loads(out.read_text()))


def imported(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_serve_is_ready_before_importing_what_a_run_may_not_use(tmp_path):
    modules = modules_when_ready(tmp_path, "--brokers", "2", "--topic", "orders:3")
    assert "fakebroker.server" in modules  # the probe did see a broker start
    assert imported(modules, NOT_AT_START) == []
    assert imported(modules, tuple(f"fakebroker.api.{name}" for name in MODULE_NAMES)) == []


def test_the_control_api_is_imported_when_its_port_is_asked_for(tmp_path):
    modules = modules_when_ready(tmp_path, "--control-port", "0")
    assert {"fakebroker.control.http", "h11"} <= modules
    assert imported(modules, ("fakebroker.control.scenario", "tomllib", "construct")) == []


def test_importing_the_command_and_parsing_a_serve_command_line_imports_no_broker():
    code = ("import sys, fakebroker.cli as cli; cli.parser().parse_args(['serve']); "
            "print('\\n'.join(sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=OUTSIDE, check=True)
    modules = set(result.stdout.split())
    assert imported(modules, ("trio", "fakebroker.runtime", "fakebroker.control",
                              "fakebroker.state", "fakebroker.protocol")) == []
