"""What a ShareFetch answers for a partition without share state. Kafka 4.4 initializes a
share group's state for the partitions of the topics its members subscribe to (or an
AlterShareGroupOffsets names); a fetch of any other partition of an existing group makes the
broker read state its share coordinator never initialized, which it refuses (INVALID_REQUEST,
"Read on uninitialized share partition"): the partition is answered UNKNOWN_SERVER_ERROR once
the fetch's wait is over, at each fetch while the session holds it, and nothing is acquired;
so is a partition of a group that does not exist. Measured on Kafka 4.4; runs on the fake and
on Kafka (``--kafka=both``)."""

from __future__ import annotations

import time
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_share_groups import join_and_acquire, new_group
from tests.test_share_start_state import MEMBER, two_records
from tests.test_wire_versions import topic_id

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1, "pairs": 2}),
              pytest.mark.timeout(120)]


def fetch(client: WireClient, group: str, member: str, epoch: int, topic=None,
          partitions: tuple[int, ...] = ()) -> list[tuple[int, int, int]]:
    """One ShareFetch (waiting up to 0.5 s) adding ``partitions`` of ``topic`` to the
    session: each partition answered (index, error code, records acquired), in order."""
    answer = client.request("ShareFetch", 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "forgotten_topics_data": [], "topics": [] if topic is None else [{
            "topic_id": topic, "partitions": [
                {"partition_index": p, "acknowledgement_batches": []} for p in partitions]}]})
    assert answer.error_code == 0, answer.error_message
    return sorted((p.partition_index, p.error_code, len(p.acquired_records))
                  for t in answer.responses for p in t.partitions)


def test_a_partition_the_group_has_no_share_state_for_fails_at_every_fetch(kafka):
    address, orphans = two_records(kafka)
    with WireClient(address) as client:
        client.request("Produce", 9, produce_body("pairs", 0, batch([b"a", b"b"])))
    pairs = topic_id(kafka, "pairs")
    group = new_group(kafka)
    with WireClient(address) as client:
        _, epoch = join_and_acquire(client, group, MEMBER, orphans)  # subscribed to orphans
        failed = [(0, ErrorCode.UNKNOWN_SERVER_ERROR, 0), (1, ErrorCode.UNKNOWN_SERVER_ERROR, 0)]
        started = time.monotonic()
        assert fetch(client, group, MEMBER, epoch, pairs, (0, 1)) == failed
        assert time.monotonic() - started >= 0.45  # its 0.5 s wait, not ended by the errors
        assert fetch(client, group, MEMBER, epoch + 1) == failed


def test_a_member_outside_the_group_reads_the_groups_share_state(kafka):
    address, orphans = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        join_and_acquire(client, group, MEMBER, orphans)  # both records held by MEMBER
        stranger = str(uuid.uuid4())
        assert fetch(client, group, stranger, 0, orphans, (0,)) == [(0, 0, 0)]


def test_a_group_that_does_not_exist_has_no_share_state_either(kafka):
    address, orphans = two_records(kafka)
    with WireClient(address) as client:
        # Kafka answers no partition while its share coordinator is still loading: a group
        # read first loads it
        join_and_acquire(client, new_group(kafka), MEMBER, orphans)
        member = str(uuid.uuid4())
        assert fetch(client, f"nosuch-{uuid.uuid4()}", member, 0, orphans, (0,)) == [
            (0, ErrorCode.UNKNOWN_SERVER_ERROR, 0)]
