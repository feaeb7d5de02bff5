"""Drive kafkajs (2.x, pure JavaScript) group members through tests/node/group_consume.js.

kafkajs comes from ``.ci/install-clients`` (``npm install`` into a cache folder outside the
repo, ``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/node/node_modules``).

    from tests.clients.kafkajs import node_available, start_kafkajs
    member = start_kafkajs("--bootstrap", addr, "--topic", "t", "--group", "g",
                           "session.timeout.ms=6000")
    member.wait_for({"event": "assigned"}, timeout=30)
    lines = member.stop()

The options and output lines are those of ``Harness group-consume`` (see the top of
tests/node/group_consume.js for the differences); the handle is tests/clients/process.py's
GroupMember. Environment: ``FAKEBROKER_NODE_OPTS`` (extra node options, split on spaces).

``run_kafkajs(spec)`` runs one action of tests/node/secure_client.js (a round trip, one
record produced, ACLs created; over TLS and SASL) and returns its JSON lines, or raises
``KafkajsError`` with its error line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tests.clients.java import INSTALL_HINT, clients_dir
from tests.clients.process import GroupMember

REPO_ROOT = Path(__file__).resolve().parents[2]
GROUP_CONSUME_SCRIPT = REPO_ROOT / "tests" / "node" / "group_consume.js"
SECURE_CLIENT_SCRIPT = REPO_ROOT / "tests" / "node" / "secure_client.js"


class NodeClientsMissing(RuntimeError):
    """node or kafkajs is not installed."""


class KafkajsError(Exception):
    """A kafkajs action failed: ``error_obj`` is its {"error", "type", "message", "causes"}
    line (kafkajs's error name, the broker's error type if any), ``lines`` all its lines."""

    def __init__(self, error_obj: dict, lines: list[dict], stderr: str) -> None:
        self.error_obj, self.lines = error_obj, lines
        super().__init__(f"kafkajs: {error_obj}\n--- stderr tail ---\n{stderr[-4000:]}")


def kafkajs_path() -> Path:
    """The kafkajs package folder that .ci/install-clients installs."""
    return clients_dir() / "node" / "node_modules" / "kafkajs"


def _node() -> str:
    found = shutil.which("node")
    if not found:
        raise NodeClientsMissing(f"`node` not found: {INSTALL_HINT}")
    return found


def kafkajs_version() -> str:
    """The installed kafkajs version; raises NodeClientsMissing."""
    try:
        return json.loads((kafkajs_path() / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        raise NodeClientsMissing(f"kafkajs missing in {kafkajs_path()}: {INSTALL_HINT}") from None


def node_available() -> bool:
    """True when node and kafkajs 2.x are there (for pytest skip conditions)."""
    try:
        _node()
        return kafkajs_version().startswith("2.")
    except NodeClientsMissing:
        return False


def start_kafkajs(*args: str, node_args: Sequence[str] = ()) -> GroupMember:
    """Start a kafkajs group member (tests/node/group_consume.js <args>) in the background;
    returns its handle: wait_for(...), stop(), kill(), lines()... It stops on "stop" or end
    of file on stdin (GroupMember.stop())."""
    kafkajs_version()  # fail early, with the install hint
    env = dict(os.environ, KAFKAJS_PATH=str(kafkajs_path()))
    cmd = [
        _node(),
        *node_args,
        *os.environ.get("FAKEBROKER_NODE_OPTS", "").split(),
        str(GROUP_CONSUME_SCRIPT),
        *args,
    ]
    return GroupMember(cmd, name="kafkajs group-consume", env=env)


def run_kafkajs(spec: dict, timeout: float = 60) -> list[dict]:
    """Run tests/node/secure_client.js with ``spec`` (its JSON argument, see the script) and
    return its JSON lines; ``KafkajsError`` when it prints an error line."""
    kafkajs_version()  # fail early, with the install hint
    result = subprocess.run(
        [_node(), *os.environ.get("FAKEBROKER_NODE_OPTS", "").split(), str(SECURE_CLIENT_SCRIPT),
         json.dumps(spec)],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        env=dict(os.environ, KAFKAJS_PATH=str(kafkajs_path())))
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    error = next((line for line in lines if "error" in line), None)
    if error is not None or result.returncode != 0:
        raise KafkajsError(error or {"error": f"exit {result.returncode}"}, lines, result.stderr)
    return lines
