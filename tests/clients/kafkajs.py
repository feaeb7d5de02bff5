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
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from tests.clients.java import INSTALL_HINT, clients_dir
from tests.clients.process import GroupMember

REPO_ROOT = Path(__file__).resolve().parents[2]
GROUP_CONSUME_SCRIPT = REPO_ROOT / "tests" / "node" / "group_consume.js"


class NodeClientsMissing(RuntimeError):
    """node or kafkajs is not installed."""


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
