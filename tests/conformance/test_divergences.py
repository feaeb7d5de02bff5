"""The divergences the conformance run found, fixed: each test states Kafka 4.4's answer (as
the real broker gave it in tests/conformance/test_conformance.py) and checks fakebroker gives
it, without a real Kafka."""

from __future__ import annotations

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from tests.bodies import batch, fetch_body, produce_body
from tests.wire import WireClient

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})


@pytest.fixture
def client(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as wire:
        yield wire


def test_metadata_auto_creation_answers_unknown_topic_then_the_topic(client):
    """A KRaft broker asks its controller to create the topic: not there yet for this one."""
    first = client.request("Metadata", 12, {"topics": [{"name": "fresh"}]}).topics[0]
    assert (first.error_code, first.topic_id, first.partitions) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, [])
    again = client.request("Metadata", 12, {"topics": [{"name": "fresh"}]}).topics[0]
    assert again.error_code == 0 and [p.partition_index for p in again.partitions] == [0]


def test_fetch_errors_carry_kafkas_fields(client, fake_kafka):
    client.request("Produce", 9, produce_body("orders", 0, batch([b"a"])))
    past = client.request("Fetch", 12, fetch_body("orders", 0, 5)).responses[0].partitions[0]
    assert (past.error_code, past.high_watermark, past.last_stable_offset,
            past.log_start_offset) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1, -1)
    unknown = client.request("Fetch", 12, fetch_body("orders", 9, 0)).responses[0].partitions[0]
    assert (unknown.error_code, unknown.aborted_transactions) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    topic_id = fake_kafka.call(lambda: fake_kafka.cluster.state.topics["orders"].id)
    body = fetch_body("orders", 0, 0, topic_id)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = 5
    future = client.request("Fetch", 16, body)
    partition = future.responses[0].partitions[0]
    assert partition.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert partition.current_leader.leader_id == -1 and future.node_endpoints == []


def test_produce_refusals_carry_no_message(client):
    corrupt = bytearray(batch([b"x"]))
    corrupt[-1] ^= 0xFF
    for records, error in ((bytes(corrupt), ErrorCode.CORRUPT_MESSAGE),
                           (batch([b"x"], magic=1), ErrorCode.INVALID_RECORD)):
        answer = client.request("Produce", 9, produce_body("orders", 0, records))
        partition = answer.responses[0].partition_responses[0]
        assert (partition.error_code, partition.error_message) == (error, None)


def test_idempotent_refusals_and_retries_carry_kafkas_fields(client):
    init = client.request("InitProducerId", 4, {"transactional_id": None,
                                                "transaction_timeout_ms": 1000,
                                                "producer_id": -1, "producer_epoch": -1})

    def produce(value: bytes, sequence: int):
        records = encode_batch([(None, value, [], 1_700_000_000_000)],
                               producer_id=init.producer_id, producer_epoch=0,
                               base_sequence=sequence)
        answer = client.request("Produce", 9, produce_body("orders", 0, records))
        return answer.responses[0].partition_responses[0]

    produce(b"a", 0)
    retried = produce(b"a", 0)  # the stored batch's timestamp as its append time
    assert (retried.error_code, retried.base_offset, retried.log_append_time_ms) == (
        0, 0, 1_700_000_000_000)
    gap = produce(b"c", 5)
    assert (gap.error_code, gap.error_message, gap.log_start_offset) == (
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, None, 0)


def test_metadata_authorized_operations_when_asked(client):
    answer = client.request("Metadata", 10, {
        "topics": [{"name": "orders"}], "include_topic_authorized_operations": True,
        "include_cluster_authorized_operations": True})
    assert answer.topics[0].topic_authorized_operations == 3576
    assert answer.cluster_authorized_operations == 8096
    plain = client.request("Metadata", 10, {"topics": [{"name": "orders"}]})
    assert plain.topics[0].topic_authorized_operations == -(2**31)
