"""Where a share group's partition starts, as a ShareFetch meets it on Kafka 4.4.

* A ShareFetch of a share group that Kafka's group coordinator does not know — no member ever
  joined it, or it was deleted (DeleteGroups) — or of a partition never assigned to the
  group's members acquires nothing: Kafka has no share state to start the partition from (a
  partition's state is initialized for the members it is assigned to), so the fetch waits its
  ``max_wait_ms`` and answers no records, whatever the group's ``share.auto.offset.reset``.
* A start offset set below -1 (AlterShareGroupOffsets) is out of the log's range: the next
  fetch begun after it moves it to the log start offset and acquires nothing from the
  partition, answering at once (a fetch already waiting acquires nothing from it, records
  appended or not); the one after starts there.

Found by the differential fuzzer (python -m tests.fuzz differential: a session-opening
ShareFetch after the conformance corpus deleted its group, then that group's start offset
altered to -2); runs on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import time

import pytest

from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_share_groups import join_and_acquire, new_group, share_fetch

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]
MEMBER, OTHER = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"


def acquired(answer) -> list[tuple[int, int, int]]:
    return [(r.first_offset, r.last_offset, r.delivery_count)
            for t in answer.responses for p in t.partitions for r in p.acquired_records]


def two_records(kafka) -> tuple[str, object]:
    """The broker's address and the id of ``orphans``, two records produced to it."""
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as client:
        client.request("Produce", 9, produce_body("orphans", 0, batch([b"a", b"b"])))
        topic_id = client.request("Metadata", 12, {
            "topics": [{"name": "orphans", "topic_id": None}],
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False}).topics[0].topic_id
    return address, topic_id


def fetch_waits_and_acquires_nothing(client: WireClient, group: str, topic_id) -> None:
    started = time.monotonic()
    answer = share_fetch(client, group, OTHER, topic_id, 0)  # waits up to 1 s
    assert (answer.error_code, acquired(answer)) == (0, [])
    assert time.monotonic() - started >= 0.9


def test_a_share_fetch_of_a_group_no_member_joined_acquires_nothing(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)  # share.auto.offset.reset=earliest
    with WireClient(address) as client:
        fetch_waits_and_acquires_nothing(client, group, topic_id)


def test_a_deleted_share_group_acquires_nothing(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        assert join_and_acquire(client, group, MEMBER, topic_id)[0] == [(0, 1, 1)]
        left = client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": MEMBER, "member_epoch": -1})
        assert left.error_code == 0, left.error_message
    with WireClient(address) as client:  # the member's session gone with its connection
        deleted = client.request("DeleteGroups", 2, {"groups_names": [group]})
        assert [r.error_code for r in deleted.results] == [0]
        fetch_waits_and_acquires_nothing(client, group, topic_id)


@pytest.mark.fake_kafka(topics={"orphans": 1, "elsewhere": 1})
def test_a_share_fetch_of_a_partition_never_assigned_in_the_group_acquires_nothing(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        joined = client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": MEMBER, "member_epoch": 0,
            "subscribed_topic_names": ["elsewhere"]})
        assert joined.error_code == 0, joined.error_message
        fetch_waits_and_acquires_nothing(client, group, topic_id)


def test_a_start_offset_altered_below_minus_one_moves_to_the_log_start_after_a_fetch(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as client:
        altered = client.request("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [{
            "topic_name": "orphans", "partitions": [{"partition_index": 0,
                                                     "start_offset": -2}]}]})
        assert [(p.error_code, p.error_message) for t in altered.responses
                for p in t.partitions] == [(0, None)]
        started = time.monotonic()
        answer = share_fetch(client, group, OTHER, topic_id, 0)  # may wait up to 1 s
        assert time.monotonic() - started < 0.5  # answered at once
        assert [(p.partition_index, p.error_code) for t in answer.responses
                for p in t.partitions] == [(0, 0)]
        assert acquired(answer) == []
        answer = share_fetch(client, group, OTHER, topic_id, 1)
        assert (answer.error_code, acquired(answer)) == (0, [(0, 1, 1)])


def test_a_fetch_waiting_when_the_start_offset_is_altered_below_minus_one_waits_on(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)
    with WireClient(address) as waiting, WireClient(address) as client:
        waiting.send("ShareFetch", 1, {
            "group_id": group, "member_id": OTHER, "share_session_epoch": 0,
            "max_wait_ms": 3000, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
            "batch_size": 100, "forgotten_topics_data": [], "topics": [{
                "topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                      "acknowledgement_batches": []}]}]})
        started = time.monotonic()
        time.sleep(0.5)  # the fetch waits: the group has no share state yet
        altered = client.request("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [{
            "topic_name": "orphans", "partitions": [{"partition_index": 0,
                                                     "start_offset": -2}]}]})
        assert [p.error_code for t in altered.responses for p in t.partitions] == [0]
        client.request("Produce", 9, produce_body("orphans", 0, batch([b"c"])))
        _, answer = waiting.receive("ShareFetch", 1)
        assert time.monotonic() - started >= 2.5
        assert (answer.error_code, acquired(answer)) == (0, [])
        # the next fetch meets the start offset out of range: moved, nothing acquired
        answer = share_fetch(waiting, group, OTHER, topic_id, 1)
        assert (answer.error_code, acquired(answer)) == (0, [])
        answer = share_fetch(waiting, group, OTHER, topic_id, 2)
        assert (answer.error_code, acquired(answer)) == (0, [(0, 2, 1)])
