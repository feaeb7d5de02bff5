"""A ``fakebroker serve`` process starts on what serving needs, and nothing a run may not use.

Not a timing test (the figures are in BENCHMARKS.md, start-up): these read, in the serving
process itself, which modules are imported at the moment it writes its ready file, so they
pass or fail the same on an idle machine and on a loaded one. What is listed here comes later,
when a run uses it: the control API and scenario files with their flags, an API's module and
record batches (crc32c, cramjam) with its first request, construct with the first codec; the
request path itself (pipeline, codec, fault rules, journal) with a broker's first request, or
from serve's import-ahead thread once it is ready; groups, producers and the topic config table
when a request or operation first needs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakebroker.wire_client import WireClient
from tests.conftest import OUTSIDE, start_served, stop_served

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
    "difflib",  # names the closest variable to an unknown FAKEBROKER_* one, only then
    "encodings.idna",  # Python's IDNA codec: a listener's host goes to getaddrinfo as bytes
    "fakebroker.security", "cryptography",  # TLS: only for a cluster with a TLS listener
)
# The request path, imported for a broker's first request (or by serve's import-ahead thread
# once it is ready): the pipeline, decoding and encoding, the spec reader, the fault rules and
# the journal; and the state a request or operation makes on first use: groups, producers,
# the topic config table.
NOT_BEFORE_A_REQUEST = (
    "fakebroker.pipeline", "fakebroker.api", "fakebroker.faults", "fakebroker.journal",
    "fakebroker.protocol.codec", "fakebroker.protocol.framing", "fakebroker.protocol.specs",
    "fakebroker.state.groups", "fakebroker.state.classic_groups",
    "fakebroker.state.consumer_groups", "fakebroker.state.offsets",
    "fakebroker.state.producers", "fakebroker.state.configs",
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
    assert imported(modules, NOT_BEFORE_A_REQUEST) == []


def test_requests_sent_the_moment_serve_is_ready_are_answered(tmp_path):
    """The request path is imported for a broker's first request, or by the import-ahead
    thread, which may still be importing it: requests to every broker at once, as soon as
    the ready file is there, wait for it and are all answered."""
    process, details = start_served(tmp_path, "--brokers", "3", "--topic", "orders:3")
    try:
        clients = [WireClient(f"{b['host']}:{b['port']}") for b in details["brokers"]]
        for client in clients:
            client.send("ApiVersions", 3, {"client_software_name": "wire",
                                           "client_software_version": "1"})
            client.send("Metadata", 12, {"topics": None})
        for client in clients:
            assert client.receive("ApiVersions", 3)[1].error_code == 0
            metadata = client.receive("Metadata", 12)[1]
            assert [t.name for t in metadata.topics] == ["orders"]
            client.close()
    finally:
        assert stop_served(process) == 0


def test_the_control_api_is_imported_when_its_port_is_asked_for(tmp_path):
    modules = modules_when_ready(tmp_path, "--control-port", "0")
    assert {"fakebroker.control.http", "h11"} <= modules
    assert imported(modules, ("fakebroker.control.scenario", "tomllib", "construct")) == []


def test_tls_is_imported_when_a_tls_listener_is_asked_for(tmp_path):
    modules = modules_when_ready(tmp_path, "--listener", "SSL")
    assert {"fakebroker.security.tls", "fakebroker.security.certificates"} <= modules
    assert imported(modules, NOT_BEFORE_A_REQUEST) == []


def test_importing_the_command_and_parsing_a_serve_command_line_imports_no_broker():
    code = ("import sys, fakebroker.cli as cli; cli.parser().parse_args(['serve']); "
            "print('\\n'.join(sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=OUTSIDE, check=True)
    modules = set(result.stdout.split())
    assert imported(modules, ("trio", "fakebroker.runtime", "fakebroker.control",
                              "fakebroker.state", "fakebroker.protocol")) == []
