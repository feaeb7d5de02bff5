"""Scenario files: ``fakebroker serve --scenario FILE.toml`` declares a whole test setting.

::

    [cluster]            # any cluster setting (fakebroker.options): brokers, seed, ...
    brokers = 3
    seed = 7

    [topics]             # name = partitions, or a table of partitions/replication_factor/configs
    orders = 3
    payments = { partitions = 2, replication_factor = 2 }

    [[faults]]           # fault rules, active from the start (fields as kafka.faults.add)
    api = "Fetch"
    topic = "orders"
    partition = 0
    error = "NOT_LEADER_OR_FOLLOWER"
    count = 2

    [[faults]]           # rule 2: Produce requests are held ...
    api = "Produce"
    hold = true
    count = 3

    [[timeline]]         # actions at a time after the cluster is ready
    at_ms = 2000
    action = "move-leader"
    topic = "orders"
    partition = 0

    [[timeline]]         # ... until 3 s after ready
    at_ms = 3000
    action = "release-fault"
    fault = 2

Rules are numbered from 1 as they are added: the ``[[faults]]`` in file order, then the
timeline's ``fault`` actions in time order; ``release-fault`` names a hold rule by number and
lets go of what it holds at that time.

Guarantees: the whole file is checked before anything starts, with the command line's flags
that override it: unknown tables or fields, bad values, unknown actions or fault fields, a
topic the cluster cannot create, a broker, topic or partition the cluster will not have (in a
fault or an action), a ``release-fault`` of a rule that is not a hold rule added before it, and
the timeline's changes of brokers and leaders played in time order on a scratch copy of the
cluster (``broker-down`` of a broker already down, ``move-leader`` to a broker down then) are
errors naming the file and the place. Timeline actions run in ``at_ms`` order on the
cluster's trio thread; an action refused at its time for what only the run can tell (a group
that does not exist, an offset beyond the end) is logged and the timeline goes on.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from fakebroker.control.actions import ACTIONS, ActionError, check_parameters, run_action
from fakebroker.faults.rules import FaultError, FaultRule
from fakebroker.options import CLUSTER_SETTINGS, OptionError
from fakebroker.protocol.errors import ClusterError
from fakebroker.runtime import FakeCluster, check_cluster
from fakebroker.state import failures
from fakebroker.state.cluster import Cluster

log = logging.getLogger("fakebroker.scenario")

TOPIC_FIELDS = {"partitions", "replication_factor", "configs"}


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names the file and the place."""


@dataclass
class Step:
    at_ms: int
    action: str
    parameters: dict[str, Any]


@dataclass
class Scenario:
    cluster: dict[str, Any] = field(default_factory=dict)
    topics: dict[str, Any] = field(default_factory=dict)
    faults: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[Step] = field(default_factory=list)


def load_scenario(path: Path, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Read and check a scenario file (with ``overrides``, as ``parse_scenario``);
    ``ScenarioError`` says what is wrong and where."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    return parse_scenario(data, str(path), overrides)


def parse_scenario(data: dict[str, Any], where: str = "scenario",
                   overrides: Mapping[str, Any] | None = None) -> Scenario:
    """A checked scenario. ``overrides``: the cluster settings and ``topics`` given beside it
    (``fakebroker serve`` flags), which win over the file's and are checked with it."""
    unknown = set(data) - {"cluster", "topics", "faults", "timeline"}
    if unknown:
        raise ScenarioError(f"{where}: unknown table(s) {', '.join(sorted(unknown))}")
    scenario = Scenario()
    for name, value in data.get("cluster", {}).items():
        setting = CLUSTER_SETTINGS.get(name)
        if setting is None:
            raise ScenarioError(f"{where}: [cluster] has no option {name!r}; options: "
                                f"{', '.join(CLUSTER_SETTINGS)}")
        try:
            scenario.cluster[name] = setting.checked(value)
        except OptionError as exc:
            raise ScenarioError(f"{where}: [cluster] {exc}") from None
    for name, spec in data.get("topics", {}).items():
        if not isinstance(spec, int | dict) or isinstance(spec, bool):
            raise ScenarioError(f"{where}: [topics] {name} must be a partition count or a "
                                "table")
        extra = set(spec) - TOPIC_FIELDS if isinstance(spec, dict) else set()
        if extra:
            raise ScenarioError(f"{where}: [topics] {name} has unknown field(s) "
                                f"{', '.join(sorted(extra))}; fields: "
                                f"{', '.join(sorted(TOPIC_FIELDS))}")
        scenario.topics[name] = spec
    for index, fault in enumerate(data.get("faults", []), 1):
        try:
            FaultRule.from_dict(0, fault)
        except FaultError as exc:
            raise ScenarioError(f"{where}: [[faults]] #{index}: {exc}") from None
        scenario.faults.append(dict(fault))
    for index, raw in enumerate(data.get("timeline", []), 1):
        step = dict(raw)
        at_ms, action = step.pop("at_ms", None), step.pop("action", None)
        if not isinstance(at_ms, int) or at_ms < 0:
            raise ScenarioError(f"{where}: [[timeline]] #{index}: at_ms must be an integer "
                                ">= 0")
        if action not in ACTIONS:
            raise ScenarioError(f"{where}: [[timeline]] #{index}: action must be one of "
                                f"{', '.join(ACTIONS)}, got {action!r}")
        try:
            if action == "fault":
                FaultRule.from_dict(0, step)
            else:
                check_parameters(action, step)
        except (FaultError, ActionError) as exc:
            raise ScenarioError(f"{where}: [[timeline]] #{index}: {exc}") from None
        scenario.timeline.append(Step(at_ms, action, step))
    _check_releases(scenario, where)
    _check_against_cluster(scenario, where, overrides or {})
    scenario.timeline.sort(key=lambda s: s.at_ms)
    return scenario


def _check_against_cluster(scenario: Scenario, where: str, overrides: Mapping[str, Any]) -> None:
    """The cluster the scenario starts (with ``overrides``) can be made, and every broker,
    topic and partition its faults and actions name is one of it; the timeline's changes of
    brokers and leaders, played in time order on a scratch copy, are each accepted."""
    options = {**scenario.cluster, **overrides, "topics": {**scenario.topics,
                                                           **overrides.get("topics", {})}}
    topics = options.pop("topics")
    try:
        scratch = check_cluster(options.pop("brokers", 1), topics, None, options)
    except (ClusterError, TypeError) as exc:
        raise ScenarioError(f"{where}: [topics] {_why(exc)}") from None
    except OptionError as exc:
        raise ScenarioError(f"{where}: [cluster] {exc}") from None
    for index, fault in enumerate(scenario.faults, 1):
        try:
            _check_names(scratch, fault)
        except ClusterError as exc:
            raise ScenarioError(f"{where}: [[faults]] #{index}: {_why(exc)}") from None
    for index, step in sorted(enumerate(scenario.timeline, 1), key=lambda p: p[1].at_ms):
        try:
            _play(scratch, step)
        except ClusterError as exc:
            raise ScenarioError(f"{where}: [[timeline]] #{index}: {step.action}: "
                                f"{_why(exc)}") from None


def _check_names(cluster: Cluster, fields: Mapping[str, Any]) -> None:
    """The ``broker`` named is one of the cluster's, and so is the ``partition`` of a
    ``topic`` it was given (another topic may come from a client)."""
    broker, topic, partition = (fields.get(n) for n in ("broker", "topic", "partition"))
    if broker is not None and broker not in cluster.brokers:
        raise ClusterError("BROKER_NOT_AVAILABLE", f"no broker {broker} (the cluster has "
                                                   f"brokers 1 to {len(cluster.brokers)})")
    if topic in cluster.topics and partition is not None:
        failures.partition_of(cluster, topic, partition)


def _play(cluster: Cluster, step: Step) -> None:
    """Check one timeline step against the scratch cluster, changing it as the step would
    where the step changes brokers or leaders."""
    if step.action == "fault":
        _check_names(cluster, step.parameters)
        return
    parameters = check_parameters(step.action, step.parameters)
    _check_names(cluster, parameters)
    if step.action == "broker-down":
        failures.broker_down(cluster, parameters["broker"])
    elif step.action == "broker-up":
        failures.broker_up(cluster, parameters["broker"])
    elif step.action == "move-leader" and parameters["topic"] in cluster.topics:
        failures.move_leader(cluster, parameters["topic"], parameters["partition"],
                             parameters["broker"])
    elif step.action == "move-coordinator":
        failures.move_coordinator(cluster, parameters["group"], parameters["broker"])


def _why(exc: Exception) -> str:
    """A refusal's text, with Kafka's error name when it has one."""
    error = getattr(exc, "error", None)
    return f"{exc} ({error})" if error else str(exc)


def _check_releases(scenario: Scenario, where: str) -> None:
    """Every ``release-fault`` step names a hold rule added before it runs."""
    holds = {number for number, fault in enumerate(scenario.faults, 1) if fault.get("hold")}
    added = len(scenario.faults)
    for index, step in sorted(enumerate(scenario.timeline, 1), key=lambda p: p[1].at_ms):
        if step.action == "fault":
            added += 1
            if step.parameters.get("hold"):
                holds.add(added)
        elif step.action == "release-fault" and step.parameters["fault"] not in holds:
            raise ScenarioError(
                f"{where}: [[timeline]] #{index}: release-fault: rule {step.parameters['fault']}"
                " is not a hold rule added before it (rules are numbered from 1: [[faults]] "
                "in file order, then timeline faults in time order)")


def install_faults(cluster: FakeCluster, scenario: Scenario) -> None:
    for fault in scenario.faults:
        cluster.faults.add_data(fault)


async def run_timeline(cluster: FakeCluster, scenario: Scenario) -> None:
    """Run the timeline's steps at their times (from now); returns after the last one."""
    start = trio.current_time()
    for step in scenario.timeline:
        await trio.sleep_until(start + step.at_ms / 1000)
        try:
            result = await run_action(cluster, step.action, step.parameters)
            log.info("scenario at %d ms: %s", step.at_ms, result)
        except (ClusterError, FaultError, ActionError) as exc:
            log.error("scenario at %d ms: %s %s refused: %s", step.at_ms, step.action,
                      step.parameters, exc)
