"""The construct codecs: every message of every API version round-trips, and the encoding
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
    decode,
    literal_default,
    request_codec,
    response_codec,
    snake,
)
from fakebroker.protocol.framing import decode_request, encode_request, encode_response
from fakebroker.protocol.importer import build_specs, render
from fakebroker.protocol.specs import api_files, api_spec, parse_range, specs_root

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
    assert same_on_the_wire(value, decode(codec, codec.build(value)))


def test_fields_absent_from_a_version_parse_as_their_defaults():
    fetch_v4 = request_codec(1, 4)
    parsed = decode(fetch_v4, fetch_v4.build({"max_wait_ms": 5, "min_bytes": 1, "topics": []}))
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
    parsed = decode(fetch_response, tagged)
    assert parsed.responses[0].partitions[0].current_leader == {"leader_id": 2, "leader_epoch": 3}
    assert decode(fetch_response, plain).responses[0].partitions[0].current_leader == {
        "leader_id": -1, "leader_epoch": -1}


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


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/kafka-protocol is not present")
def test_protocol_specs_agree_with_the_reference_schemas():
    for relative, content in build_specs(SHARED).items():
        stored = (specs_root() / relative).read_text()
        assert stored == render(content) + "\n", f"protocol_specs/{relative} is stale"
