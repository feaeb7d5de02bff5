"""``kafka-features upgrade / downgrade / disable`` (Kafka 4.4's tool, UpdateFeatures) as a
user runs them, on both brokers (``--kafka=both``).

Every test puts Kafka 4.4's levels back before it ends: the session's real broker is shared
by the tests that follow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for
from tests.absent import needs
from tests.clients.tools import ToolResult, run_tool, tools_available

pytestmark = needs(tools_available(), "kafka-tools 4.4.0 (bash .ci/install-kafka)")

NEW_CLUSTER = {"eligible.leader.replicas.version": "1", "group.version": "1",
               "kraft.version": "1", "metadata.version": "4.4-IV2", "share.version": "2",
               "streams.version": "1", "transaction.version": "2"}


def features(kafka: Any, *args: str) -> ToolResult:
    return run_tool("kafka-features", "--bootstrap-server", kafka.bootstrap_servers, *args)


def finalized(kafka: Any) -> dict[str, str]:
    """Feature -> FinalizedVersionLevel, as ``kafka-features describe`` prints them."""
    described = features(kafka, "describe")
    assert described.status == 0, described.stderr
    levels = {}
    for line in described.stdout.splitlines():
        words = line.split()
        levels[words[1]] = words[words.index("FinalizedVersionLevel:") + 1]
    return levels


def levels_become(kafka: Any, levels: dict[str, str]) -> None:
    """Wait until describe prints ``levels`` (Kafka's broker applies an update a moment after
    its controller answers)."""
    wait_for(lambda: finalized(kafka) == levels, f"finalized levels {levels}", timeout=20)


@pytest.fixture
def restored(kafka: Any) -> Iterator[Any]:
    """``kafka``, with Kafka 4.4's levels put back afterwards (``--release-version``)."""
    yield kafka
    assert features(kafka, "upgrade", "--release-version", "4.4-IV2").status == 0
    levels_become(kafka, NEW_CLUSTER)


def test_downgrade_dry_run_downgrade_and_upgrade_of_group_version(restored) -> None:
    kafka = restored
    dry = features(kafka, "downgrade", "--feature", "group.version=0", "--dry-run")
    assert (dry.status, dry.stdout) == (0, "group.version can be downgraded to 0.\n")
    assert finalized(kafka) == NEW_CLUSTER
    done = features(kafka, "downgrade", "--feature", "group.version=0")
    assert (done.status, done.stdout) == (0, "group.version was downgraded to 0.\n")
    # Level 0 is not finalized: describe prints 0.
    levels_become(kafka, dict(NEW_CLUSTER, **{"group.version": "0"}))
    up = features(kafka, "upgrade", "--feature", "group.version=1")
    assert (up.status, up.stdout) == (0, "group.version was upgraded to 1.\n")
    levels_become(kafka, NEW_CLUSTER)


def test_disable_and_an_unsafe_downgrade_then_upgrade_two_features_at_once(restored) -> None:
    kafka = restored
    assert features(kafka, "disable", "--feature", "streams.version").stdout == \
        "streams.version was disabled.\n"
    assert features(kafka, "downgrade", "--feature", "transaction.version=1", "--unsafe"
                    ).stdout == "transaction.version was downgraded to 1.\n"
    levels_become(kafka, dict(NEW_CLUSTER, **{"streams.version": "0",
                                              "transaction.version": "1"}))
    both = features(kafka, "upgrade", "--feature", "transaction.version=2",
                    "--feature", "streams.version=1")
    assert (both.status, both.stdout) == (
        0, "streams.version was upgraded to 1.\ntransaction.version was upgraded to 2.\n")
    levels_become(kafka, NEW_CLUSTER)


@pytest.mark.parametrize("args,printed", [
    (("upgrade", "--feature", "group.version=5"),
     "Could not upgrade group.version to 5. The update failed for all features since the "
     "following feature had an error: Invalid update version 5 for feature group.version. "
     "Local controller 1 only supports versions 0-1\n"),
    (("upgrade", "--feature", "nope.version=1"),
     "Could not upgrade nope.version to 1. The update failed for all features since the "
     "following feature had an error: Invalid update version 1 for feature nope.version. "
     "Local controller 1 does not support this feature.\n"),
    (("disable", "--feature", "kraft.version"),
     "Could not disable kraft.version. The update failed for all features since the "
     "following feature had an error: Invalid update version 0 for feature kraft.version. "
     "Can't downgrade the version of this feature.\n"),
    (("downgrade", "--metadata", "4.3-IV0"),
     " `metadata` flag is deprecated and may be removed in a future release.\n"
     "Could not downgrade metadata.version to 30. The update failed for all features since "
     "the following feature had an error: Unsupported metadata.version downgrade from 33 to "
     "30. Refusing to perform the requested downgrade because it might delete metadata "
     "information.\n"),
])
def test_refused_updates_are_reported_and_change_nothing(kafka, args, printed) -> None:
    result = features(kafka, *args)
    assert (result.status, result.stdout, result.stderr) == (
        1, printed, "1 out of 1 operation(s) failed.\n")
    assert finalized(kafka) == NEW_CLUSTER
