"""A request's bytes are read as Kafka's generated readers read them: what they refuse closes
the connection (Kafka's ``RequestContext.parseRequest`` fails with InvalidRequestException),
what they read is answered. Raw frames over a socket, on the fake and on Apache Kafka
(``--kafka=both``); each rule is one of the codec's (``fakebroker/protocol/codec.py``), the
same for every API."""

from __future__ import annotations

import struct
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.framing import encode_request
from fakebroker.wire_client import WireClient, api_key

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})
LONGEST = 0x7FFF  # bytes in a string Kafka reads; a compact length could say more


def address(kafka) -> str:
    return kafka.bootstrap_servers.split(",")[0]


def send_frame(client: WireClient, frame: bytes) -> None:
    """Send a request frame (its size prefix added)."""
    client.sock.sendall(struct.pack(">i", len(frame)) + frame)


def body_frame(api: str, version: int, body: dict) -> bytes:
    """A request frame without its size prefix."""
    return encode_request(api_key(api), version, 1, "wire", body)[4:]


def answer(client: WireClient, api: str, version: int):
    correlation_id, response = client.receive(api, version)
    assert correlation_id == 1
    return response


STRINGS = pytest.mark.parametrize("api, version, body", [
    ("FindCoordinator", 4, lambda s: {"key_type": 0, "coordinator_keys": [s]}),
    ("ApiVersions", 3, lambda s: {"client_software_name": s,
                                  "client_software_version": "1"}),
    ("OffsetFetch", 8, lambda s: {"groups": [{"group_id": s, "topics": None}]}),
], ids=["FindCoordinator v4 key", "ApiVersions v3 software name", "OffsetFetch v8 group"])


@STRINGS
def test_a_compact_string_over_32767_bytes_closes_the_connection(kafka, api, version, body):
    with WireClient(address(kafka)) as client:
        send_frame(client, body_frame(api, version, body("a" * (LONGEST + 1))))
        assert client.is_closed_by_peer()


@STRINGS
def test_a_compact_string_of_32767_bytes_is_answered(kafka, api, version, body):
    with WireClient(address(kafka)) as client:
        send_frame(client, body_frame(api, version, body("a" * LONGEST)))
        assert answer(client, api, version) is not None


def metadata_v12(topics_count: bytes) -> bytes:
    """Metadata v12 whose topics array's compact count is the varint ``topics_count``."""
    frame = body_frame("Metadata", 12, {"topics": [], "allow_auto_topic_creation": False})
    assert frame.endswith(b"\x01\x00\x00\x00")  # [] (01), two bools, no tagged field
    return frame[:-4] + topics_count + frame[-3:]


def test_a_count_read_as_a_negative_java_int_is_null(kafka):
    """``ff ff ff ff 0f`` is 2^32-1, an int -1 in Java: a count of -2, read as null (all
    topics) where the array is nullable, as Kafka reads it."""
    with WireClient(address(kafka)) as client:
        send_frame(client, metadata_v12(b"\xff\xff\xff\xff\x0f"))
        assert "orders" in {t.name for t in answer(client, "Metadata", 12).topics}


def test_a_varint_longer_than_5_bytes_closes_the_connection(kafka):
    with WireClient(address(kafka)) as client:
        send_frame(client, metadata_v12(b"\x81\x80\x80\x80\x80\x00"))
        assert client.is_closed_by_peer()


def fetch_v12(tagged: bytes) -> bytes:
    """Fetch v12 for no partition, not waiting, with the top-level tagged fields ``tagged``
    (their count first)."""
    frame = body_frame("Fetch", 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                                     "max_bytes": 1024, "topics": [],
                                     "forgotten_topics_data": [], "rack_id": ""})
    assert frame.endswith(b"\x00")
    return frame[:-1] + tagged


def test_an_unknown_tagged_field_is_skipped(kafka):
    with WireClient(address(kafka)) as client:
        send_frame(client, fetch_v12(b"\x01\x0a\x03abc"))  # tag 10, 3 bytes
        assert answer(client, "Fetch", 12).error_code == 0


def test_an_unknown_tagged_field_past_the_end_closes_the_connection(kafka):
    with WireClient(address(kafka)) as client:
        send_frame(client, fetch_v12(b"\x01\x0a\x04abc"))  # tag 10, 4 bytes, 3 sent
        assert client.is_closed_by_peer()


def test_a_negative_count_of_tagged_fields_closes_the_connection(kafka):
    """``ff ff ff ff 0f`` reads as -1: Kafka 4.4 refuses it (it read none before)."""
    with WireClient(address(kafka)) as client:
        send_frame(client, fetch_v12(b"\xff\xff\xff\xff\x0f"))
        assert client.is_closed_by_peer()


def test_a_tag_of_a_later_version_closes_the_connection(kafka):
    """Fetch's ReplicaState is tag 1 from v15: Kafka's v12 reader refuses the tag."""
    with WireClient(address(kafka)) as client:
        send_frame(client, fetch_v12(b"\x01\x01\x01\x00"))
        assert client.is_closed_by_peer()


def test_a_known_tagged_field_is_read_where_it_starts_whatever_its_size_says(kafka):
    """ClusterId (tag 0) given a size of 0, its value (a null string, ``00``) after it:
    Kafka reads the value and goes on from its end."""
    with WireClient(address(kafka)) as client:
        send_frame(client, fetch_v12(b"\x01\x00\x00\x00"))
        assert answer(client, "Fetch", 12).error_code == 0


def offset_fetch_v10_member_id_one_short(topic_id: bytes) -> bytes:
    """OffsetFetch v10 for one group ("fuzzed", member "member0", epoch 0) and one topic by
    ``topic_id``, the member id's compact length one short: the reader takes the id's last
    byte and the epoch's first three as the epoch, the epoch's last (00) as a null topics
    array, the topics' count (02) as the group's 2 tagged fields, and the topic id's bytes
    as those fields (differential fuzzer, seed 1, #37320)."""
    frame = body_frame("OffsetFetch", 10, {"groups": [
        {"group_id": "fuzzed", "member_id": "member0", "member_epoch": 0,
         "topics": [{"topic_id": uuid.UUID(bytes=topic_id), "partition_indexes": [0]}]}],
        "require_stable": False})
    member = b"\x08member0\x00\x00\x00\x00\x02" + topic_id  # 7 bytes said, epoch 0, 1 topic
    assert frame.count(member) == 1
    return frame.replace(member, b"\x07" + member[1:])


def test_a_varint_longer_than_5_bytes_in_a_uuid_read_as_tagged_fields_closes(kafka):
    """The fake's topic id in #37320 (57f1b393a7...): tag 87, then a size of 6 bytes."""
    with WireClient(address(kafka)) as client:
        send_frame(client, offset_fetch_v10_member_id_one_short(
            bytes.fromhex("57f1b393a7de438c80045175305712b6")))
        assert client.is_closed_by_peer()


def test_a_uuid_read_as_two_tagged_fields_is_skipped_and_answered(kafka):
    """Kafka's topic id in #37320 (f6600e0c90...): tag 12406 of 14 bytes (the id's 13 left
    and the partitions' count), then tag 0 of 0 bytes (the partition index's first two);
    the rest is read as the request's last fields (not stable, no tagged field), and the
    bytes left after them are ignored, as Kafka ignores them."""
    with WireClient(address(kafka)) as client:
        send_frame(client, offset_fetch_v10_member_id_one_short(
            bytes.fromhex("f6600e0c90f04680b0b732d1db05c7d6")))
        [group] = answer(client, "OffsetFetch", 10).groups
    assert (group.group_id, group.error_code, group.topics) == ("fuzzed", 0, [])


def api_versions_header(version: int, client_id: bytes) -> bytes:
    """An ApiVersions request header at ``version`` up to its client id (no tagged fields)."""
    return struct.pack(">hhih", api_key("ApiVersions"), version, 1, len(client_id)) + client_id


@pytest.mark.parametrize("frame", [
    api_versions_header(999, b"wire"),  # no tagged-field section
    api_versions_header(999, b"wire")[:-1],  # the client id cut short
    api_versions_header(999, b"wire") + b"\x01\x00\x05ab",  # a tagged field cut short
], ids=["no tagged fields", "client id cut short", "tagged field cut short"])
def test_an_api_versions_request_above_the_range_with_a_malformed_header_closes(kafka, frame):
    """Kafka answers an ApiVersions above its range at v0 (KIP-511), but reads its header first,
    as a flexible version's (v2: tagged fields after the client id); one that does not
    parse closes the connection."""
    with WireClient(address(kafka)) as client:
        send_frame(client, frame)
        assert client.is_closed_by_peer()


@pytest.mark.parametrize("version", [-1, 999])
def test_an_api_versions_request_below_or_above_the_range_is_answered_at_v0(kafka, version):
    """Below the range too (measured: Kafka 4.4 answers v-1, whose header is v1)."""
    header = api_versions_header(version, b"wire") + (b"\x00" if version > 0 else b"")
    with WireClient(address(kafka)) as client:
        send_frame(client, header)
        response = answer(client, "ApiVersions", 0)
    assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 5)]


ACL_FILTER = {"resource_type_filter": 2, "resource_name_filter": None,
              "pattern_type_filter": 3, "principal_filter": None, "host_filter": None,
              "permission_type": 3}  # topics, literal, allow


@pytest.mark.parametrize("api, body", [
    ("DescribeAcls", {**ACL_FILTER, "operation": 0}),
    ("DeleteAcls", {"filters": [{**ACL_FILTER, "operation": 0}]}),
    ("CreateAcls", {"creations": [{"resource_type": 2, "resource_name": "orders",
                                   "resource_pattern_type": 3, "principal": "User:a",
                                   "host": "*", "operation": 0, "permission_type": 3}]}),
])
def test_an_acl_code_of_0_unknown_closes_the_connection_without_an_authorizer(
        kafka, api, body):
    """Kafka's ACL request classes refuse UNKNOWN's own code (0) as they are parsed, before
    the handler answers SECURITY_DISABLED (neither broker here runs an authorizer); other
    codes they do not know (-1, 99) pass the parsing and are answered."""
    with WireClient(address(kafka)) as client:
        send_frame(client, body_frame(api, 1, body))
        assert client.is_closed_by_peer()
    for operation in (2, -1, 99):  # ALL, then codes Kafka does not know
        with WireClient(address(kafka)) as client:
            other = ({**body, "operation": operation} if api == "DescribeAcls" else
                     {key: [{**entry, "operation": operation} for entry in entries]
                      for key, entries in body.items()})
            send_frame(client, body_frame(api, 1, other))
            assert answer(client, api, 1) is not None, operation


@pytest.mark.parametrize("cluster, node, error", [
    (None, -1, 0), ("this", "this", 0), (None, "this", ErrorCode.INVALID_REQUEST),
    ("this", -1, ErrorCode.INVALID_REQUEST), ("", -1, ErrorCode.INVALID_REQUEST),
    ("", "this", ErrorCode.REBOOTSTRAP_REQUIRED),
    ("this", "other", ErrorCode.REBOOTSTRAP_REQUIRED),
    ("x", "this", ErrorCode.REBOOTSTRAP_REQUIRED)])
def test_api_versions_v5_names_the_cluster_and_the_node_or_neither(kafka, cluster, node,
                                                                   error):
    """Not a reading rule but ApiVersions' own check (KIP-1242, measured on Kafka 4.4): a
    cluster id without a node, or a node without a cluster id, is INVALID_REQUEST; both,
    naming another cluster or node, REBOOTSTRAP_REQUIRED ("this": the cluster's id, the id
    of the broker that answers; "other": another id)."""
    with WireClient(address(kafka)) as client:
        metadata = client.request("Metadata", 12, {"topics": [],
                                                   "allow_auto_topic_creation": False})
        this = metadata.brokers[0].node_id
        response = client.request("ApiVersions", 5, {
            "client_software_name": "wire", "client_software_version": "1",
            "cluster_id": metadata.cluster_id if cluster == "this" else cluster,
            "node_id": {"this": this, "other": this + 7, -1: -1}[node]})
    assert response.error_code == error
