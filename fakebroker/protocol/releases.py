"""Read ``protocol_specs/releases.json``: per Kafka release line, the APIs its broker lists in
ApiVersions (``fakebroker.protocol.releases_importer`` makes it from each release's jar)."""

from __future__ import annotations

import functools
import json
from typing import Any

from fakebroker.protocol.specs import specs_root


@functools.cache
def release_table() -> dict[str, Any]:
    """Release line (``"0.10.0"`` ... ``"4.4"``) -> ``{"artifact", "apis", "refused",
    "features"}``, oldest first."""
    return json.loads((specs_root() / "releases.json").read_text())


def release_lines() -> tuple[str, ...]:
    """Every release line in the table, oldest first."""
    return tuple(release_table())


def release_line(version: str) -> str:
    """The table's release line of ``version``: a line itself (``"3.9"``, ``"0.10.2"``) or one
    of its releases (``"3.9.1"``, ``"0.10.2.2"``); ``ValueError`` naming the lines otherwise."""
    for line in sorted(release_table(), key=len, reverse=True):
        if version == line or version.startswith(line + "."):
            return line
    raise ValueError(f"Kafka release {version!r} is not emulated; the releases are "
                     f"{', '.join(release_table())}")


def before(line: str, other: str) -> bool:
    """Whether release line ``line`` is older than release line ``other`` (``"0.10.2"`` is
    before ``"1.0"``)."""
    return tuple(map(int, line.split("."))) < tuple(map(int, other.split(".")))


def since(release: str | None, line: str) -> bool:
    """Whether a cluster answering as release line ``release`` (None: no release, today's
    Kafka) has what release line ``line`` brought."""
    return release is None or not before(release, line)


@functools.cache
def listed_apis(line: str) -> dict[int, tuple[int, int]]:
    """API key -> (min, max) version, as a broker of release ``line`` lists them, in key
    order."""
    return {key: (low, high) for key, _, low, high in release_table()[line]["apis"]}


@functools.cache
def refused_versions(line: str) -> dict[int, tuple[int, int]]:
    """API key -> (min, max) of the versions a broker of release ``line`` lists but refuses
    (4.x: Produce v0-2, KAFKA-18659)."""
    return {key: (low, high) for key, _, low, high in release_table()[line]["refused"]}


def supported_features(line: str) -> tuple[tuple[str, int, int], ...]:
    """(name, min, max) of every feature a broker of release ``line`` supports, in the order
    it lists them (none before 3.3)."""
    return tuple((name, low, high)
                 for name, low, high in release_table()[line]["features"]["supported"])


def new_cluster_levels(line: str) -> dict[str, int]:
    """The feature levels a freshly formatted node of release ``line`` finalizes, in the
    order it lists them (none before 3.3)."""
    return {name: level for name, level in release_table()[line]["features"]["finalized"]}
