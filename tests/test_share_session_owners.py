"""Which share sessions a connection's end takes with it, and what a member's leave leaves, on
Kafka 4.4 (ShareSessionCache: one entry per connection id, naming the last session opened on
it, marked stale when a session opened on that connection ends; the group coordinator never
ends a share session):

* a connection closing ends the last session opened on it; the sessions opened on it before
  live on;
* once a session opened on the connection has ended (closed with epoch -1 here), its close
  ends none, not even the last one opened on it;
* a member leaving its group (ShareGroupHeartbeat -1) keeps its share session and the records
  it acquired: the other members get none of them, and it may still acknowledge them;
* a session-opening ShareFetch naming a partition twice ends the member's session and opens
  none, answered UNKNOWN_SERVER_ERROR (Kafka's own bug: SharePartitionManager.newContext
  removes the old session, then fails adding the duplicate partition to the new one);
* a ShareFetch whose session has no partitions is answered at once, whatever its
  ``max_wait_ms`` (nothing to fetch): a harness closing what is still pending after 0.5 s
  would otherwise end the session on one broker only.

Found by the differential fuzzer (python -m tests.fuzz differential: sessions alive on one
broker and not on the other after the fuzzer's connections closed, records a left member held
still locked on Kafka); runs on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import time

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_groups import join_and_acquire, new_group, share_fetch
from tests.test_share_start_state import MEMBER, OTHER, acquired, two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]
LIVE, GONE = ErrorCode.INVALID_SHARE_SESSION_EPOCH, ErrorCode.SHARE_SESSION_NOT_FOUND


def session_of(client: WireClient, group: str, member: str) -> int:
    """LIVE while ``member`` has a session (at an epoch no session reaches), else GONE."""
    return client.request("ShareAcknowledge", 1, {
        "group_id": group, "member_id": member, "share_session_epoch": 32767,
        "topics": []}).error_code


def open_session(client: WireClient, group: str, member: str, topic_id, epoch: int = 0) -> None:
    assert client.request("ShareFetch", 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "forgotten_topics_data": [], "topics": [{
            "topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                  "acknowledgement_batches": []}]}]}
    ).error_code == 0


def test_a_closed_connection_ends_only_the_last_share_session_opened_on_it(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as checker:
        with WireClient(address) as client:
            open_session(client, group, MEMBER, topic_id)
            open_session(client, group, OTHER, topic_id)
        started = time.monotonic()
        while session_of(checker, group, OTHER) == LIVE:
            assert time.monotonic() - started < 5, "the close ended no session"
            time.sleep(0.05)
        assert session_of(checker, group, MEMBER) == LIVE


def test_a_session_ended_on_a_connection_leaves_its_close_ending_none(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as checker:
        with WireClient(address) as client:
            open_session(client, group, MEMBER, topic_id)
            open_session(client, group, OTHER, topic_id)
            open_session(client, group, MEMBER, topic_id, epoch=-1)  # closes MEMBER's
        time.sleep(1)  # Kafka forgets a closed connection's session within ~100 ms
        assert (session_of(checker, group, MEMBER), session_of(checker, group, OTHER)) \
            == (GONE, LIVE)


def test_a_member_leaving_its_group_keeps_its_share_session_and_records(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client, WireClient(address) as other:
        held, epoch = join_and_acquire(client, group, MEMBER, topic_id)
        assert held == [(0, 1, 1)]
        assert client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": MEMBER, "member_epoch": -1}).error_code == 0
        assert session_of(other, group, MEMBER) == LIVE
        for _ in range(50):  # OTHER joins and is assigned the partition
            answer = other.request("ShareGroupHeartbeat", 1, {
                "group_id": group, "member_id": OTHER, "member_epoch": 0,
                "subscribed_topic_names": ["orphans"]})
            if answer.assignment and answer.assignment.topic_partitions:
                break
            time.sleep(0.2)
        assert acquired(share_fetch(other, group, OTHER, topic_id, 0)) == []  # waited 1 s
        answer = client.request("ShareAcknowledge", 1, {
            "group_id": group, "member_id": MEMBER, "share_session_epoch": epoch,
            "topics": [{"topic_id": topic_id, "partitions": [{
                "partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": 0, "last_offset": 1, "acknowledge_types": [1]}]}]}]})
        assert (answer.error_code, [p.error_code for t in answer.responses
                                    for p in t.partitions]) == (0, [0])


def test_a_session_opened_naming_a_partition_twice_ends_the_old_and_opens_none(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    partition = {"partition_index": 0, "acknowledgement_batches": []}
    with WireClient(address) as client:
        open_session(client, group, MEMBER, topic_id)
        answer = client.request("ShareFetch", 1, {
            "group_id": group, "member_id": MEMBER, "share_session_epoch": 0,
            "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
            "batch_size": 100, "forgotten_topics_data": [], "topics": [
                {"topic_id": topic_id, "partitions": [partition, partition]}]})
        assert answer.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert session_of(client, group, MEMBER) == GONE


def test_a_share_session_of_no_partitions_is_answered_at_once(kafka):
    address, _ = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        for epoch in (0, 1):
            started = time.monotonic()
            answer = client.request("ShareFetch", 1, {
                "group_id": group, "member_id": MEMBER, "share_session_epoch": epoch,
                "max_wait_ms": 5000, "min_bytes": 1, "max_bytes": 1 << 20,
                "max_records": 100, "batch_size": 100, "forgotten_topics_data": [],
                "topics": []})
            assert (answer.error_code, answer.responses) == (0, [])
            assert time.monotonic() - started < 2.5
