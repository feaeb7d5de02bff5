"""Cluster actions by name, with their parameters given as data (HTTP JSON, scenario TOML).

Each action checks its parameters before it changes anything and raises ``ActionError`` with
a message naming the bad one; a refused cluster operation raises ``ClusterError`` (with
Kafka's error name). The actions are the cluster operations declared on ``FakeCluster``
(``fakebroker.operations``: ``move-leader`` takes ``move_leader``'s parameters, with its
defaults), plus ``fault``, which adds a fault rule from its fields (for scenario timelines).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakebroker.operations import OPERATIONS, REQUIRED
from fakebroker.runtime import FakeCluster


class ActionError(ValueError):
    """An action unknown, or given bad parameters; nothing was changed."""


_REQUIRED = REQUIRED
# name -> {parameter: (type, default)}: each declared operation's own parameters.
PARAMETERS: dict[str, dict[str, tuple[type, Any]]] = {
    name: {p.name: (p.type, None if p.optional and p.default is REQUIRED else p.default)
           for p in op.parameters}
    for name, op in OPERATIONS.items()
}
ACTIONS = tuple(PARAMETERS) + ("fault",)


def check_parameters(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The action's parameters with defaults filled in; ``ActionError`` if any is bad."""
    if name == "fault":
        return dict(given)
    if name not in PARAMETERS:
        raise ActionError(f"unknown action {name!r}; actions: {', '.join(ACTIONS)}")
    if not isinstance(given, Mapping):
        raise ActionError(f"{name}: parameters must be an object")
    spec = PARAMETERS[name]
    unknown = set(given) - set(spec)
    if unknown:
        raise ActionError(f"{name}: unknown parameter(s) {', '.join(sorted(unknown))}; "
                          f"it takes {', '.join(spec)}")
    values: dict[str, Any] = {}
    for parameter, (kind, default) in spec.items():
        value = given.get(parameter, default)
        if value is _REQUIRED:
            raise ActionError(f"{name}: {parameter} is required")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # JSON and TOML write a whole number without its point
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ActionError(f"{name}: {parameter} must be {kind.__name__}, got {value!r}")
        values[parameter] = value
    return values


async def run_action(cluster: FakeCluster, name: str, given: Mapping[str, Any]
                     ) -> dict[str, Any]:
    """Run one action on the cluster's trio thread; returns what it did, as data."""
    parameters = check_parameters(name, given)
    if name == "fault":
        return {"action": name, **cluster.faults.add_data(parameters).describe()}
    declared = OPERATIONS[name]
    result = getattr(cluster, declared.method)(**parameters)
    if declared.is_async:
        result = await result
    return {"action": name, **({declared.result: result} if declared.result else {})}
