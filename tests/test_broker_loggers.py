"""A broker's loggers (the BROKER_LOGGER config resource, KIP-412) on the fake and on Apache
Kafka 4.4 (``--kafka=both``): DescribeConfigs lists them with their levels,
IncrementalAlterConfigs sets and deletes a level, with Kafka's refusals and messages; on the
wire and with kafka-python's admin client (confluent-kafka has no broker logger resource; the
Java Admin's round trip is in tests/test_admin_client_java.py, ``kafka-configs
--entity-type broker-loggers`` in tests/test_kafka_tools.py, the ACLs they need in
tests/test_acls_on_both_brokers.py).

Both brokers list the two loggers Kafka 4.4 lists when it logs as the project runs it
(``fakebroker.state.loggers``): ``root`` at ERROR and the logging controller's own logger,
which takes root's level. Each test leaves the levels as it found them (the session's real
broker is shared).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient

CONTROLLER = "org.apache.kafka.server.logger.LoggingController"
BROKER_LOGGER = 8
SET, DELETE, APPEND, SUBTRACT = range(4)
LEVELS = "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"


def describe(address: str, name: str = "1", keys: list[str] | None = None,
             version: int = 4) -> Any:
    """The DescribeConfigs result of broker loggers resource ``name``."""
    with WireClient(address) as client:
        return client.request("DescribeConfigs", version, {
            "resources": [{"resource_type": BROKER_LOGGER, "resource_name": name,
                           "configuration_keys": keys}],
            "include_synonyms": True, "include_documentation": True}).results[0]


def levels(address: str) -> dict[str, str]:
    return {c.name: c.value for c in describe(address).configs}


def alter(address: str, ops: list[tuple[str, int, str | None]], name: str = "1",
          validate_only: bool = False) -> tuple[int, str | None]:
    """IncrementalAlterConfigs of broker loggers resource ``name``: its error and message."""
    with WireClient(address) as client:
        answer = client.request("IncrementalAlterConfigs", 1, {
            "validate_only": validate_only, "resources": [{
                "resource_type": BROKER_LOGGER, "resource_name": name, "configs": [
                    {"name": k, "config_operation": op, "value": v} for k, op, v in ops]}]})
    (result,) = answer.responses
    return result.error_code, result.error_message


@pytest.fixture
def address(kafka: Any) -> Iterator[str]:
    """The broker's address; its levels are put back after the test."""
    before = levels(kafka.bootstrap_servers)
    yield kafka.bootstrap_servers
    assert alter(kafka.bootstrap_servers, [(CONTROLLER, DELETE, None),
                                           ("root", SET, before["root"])]) == (0, None)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_describe_lists_each_logger_with_its_level_at_every_version(address, version):
    result = describe(address, version=version)
    assert (result.error_code, result.error_message) == (0, "")
    assert sorted((c.name, c.value, c.read_only, c.config_source, c.is_sensitive,
                   list(c.synonyms)) for c in result.configs) == [
        (CONTROLLER, "ERROR", False, 6, False, []),  # DYNAMIC_BROKER_LOGGER_CONFIG, no synonyms
        ("root", "ERROR", False, 6, False, [])]
    if version >= 3:  # no type, no documentation, though asked
        assert {(c.config_type, c.documentation) for c in result.configs} == {(0, "")}


def test_describe_names_loggers_and_only_this_broker(address):
    assert [c.name for c in describe(address, keys=["root", "no.such.logger"]).configs] == [
        "root"]
    assert len(describe(address, keys=[]).configs) == 2  # an empty list asks for all
    assert len(describe(address, name="01").configs) == 2  # "01" is broker 1, as Java reads it
    refused = {name: describe(address, name=name) for name in ("2", "", "x")}
    assert {name: (r.error_code, r.error_message, list(r.configs))
            for name, r in refused.items()} == {
        "2": (ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1 but received 2", []),
        "": (ErrorCode.INVALID_REQUEST, "Broker id must not be empty", []),
        "x": (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: x", [])}


def test_a_set_level_is_described_and_a_deleted_one_takes_roots_again(address):
    assert alter(address, [(CONTROLLER, SET, "DEBUG")]) == (0, None)
    assert levels(address) == {"root": "ERROR", CONTROLLER: "DEBUG"}
    assert alter(address, [("root", SET, "WARN")]) == (0, None)
    assert levels(address) == {"root": "WARN", CONTROLLER: "DEBUG"}  # its own level stays
    assert alter(address, [(CONTROLLER, DELETE, None)]) == (0, None)
    assert levels(address) == {"root": "WARN", CONTROLLER: "WARN"}
    assert alter(address, [("root", SET, "FATAL"), (CONTROLLER, SET, "TRACE")]) == (0, None)
    assert levels(address) == {"root": "FATAL", CONTROLLER: "TRACE"}


def test_validate_only_checks_and_changes_nothing(address):
    assert alter(address, [("root", SET, "INFO")], validate_only=True) == (0, None)
    assert alter(address, [("root", SET, "LOUD")], validate_only=True) == (
        ErrorCode.INVALID_CONFIG, "Cannot set the log level of root to LOUD as it is not a "
                                  f"supported log level. {LEVELS}")
    assert levels(address) == {"root": "ERROR", CONTROLLER: "ERROR"}


@pytest.mark.parametrize("ops, name, refusal", [
    ([("root", SET, "OFF")], "1", (ErrorCode.INVALID_CONFIG, "Cannot set the log level of "
                                   f"root to OFF as it is not a supported log level. {LEVELS}")),
    ([("root", SET, "debug")], "1", (ErrorCode.INVALID_CONFIG, "Cannot set the log level of "
                                     f"root to debug as it is not a supported log level. "
                                     f"{LEVELS}")),
    ([("kafka.server.ReplicaManager", SET, "DEBUG")], "1",
     (ErrorCode.INVALID_CONFIG, "Logger kafka.server.ReplicaManager does not exist!")),
    ([("kafka.server.ReplicaManager", DELETE, None)], "1",
     (ErrorCode.INVALID_CONFIG, "Logger kafka.server.ReplicaManager does not exist!")),
    ([("root", DELETE, None)], "1",
     (ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")),
    ([("root", APPEND, "DEBUG")], "1",
     (ErrorCode.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER "
                                 "resource")),
    ([("root", SUBTRACT, "DEBUG")], "1",
     (ErrorCode.INVALID_REQUEST, "SUBTRACT operation is not allowed for the BROKER_LOGGER "
                                 "resource")),
    ([("root", 7, "DEBUG")], "1",
     (ErrorCode.INVALID_REQUEST, "Unknown operation type 7 is not allowed for the "
                                 "BROKER_LOGGER resource")),
    ([("root", SET, None)], "1",
     (ErrorCode.INVALID_REQUEST, "Null value not supported for : root")),
    ([("root", SET, "INFO"), ("root", DELETE, None)], "1",
     (ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")),
    ([("root", SET, "INFO")], "2",
     (ErrorCode.INVALID_REQUEST, "Unexpected node id. Expected 1, but received 2")),
    ([("root", SET, "INFO")], "",
     (ErrorCode.INVALID_REQUEST, "Node id must be an integer, but it is: ")),
    # every operation is checked before any applies: root keeps its level
    ([("root", SET, "INFO"), ("no.such.logger", SET, "INFO")], "1",
     (ErrorCode.INVALID_CONFIG, "Logger no.such.logger does not exist!")),
], ids=["OFF", "lower case", "unknown logger", "unknown logger deleted", "root deleted",
        "APPEND", "SUBTRACT", "unknown operation", "null level", "duplicate keys",
        "another broker", "no broker id", "second operation refused"])
def test_a_refused_change_changes_nothing(address, ops, name, refusal):
    assert alter(address, ops, name=name) == refusal
    assert levels(address) == {"root": "ERROR", CONTROLLER: "ERROR"}


def test_legacy_alter_configs_cannot_set_a_level(address):
    with WireClient(address) as client:
        answer = client.request("AlterConfigs", 2, {"validate_only": False, "resources": [
            {"resource_type": BROKER_LOGGER, "resource_name": "1",
             "configs": [{"name": "root", "value": "INFO"}]}]})
    assert [(r.error_code, r.error_message) for r in answer.responses] == [
        (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")]
    assert levels(address) == {"root": "ERROR", CONTROLLER: "ERROR"}


def test_kafka_python_admin_describes_and_alters_a_level(address):
    from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=address)
    resource = ConfigResource("BROKER_LOGGER", "1")

    def described() -> dict[str, tuple[str, str]]:
        answer = admin.describe_configs([resource], config_filter="all")["broker_logger"]["1"]
        return {name: (entry["value"], entry["config_source"])
                for name, entry in answer.items()}

    def altered(configs: dict[str, Any]) -> dict[str, dict[str, str]]:
        answer = admin.alter_configs([ConfigResource("BROKER_LOGGER", "1", configs=configs)],
                                     raise_on_unknown=False)
        return {kind: {name: str(result) for name, result in by_name.items()}
                for kind, by_name in answer.items()}

    source = "DYNAMIC_BROKER_LOGGER_CONFIG"
    try:
        assert described() == {"root": ("ERROR", source), CONTROLLER: ("ERROR", source)}
        assert altered({"root": (AlterConfigOp.SET, "INFO")}) == {"broker_logger": {"1": "OK"}}
        assert described() == {"root": ("INFO", source), CONTROLLER: ("INFO", source)}
        assert altered({"root": (AlterConfigOp.DELETE, None)}) == {"broker_logger": {"1": (
            "[Error 42] InvalidRequestError: Removing the log level of the root logger is "
            "not allowed")}}
    finally:
        admin.close()


@pytest.mark.fake_only("broker_down / broker_up: a broker of the fake restarted")
@pytest.mark.fake_kafka(brokers=2)
def test_each_broker_has_its_own_levels_and_a_restarted_one_its_first_again(kafka):
    first, second = (f"{b.host}:{b.port}" for b in kafka.brokers)
    assert alter(second, [("root", SET, "INFO")], name="2") == (0, None)
    assert alter(first, [("root", SET, "INFO")], name="2") == (
        ErrorCode.INVALID_REQUEST, "Unexpected node id. Expected 1, but received 2")
    assert levels(first) == {"root": "ERROR", CONTROLLER: "ERROR"}
    assert {c.name: c.value for c in describe(second, name="2").configs} == {
        "root": "INFO", CONTROLLER: "INFO"}
    kafka.broker_down(2)
    kafka.broker_up(2)
    assert {c.name: c.value for c in describe(second, name="2").configs} == {
        "root": "ERROR", CONTROLLER: "ERROR"}
