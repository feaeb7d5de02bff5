"""Cluster actions by name, with their parameters given as data (HTTP JSON, scenario TOML).

Each action checks its parameters before it changes anything and raises ``ActionError`` with
a message naming the bad one; a refused cluster operation raises ``ClusterError`` (with
Kafka's error name). Names and parameters:

=================  ==========================================================
move-leader        topic, partition (0), broker (optional)
move-coordinator   group, broker (optional)
broker-down        broker
broker-up          broker
delete-records     topic, partition (0), offset (-1: the high watermark)
truncate           topic, partition (0), offset
rebalance          group
kick-member        group, member_id
set-latency        broker, ms
release-fault      fault (a rule's id), count (optional: all held when left out)
fault              the fields of a fault rule (adds it; for scenario timelines)
=================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fakebroker.faults.rules import FaultRule
from fakebroker.runtime import FakeCluster


class ActionError(ValueError):
    """An action unknown, or given bad parameters; nothing was changed."""


_REQUIRED = object()
# name -> {parameter: (type, default)}
PARAMETERS: dict[str, dict[str, tuple[type, Any]]] = {
    "move-leader": {"topic": (str, _REQUIRED), "partition": (int, 0), "broker": (int, None)},
    "move-coordinator": {"group": (str, _REQUIRED), "broker": (int, None)},
    "broker-down": {"broker": (int, _REQUIRED)},
    "broker-up": {"broker": (int, _REQUIRED)},
    "delete-records": {"topic": (str, _REQUIRED), "partition": (int, 0), "offset": (int, -1)},
    "truncate": {"topic": (str, _REQUIRED), "partition": (int, 0), "offset": (int, _REQUIRED)},
    "rebalance": {"group": (str, _REQUIRED)},
    "kick-member": {"group": (str, _REQUIRED), "member_id": (str, _REQUIRED)},
    "set-latency": {"broker": (int, _REQUIRED), "ms": (int, _REQUIRED)},
    "release-fault": {"fault": (int, _REQUIRED), "count": (int, None)},
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
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ActionError(f"{name}: {parameter} must be {kind.__name__}, got {value!r}")
        values[parameter] = value
    return values


async def run_action(cluster: FakeCluster, name: str, given: Mapping[str, Any]
                     ) -> dict[str, Any]:
    """Run one action on the cluster's trio thread; returns what it did, as data."""
    p = check_parameters(name, given)
    calls: dict[str, Callable[[], Any]] = {
        "move-leader": lambda: {"leader": cluster.move_leader(
            p["topic"], p["partition"], p["broker"])},
        "move-coordinator": lambda: {"coordinator": cluster.move_coordinator(
            p["group"], p["broker"])},
        "broker-down": lambda: cluster.broker_down(p["broker"]),
        "broker-up": lambda: cluster.broker_up(p["broker"]),
        "delete-records": lambda: {"log_start_offset": cluster.delete_records(
            p["topic"], p["partition"], p["offset"])},
        "truncate": lambda: {"log_end_offset": cluster.truncate(
            p["topic"], p["partition"], p["offset"])},
        "rebalance": lambda: cluster.rebalance(p["group"]),
        "kick-member": lambda: cluster.kick_member(p["group"], p["member_id"]),
        "set-latency": lambda: cluster.set_latency(p["broker"], p["ms"]),
        "release-fault": lambda: {"fault": p["fault"], "released": _rule(
            cluster, p["fault"]).release(p["count"])},
        "fault": lambda: cluster.faults.add_data(p).describe(),
    }
    result = calls[name]()
    if isinstance(result, Awaitable):
        result = await result
    return {"action": name, **(result or {})}


def _rule(cluster: FakeCluster, fault_id: int) -> FaultRule:
    try:
        return cluster.faults.get(fault_id)
    except KeyError:
        raise ActionError(f"no fault {fault_id}") from None
