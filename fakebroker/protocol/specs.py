"""Read ``protocol_specs/``: the API index, message field trees, headers and error codes.

Files are read lazily and cached, so importing the protocol costs nothing until an API is used.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@functools.cache
def specs_root() -> Path:
    """The ``protocol_specs`` folder: beside the package in a checkout, inside it when installed."""
    checkout = Path(__file__).resolve().parents[2] / "protocol_specs"
    if checkout.is_dir():
        return checkout
    from importlib import resources

    return Path(str(resources.files("fakebroker") / "protocol_specs"))


def parse_range(text: str) -> frozenset[int]:
    """``"0-2,5-9"`` as a set of versions."""
    result: set[int] = set()
    for run in filter(None, text.split(",")):
        lo, hi = run.split("-")
        result.update(range(int(lo), int(hi) + 1))
    return frozenset(result)


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API key: the versions Kafka defines and both message trees."""

    key: int
    name: str
    versions: frozenset[int]
    flexible: frozenset[int]
    unstable_latest: bool
    request: dict[str, Any]
    response: dict[str, Any]

    @property
    def min_version(self) -> int:
        return min(self.versions)

    @property
    def max_stable_version(self) -> int:
        """The newest version a broker advertises (Kafka holds back an unstable latest)."""
        return max(self.versions) - (1 if self.unstable_latest else 0)


@functools.cache
def api_files() -> dict[int, Path]:
    """API key -> its spec file (``apis/000_Produce.json``)."""
    folder = specs_root() / "apis"
    return {int(name[:3]): folder / name
            for name in sorted(os.listdir(folder)) if name.endswith(".json")}


@functools.cache
def api_spec(key: int) -> ApiSpec:
    """The spec of API ``key``; ``KeyError`` when Kafka defines no such API."""
    raw = json.loads(api_files()[key].read_text())
    return ApiSpec(
        key=raw["key"],
        name=raw["name"],
        versions=parse_range(raw["versions"]),
        flexible=parse_range(raw["flexible"]),
        unstable_latest=raw["unstable_latest"],
        request=raw["request"],
        response=raw["response"],
    )


@functools.cache
def api_keys_by_name() -> dict[str, int]:
    return {p.name[4:-5]: key for key, p in api_files().items()}


@functools.cache
def header_spec(name: str) -> dict[str, Any]:
    return json.loads((specs_root() / "headers.json").read_text())[name]


@functools.cache
def data_spec(name: str) -> dict[str, Any]:
    return json.loads((specs_root() / "data" / f"{name}.json").read_text())


@functools.cache
def error_table() -> tuple[tuple[int, str, bool], ...]:
    return tuple(tuple(row) for row in json.loads((specs_root() / "errors.json").read_text()))
