"""Group configs (IncrementalAlterConfigs on the GROUP resource) as Kafka 4.4 checks and
applies them, on the fake and on Apache Kafka (``--kafka=both``): every interval and timeout
a group may set lies within the broker's limits for it (``group.consumer.min/max.*``,
``group.share.*``, ``group.streams.*``), and a KIP-848 consumer group's members are given the
heartbeat interval set on their group. Share and streams groups' own configs are specified
beside their protocols (tests/test_share_groups.py, tests/test_wire_streams_groups.py)."""

from __future__ import annotations

import itertools
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import coordinator

pytestmark = [pytest.mark.fake_kafka(topics={"orders": 2}), pytest.mark.timeout(120)]
GROUP_RESOURCE = 32
DEFAULT_CONFIG, DYNAMIC_GROUP_CONFIG = 5, 8  # DescribeConfigs' config sources
_groups = itertools.count()


def alter(kafka, group: str, **configs: str) -> list[tuple[int, str | None]]:
    """IncrementalAlterConfigs SET of ``configs`` on ``group``: each resource's error code and
    message (names with dots: pass ``{"a.b": v}``)."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": group,
            "configs": [{"name": k, "config_operation": 0, "value": v}
                        for k, v in configs.items()]}], "validate_only": False})
    return [(r.error_code, r.error_message) for r in response.responses]


@pytest.mark.parametrize("name, value, limits", [
    ("consumer.heartbeat.interval.ms", "1000", "5000 to 15000"),
    ("consumer.session.timeout.ms", "90000", "45000 to 60000"),
    ("consumer.assignment.interval.ms", "20000", "0 to 15000"),
    ("share.assignment.interval.ms", "20000", "0 to 15000"),
    ("streams.assignment.interval.ms", "20000", "0 to 15000"),
])
def test_a_groups_interval_outside_the_brokers_limits_is_invalid_config(kafka, name, value,
                                                                         limits) -> None:
    assert alter(kafka, f"limits-{next(_groups)}", **{name: value}) == [(
        ErrorCode.INVALID_CONFIG, f"{name} must be in the range {limits} inclusive.")]


def test_a_consumer_group_member_is_given_the_heartbeat_interval_set_on_its_group(kafka):
    group = f"paced-{next(_groups)}"
    assert alter(kafka, group, **{"consumer.heartbeat.interval.ms": "6000"}) == [(0, None)]
    with WireClient(coordinator(kafka, group)) as client:
        answer = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": group, "member_id": str(uuid.uuid4()), "member_epoch": 0,
            "rebalance_timeout_ms": 300_000, "subscribed_topic_names": ["orders"],
            "topic_partitions": []})
    assert (answer.error_code, answer.heartbeat_interval_ms) == (0, 6000)


@pytest.mark.parametrize("name, value, answer", [
    ("streams.num.warmup.replicas", "1", None),
    ("streams.num.warmup.replicas", "21",
     "streams.num.warmup.replicas must be less than or equal to 20"),
    ("streams.task.offset.interval.ms", "20000", None),
    ("streams.task.offset.interval.ms", "1000",
     "streams.task.offset.interval.ms must be greater than or equal to 15000"),
    ("streams.acceptable.recovery.lag", "5", None),
    ("streams.acceptable.recovery.lag", "-1", "Invalid value -1 for configuration "
     "streams.acceptable.recovery.lag: Value must be at least 0"),
    ("consumer.assignor.offload.enable", "false", None),
])
def test_kafkas_internal_group_configs_are_taken_within_their_limits(kafka, name, value,
                                                                     answer) -> None:
    group = f"internal-{next(_groups)}"
    assert alter(kafka, group, **{name: value}) == [
        (0, None) if answer is None else (ErrorCode.INVALID_CONFIG, answer)]


def test_an_internal_group_config_is_described_once_set_and_first(kafka):
    group = f"internal-{next(_groups)}"

    def described() -> list[tuple[str, str, int]]:
        with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
            (result,) = client.request("DescribeConfigs", 4, {"resources": [{
                "resource_type": GROUP_RESOURCE, "resource_name": group,
                "configuration_keys": None}], "include_synonyms": True,
                "include_documentation": False}).results
        return [(c.name, c.value, c.config_source) for c in result.configs]

    assert "streams.num.warmup.replicas" not in {name for name, _, _ in described()}
    assert alter(kafka, group, **{"streams.num.warmup.replicas": "1",
                                  "consumer.assignor.offload.enable": "false"}) == [(0, None)]
    assert described()[:3] == [("streams.num.warmup.replicas", "1", DYNAMIC_GROUP_CONFIG),
                               ("consumer.assignor.offload.enable", "false",
                                DYNAMIC_GROUP_CONFIG),
                               ("consumer.session.timeout.ms", "45000", DEFAULT_CONFIG)]


@pytest.mark.fake_kafka(topics={"orders": 2},
                        overrides={"group.consumer.min.session.timeout.ms": "1000"})
def test_a_groups_session_timeout_must_exceed_its_heartbeat_interval(kafka):
    """With the broker's least session timeout lowered, a group's session timeout of 5 s is
    within limits but not above the broker's heartbeat interval (5 s); set above one set on
    the group too, it is taken."""
    group = f"sessions-{next(_groups)}"
    assert alter(kafka, group, **{"consumer.session.timeout.ms": "5000"}) == [(
        ErrorCode.INVALID_CONFIG,
        "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")]
    assert alter(kafka, group, **{"consumer.session.timeout.ms": "6000"}) == [(0, None)]
    assert alter(kafka, group, **{"consumer.heartbeat.interval.ms": "6000"}) == [(
        ErrorCode.INVALID_CONFIG,
        "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")]
