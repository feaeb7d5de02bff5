"""IncrementalAlterConfigs (key 44) and AlterConfigs (key 33) as Apache Kafka 4.4 answers
them: every version, SET/DELETE/APPEND/SUBTRACT, validate_only, Kafka's refusals and their
messages, and the effect (DescribeConfigs' sources and synonyms, produce limits at once).

Each test runs on the fake and on Apache Kafka (``--kafka=both``). The real broker applies a
change a moment after the controller answers, so what it describes afterwards is awaited;
broker configs changed on the shared real broker are deleted again before the test ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_wire_versions import versions_of

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = range(4)
MESSAGE_TOO_LARGE = 10
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 5


@pytest.fixture
def client(kafka) -> Iterator[WireClient]:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as wire:
        yield wire


def node_id(client: WireClient) -> int:
    """The id of the broker ``client`` speaks to."""
    (broker,) = client.request("Metadata", 12, {"topics": [],
                                               "allow_auto_topic_creation": False}).brokers
    return broker.node_id


def incremental(client: WireClient, *resources: tuple[int, str, list[tuple[str, int, Any]]],
                validate_only: bool = False, version: int = 1) -> list[tuple[int, Any]]:
    """IncrementalAlterConfigs: each resource's (error code, error message)."""
    response = client.request("IncrementalAlterConfigs", version, {
        "resources": [{"resource_type": kind, "resource_name": name, "configs": [
            {"name": k, "config_operation": op, "value": v} for k, op, v in ops]}
            for kind, name, ops in resources], "validate_only": validate_only})
    return [(r.error_code, r.error_message) for r in response.responses]


def legacy(client: WireClient, kind: int, name: str, configs: dict[str, str | None],
           validate_only: bool = False, version: int = 2) -> tuple[int, Any]:
    """AlterConfigs of one resource: its (error code, error message)."""
    response = client.request("AlterConfigs", version, {
        "resources": [{"resource_type": kind, "resource_name": name, "configs": [
            {"name": k, "value": v} for k, v in configs.items()]}],
        "validate_only": validate_only})
    (answer,) = response.responses
    return answer.error_code, answer.error_message


def described(client: WireClient, kind: int, name: str, key: str) -> Any:
    """DescribeConfigs v4 of one config, with synonyms."""
    response = client.request("DescribeConfigs", 4, {"resources": [
        {"resource_type": kind, "resource_name": name, "configuration_keys": [key]}],
        "include_synonyms": True, "include_documentation": False})
    (result,) = response.results
    assert result.error_code == 0, result
    (entry,) = result.configs
    return entry


def becomes(client: WireClient, kind: int, name: str, key: str, value: str | None,
            source: int) -> Any:
    """The described entry once it shows ``value`` from ``source``."""
    return eventually(lambda: (e := described(client, kind, name, key)).value == value
                      and e.config_source == source and e, f"{name} {key}={value}")


def test_every_version_sets_and_deletes_a_topic_config(kafka, client):
    for version in versions_of(kafka, "IncrementalAlterConfigs"):
        value = str(1000 + version)
        assert incremental(client, (TOPIC, "orders", [("retention.ms", SET, value)]),
                           version=version) == [(0, None)]
        becomes(client, TOPIC, "orders", "retention.ms", value, TOPIC_CONFIG)
    for version in versions_of(kafka, "AlterConfigs"):
        value = str(2000 + version)
        assert legacy(client, TOPIC, "orders", {"retention.ms": value},
                      version=version) == (0, None)
        becomes(client, TOPIC, "orders", "retention.ms", value, TOPIC_CONFIG)
    assert incremental(client, (TOPIC, "orders", [("retention.ms", DELETE, None)])) == [(0, None)]
    becomes(client, TOPIC, "orders", "retention.ms", "604800000", DEFAULT_CONFIG)


def test_append_and_subtract_change_a_list_config_from_its_default(client):
    assert incremental(client, (TOPIC, "orders", [("cleanup.policy", APPEND, "compact")])) \
        == [(0, None)]
    becomes(client, TOPIC, "orders", "cleanup.policy", "delete,compact", TOPIC_CONFIG)
    assert incremental(client, (TOPIC, "orders", [("cleanup.policy", SUBTRACT, "delete")])) \
        == [(0, None)]
    becomes(client, TOPIC, "orders", "cleanup.policy", "compact", TOPIC_CONFIG)
    assert incremental(client, (TOPIC, "orders", [("retention.ms", APPEND, "5")])) == [
        (40, "Can't APPEND to key retention.ms because its type is not LIST.")]


def test_validate_only_checks_and_changes_nothing(client):
    assert incremental(client, (TOPIC, "orders", [("retention.ms", SET, "1234")]),
                       validate_only=True) == [(0, None)]
    assert legacy(client, TOPIC, "orders", {"retention.ms": "1234"}, validate_only=True) \
        == (0, None)
    assert incremental(client, (TOPIC, "orders", [("retention.ms", SET, "soon")]),
                       validate_only=True) == [
        (40, "Invalid value soon for configuration retention.ms: Not a number of type LONG")]
    assert described(client, TOPIC, "orders", "retention.ms").config_source == DEFAULT_CONFIG


@pytest.mark.parametrize(("kind", "name", "ops", "error"), [
    (TOPIC, "orders", [("no.such.config", SET, "1")],
     (40, "Unknown topic config name: no.such.config")),
    (TOPIC, "missing", [("retention.ms", SET, "1")],
     (3, "The topic 'missing' does not exist.")),
    (TOPIC, "orders", [("max.message.bytes", SET, "big")],
     (40, "Invalid value big for configuration max.message.bytes: Not a number of type INT")),
    (TOPIC, "orders", [("message.timestamp.type", SET, "Now")],
     (40, "Invalid value Now for configuration message.timestamp.type: String must be one "
          "of: CreateTime, LogAppendTime")),
    (TOPIC, "orders", [("retention.ms", SET, None)],
     (42, "Null value not supported for : retention.ms")),
    (TOPIC, "orders", [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)],
     (42, "Error due to duplicate config keys")),
    (TOPIC, "", [("retention.ms", SET, "1")],
     (42, "Default topic resources are not allowed.")),
    (BROKER, "me", [("message.max.bytes", SET, "2000000")],
     (42, "Node id must be an integer, but it is: me")),
    (BROKER, "", [("auto.create.topics.enable", SET, "false")],
     (42, "Cannot update these configs dynamically: [auto.create.topics.enable]")),
    (BROKER, "", [("message.max.bytes", SET, "big")],
     (42, "Invalid value big for configuration message.max.bytes: Not a number of type INT")),
    (BROKER, "", [("min.insync.replicas", DELETE, None)],
     (40, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")),
    (BROKER, "", [("message.max.bytes", 7, "1")], (42, "Unknown operations type 7")),
    (TOPIC, "orders", [("retention.ms", 7, "1")], (-1, None)),  # the controller fails
])
def test_kafkas_refusals_and_their_messages(client, kind, name, ops, error):
    assert incremental(client, (kind, name, ops)) == [error]
    assert incremental(client, (kind, name, ops), validate_only=True) == [error]
    assert described(client, TOPIC, "orders", "retention.ms").config_source == DEFAULT_CONFIG


@pytest.mark.parametrize(("name", "value", "complaint"), [
    ("cleanup.policy", "foo", "String must be one of: compact, delete"),
    ("compression.type", "foo",
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("min.insync.replicas", "0", "Value must be at least 1"),
    ("retention.ms", "-5", "Value must be at least -1"),
    ("max.message.bytes", "-1", "Value must be at least 0"),
    ("max.message.bytes", "99999999999", "Not a number of type INT"),
    ("min.cleanable.dirty.ratio", "2", "Value must be no more than 1"),
    ("segment.bytes", "10", "Value must be at least 1048576"),
    ("segment.ms", "0", "Value must be at least 1"),
    ("message.timestamp.before.max.ms", "-1", "Value must be at least 0"),
    ("compression.gzip.level", "42", "Value must be between 1 and 9 or equal to -1"),
    ("preallocate", "yes", "Expected value to be either true or false"),
    ("retention.bytes", "1.5", "Not a number of type LONG"),
    ("retention.ms", "1_0", "Not a number of type LONG"),
    ("min.cleanable.dirty.ratio", "0_5", "Not a number of type DOUBLE"),
])
def test_a_topic_config_value_kafka_does_not_allow_is_refused(client, name, value, complaint):
    shown = "2.0" if value == "2" else value  # Java prints the double it parsed
    assert incremental(client, (TOPIC, "orders", [(name, SET, value)]), validate_only=True) \
        == [(40, f"Invalid value {shown} for configuration {name}: {complaint}")]


def test_an_empty_cleanup_policy_is_allowed(client):
    assert incremental(client, (TOPIC, "orders", [("cleanup.policy", SET, "")]),
                       validate_only=True) == [(0, None)]


def test_a_broker_other_than_this_one_and_a_resource_named_twice_are_refused(client):
    me = node_id(client)
    assert incremental(client, (BROKER, "9999", [("message.max.bytes", SET, "2000000")])) == [
        (42, f"Unexpected broker id, expected {me}, but received 9999")]
    twice = (TOPIC, "orders", [("retention.ms", SET, "1")])
    assert incremental(client, twice, twice) == [
        (42, "Each resource must appear at most once.")] * 2
    assert legacy(client, TOPIC, "orders", {"retention.ms": None}) == (
        42, "Null value not supported for : retention.ms")
    assert legacy(client, BROKER, "", {"message.max.bytes": "2000000"}, validate_only=True) == (
        40, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")


def test_deleting_a_config_never_set_is_no_error(client):
    assert incremental(client, (TOPIC, "orders", [("no.such.config", DELETE, None)])) \
        == [(0, None)]


def test_alter_configs_replaces_the_whole_dynamic_set(client):
    assert incremental(client, (TOPIC, "orders", [("retention.ms", SET, "1000"),
                                                  ("segment.ms", SET, "2000")])) == [(0, None)]
    becomes(client, TOPIC, "orders", "segment.ms", "2000", TOPIC_CONFIG)
    assert legacy(client, TOPIC, "orders", {"retention.ms": "3000"}) == (0, None)
    becomes(client, TOPIC, "orders", "retention.ms", "3000", TOPIC_CONFIG)
    becomes(client, TOPIC, "orders", "segment.ms", "604800000", DEFAULT_CONFIG)


@pytest.fixture
def broker_configs(client) -> Iterator[None]:
    """Broker configs the test changes are deleted again (the real broker is shared)."""
    yield
    me = str(node_id(client))
    changed = [("message.max.bytes", DELETE, None), ("unknown.broker.config", DELETE, None)]
    assert incremental(client, (BROKER, me, changed), (BROKER, "", changed)) == [(0, None)] * 2


def test_a_broker_config_kafka_does_not_know_is_kept_and_described_hidden(
        client, broker_configs):
    assert incremental(client, (BROKER, "", [("unknown.broker.config", SET, "1")])) \
        == [(0, None)]
    entry = eventually(lambda: next((e for e in client.request("DescribeConfigs", 4, {
        "resources": [{"resource_type": BROKER, "resource_name": "",
                       "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False}).results[0].configs
        if e.name == "unknown.broker.config"), None), "unknown.broker.config described")
    assert (entry.value, entry.config_source, entry.config_type, entry.read_only,
            entry.is_sensitive) == (None, DYNAMIC_DEFAULT_BROKER_CONFIG, 0, True, True)


def test_broker_and_cluster_default_configs_are_described_with_their_synonyms(
        client, broker_configs):
    me = str(node_id(client))
    assert incremental(client, (BROKER, "", [("message.max.bytes", SET, "2000000")])) \
        == [(0, None)]
    entry = becomes(client, TOPIC, "orders", "max.message.bytes", "2000000",
                    DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("message.max.bytes", "2000000", DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("message.max.bytes", "1048588", DEFAULT_CONFIG)]
    becomes(client, BROKER, "", "message.max.bytes", "2000000", DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert incremental(client, (BROKER, me, [("message.max.bytes", SET, "3000000")])) \
        == [(0, None)]
    entry = becomes(client, BROKER, me, "message.max.bytes", "3000000", DYNAMIC_BROKER_CONFIG)
    assert [(s.value, s.source) for s in entry.synonyms] == [
        ("3000000", DYNAMIC_BROKER_CONFIG), ("2000000", DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("1048588", DEFAULT_CONFIG)]


def produced(client: WireClient, size: int) -> int:
    """Produce one record of ``size`` bytes to orders-0: the partition's error code."""
    response = client.request("Produce", 9, produce_body("orders", 0, batch([b"x" * size])))
    return response.responses[0].partition_responses[0].error_code


def test_broker_and_cluster_default_message_max_bytes_limit_what_topics_take(
        client, broker_configs):
    me = str(node_id(client))
    assert produced(client, 5000) == 0
    assert incremental(client, (BROKER, "", [("message.max.bytes", SET, "3000")])) \
        == [(0, None)]
    eventually(lambda: produced(client, 5000) == MESSAGE_TOO_LARGE, "cluster default limit")
    assert produced(client, 1000) == 0
    assert incremental(client, (BROKER, me, [("message.max.bytes", SET, "10000")])) \
        == [(0, None)]
    eventually(lambda: produced(client, 5000) == 0, "the broker's own limit")
    assert incremental(client, (TOPIC, "orders", [("max.message.bytes", SET, "2000")])) \
        == [(0, None)]
    eventually(lambda: produced(client, 5000) == MESSAGE_TOO_LARGE, "the topic's own limit")


@pytest.mark.parametrize("value", ["2000\0\0\0", " +2000\x01", "\x1f2000"])
def test_a_broker_config_value_is_kept_as_given_and_read_trimmed_of_control_characters(
        client, broker_configs, value):
    # the broker reads String.trim()'s value; DescribeConfigs shows the value as it was set,
    # the topic's derived config the number the broker read
    assert incremental(client, (BROKER, "", [("message.max.bytes", SET, value)])) \
        == [(0, None)]
    entry = becomes(client, TOPIC, "orders", "max.message.bytes", "2000",
                    DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.name, s.value) for s in entry.synonyms][0] == ("message.max.bytes", value)
    becomes(client, BROKER, "", "message.max.bytes", value, DYNAMIC_DEFAULT_BROKER_CONFIG)
    eventually(lambda: produced(client, 2500) == MESSAGE_TOO_LARGE, "the trimmed limit")
    assert produced(client, 1000) == 0


@pytest.mark.parametrize("value", ["2000\xa0", "\u30002000", "2_000", "2000 1"])
def test_a_broker_config_number_with_other_spaces_or_underscores_is_refused(client, value):
    assert incremental(client, (BROKER, "", [("message.max.bytes", SET, value)])) == [
        (42, f"Invalid value {value} for configuration message.max.bytes: "
             "Not a number of type INT")]



@pytest.mark.parametrize(("name", "value"), [
    ("retention.ms", "10\t\x13"), ("retention.ms", " +10 "), ("preallocate", " true\x01"),
    ("message.timestamp.type", " CreateTime\t"), ("min.cleanable.dirty.ratio", " 0.5\x05"),
    ("cleanup.policy", " delete , compact\x02"), ("cleanup.policy", " "),
])
def test_a_topic_config_value_is_read_trimmed_of_spaces_and_control_characters(
        client, name, value):
    # ConfigDef.parseType reads String.trim()'s value: every character up to U+0020 goes
    assert incremental(client, (TOPIC, "orders", [(name, SET, value)]), validate_only=True) \
        == [(0, None)]
    assert legacy(client, TOPIC, "orders", {name: value}, validate_only=True) == (0, None)


@pytest.mark.parametrize("ops", [
    [("cleanup.policy", SET, "delete,")], [("cleanup.policy", SET, ",")],
    [("cleanup.policy", SET, "delete,,compact")], [("cleanup.policy", SET, "compact,,")],
    [("cleanup.policy", APPEND, "")],
])
def test_a_cleanup_policy_with_an_empty_item_is_refused(client, ops):
    assert incremental(client, (TOPIC, "orders", ops), validate_only=True) == [
        (40, "Configuration 'cleanup.policy' values must not be empty.")]


def test_a_cleanup_policy_may_name_an_item_twice(client):
    assert incremental(client, (TOPIC, "orders", [("cleanup.policy", SET, "delete,delete")]),
                       validate_only=True) == [(0, None)]




@pytest.mark.parametrize(("name", "value", "read"), [
    ("flush.ms", "\x015000\t", "5000"), ("flush.ms", "+5000", "5000"),
    ("preallocate", " TRUE", "true"), ("min.cleanable.dirty.ratio", "1", "1.0"),
    ("min.cleanable.dirty.ratio", " 0.50", "0.5"),
    ("min.cleanable.dirty.ratio", "0.00012", "1.2E-4"),
    ("cleanup.policy", " delete , compact\x02", "delete,compact"), ("cleanup.policy", " ", ""),
    ("message.timestamp.type", " LogAppendTime\t", "LogAppendTime"),
])
def test_a_topic_config_is_described_as_kafka_read_it(client, name, value, read):
    assert incremental(client, (TOPIC, "orders", [(name, SET, value)])) == [(0, None)]
    becomes(client, TOPIC, "orders", name, read, TOPIC_CONFIG)
    assert incremental(client, (TOPIC, "orders", [(name, DELETE, None)])) == [(0, None)]


@pytest.mark.parametrize(("kind", "name"), [(TOPIC, "orders"), (BROKER, "me"), (GROUP, "g")])
def test_an_empty_list_of_config_keys_describes_every_config_as_null_does(client, kind, name):
    name = str(node_id(client)) if name == "me" else name

    def described_names(keys: list[str] | None) -> list[str]:
        (result,) = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": False, "include_documentation": False}).results
        assert result.error_code == 0, result
        return [entry.name for entry in result.configs]

    every = described_names(None)
    assert every and described_names([]) == every


@pytest.mark.parametrize("kind", [0, 1, 3, 64, 66, -126])
def test_a_resource_of_an_unknown_type_fails_the_whole_describe(client, kind):
    # Kafka 4.4 throws while it sorts the resources out: every one INVALID_REQUEST, with the
    # text of a malformed request (seed 1's #593998, #722905 of 1,000,000)
    for version in (1, 4):
        results = client.request("DescribeConfigs", version, {"resources": [
            {"resource_type": TOPIC, "resource_name": "orders", "configuration_keys": None},
            {"resource_type": kind, "resource_name": "x", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}).results
        assert [(r.resource_type, r.error_code, r.error_message, len(r.configs))
                for r in results] == [
            (TOPIC, 42, MALFORMED, 0), (kind, 42, MALFORMED, 0)]


MALFORMED = ("This most likely occurs because of a request being malformed by the client "
             "library or the message was sent to an incompatible broker. See the broker logs "
             "for more details.")
