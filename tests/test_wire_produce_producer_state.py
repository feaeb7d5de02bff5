"""An idempotent producer's state on a partition, and where Produce's checks of it fall among
the record checks, measured on Apache Kafka 4.4 (``--kafka=both``).

Kafka keeps a producer's epoch and sequences per partition (its ProducerStateManager): a
partition checks a batch's epoch and sequence against what that partition last appended from
the producer, and it does so after LogValidator read the batch's records. So a batch whose
records do not add up is INVALID_RECORD whatever its epoch or sequence, and leaves the
partition's producer state as it was.
"""

from __future__ import annotations

import struct

import crc32c
import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient

pytestmark = pytest.mark.fake_kafka(topics={})


def idempotent(values: list[bytes], pid: int, epoch: int, sequence: int) -> bytes:
    return encode_batch([(None, v, [], 1_700_000_000_000) for v in values], producer_id=pid,
                        producer_epoch=epoch, base_sequence=sequence)


def counting_one_more(records: bytes) -> bytes:
    """``records`` (one batch) claiming one record more than it holds, its CRC valid: a
    batch whose records do not add up, as only LogValidator's reading of them finds."""
    data = bytearray(records)
    struct.pack_into(">i", data, 23, struct.unpack_from(">i", data, 23)[0] + 1)
    struct.pack_into(">i", data, 57, struct.unpack_from(">i", data, 57)[0] + 1)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


def produce(client: WireClient, topic: str, partition: int, records: bytes) -> str:
    response = client.request("Produce", 9, {
        "acks": -1, "timeout_ms": 5000, "transactional_id": None,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": partition, "records": records}]}]})
    return ErrorCode(response.responses[0].partition_responses[0].error_code).name


@pytest.fixture
def topic(kafka) -> str:
    name = kafka.name("idempotent")
    kafka.create_topic(name, partitions=2)
    return name


def test_a_producers_epoch_is_checked_per_partition(kafka, topic):
    with WireClient(kafka.bootstrap_servers) as client:
        assert produce(client, topic, 0, idempotent([b"a"], 4001, epoch=1, sequence=0)) == "NONE"
        # Partition 1 never saw epoch 1: epoch 0 is new there.
        assert produce(client, topic, 1, idempotent([b"b"], 4001, epoch=0, sequence=0)) == "NONE"
        assert produce(client, topic, 0, idempotent([b"c"], 4001, epoch=0, sequence=1)) \
            == "INVALID_PRODUCER_EPOCH"


def test_a_producer_new_to_a_partition_may_start_at_any_sequence(kafka, topic):
    with WireClient(kafka.bootstrap_servers) as client:
        assert produce(client, topic, 0, idempotent([b"a"], 4002, epoch=0, sequence=5)) == "NONE"
        assert produce(client, topic, 0, idempotent([b"b"], 4002, epoch=0, sequence=7)) \
            == "OUT_OF_ORDER_SEQUENCE_NUMBER"
        assert produce(client, topic, 0, idempotent([b"b"], 4002, epoch=0, sequence=6)) == "NONE"
        # A new epoch starts at sequence 0.
        assert produce(client, topic, 0, idempotent([b"c"], 4002, epoch=1, sequence=3)) \
            == "OUT_OF_ORDER_SEQUENCE_NUMBER"


@pytest.mark.parametrize("producer", ["an old epoch", "a sequence gap", "a retry"])
def test_records_that_do_not_add_up_are_invalid_record_before_the_producer_checks(
        kafka, topic, producer):
    with WireClient(kafka.bootstrap_servers) as client:
        assert produce(client, topic, 0, idempotent([b"a"], 4003, epoch=1, sequence=0)) == "NONE"
        epoch, sequence = {"an old epoch": (0, 1), "a sequence gap": (1, 5),
                           "a retry": (1, 0)}[producer]
        assert produce(client, topic, 0, counting_one_more(
            idempotent([b"a"], 4003, epoch=epoch, sequence=sequence))) == "INVALID_RECORD"
    assert kafka.offsets(topic, 0) == (0, 1)


@pytest.mark.parametrize("change", ["a new epoch", "a producer new to the partition"])
def test_a_batch_refused_for_its_records_leaves_the_producers_state_as_it_was(
        kafka, topic, change):
    with WireClient(kafka.bootstrap_servers) as client:
        if change == "a new epoch":
            assert produce(client, topic, 0, idempotent([b"a"], 4004, 0, 0)) == "NONE"
        assert produce(client, topic, 0, counting_one_more(
            idempotent([b"b"], 4004, epoch=3, sequence=0))) == "INVALID_RECORD"
        assert produce(client, topic, 0, idempotent([b"c"], 4004, epoch=0, sequence=1 if (
            change == "a new epoch") else 9)) == "NONE"
