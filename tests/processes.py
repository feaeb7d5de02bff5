"""Helpers for tests that start processes on fixed ports: a run of ports free a moment ago."""

from __future__ import annotations

import socket


def free_port_run(count: int) -> int:
    """A port p such that p..p+count-1 on 127.0.0.1 were free a moment ago (another process
    may take one before the caller binds it: callers start what binds them at once)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count < 65535 and all(_free(base + i) for i in range(count)):
            return base
    raise RuntimeError("no run of free ports")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False
