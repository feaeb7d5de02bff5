"""ShareFetch v2's acquire mode (KIP-1206: 0 batch-optimized, 1 record limit) on Kafka 4.4: any
other value fails the fetch as an exception Kafka does not catch (``ShareAcquireMode.forId``),
once the session was opened or moved on to its next epoch and the acknowledgements applied:
UNKNOWN_SERVER_ERROR for the whole request, with no message, no partition answered and an
acquisition lock timeout of 0, when a partition of a topic that exists is to be fetched. A
final fetch (epoch -1) fetches nothing and closes the session
as always.

Found by the differential fuzzer (python -m tests.fuzz differential, seed 3's #65216: an acquire
mode mutated to another value, answered UNKNOWN_SERVER_ERROR by Kafka and served by the fake);
runs on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_groups import join_and_acquire, new_group
from tests.test_share_start_state import MEMBER, acquired, two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]
RELEASE = 2


def fetch(client: WireClient, group: str, epoch: int, topic_id, mode: int,
          release: bool = False, max_wait_ms: int = 0):
    """ShareFetch v2 of partition 0 at ``epoch`` in acquire mode ``mode``, releasing the two
    records if asked."""
    acks = [{"first_offset": 0, "last_offset": 1, "acknowledge_types": [RELEASE]}]
    return client.request("ShareFetch", 2, {
        "group_id": group, "member_id": MEMBER, "share_session_epoch": epoch,
        "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "share_acquire_mode": mode, "is_renew_ack": False,
        "forgotten_topics_data": [], "topics": [{
            "topic_id": topic_id, "partitions": [{
                "partition_index": 0, "acknowledgement_batches": acks if release else []}]}]})


def reacquired(client: WireClient, group: str, epoch: int, topic_id, mode: int = 0) -> list:
    """The records the session's fetches from ``epoch`` on acquire again (Kafka applies a
    release beside the fetch carrying it, so the records come back at a later fetch)."""
    for next_epoch in range(epoch, epoch + 10):
        answer = fetch(client, group, next_epoch, topic_id, mode, max_wait_ms=500)
        assert answer.error_code == 0, answer.error_message
        if acquired(answer):
            return acquired(answer)
    return []


def refused(answer) -> tuple:
    return answer.error_code, answer.error_message, answer.acquisition_lock_timeout_ms, \
        answer.responses


@pytest.mark.parametrize("mode", [2, -1, 127])
def test_an_unknown_acquire_mode_fails_the_fetch_after_the_session_and_acknowledgements(
        kafka, mode):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        held, epoch = join_and_acquire(client, group, MEMBER, topic_id)
        assert held == [(0, 1, 1)]
        answer = fetch(client, group, epoch, topic_id, mode, release=True)
        assert refused(answer) == (ErrorCode.UNKNOWN_SERVER_ERROR, None, 0, [])
        assert reacquired(client, group, epoch + 1, topic_id) == [(0, 1, 2)]  # released


def test_an_unknown_acquire_mode_opening_a_session_opens_it(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        assert refused(fetch(client, group, 0, topic_id, 2)) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, None, 0, [])
        assert fetch(client, group, 1, topic_id, 0).error_code == 0
        assert fetch(client, group, -1, topic_id, 2).error_code == 0  # closes it, as always
        assert fetch(client, group, 2, topic_id, 0).error_code == \
            ErrorCode.SHARE_SESSION_NOT_FOUND


@pytest.mark.parametrize("mode", [2, -128])
def test_an_unknown_acquire_mode_with_only_unknown_topic_ids_answers_them(kafka, mode):
    """With no partition of a topic that exists to fetch, Kafka reads no acquire mode: each
    partition of an unknown topic id is UNKNOWN_TOPIC_ID (seed 1's #992789 of 1,000,000)."""
    address, _ = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        answer = fetch(client, group, 0, uuid.uuid4(), mode)
    assert (answer.error_code, answer.error_message) == (0, None)
    assert [(p.partition_index, p.error_code) for t in answer.responses
            for p in t.partitions] == [(0, ErrorCode.UNKNOWN_TOPIC_ID)]


@pytest.mark.parametrize("mode", [0, 1])
def test_both_acquire_modes_acquire(kafka, mode):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        _, epoch = join_and_acquire(client, group, MEMBER, topic_id)
        answer = fetch(client, group, epoch, topic_id, mode, release=True)
        assert answer.error_code == 0
        # the fake acquires the released records at once; Kafka at a later fetch
        assert (acquired(answer) or reacquired(client, group, epoch + 1, topic_id, mode)) \
            == [(0, 1, 2)]
