"""UpdateFeatures (key 57) at every version Kafka 4.4 serves, and what the finalized levels
gate, on both brokers (``--kafka=both``).

Every test that changes a level puts Kafka 4.4's back before it ends (``restored``): the
session's real broker is shared by the tests that follow.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient

NEW_CLUSTER = {"group.version": 1, "kraft.version": 1, "share.version": 2,
               "metadata.version": 33, "streams.version": 1, "transaction.version": 2,
               "eligible.leader.replicas.version": 1}
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
FAILED = "The update failed for all features since the following feature had an error: "


def update(kafka: Any, version: int, *updates: tuple[str, int, int],
           validate_only: bool = False) -> Any:
    """UpdateFeatures at ``version`` with (feature, level, upgrade type) updates."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        return client.request("UpdateFeatures", version, {
            "timeout_ms": 60000, "validate_only": validate_only, "feature_updates": [
                {"feature": name, "max_version_level": level, "upgrade_type": kind,
                 "allow_downgrade": kind != UPGRADE} for name, level, kind in updates]})


def finalized(kafka: Any) -> dict[str, int]:
    """The finalized levels ApiVersions v4 lists."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        answer = client.request("ApiVersions", 4, {"client_software_name": "wire",
                                                   "client_software_version": "1.0"})
    return {f.name: f.max_version_level for f in answer.finalized_features}


def levels_become(kafka: Any, levels: dict[str, int]) -> None:
    """Wait until ApiVersions lists ``levels`` (a Kafka broker applies an update from its
    metadata log a moment after the controller answers; the fake at once)."""
    wait_for(lambda: finalized(kafka) == levels, f"finalized features {levels}", timeout=10)


@contextmanager
def restored(kafka: Any) -> Iterator[None]:
    """Put every level back to a new Kafka 4.4 cluster's on the way out."""
    try:
        yield
    finally:
        assert update(kafka, 1, *((name, level, UPGRADE) for name, level in NEW_CLUSTER.items()
                                  if name not in ("metadata.version", "kraft.version"))
                      ).error_code == 0
        levels_become(kafka, NEW_CLUSTER)


def refusal(answer: Any) -> tuple[int, str]:
    return answer.error_code, answer.error_message.removeprefix(FAILED)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_refusals_carry_kafkas_reason_for_the_first_refused_update(kafka, version) -> None:
    invalid = "Invalid update version {} for feature {}. "
    cases = [
        (("group.version", 0, UPGRADE), invalid.format(0, "group.version") + (
            "Can't downgrade the version of this feature without setting the upgrade type to "
            "either safe or unsafe downgrade.")),
        (("group.version", 2, UPGRADE),
         invalid.format(2, "group.version") + "Local controller 1 only supports versions 0-1"),
        (("nope.version", 1, UPGRADE),
         invalid.format(1, "nope.version") + "Local controller 1 does not support this feature."),
        (("group.version", -1, UPGRADE),
         invalid.format(-1, "group.version") + "A feature version cannot be less than 0."),
    ]
    if version >= 1:
        cases += [
            (("group.version", 1, 7), invalid.format(1, "group.version")
             + "The controller does not support the given upgrade type."),
            (("metadata.version", 32, SAFE_DOWNGRADE),
             "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the "
             "requested downgrade because it might delete metadata information."),
            (("metadata.version", 32, UNSAFE_DOWNGRADE),
             "Unsupported metadata.version downgrade from 33 to 32. Unsafe metadata downgrade "
             "is not supported in this version."),
            (("kraft.version", 0, SAFE_DOWNGRADE),
             invalid.format(0, "kraft.version") + "Can't downgrade the version of this feature."),
        ]
    for refused, reason in cases:
        answer = update(kafka, version, ("share.version", 2, UPGRADE), refused,
                        validate_only=True)
        assert refusal(answer) == (95, reason)  # INVALID_UPDATE_VERSION
        assert list(answer.results or []) == []
    assert finalized(kafka) == NEW_CLUSTER


@pytest.mark.parametrize("version", [1, 2])
def test_validate_only_checks_a_downgrade_and_changes_nothing(kafka, version) -> None:
    answer = update(kafka, version, ("group.version", 0, SAFE_DOWNGRADE),
                    ("transaction.version", 1, UNSAFE_DOWNGRADE), validate_only=True)
    assert (answer.error_code, answer.error_message) == (0, None)
    if version == 1:  # one result per update, "NONE" as Kafka writes it
        assert [(r.feature, r.error_code, r.error_message) for r in answer.results] == [
            ("group.version", 0, "NONE"), ("transaction.version", 0, "NONE")]
    assert finalized(kafka) == NEW_CLUSTER


def test_v0_reads_allow_downgrade_as_an_upgrade(kafka) -> None:
    answer = update(kafka, 0, ("streams.version", 0, SAFE_DOWNGRADE))
    assert refusal(answer)[0] == 95
    assert finalized(kafka) == NEW_CLUSTER


def test_a_downgrade_takes_effect_and_level_0_is_no_longer_listed(kafka) -> None:
    with restored(kafka):
        answer = update(kafka, 2, ("streams.version", 0, SAFE_DOWNGRADE),
                        ("transaction.version", 1, SAFE_DOWNGRADE))
        assert (answer.error_code, answer.error_message) == (0, None)
        levels = dict(NEW_CLUSTER, **{"transaction.version": 1})
        del levels["streams.version"]
        levels_become(kafka, levels)


def test_group_version_0_turns_the_consumer_group_protocol_off(kafka) -> None:
    with restored(kafka), WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert update(kafka, 1, ("group.version", 0, SAFE_DOWNGRADE)).error_code == 0
        levels_become(kafka, {k: v for k, v in NEW_CLUSTER.items() if k != "group.version"})
        heartbeat = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "off", "member_id": "abcdefghijklmnopqrstuv", "member_epoch": 0,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["events"],
            "topic_partitions": []})
        assert (heartbeat.error_code, heartbeat.error_message, heartbeat.member_id) == (
            35, None, None)  # UNSUPPORTED_VERSION
        described = client.request("ConsumerGroupDescribe", 1, {
            "group_ids": ["off"], "include_authorized_operations": True})
        assert [(g.group_id, g.error_code, g.authorized_operations)
                for g in described.groups] == [("off", 35, -2**31)]


def test_share_version_0_turns_share_groups_off(kafka) -> None:
    with restored(kafka), WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert update(kafka, 1, ("share.version", 0, SAFE_DOWNGRADE)).error_code == 0
        levels_become(kafka, {k: v for k, v in NEW_CLUSTER.items() if k != "share.version"})
        heartbeat = client.request("ShareGroupHeartbeat", 1, {
            "group_id": "off", "member_id": "abcdefghijklmnopqrstuv", "member_epoch": 0,
            "rack_id": None, "subscribed_topic_names": ["events"]})
        assert (heartbeat.error_code, heartbeat.error_message, heartbeat.member_id) == (
            35, None, None)  # UNSUPPORTED_VERSION


def test_streams_version_0_turns_streams_groups_off(kafka) -> None:
    with restored(kafka), WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert update(kafka, 1, ("streams.version", 0, SAFE_DOWNGRADE)).error_code == 0
        levels_become(kafka, {k: v for k, v in NEW_CLUSTER.items() if k != "streams.version"})
        heartbeat = client.request("StreamsGroupHeartbeat", 1, {
            "group_id": "off", "member_id": "m", "member_epoch": 0,
            "endpoint_information_epoch": 0, "rebalance_timeout_ms": 1000,
            "topology": {"epoch": 0, "subtopologies": []}, "active_tasks": [],
            "standby_tasks": [], "warmup_tasks": []})
        assert (heartbeat.error_code, heartbeat.error_message, heartbeat.member_id) == (
            35, None, "")  # UNSUPPORTED_VERSION
        described = client.request("StreamsGroupDescribe", 0, {"group_ids": ["off"]})
        assert [(g.group_id, g.error_code) for g in described.groups] == [("off", 35)]
