"""Request bodies shared by the wire tests (tests/test_wire_*.py) and the conformance corpus
(tests/conformance/corpus.py).

A body is a plain mapping for ``WireClient.request`` at any version of its API: the codec
writes the fields a version has and leaves the others out, so one body serves every version
(``produce_body`` carries both a topic name, v0-12, and a topic id, v13+).
"""

from __future__ import annotations

import struct
from typing import Any

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.records import encode_batch


def batch(values: list[bytes], magic: int = 2) -> bytes:
    """One batch of ``values`` with key ``k`` and timestamp 1,700,000,000,000 each."""
    return encode_batch([(b"k", v, [], 1_700_000_000_000) for v in values], magic=magic)


def produce_body(topic: str | None, partition: int, records: bytes, topic_id: Any = ZERO_UUID,
                 acks: int = -1) -> dict[str, Any]:
    return {"acks": acks, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "topic_id": topic_id,
         "partition_data": [{"index": partition, "records": records}]}]}


def fetch_body(topic: str | None, partition: int, offset: int, topic_id: Any = ZERO_UUID,
               max_wait_ms: int = 0) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
            "max_bytes": 1 << 20, "topics": [
                {"topic": topic, "topic_id": topic_id, "partitions": [
                    {"partition": partition, "fetch_offset": offset,
                     "partition_max_bytes": 1 << 20}]}]}


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0: version, topics, null user data."""
    body = struct.pack(">hi", 0, len(topics))
    for t in topics:
        body += struct.pack(">h", len(t)) + t.encode()
    return body + struct.pack(">i", -1)


def join_body(member_id: Any = "", instance: str | None = None, protocols: Any = None,
              group: str = "g") -> dict[str, Any]:
    """JoinGroup as a consumer of ``orders`` with the range assignor."""
    return {"group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000,
            "member_id": member_id, "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": protocols or [{"name": "range", "metadata": subscription("orders")}]}


OFFSET_FOR_LEADER_EPOCH = {"replica_id": -1, "topics": [{"topic": "orders", "partitions": [
    {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}
INIT_PRODUCER_ID = {"transactional_id": None, "transaction_timeout_ms": 60000,
                    "producer_id": -1, "producer_epoch": -1}
DESCRIBE_TOPIC_CONFIGS = {"resources": [{"resource_type": 2, "resource_name": "orders",
                                         "configuration_keys": None}]}
DESCRIBE_CLUSTER = {"endpoint_type": 1}
DELETE_RECORDS_TO_END = {"topics": [{"name": "orders", "partitions": [
    {"partition_index": 0, "offset": -1}]}], "timeout_ms": 1000}


def assignment(topic: str, *partitions: int) -> bytes:
    """A ConsumerProtocolAssignment v0 of ``partitions`` of ``topic``, null user data."""
    body = struct.pack(">hih", 0, 1, len(topic)) + topic.encode()
    body += struct.pack(">i", len(partitions)) + b"".join(struct.pack(">i", p) for p in partitions)
    return body + struct.pack(">i", -1)
