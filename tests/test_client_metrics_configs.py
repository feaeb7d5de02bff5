"""Client metrics subscriptions (KIP-714) as Apache Kafka 4.4 keeps them: CLIENT_METRICS config
resources (type 16) changed by IncrementalAlterConfigs and AlterConfigs, described by
DescribeConfigs (a name with no subscription too) and listed by ListConfigResources v0 and v1;
Kafka's checks of a subscription's configs and their error codes and messages.

Each test runs on the fake and on Apache Kafka (``--kafka=both``). The real broker applies a
change a moment after the controller answers, so what it describes or lists afterwards is
awaited; every subscription a test makes has its configs deleted again before it ends (the
real broker is shared).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})

CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC = 16, 8, 4, 2
SET, DELETE, APPEND, SUBTRACT = range(4)
CLIENT_METRICS_CONFIG, DEFAULT_CONFIG = 7, 5  # DescribeConfigs' config sources
INT, LIST = 3, 7  # DescribeConfigs' config types
CONFIGS = ("interval.ms", "match", "metrics")
_run = uuid.uuid4().hex[:8]
_names = itertools.count()

Ops = list[tuple[str, int, str | None]]


@pytest.fixture
def client(kafka) -> Iterator[WireClient]:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as wire:
        yield wire


@pytest.fixture
def subscription(client) -> Iterator[Callable[[str], str]]:
    """Names subscriptions (unique unless given in full); each has its configs deleted
    after the test."""
    made: list[str] = []

    def name(prefix: str = "cm", unique: bool = True) -> str:
        made.append(f"{prefix}-{_run}-{next(_names)}" if unique else prefix)
        return made[-1]

    yield name
    for made_name in made:
        assert incremental(client, made_name, [(c, DELETE, None) for c in CONFIGS]) \
            == (0, None)


def incremental(client: WireClient, name: str, ops: Ops,
                validate_only: bool = False) -> tuple[int, Any]:
    """IncrementalAlterConfigs of one subscription: its (error code, error message)."""
    (answer,) = client.request("IncrementalAlterConfigs", 1, {"resources": [{
        "resource_type": CLIENT_METRICS, "resource_name": name, "configs": [
            {"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
        "validate_only": validate_only}).responses
    return answer.error_code, answer.error_message


def legacy(client: WireClient, name: str, configs: dict[str, str | None]) -> tuple[int, Any]:
    """AlterConfigs of one subscription: its (error code, error message)."""
    (answer,) = client.request("AlterConfigs", 2, {"resources": [{
        "resource_type": CLIENT_METRICS, "resource_name": name, "configs": [
            {"name": k, "value": v} for k, v in configs.items()]}],
        "validate_only": False}).responses
    return answer.error_code, answer.error_message


def described(client: WireClient, name: str, keys: list[str] | None = None,
              documentation: bool = True) -> Any:
    """DescribeConfigs v4 of one subscription, with synonyms: its result."""
    (result,) = client.request("DescribeConfigs", 4, {"resources": [{
        "resource_type": CLIENT_METRICS, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": True, "include_documentation": documentation}).results
    return result


def entries(client: WireClient, name: str) -> list[tuple[str, str, int, list[Any]]]:
    """Each described config's (name, value, source, synonyms as (name, value, source))."""
    return [(e.name, e.value, e.config_source, [(s.name, s.value, s.source) for s in e.synonyms])
            for e in described(client, name).configs]


def listed(client: WireClient, version: int = 1, types: list[int] | None = None) -> list[Any]:
    """ListConfigResources: the names of the client metrics resources listed."""
    body = {} if version == 0 else {"resource_types": [CLIENT_METRICS] if types is None
                                    else types}
    answer = client.request("ListConfigResources", version, body)
    assert answer.error_code == 0
    return [r.resource_name for r in answer.config_resources
            if r.resource_type == CLIENT_METRICS]


DEFAULTS = [("interval.ms", "300000", DEFAULT_CONFIG, []), ("match", "", DEFAULT_CONFIG, []),
            ("metrics", "", DEFAULT_CONFIG, [])]


@pytest.mark.parametrize("documentation", [True, False])
def test_a_name_with_no_subscription_is_described_with_kafkas_defaults(client, documentation):
    """The differential fuzzer's find: Kafka answers NONE for any name, listing the three
    configs, typed, with their documentation when asked."""
    result = described(client, "1", documentation=documentation)
    assert (result.error_code, result.error_message) == (0, "")
    assert [(e.name, e.value, e.config_source, e.config_type, e.read_only, e.is_sensitive,
             e.synonyms, e.documentation) for e in result.configs] == [
        ("interval.ms", "300000", DEFAULT_CONFIG, INT, False, False, [],
         "Metrics push interval in milliseconds" if documentation else None),
        ("match", "", DEFAULT_CONFIG, LIST, False, False, [],
         "Client match criteria" if documentation else None),
        ("metrics", "", DEFAULT_CONFIG, LIST, False, False, [],
         "Telemetry metric name prefix list" if documentation else None)]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_version_describes_a_name_with_no_subscription(client, version):
    (result,) = client.request("DescribeConfigs", version, {"resources": [{
        "resource_type": CLIENT_METRICS, "resource_name": "1", "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": True}).results
    assert (result.error_code, [(e.name, e.value, e.config_source) for e in result.configs]) \
        == (0, [entry[:3] for entry in DEFAULTS])


@pytest.mark.parametrize("keys", [["match", "unknown"], ["match"]])
def test_describing_named_configs_lists_those_kafka_has(client, keys):
    assert [e.name for e in described(client, "1", keys).configs] == ["match"]
    assert [e.name for e in described(client, "1", []).configs] == list(CONFIGS)


def test_the_empty_name_is_refused(client):
    result = described(client, "")
    assert (result.error_code, result.error_message, result.configs) == (
        ErrorCode.INVALID_REQUEST, "Client metrics subscription name must not be empty", [])
    refused = (ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    assert incremental(client, "", [("metrics", SET, "a")]) == refused
    assert incremental(client, "", [("unknown", SET, "a")]) == refused
    assert incremental(client, "", [("metrics", DELETE, None)]) == refused
    assert legacy(client, "", {"metrics": "a"}) == refused


def test_set_configs_are_described_as_kafka_parsed_them_each_its_own_synonym(
        client, subscription):
    name = subscription()
    assert incremental(client, name, [
        ("interval.ms", SET, " +0500 "), ("metrics", SET, " a , b ,a"),
        ("match", SET, " client_id = x.* ,client_software_name=j")]) == (0, None)
    assert eventually(lambda: entries(client, name) == [
        ("interval.ms", "500", CLIENT_METRICS_CONFIG,
         [("interval.ms", "500", CLIENT_METRICS_CONFIG)]),
        ("match", "client_id = x.*,client_software_name=j", CLIENT_METRICS_CONFIG,
         [("match", "client_id = x.*,client_software_name=j", CLIENT_METRICS_CONFIG)]),
        ("metrics", "a,b", CLIENT_METRICS_CONFIG, [("metrics", "a,b", CLIENT_METRICS_CONFIG)])],
        f"{name} described")
    assert incremental(client, name, [("metrics", SET, ""), ("interval.ms", DELETE, None)]) \
        == (0, None)
    assert eventually(lambda: entries(client, name) == [
        DEFAULTS[0],
        ("match", "client_id = x.*,client_software_name=j", CLIENT_METRICS_CONFIG,
         [("match", "client_id = x.*,client_software_name=j", CLIENT_METRICS_CONFIG)]),
        ("metrics", "", CLIENT_METRICS_CONFIG, [("metrics", "", CLIENT_METRICS_CONFIG)])],
        f"{name} with metrics set empty")


def _interval(value: str) -> str:
    return f"Invalid value {value} for interval.ms, interval must be between 100 and 3600000 " \
           "(1 hour)"


def _not_int(value: str) -> str:
    return f"Invalid value {value} for configuration interval.ms: Not a number of type INT"


def _pattern(item: str) -> tuple[int, str]:
    return ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {item}"


@pytest.mark.parametrize("ops, error", [
    ([("unknown", SET, "1")], (ErrorCode.INVALID_REQUEST,
                               "Unknown client metrics configuration: unknown")),
    ([("unknown", SET, "1"), ("interval.ms", SET, "5")],
     (ErrorCode.INVALID_REQUEST, "Unknown client metrics configuration: unknown")),
    ([("interval.ms", SET, "50")], (ErrorCode.INVALID_REQUEST, _interval("50"))),
    ([("interval.ms", SET, "3600001")], (ErrorCode.INVALID_REQUEST, _interval("3600001"))),
    ([("interval.ms", SET, " +050")], (ErrorCode.INVALID_REQUEST, _interval("50"))),
    ([("interval.ms", SET, "abc")], (ErrorCode.INVALID_CONFIG, _not_int("abc"))),
    ([("interval.ms", SET, "")], (ErrorCode.INVALID_CONFIG, _not_int(""))),
    ([("interval.ms", SET, "1_000")], (ErrorCode.INVALID_CONFIG, _not_int("1_000"))),
    ([("interval.ms", SET, "3000000000")], (ErrorCode.INVALID_CONFIG, _not_int("3000000000"))),
    ([("metrics", SET, "a,,b")], (ErrorCode.INVALID_CONFIG,
                                  "Configuration 'metrics' values must not be empty.")),
    ([("match", SET, "client_id=,")], (ErrorCode.INVALID_CONFIG,
                                       "Configuration 'match' values must not be empty.")),
    # Kafka parses metrics, then interval.ms, then match, whatever the request's order.
    ([("interval.ms", SET, "abc"), ("metrics", SET, "a,,b")],
     (ErrorCode.INVALID_CONFIG, "Configuration 'metrics' values must not be empty.")),
    ([("match", SET, "bad"), ("interval.ms", SET, "abc")],
     (ErrorCode.INVALID_CONFIG, _not_int("abc"))),
    ([("match", SET, "bad"), ("interval.ms", SET, "50")],
     (ErrorCode.INVALID_REQUEST, _interval("50"))),
    ([("match", SET, "client_id")], _pattern("client_id")),
    ([("match", SET, "client_id=")], _pattern("client_id=")),
    ([("match", SET, "client_id==")], _pattern("client_id==")),
    ([("match", SET, "=x")], _pattern("=x")),
    ([("match", SET, "client_id=a=b")], _pattern("client_id=a=b")),
    ([("match", SET, "foo=bar")], _pattern("foo=bar")),
    ([("match", SET, "CLIENT_ID=a")], _pattern("CLIENT_ID=a")),
    ([("match", SET, "client_id=[")], _pattern("client_id=[")),
    ([("match", SET, "client_id=*")], _pattern("client_id=*")),
    ([("match", SET, "client_id=a,client_software_name=(")],
     _pattern("client_software_name=(")),
    ([("metrics", SET, None)], (ErrorCode.INVALID_REQUEST,
                                "Null value not supported for : metrics")),
    ([("metrics", SET, "x"), ("metrics", DELETE, None)],
     (ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")),
    ([("interval.ms", APPEND, "5")], (ErrorCode.INVALID_CONFIG,
                                      "Can't APPEND to key interval.ms because its type is "
                                      "not LIST.")),
    ([("metrics", APPEND, "a")], (ErrorCode.INVALID_CONFIG,
                                  "Can't APPEND to key metrics because its type is not LIST.")),
    ([("match", SUBTRACT, "client_id=a")], (ErrorCode.INVALID_CONFIG,
                                            "Can't SUBTRACT to key match because its type is "
                                            "not LIST.")),
    ([("metrics", 7, "a")], (ErrorCode.UNKNOWN_SERVER_ERROR, None)),
])
def test_kafkas_refusals_of_a_subscriptions_configs(client, subscription, ops, error):
    name = subscription()
    assert incremental(client, name, ops) == error
    assert name not in listed(client)


@pytest.mark.parametrize("value", [
    "client_id=a=", "client_id=a,client_id=b",
    "client_instance_id=a,client_source_port=1,client_source_address=x,"
    "client_software_version=1"])
def test_a_match_kafka_takes(client, subscription, value):
    """Java's String.split drops the empty part after a trailing "=" ("client_id=a=")."""
    assert incremental(client, subscription(), [("match", SET, value)]) == (0, None)


def test_a_subscription_is_checked_whole(client, subscription):
    """A change is checked with the configs already set; deleting a config Kafka does not
    know, or one never set, is no error."""
    name = subscription()
    assert incremental(client, name, [("interval.ms", SET, "1000")]) == (0, None)
    assert incremental(client, name, [("unknown", DELETE, None), ("metrics", DELETE, None)]) \
        == (0, None)
    assert incremental(client, name, [("unknown", DELETE, None), ("interval.ms", SET, "7")]) \
        == (ErrorCode.INVALID_REQUEST, _interval("7"))


def test_validate_only_checks_and_changes_nothing(client, subscription):
    name = subscription()
    assert incremental(client, name, [("interval.ms", SET, "5")], validate_only=True) \
        == (ErrorCode.INVALID_REQUEST, _interval("5"))
    assert incremental(client, name, [("metrics", SET, "q")], validate_only=True) == (0, None)
    assert entries(client, name) == DEFAULTS
    assert name not in listed(client)


def test_a_subscription_is_listed_while_it_has_a_config(client, subscription):
    """ListConfigResources v0 lists client metrics subscriptions, v1 those asked for (all
    types: before broker loggers, brokers and topics); deleting every config of one removes
    it, and so does AlterConfigs of none."""
    first, second = subscription(), subscription()
    assert incremental(client, first, [("metrics", SET, "m"), ("interval.ms", SET, "1000")]) \
        == (0, None)
    assert legacy(client, second, {"match": "client_id=x"}) == (0, None)
    for version, types in ((0, None), (1, None), (1, [])):
        eventually(lambda v=version, t=types: {first, second} <= set(listed(client, v, t)),
                   "both listed")
    answer = client.request("ListConfigResources", 1, {"resource_types": []})
    kinds = [r.resource_type for r in answer.config_resources]
    assert kinds.index(CLIENT_METRICS) < kinds.index(BROKER_LOGGER) < kinds.index(BROKER) \
        < kinds.index(TOPIC)
    assert incremental(client, first, [("metrics", DELETE, None)]) == (0, None)
    assert incremental(client, first, [("interval.ms", DELETE, None)]) == (0, None)
    assert legacy(client, second, {}) == (0, None)
    eventually(lambda: not {first, second} & set(listed(client)), "both unlisted")
    assert not {first, second} & set(listed(client, 0))
    assert entries(client, first) == DEFAULTS


def test_subscriptions_are_listed_in_kafkas_hash_map_order(client, subscription):
    """Kafka lists its ConcurrentHashMap of subscriptions: by the bucket of each name's
    String.hashCode, not in the order subscribed nor by name."""
    names = [subscription(f"cm-order-{n}", unique=False)
             for n in ("zeta", "alpha", "mid", "beta")]
    for name in names:
        assert incremental(client, name, [("metrics", SET, "m")]) == (0, None)
    ordered = ["cm-order-zeta", "cm-order-mid", "cm-order-beta", "cm-order-alpha"]
    eventually(lambda: [n for n in listed(client) if n in names] == ordered, "all listed")
    assert [n for n in listed(client, 0) if n in names] == ordered


def test_alter_configs_replaces_the_whole_set(client, subscription):
    name = subscription()
    assert incremental(client, name, [("metrics", SET, "a"), ("match", SET, "client_id=x")]) \
        == (0, None)
    assert legacy(client, name, {"interval.ms": "1000"}) == (0, None)
    eventually(lambda: entries(client, name) == [
        ("interval.ms", "1000", CLIENT_METRICS_CONFIG,
         [("interval.ms", "1000", CLIENT_METRICS_CONFIG)]), DEFAULTS[1], DEFAULTS[2]],
        f"{name} replaced")
    assert legacy(client, name, {"unknown": "1"}) == (
        ErrorCode.INVALID_REQUEST, "Unknown client metrics configuration: unknown")
    assert legacy(client, name, {"metrics": None}) == (
        ErrorCode.INVALID_REQUEST, "Null value not supported for : metrics")
