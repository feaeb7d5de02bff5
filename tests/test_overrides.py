"""Broker configs by Kafka's names (``overrides``, ``fakebroker serve --override KEY=VALUE``):
a broker started with them reports them as Kafka does (DescribeConfigs' STATIC_BROKER_CONFIG,
and a topic config's synonyms) and behaves by them; each value is checked by Kafka's validator
and an unknown key is refused.

The tests taking ``kafka`` run on the fake and on Apache Kafka 4.4 started with the same
overrides in its server.properties (``--kafka=both``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakebroker import FakeKafka
from fakebroker.options import BROKER_CONFIGS, ClusterSettings, OptionError
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.bodies import batch, join_body, produce_body
from tests.conftest import start_served, stop_served

OVERRIDES = {"num.partitions": 3, "message.max.bytes": 2000, "log.retention.ms": 1234567,
             "min.insync.replicas": 2, "group.min.session.timeout.ms": 7000,
             "log.cleanup.policy": "compact,delete", "group.consumer.heartbeat.interval.ms": 3000,
             "group.consumer.min.heartbeat.interval.ms": 1000}
overridden = pytest.mark.fake_kafka(topics={"orders": 1}, overrides=OVERRIDES)

GROUP_OVERRIDES = {"group.consumer.session.timeout.ms": 50000,
                   "group.share.record.lock.duration.ms": 20000,
                   "group.share.delivery.count.limit": 4,
                   "group.streams.num.standby.replicas": 1,
                   "group.consumer.assignment.interval.ms": 500}
group_overridden = pytest.mark.fake_kafka(overrides=GROUP_OVERRIDES)

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE = 0, 1
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT, DYNAMIC_GROUP = 2, 3, 4, 5, 8
MESSAGE_TOO_LARGE, INVALID_SESSION_TIMEOUT, NOT_ENOUGH_REPLICAS, INVALID_REQUEST = 10, 26, 19, 42


@pytest.fixture
def client(kafka) -> Iterator[WireClient]:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as wire:
        yield wire


def described(client: WireClient, kind: int, name: str, *keys: str) -> dict[str, Any]:
    """DescribeConfigs v4 with synonyms: name -> (value, source, read only, synonyms)."""
    response = client.request("DescribeConfigs", 4, {"resources": [
        {"resource_type": kind, "resource_name": name, "configuration_keys": list(keys)}],
        "include_synonyms": True, "include_documentation": False})
    (result,) = response.results
    assert result.error_code == 0, result
    return {e.name: (e.value, e.config_source, e.read_only,
                     [(s.name, s.value, s.source) for s in e.synonyms]) for e in result.configs}


def broker_id(client: WireClient) -> str:
    (broker,) = client.request("Metadata", 12, {"topics": [],
                                               "allow_auto_topic_creation": False}).brokers
    return str(broker.node_id)


def produce_error(client: WireClient, size: int, acks: int = -1) -> int:
    body = produce_body("orders", 0, batch([b"x" * size]), acks=acks)
    (topic,) = client.request("Produce", 9, body).responses
    return topic.partition_responses[0].error_code


@overridden
def test_the_broker_reports_its_overrides_as_static_configs(client):
    assert described(client, BROKER, broker_id(client), "num.partitions", "message.max.bytes",
                     "log.retention.ms", "group.min.session.timeout.ms") == {
        "num.partitions": ("3", STATIC, True, [("num.partitions", "3", STATIC),
                                               ("num.partitions", "1", DEFAULT)]),
        "message.max.bytes": ("2000", STATIC, False, [("message.max.bytes", "2000", STATIC),
                                                      ("message.max.bytes", "1048588", DEFAULT)]),
        "log.retention.ms": ("1234567", STATIC, False, [("log.retention.ms", "1234567", STATIC),
                                                        ("log.retention.hours", "168", DEFAULT)]),
        "group.min.session.timeout.ms": ("7000", STATIC, True, [
            ("group.min.session.timeout.ms", "7000", STATIC),
            ("group.min.session.timeout.ms", "6000", DEFAULT)]),
    }


@overridden
def test_a_topic_takes_its_unset_configs_from_the_overridden_broker_synonyms(client):
    assert described(client, TOPIC, "orders", "retention.ms", "cleanup.policy",
                     "min.insync.replicas", "segment.ms") == {
        "retention.ms": ("1234567", STATIC, False, [("log.retention.ms", "1234567", STATIC),
                                                    ("log.retention.hours", "168", DEFAULT)]),
        "cleanup.policy": ("compact,delete", STATIC, False, [
            ("log.cleanup.policy", "compact,delete", STATIC),
            ("log.cleanup.policy", "delete", DEFAULT)]),
        # Kafka's format writes a static min.insync.replicas as the cluster's dynamic default
        "min.insync.replicas": ("2", DYNAMIC_DEFAULT, False, [
            ("min.insync.replicas", "2", DYNAMIC_DEFAULT), ("min.insync.replicas", "2", STATIC),
            ("min.insync.replicas", "1", DEFAULT)]),
        "segment.ms": ("604800000", DEFAULT, False, []),
    }


@overridden
def test_auto_created_topics_get_num_partitions(client):
    def partitions() -> int:
        (topic,) = client.request("Metadata", 12, {"topics": [{"name": "auto-made",
                                                               "topic_id": None}],
                                                   "allow_auto_topic_creation": True}).topics
        return len(topic.partitions)
    assert eventually(lambda: partitions() or None, "auto-made created") == 3


@overridden
def test_message_max_bytes_refuses_a_larger_batch_until_raised_at_run_time(client):
    assert produce_error(client, 100) == 0
    assert produce_error(client, 3000) == MESSAGE_TOO_LARGE
    (raised,) = client.request("IncrementalAlterConfigs", 1, {"resources": [
        {"resource_type": BROKER, "resource_name": "", "configs": [
            {"name": "message.max.bytes", "config_operation": SET, "value": "10000"}]}],
        "validate_only": False}).responses
    assert raised.error_code == 0
    try:
        eventually(lambda: described(client, TOPIC, "orders", "max.message.bytes")[
            "max.message.bytes"][0] == "10000", "message.max.bytes raised")
        assert described(client, TOPIC, "orders", "max.message.bytes")["max.message.bytes"][3] \
            == [("message.max.bytes", "10000", DYNAMIC_DEFAULT),
                ("message.max.bytes", "2000", STATIC), ("message.max.bytes", "1048588", DEFAULT)]
        assert produce_error(client, 3000) == 0
    finally:
        client.request("IncrementalAlterConfigs", 1, {"resources": [
            {"resource_type": BROKER, "resource_name": "", "configs": [
                {"name": "message.max.bytes", "config_operation": DELETE, "value": None}]}],
            "validate_only": False})


@overridden
def test_a_read_only_override_cannot_be_altered_at_run_time(client):
    (refused,) = client.request("IncrementalAlterConfigs", 1, {"resources": [
        {"resource_type": BROKER, "resource_name": "", "configs": [
            {"name": "group.min.session.timeout.ms", "config_operation": SET,
             "value": "1000"}]}], "validate_only": False}).responses
    assert (refused.error_code, refused.error_message) == (
        INVALID_REQUEST, "Cannot update these configs dynamically: [group.min.session.timeout.ms]")


@overridden
def test_group_min_session_timeout_refuses_a_shorter_session(client):
    coordinator = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0})
    assert coordinator.error_code == 0
    host = f"{coordinator.host}:{coordinator.port}"
    with WireClient(host) as group_client:
        body = join_body(member_id="m") | {"session_timeout_ms": 6500}
        assert group_client.request("JoinGroup", 3, body).error_code == INVALID_SESSION_TIMEOUT


@overridden
def test_a_consumer_group_member_is_given_the_heartbeat_interval(client):
    coordinator = client.request("FindCoordinator", 3, {"key": "g848", "key_type": 0})
    with WireClient(f"{coordinator.host}:{coordinator.port}") as group_client:
        answer = group_client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": str(uuid.uuid4()), "member_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 300_000,
            "subscribed_topic_names": ["orders"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []})
        assert (answer.error_code, answer.heartbeat_interval_ms) == (0, 3000)
        group_client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "g848", "member_id": answer.member_id, "member_epoch": -1,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": None})


@overridden
def test_acks_all_needs_no_more_in_sync_replicas_than_the_partition_has(client):
    # min.insync.replicas=2 on a topic of one replica: Kafka's effective min ISR is 1
    assert produce_error(client, 10, acks=-1) == 0


@group_overridden
def test_a_groups_config_defaults_follow_the_overridden_broker_configs(client):
    """A group config not set on the group takes the broker config backing it: an override
    (STATIC_BROKER_CONFIG, the default after it in the synonyms) or Kafka's default."""
    group = f"g-{uuid.uuid4().hex[:8]}"
    assert described(client, GROUP, group, "consumer.session.timeout.ms",
                     "share.record.lock.duration.ms", "share.delivery.count.limit",
                     "streams.num.standby.replicas", "share.session.timeout.ms",
                     "share.auto.offset.reset") == {
        "consumer.session.timeout.ms": ("50000", STATIC, False, [
            ("group.consumer.session.timeout.ms", "50000", STATIC),
            ("group.consumer.session.timeout.ms", "45000", DEFAULT)]),
        "share.record.lock.duration.ms": ("20000", STATIC, False, [
            ("group.share.record.lock.duration.ms", "20000", STATIC),
            ("group.share.record.lock.duration.ms", "30000", DEFAULT)]),
        "share.delivery.count.limit": ("4", STATIC, False, [
            ("group.share.delivery.count.limit", "4", STATIC),
            ("group.share.delivery.count.limit", "5", DEFAULT)]),
        "streams.num.standby.replicas": ("1", STATIC, False, [
            ("group.streams.num.standby.replicas", "1", STATIC),
            ("group.streams.num.standby.replicas", "0", DEFAULT)]),
        "share.session.timeout.ms": ("45000", DEFAULT, False, [
            ("group.share.session.timeout.ms", "45000", DEFAULT)]),
        "share.auto.offset.reset": ("latest", DEFAULT, False, [
            ("share.auto.offset.reset", "latest", DEFAULT)]),
    }


@group_overridden
def test_a_groups_config_comes_from_the_group_then_the_brokers_dynamic_and_static_configs(
        client):
    """Set on the group (DYNAMIC_GROUP_CONFIG) before the broker's: its own dynamic config
    (DYNAMIC_BROKER_CONFIG), the cluster's dynamic default, the static override, Kafka's
    default, each listed in the synonyms."""
    group = f"g-{uuid.uuid4().hex[:8]}"
    broker = broker_id(client)

    def alter(operation: int, value: str | None, group_value: str | None) -> None:
        answer = client.request("IncrementalAlterConfigs", 1, {"resources": [
            {"resource_type": BROKER, "resource_name": broker, "configs": [
                {"name": "group.consumer.assignment.interval.ms",
                 "config_operation": operation, "value": value}]},
            {"resource_type": BROKER, "resource_name": "", "configs": [
                {"name": "group.streams.assignment.interval.ms",
                 "config_operation": operation, "value": value}]},
            {"resource_type": GROUP, "resource_name": group, "configs": [
                {"name": "consumer.session.timeout.ms", "config_operation": operation,
                 "value": group_value}]}], "validate_only": False})
        assert [r.error_code for r in answer.responses] == [0, 0, 0]

    alter(SET, "700", "55000")
    try:
        expected = {
            "consumer.session.timeout.ms": ("55000", DYNAMIC_GROUP, False, [
                ("consumer.session.timeout.ms", "55000", DYNAMIC_GROUP),
                ("group.consumer.session.timeout.ms", "50000", STATIC),
                ("group.consumer.session.timeout.ms", "45000", DEFAULT)]),
            "consumer.assignment.interval.ms": ("700", DYNAMIC_BROKER, False, [
                ("group.consumer.assignment.interval.ms", "700", DYNAMIC_BROKER),
                ("group.consumer.assignment.interval.ms", "500", STATIC),
                ("group.consumer.assignment.interval.ms", "1000", DEFAULT)]),
            "streams.assignment.interval.ms": ("700", DYNAMIC_DEFAULT, False, [
                ("group.streams.assignment.interval.ms", "700", DYNAMIC_DEFAULT),
                ("group.streams.assignment.interval.ms", "1000", DEFAULT)]),
        }
        eventually(lambda: described(client, GROUP, group, *expected) == expected,
                   "the group and broker configs applied")
    finally:
        alter(DELETE, None, None)


@pytest.mark.fake_only("takes brokers down: the real broker has one node")
@pytest.mark.fake_kafka(brokers=3, overrides={"min.insync.replicas": 2},
                        topics={"orders": {"partitions": 1, "replication_factor": 3}})
def test_acks_all_is_refused_while_the_isr_is_below_min_insync_replicas(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as bootstrap:
        metadata = bootstrap.request("Metadata", 12, {"topics": [{"name": "orders",
                                                                  "topic_id": None}],
                                                      "allow_auto_topic_creation": False})
    leader = metadata.topics[0].partitions[0].leader_id
    address = next(f"{b.host}:{b.port}" for b in metadata.brokers if b.node_id == leader)
    others = [b.node_id for b in metadata.brokers if b.node_id != leader]
    kafka.broker_down(others[0])
    with WireClient(address) as client:
        assert produce_error(client, 10, acks=-1) == 0  # ISR 2 of 3
        kafka.broker_down(others[1])
        assert produce_error(client, 10, acks=-1) == NOT_ENOUGH_REPLICAS
        assert produce_error(client, 10, acks=1) == 0


def test_a_config_with_a_named_setting_is_that_setting():
    settings = ClusterSettings.from_kwargs({"overrides": {"num.partitions": 4,
                                                          "auto.create.topics.enable": False}})
    assert (settings.default_partitions, settings.auto_create_topics) == (4, False)
    assert settings.broker_config("num.partitions") == "4"
    with pytest.raises(OptionError, match="default_partitions and overrides num.partitions"):
        ClusterSettings.from_kwargs({"default_partitions": 2, "overrides": {"num.partitions": 4}})


@pytest.mark.parametrize(("overrides", "error"), [
    ({"no.such.config": 1}, "overrides: unknown broker config 'no.such.config'"),
    ({"num.partitions": 0}, "overrides: Invalid value 0 for configuration num.partitions: "
                            "Value must be at least 1"),
    ({"log.cleanup.policy": "delete,shred"}, "configuration log.cleanup.policy: String must "
                                             "be one of: compact, delete"),
    ({"message.max.bytes": "big"}, "message.max.bytes: Not a number of type INT"),
    ({"group.share.delivery.count.limit": 11}, "group.share.delivery.count.limit: Value must "
                                               "be no more than 10"),
    ({"group.share.record.lock.duration.ms": 10000},
     "group.share.record.lock.duration.ms must be greater than or equal to "
     "group.share.min.record.lock.duration.ms"),
])
def test_a_bad_override_is_refused_naming_the_key(overrides, error):
    with pytest.raises(OptionError, match=error.replace(".", r"\.")):
        FakeKafka(overrides=overrides)


def test_share_and_streams_group_limits_are_declared_with_kafkas_defaults():
    settings = ClusterSettings()
    assert {name: settings.broker_config(name) for name in (
        "group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
        "group.share.max.record.lock.duration.ms", "group.share.delivery.count.limit",
        "group.streams.session.timeout.ms", "group.streams.num.standby.replicas")} == {
        "group.share.record.lock.duration.ms": "30000",
        "group.share.min.record.lock.duration.ms": "15000",
        "group.share.max.record.lock.duration.ms": "60000",
        "group.share.delivery.count.limit": "5",
        "group.streams.session.timeout.ms": "45000",
        "group.streams.num.standby.replicas": "0"}
    assert not BROKER_CONFIGS["group.share.record.lock.duration.ms"].dynamic


@pytest.mark.parametrize("how", ["flags", "variable"])
def test_serve_takes_overrides_from_flags_or_the_environment(tmp_path: Path, how: str):
    overrides = ["message.max.bytes=2000", "log.cleanup.policy=compact,delete",
                 "num.partitions=2"]
    flags = [arg for item in overrides for arg in ("--override", item)]
    process, details = start_served(
        tmp_path, "--topic", "orders", *(flags if how == "flags" else ()),
        env={"FAKEBROKER_OVERRIDES": ",".join(overrides)} if how == "variable" else {})
    try:
        with WireClient(details["bootstrap_servers"]) as client:
            configs = described(client, TOPIC, "orders", "max.message.bytes", "cleanup.policy")
            assert {k: v[:2] for k, v in configs.items()} == {
                "max.message.bytes": ("2000", STATIC), "cleanup.policy": ("compact,delete", STATIC)}
            assert described(client, BROKER, "1", "num.partitions")["num.partitions"][:2] \
                == ("2", STATIC)
    finally:
        stop_served(process)


@pytest.mark.parametrize(("args", "error"), [
    (["--override", "no.such.config=1"], "unknown broker config 'no.such.config'"),
    (["--override", "num.partitions=0"], "Invalid value 0 for configuration num.partitions"),
    (["--override", "num.partitions"], "expected KEY=VALUE"),
])
def test_serve_refuses_a_bad_override_with_exit_2(args, error, capsys):
    from fakebroker.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["serve", *args], environ={})
    assert exit_info.value.code == 2
    assert error in capsys.readouterr().err


def test_serve_refuses_a_bad_override_variable_with_exit_2(capsys):
    from fakebroker.cli import main

    assert main(["serve"], environ={"FAKEBROKER_OVERRIDES": "num.partitions=2,nope=1"}) == 2
    assert capsys.readouterr().err.strip() == (
        "fakebroker: FAKEBROKER_OVERRIDES: overrides: unknown broker config 'nope' (the broker "
        "configs fakebroker knows: docs/reference/settings.md)")


def test_serve_help_lists_the_override_flag(capsys):
    from fakebroker.cli import main

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--override KEY=VALUE" in capsys.readouterr().out


def test_a_scenario_sets_overrides_in_its_cluster_table():
    from fakebroker.control.scenario import parse_scenario

    scenario = parse_scenario({"cluster": {"overrides": {"message.max.bytes": 2000}}})
    assert scenario.cluster["overrides"] == (("message.max.bytes", "2000"),)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("message.max.bytes", "-5", "Invalid value -5 for configuration message.max.bytes: Value "
                                "must be at least 0"),
    ("log.cleanup.policy", "shred", "Invalid value shred for configuration log.cleanup.policy: "
                                    "String must be one of: compact, delete"),
    ("compression.gzip.level", "12", "Invalid value 12 for configuration compression.gzip.level: "
                                     "Value must be between 1 and 9 or equal to -1"),
    ("log.segment.bytes", "10", "Invalid value 10 for configuration log.segment.bytes: Value "
                                "must be at least 1048576"),
    ("log.retention.hours", "5", "Cannot update these configs dynamically: "
                                 "[log.retention.hours]"),
    ("group.share.record.lock.duration.ms", "20000",
     "Cannot update these configs dynamically: [group.share.record.lock.duration.ms]"),
])
def test_a_dynamic_change_is_checked_by_kafkas_validator(client, key, value, message):
    (refused,) = client.request("IncrementalAlterConfigs", 1, {"resources": [
        {"resource_type": BROKER, "resource_name": "", "configs": [
            {"name": key, "config_operation": SET, "value": value}]}],
        "validate_only": True}).responses
    assert (refused.error_code, refused.error_message) == (INVALID_REQUEST, message)


@pytest.mark.fake_only("reads the fake's state")
@pytest.mark.fake_kafka(overrides={"group.consumer.assignment.interval.ms": 2000})
def test_the_cluster_reads_a_broker_config_as_it_runs_now(kafka, client):
    state = kafka.cluster.state
    assert state.broker_config("group.consumer.assignment.interval.ms") == "2000"
    (changed,) = client.request("IncrementalAlterConfigs", 1, {"resources": [
        {"resource_type": BROKER, "resource_name": "", "configs": [
            {"name": "group.consumer.assignment.interval.ms", "config_operation": SET,
             "value": "500"}]}], "validate_only": False}).responses
    assert changed.error_code == 0
    assert state.broker_config("group.consumer.assignment.interval.ms") == "500"
    assert state.broker_config("group.share.record.lock.duration.ms") == "30000"
