"""The largest record batch a broker takes at its defaults, measured on Apache Kafka 4.4
(``--kafka=both``): ``message.max.bytes`` is 1,048,588 bytes (1 MiB + the 12 bytes of
offset and size that start every batch), checked against the whole batch as it is sent. A
batch of exactly that size is appended; one byte more is MESSAGE_TOO_LARGE (code 10) for its
partition alone: the other partitions of the same request are appended, and the refused
partition's log stays as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient
from tests.bodies import batch

pytestmark = pytest.mark.fake_kafka(topics={"big": 2})

MESSAGE_MAX_BYTES = 1_048_588  # Kafka's default: 1 MiB + the batch's 12-byte log overhead


def sized_batch(size: int) -> bytes:
    """One magic-2 batch of one record, ``size`` bytes long in all."""
    value_bytes = size - len(encode_batch([(None, b"", [], 0)]))
    while True:  # the record's varint lengths grow with its value: shrink until it fits
        built = encode_batch([(None, b"v" * value_bytes, [], 0)])
        if len(built) <= size:
            break
        value_bytes -= len(built) - size
    assert len(built) == size, "no value length gives a batch of exactly this size"
    return built


def produce(client: WireClient, records: dict[int, bytes]) -> dict[int, Any]:
    """Produce v9 to partitions of ``big`` in one request; each partition's answer."""
    response = client.request("Produce", 9, {"acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": "big", "partition_data": [
            {"index": p, "records": r} for p, r in records.items()]}]})
    return {p.index: p for p in response.responses[0].partition_responses}


def test_a_batch_of_message_max_bytes_is_appended(kafka):
    with WireClient(kafka.bootstrap_servers, timeout=60) as client:
        answers = produce(client, {0: sized_batch(MESSAGE_MAX_BYTES)})
    assert answers[0].error_code == 0
    assert kafka.offsets("big", 0) == (0, 1)


def test_one_byte_more_is_message_too_large_for_that_partition_alone(kafka):
    with WireClient(kafka.bootstrap_servers, timeout=60) as client:
        answers = produce(client, {0: sized_batch(MESSAGE_MAX_BYTES + 1), 1: batch([b"small"])})
    assert answers[0].error_code == ErrorCode.MESSAGE_TOO_LARGE
    refused = answers[0]
    assert (refused.base_offset, refused.log_start_offset, refused.record_errors,
            refused.error_message) == (-1, -1, [], None)
    assert answers[1].error_code == 0
    assert kafka.offsets("big", 0) == (0, 0)
    assert [r.value for r in kafka.records("big", 1)] == [b"small"]
