"""How Kafka 4.4 checks a share member's acknowledgement ranges (``SharePartition.acknowledge``):
a range starting past the records delivered, or ending past them, is INVALID_REQUEST, each
with its own message; a range refused undoes the ranges before it in the same request (the
records they settled are the member's again); and a partition no ShareFetch has read yet is
not in the broker's share-partition cache: UNKNOWN_TOPIC_OR_PARTITION.

Found by the differential fuzzer (python -m tests.fuzz differential, seed 1's #207936: a range
ending at 2^47); runs on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_share_groups import join_and_acquire, new_group
from tests.test_share_start_state import MEMBER, two_records
from tests.test_wire_versions import topic_id

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1, "pairs": 2}),
              pytest.mark.timeout(120)]
ACCEPT = 1
PAST_FIRST = "Batch record not found. The first offset in request is past acquired records."
PAST_LAST = "Batch record not found. The last offset in request is past acquired records."


def acknowledge(client: WireClient, group: str, epoch: int, topic, ranges,
                partition: int = 0) -> tuple[int, str | None]:
    """ShareAcknowledge of ``ranges`` (first, last) as ACCEPT: the partition's error and
    message."""
    answer = client.request("ShareAcknowledge", 1, {
        "group_id": group, "member_id": MEMBER, "share_session_epoch": epoch,
        "topics": [{"topic_id": topic, "partitions": [{
            "partition_index": partition, "acknowledgement_batches": [
                {"first_offset": first, "last_offset": last, "acknowledge_types": [ACCEPT]}
                for first, last in ranges]}]}]})
    assert answer.error_code == 0, answer.error_message
    (partition_answer,) = answer.responses[0].partitions
    return partition_answer.error_code, partition_answer.error_message


def test_a_range_past_the_records_delivered_is_an_invalid_request(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        held, epoch = join_and_acquire(client, group, MEMBER, orphans)
        assert held == [(0, 1, 1)]
        assert acknowledge(client, group, epoch, orphans, [(0, 2**47)]) == (
            ErrorCode.INVALID_REQUEST, PAST_LAST)
        assert acknowledge(client, group, epoch + 1, orphans, [(2, 5)]) == (
            ErrorCode.INVALID_REQUEST, PAST_FIRST)
        assert acknowledge(client, group, epoch + 2, orphans, [(0, 1)]) == (0, None)


def test_a_refused_range_undoes_the_ranges_before_it(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        held, epoch = join_and_acquire(client, group, MEMBER, orphans)
        assert held == [(0, 1, 1)]
        assert acknowledge(client, group, epoch, orphans, [(0, 0), (1, 9)]) == (
            ErrorCode.INVALID_REQUEST, PAST_LAST)
        # record 0 is held still (accepted, it would be INVALID_RECORD_STATE)
        assert acknowledge(client, group, epoch + 1, orphans, [(0, 1)]) == (0, None)


def test_a_partition_no_fetch_has_read_is_unknown_to_acknowledgements(kafka):
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as client:
        client.request("Produce", 9, produce_body("pairs", 0, batch([b"a", b"b"])))
    pairs = topic_id(kafka, "pairs")
    group = new_group(kafka)
    with WireClient(address) as client:
        _, epoch = join_and_acquire(client, group, MEMBER, pairs, topic="pairs")  # pairs-0 only
        assert acknowledge(client, group, epoch, pairs, [(0, 0)], partition=1) == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "This server does not host this topic-partition.")
