"""How Kafka 4.4 checks a share member's acknowledgement ranges (``SharePartition.acknowledge``):
a range starting past the records delivered, or ending past them, is INVALID_REQUEST, each
with its own message; a range refused undoes the ranges before it in the same request (the
records they settled are the member's again); and a partition no ShareFetch has read yet is
not in the broker's share-partition cache: UNKNOWN_TOPIC_OR_PARTITION. INVALID_RECORD_STATE's
message names the batch or the offset as Kafka tracks the in-flight batch: as one until a
range acknowledges part of it, offset by offset from then on.

Found by the differential fuzzer (python -m tests.fuzz differential, seed 1's #207936: a range
ending at 2^47); runs on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_share_groups import join_and_acquire, new_group, share_fetch
from tests.test_share_start_state import MEMBER, OTHER, two_records
from tests.test_wire_versions import topic_id

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1, "pairs": 2}),
              pytest.mark.timeout(120)]
ACCEPT, RELEASE = 1, 2
PAST_FIRST = "Batch record not found. The first offset in request is past acquired records."
PAST_LAST = "Batch record not found. The last offset in request is past acquired records."


def acknowledge(client: WireClient, group: str, epoch: int, topic, ranges,
                partition: int = 0, kind: int = ACCEPT, member: str = MEMBER
                ) -> tuple[int, str | None]:
    """ShareAcknowledge of ``ranges`` (first, last) as ``kind``: the partition's error and
    message."""
    answer = client.request("ShareAcknowledge", 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "topics": [{"topic_id": topic, "partitions": [{
            "partition_index": partition, "acknowledgement_batches": [
                {"first_offset": first, "last_offset": last, "acknowledge_types": [kind]}
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


NOT_ACQUIRED_BATCH = "The batch cannot be acknowledged. The batch is not in the acquired state."
NOT_ACQUIRED_OFFSET = "The offset cannot be acknowledged. The offset is not acquired."


def test_a_batch_released_whole_is_refused_as_a_batch(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        _, epoch = join_and_acquire(client, group, MEMBER, orphans)  # one batch: 0-1
        assert acknowledge(client, group, epoch, orphans, [(0, 1)], kind=RELEASE) == (0, None)
        for next_epoch, ranges in enumerate(([(0, 1)], [(1, 1)]), epoch + 1):
            assert acknowledge(client, group, next_epoch, orphans, ranges) == (
                ErrorCode.INVALID_RECORD_STATE, NOT_ACQUIRED_BATCH)


def test_a_batch_acknowledged_in_part_is_checked_offset_by_offset(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        _, epoch = join_and_acquire(client, group, MEMBER, orphans)
        assert acknowledge(client, group, epoch, orphans, [(1, 1)], kind=RELEASE) == (0, None)
        assert acknowledge(client, group, epoch + 1, orphans, [(0, 1)]) == (
            ErrorCode.INVALID_RECORD_STATE, NOT_ACQUIRED_OFFSET)


def test_another_members_batch_then_offset_is_not_its_own(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client, WireClient(address) as other:
        _, epoch = join_and_acquire(client, group, MEMBER, orphans)
        opened = share_fetch(other, group, OTHER, orphans, 0)  # acquires nothing
        assert opened.error_code == 0, opened.error_message
        assert acknowledge(other, group, 1, orphans, [(1, 1)], member=OTHER) == (
            ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record")
        assert acknowledge(client, group, epoch, orphans, [(0, 0)]) == (0, None)
        assert acknowledge(other, group, 2, orphans, [(1, 1)], member=OTHER) == (
            ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of offset")
