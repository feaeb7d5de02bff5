"""The codecs: every message of every API version round-trips, and the encoding
rules (compact lengths, tagged fields written only when not default) hold."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakebroker.protocol.codec import (
    ZERO_UUID,
    FrozenArray,
    literal_default,
    message_codec,
    request_codec,
    response_codec,
    snake,
)
from fakebroker.protocol.framing import decode_request, encode_request, encode_response
from fakebroker.protocol.importer import build_specs, render
from fakebroker.protocol.specs import api_files, api_spec, parse_range, specs_root
from tests.absent import absent

SHARED = Path(__file__).resolve().parents[2] / "shared" / "kafka-protocol"

INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def value_strategy(row: list[Any], version: int) -> st.SearchStrategy[Any]:
    """Values a field can take on the wire at ``version``."""
    _, kafka_type, _, *rest = row
    extras = rest[0] if rest else {}
    nullable = version in parse_range(extras.get("nullable", ""))
    if kafka_type in ("struct", "[]struct"):
        inner = struct_strategy(extras["fields"], version)
        base = st.lists(inner, max_size=2) if kafka_type == "[]struct" else inner
    elif kafka_type.startswith("[]"):
        base = st.lists(value_strategy([row[0], kafka_type[2:], row[2]], version), max_size=3)
    elif kafka_type in INTS:
        bits = INTS[kafka_type]
        base = st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    elif kafka_type in ("uint16", "uint32"):
        base = st.integers(0, 2 ** int(kafka_type[4:]) - 1)
    elif kafka_type == "bool":
        base = st.booleans()
    elif kafka_type == "float64":
        base = st.floats(allow_nan=False)
    elif kafka_type == "uuid":
        base = st.builds(uuid.UUID, bytes=st.binary(min_size=16, max_size=16))
    elif kafka_type == "string":
        base = st.text(max_size=8)
    else:  # bytes, records
        base = st.binary(max_size=8)
    return st.one_of(st.none(), base) if nullable else base


def struct_strategy(rows: list[list[Any]], version: int) -> st.SearchStrategy[dict[str, Any]]:
    present = [r for r in rows if version in parse_range(r[2])]
    return st.fixed_dictionaries({snake(r[0]): value_strategy(r, version) for r in present})


def same_on_the_wire(sent: Any, parsed: Any) -> bool:
    """Every field that was sent came back equal (parsing adds absent fields' defaults)."""
    if isinstance(sent, dict):
        return all(same_on_the_wire(v, parsed[k]) for k, v in sent.items())
    if isinstance(sent, list):
        return len(sent) == len(parsed) and all(map(same_on_the_wire, sent, parsed))
    return sent == parsed


ALL_MESSAGES = [(key, kind) for key in api_files() for kind in ("request", "response")]


@pytest.mark.parametrize("key,kind", ALL_MESSAGES,
                         ids=[f"{api_spec(k).name}-{kind}" for k, kind in ALL_MESSAGES])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_message_version_round_trips(key, kind, data):
    spec = getattr(api_spec(key), kind)
    version = data.draw(st.sampled_from(sorted(api_spec(key).versions)), label="version")
    codec = request_codec(key, version) if kind == "request" else response_codec(key, version)
    value = data.draw(struct_strategy(spec["fields"], version), label="message")
    assert same_on_the_wire(value, codec.parse(codec.build(value)))


def test_fields_absent_from_a_version_parse_as_their_defaults():
    fetch_v4 = request_codec(1, 4)
    parsed = fetch_v4.parse(fetch_v4.build({"max_wait_ms": 5, "min_bytes": 1, "topics": []}))
    assert parsed.session_epoch == -1  # v7+ field, default -1
    assert parsed.rack_id == ""  # v11+ field, no default
    assert parsed.topics == [] and parsed.forgotten_topics_data == []


def test_tagged_fields_are_written_only_when_they_differ_from_their_default():
    fetch_response = response_codec(1, 16)
    partition = {"partition_index": 0, "records": b""}
    plain = fetch_response.build({"responses": [{"partitions": [partition]}]})
    tagged = fetch_response.build({"responses": [{"partitions": [
        dict(partition, current_leader={"leader_id": 2, "leader_epoch": 3})]}]})
    assert len(tagged) > len(plain)
    parsed = fetch_response.parse(tagged)
    assert parsed.responses[0].partitions[0].current_leader == {"leader_id": 2, "leader_epoch": 3}
    assert fetch_response.parse(plain).responses[0].partitions[0].current_leader == {
        "leader_id": -1, "leader_epoch": -1}


# Messages with tagged fields (top-level and nested in struct arrays), each tested at every
# flexible version: (api key, "request" or "response").
TAGGED_MESSAGES = [(0, "response"), (1, "request"), (1, "response"), (18, "response"),
                   (19, "response"), (63, "request")]
FLEXIBLE_VERSIONS = [
    (key, kind, version) for key, kind in TAGGED_MESSAGES
    for version in sorted(api_spec(key).flexible & api_spec(key).versions)
]
FLEXIBLE_IDS = [f"{api_spec(key).name}-{kind}-v{v}" for key, kind, v in FLEXIBLE_VERSIONS]


def rows_at(rows: list[list[Any]], version: int) -> list[tuple[list[Any], dict[str, Any]]]:
    """The field rows present at ``version``, each with its extras."""
    return [(r, r[3] if len(r) > 3 else {}) for r in rows if version in parse_range(r[2])]


def is_tagged(extras: dict[str, Any], version: int) -> bool:
    return version in parse_range(extras.get("tagged", ""))


def default_value(row: list[Any], version: int) -> Any:
    """The field's default, as a handler would spell it out."""
    _, kind, _, *rest = row
    extras = rest[0] if rest else {}
    if extras.get("default") == "null":
        return None
    if kind == "struct":
        fields = rows_at(extras["fields"], version)
        return {snake(r[0]): default_value(r, version) for r, _ in fields}
    if kind.startswith("[]"):
        return []
    return literal_default(kind, extras.get("default"))


def other_value(row: list[Any], version: int, tagged: str) -> Any:
    """A value of the field that differs from its default (structs recurse with ``tagged``)."""
    name, kind, versions, *rest = row
    extras = rest[0] if rest else {}
    if kind in ("struct", "[]struct"):
        inner = message_with(extras["fields"], version, tagged)
        return inner if kind == "struct" else [inner]
    if kind.startswith("[]"):
        return [other_value([name, kind[2:], versions], version, tagged)]
    default = literal_default(kind, extras.get("default"))
    if kind == "bool":
        return not default
    if kind == "float64":
        return default + 1.5
    if kind == "string":
        return "v" + (default or "")
    if kind == "uuid":
        return uuid.UUID(int=1)
    if kind in ("bytes", "records"):
        return b"v"
    return default ^ 1  # an integer: in range, and not the default


def message_with(rows: list[list[Any]], version: int, tagged: str) -> dict[str, Any]:
    """A message whose regular fields all differ from their defaults (struct arrays hold one
    element, so nested tagged fields are there too) and whose tagged fields are ``"unset"``
    (left out), ``"default"`` (given their default) or ``"set"`` (given another value)."""
    message = {}
    for row, extras in rows_at(rows, version):
        if is_tagged(extras, version) and tagged != "set":
            if tagged == "default":
                message[snake(row[0])] = default_value(row, version)
            continue
        message[snake(row[0])] = other_value(row, version, tagged)
    return message


def count_tagged(rows: list[list[Any]], version: int) -> int:
    return sum(is_tagged(extras, version) + count_tagged(extras.get("fields", []), version)
               for _, extras in rows_at(rows, version))


def codec_of(key: int, kind: str, version: int):
    return request_codec(key, version) if kind == "request" else response_codec(key, version)


@pytest.mark.parametrize("key,kind,version", FLEXIBLE_VERSIONS, ids=FLEXIBLE_IDS)
def test_tagged_fields_at_their_default_are_not_written(key, kind, version):
    rows = getattr(api_spec(key), kind)["fields"]
    codec = codec_of(key, kind, version)
    unset = codec.build(message_with(rows, version, "unset"))
    assert codec.build(message_with(rows, version, "default")) == unset


@pytest.mark.parametrize("key,kind,version", FLEXIBLE_VERSIONS, ids=FLEXIBLE_IDS)
def test_tagged_fields_set_are_written_and_read_back_and_unset_ones_read_as_defaults(
        key, kind, version):
    rows = getattr(api_spec(key), kind)["fields"]
    codec = codec_of(key, kind, version)
    sent = message_with(rows, version, "set")
    written = codec.build(sent)
    assert same_on_the_wire(sent, codec.parse(written))
    unset = codec.build(message_with(rows, version, "unset"))
    assert len(written) > len(unset) or count_tagged(rows, version) == 0
    assert same_on_the_wire(message_with(rows, version, "default"), codec.parse(unset))


def test_tagged_fields_are_written_ascending_by_tag_as_tag_size_payload():
    api_versions_v3 = response_codec(18, 3)
    written = api_versions_v3.build(
        {"api_keys": [], "zk_migration_ready": True, "finalized_features_epoch": 7})
    regular = b"\x00\x00" + b"\x01" + b"\x00\x00\x00\x00"  # error, no api keys, throttle
    tags = b"\x02" + b"\x01\x08" + (7).to_bytes(8, "big") + b"\x03\x01\x01"
    assert written == regular + tags


def test_a_tagged_field_is_written_when_its_bytes_differ_from_its_defaults():
    heartbeat_v2 = request_codec(63, 2)  # OfflineLogDirs: default []; CordonedLogDirs: null
    nothing = heartbeat_v2.build({})
    assert heartbeat_v2.build({"offline_log_dirs": [], "cordoned_log_dirs": None}) == nothing
    cordoned_empty = heartbeat_v2.build({"cordoned_log_dirs": []})
    assert cordoned_empty == nothing[:-1] + b"\x01" + b"\x01\x01" + b"\x01"  # tag 1: []
    fetch_v12 = request_codec(1, 12)  # ClusterId: a nullable string, default null
    assert fetch_v12.build({"cluster_id": None}) == fetch_v12.build({})
    assert fetch_v12.parse(fetch_v12.build({"cluster_id": ""})).cluster_id == ""
    # No Kafka schema has a nullable tagged field with a non-null default; the rule still holds.
    note, _ = message_codec([["Note", "string", "0-0", {
        "nullable": "0-0", "tag": 0, "tagged": "0-0", "default": "x"}]], 0, flexible=True)
    assert note.build({"note": "x"}) == b"\x00"
    assert note.build({"note": None}) == b"\x01" + b"\x00\x01" + b"\x00"  # tag 0: null


def test_none_for_a_tagged_field_that_is_not_nullable_is_not_written():
    fetch_response_v12 = response_codec(1, 12)
    partition = {"partition_index": 0, "records": b""}
    assert fetch_response_v12.build({"responses": [{"partitions": [
        dict(partition, current_leader=None)]}]}) == fetch_response_v12.build(
        {"responses": [{"partitions": [partition]}]})


def test_flexible_versions_use_compact_lengths_and_classic_versions_int_prefixes():
    metadata_v8, metadata_v9 = request_codec(3, 8), request_codec(3, 9)
    body = {"topics": [{"name": "ab"}], "allow_auto_topic_creation": True}
    assert metadata_v8.build(body) == b"\x00\x00\x00\x01" + b"\x00\x02ab" + b"\x01\x00\x00"
    # v9: array count 1+1, string length 2+1, element tags, three bools, top-level tags.
    assert metadata_v9.build(body) == b"\x02" + b"\x03ab" + b"\x00" + b"\x01\x00\x00" + b"\x00"
    assert metadata_v9.build({"topics": None})[0] == 0  # a null compact array


def test_a_frozen_array_encodes_as_the_same_list_would_once_per_codec():
    entries = [{"api_key": 0, "min_version": 3, "max_version": 12},
               {"api_key": 18, "min_version": 0, "max_version": 4}]
    frozen = FrozenArray(entries)
    for version in (0, 3):  # a classic and a compact array
        codec = response_codec(18, version)
        as_list = codec.build({"api_keys": entries})
        assert codec.build({"api_keys": frozen}) == as_list
        entries[0]["max_version"] = 11  # broken promise: shows the bytes are reused
        assert codec.build({"api_keys": frozen}) == as_list
        entries[0]["max_version"] = 12


def test_request_headers_v1_and_v2_and_the_api_versions_response_header_v0():
    v1 = encode_request(3, 8, 42, "client", {"topics": None})
    header, _ = decode_request(v1[4:])
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        3, 8, 42, "client")
    v2 = encode_request(3, 12, 43, None, {"topics": None})
    assert decode_request(v2[4:])[0].client_id is None
    # ApiVersions v3 is flexible, yet its response header has no tagged-field byte.
    api_versions = encode_response(18, 3, 7, {"api_keys": []})
    assert api_versions[4:8] == b"\x00\x00\x00\x07" and api_versions[8:10] == b"\x00\x00"
    metadata = encode_response(3, 12, 7, {})
    assert metadata[8] == 0  # the response header's empty tagged-field section


def test_schema_defaults_are_typed():
    assert literal_default("int32", "0x7fffffff") == 2**31 - 1
    assert literal_default("bool", "true") is True
    assert literal_default("string", "null") is None
    assert literal_default("uuid", None) == ZERO_UUID


def test_protocol_specs_agree_with_the_reference_schemas():
    if not SHARED.is_dir():
        absent(f"{SHARED} (../shared/kafka-protocol, beside the checkout) is not present")
    for relative, content in build_specs(SHARED).items():
        stored = (specs_root() / relative).read_text()
        assert stored == render(content) + "\n", f"protocol_specs/{relative} is stale"
