"""What only the fake offers share groups: ``kafka.share_group(name)`` (members,
assignments, in-flight records with their state and delivery count) and two faults on
demand, through the same operation everywhere (Python, HTTP, ctl, scenarios): every
acquisition lock of a group runs out now (``expire_share_locks``), a member is fenced
(``kick_member``). And the fault rules every API has, on share groups: an acknowledgement
lost (answered, not handled; or carried by a ShareFetch that is answered without it:
``ignore``) or refused, a ShareFetch answer lost after it acquired records
(``apply_then`` + ``drop``), again and again (a redelivery storm). Kafka 4.4's
``KafkaShareConsumer`` is the client."""

from __future__ import annotations

import time

import pytest

from fakebroker.faults.rules import RequestView
from fakebroker.state.views import InFlightRecord
from fakebroker.sync import FakeKafka
from fakebroker.wire_client import WireClient
from tests.absent import needs
from tests.bodies import batch, produce_body
from tests.clients.process import wait_until
from tests.clients.share import share_consumer_available, start_share_consumer
from tests.test_share_groups import ORPHANS, TOPIC, join_and_acquire, new_group, produce

pytestmark = [
    needs(share_consumer_available(), "kafka-clients 4.4.0 (bash .ci/install-clients)"),
    pytest.mark.fake_only("inspection and faults are the fake's"),
    pytest.mark.fake_kafka(topics={TOPIC: 1}),
    pytest.mark.timeout(120),
]


def in_flight(kafka, group: str) -> tuple[InFlightRecord, ...]:
    view = kafka.share_group(group)
    return view.in_flight.get((TOPIC, 0), ()) if view is not None else ()


def deliveries(kafka, group: str, member) -> list[tuple[str, int]]:
    """Once every record of ``group`` is accepted: what ``member`` got, as (value, delivery
    count), in the order it got them."""
    wait_until(lambda: in_flight(kafka, group) == (), timeout=20, what="every record accepted")
    return [(r["value"], r["deliveryCount"]) for r in member.stop() if "offset" in r]


def held_until_the_lock_runs_out(kafka, group: str, member) -> list[tuple[str, int]]:
    """Records a and b, unacknowledged, stay Acquired by the one member until their locks run
    out (expired now); then they come again with delivery count 2: every delivery so far."""
    [holder] = kafka.share_group(group).members
    assert in_flight(kafka, group) == (
        InFlightRecord(0, "Acquired", 1, holder.member_id),
        InFlightRecord(1, "Acquired", 1, holder.member_id))
    kafka.expire_share_locks(group)
    member.wait_for({"value": "b", "deliveryCount": 2}, timeout=30)
    return deliveries(kafka, group, member)


def test_the_share_group_view_shows_members_and_records_in_flight(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              hold=["a"]) as member:
        member.wait_for({"event": "held"}, timeout=60)
        view = kafka.share_group(group)
        assert view.state == "Stable"
        [holder] = view.members
        assert holder.assignment == {TOPIC: [0]} and holder.subscribed == (TOPIC,)
        assert view.start_offsets == {(TOPIC, 0): 0}
        assert in_flight(kafka, group) == (
            InFlightRecord(0, "Acquired", 1, holder.member_id),
            InFlightRecord(1, "Acquired", 1, holder.member_id))
        member.kill()
    assert kafka.share_group("no-such-group") is None


def test_locks_expiring_now_redeliver_to_another_member_without_waiting(kafka) -> None:
    group = new_group(kafka)  # the lock lasts 30 s: the fault does not wait for it
    produce(kafka, ["slow"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              hold=["slow"]) as first:
        first.wait_for({"event": "held"}, timeout=60)
        [holder] = kafka.share_group(group).members
        # Kafka's share consumer may go on fetching while its application holds a record: a
        # ShareFetch of the holder's from now on hangs, so it cannot win the record back when
        # the lock is expired (one it sent before waits 500 ms at most: it has ended before
        # the second consumer's JVM is up)
        kafka.faults.add(api="ShareFetch", count=None, hang=True,
                         when=lambda view: view.request.member_id == holder.member_id)
        with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                                  mode="explicit") as second:
            wait_until(lambda: len(kafka.share_group(group).members) == 2, timeout=30)
            kafka.expire_share_locks(group)
            line = second.wait_for({"value": "slow"}, timeout=20)
            wait_until(lambda: in_flight(kafka, group) == (), timeout=20,
                       what="the record accepted")
            second.stop()
        first.kill()
    assert line["deliveryCount"] == 2


def test_a_fenced_member_loses_its_records_to_the_others(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["job"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              hold=["job"]) as first:
        first.wait_for({"event": "held"}, timeout=60)
        [holder] = kafka.share_group(group).members
        # Killed first: a live client, told it is unknown, may rejoin and fetch the record
        # again before the look below (this assertion failed once under load, so).
        first.kill()
        kafka.kick_member(group, holder.member_id)
        assert in_flight(kafka, group) == (InFlightRecord(0, "Available", 1, None),)
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as second:
        line = second.wait_for({"value": "job"}, timeout=30)
        second.stop()
    assert line["deliveryCount"] == 2


def test_a_lost_acknowledgement_redelivers_the_records(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    # ShareAcknowledge answered with no error but not handled: nothing is acknowledged
    lost = kafka.faults.add(api="ShareAcknowledge", group=group, respond={})
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as member:
        lost.wait(1, timeout=60)
        member.wait_for({"value": "b", "deliveryCount": 2}, timeout=30)
        got = deliveries(kafka, group, member)
    assert got == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    # the session's epoch did not move on either: the next ShareFetch is refused, the
    # consumer opens a new session, and the member's records are released to it again
    assert len(kafka.journal(api="ShareFetch", error="INVALID_SHARE_SESSION_EPOCH")) == 1


def carries_acknowledgements(view: RequestView) -> bool:
    return any(p.acknowledgement_batches for t in view.request.topics for p in t.partitions)


def test_acknowledgements_lost_with_their_share_fetch_redeliver_the_records(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    # implicit mode: the next poll's ShareFetch carries the acknowledgements; it is answered
    # with nothing and not handled
    lost = kafka.faults.add(api="ShareFetch", group=group, respond={},
                            when=carries_acknowledgements)
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group) as member:
        lost.wait(1, timeout=60)
        member.wait_for({"value": "b", "deliveryCount": 2}, timeout=30)
        got = deliveries(kafka, group, member)
    assert got == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]


def test_acknowledgements_ignored_in_an_answered_share_fetch_redeliver_after_their_lock(
        kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    # implicit mode: the next poll's ShareFetch carries the acknowledgements; the broker
    # handles and answers the fetch as if it carried none
    ignored = kafka.faults.add(api="ShareFetch", group=group, ignore="acknowledgement_batches",
                               when=carries_acknowledgements)
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group) as member:
        ignored.wait(1, timeout=60)
        wait_until(lambda: kafka.journal(api="ShareFetch", faulted=True), timeout=20,
                   what="the fetch carrying them answered")
        redelivered = held_until_the_lock_runs_out(kafka, group, member)
    assert redelivered == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    # the share session went on: no epoch refused, nothing released at once
    assert kafka.journal(api="ShareFetch", error="INVALID_SHARE_SESSION_EPOCH") == []


def test_a_refused_acknowledgement_redelivers_the_records_after_their_lock(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    # the partition's acknowledgement refused, the share session goes on
    refused = kafka.faults.add(api="ShareAcknowledge", topic=TOPIC, partition=0,
                               error="UNKNOWN_SERVER_ERROR")
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as member:
        refused.wait(1, timeout=60)
        redelivered = held_until_the_lock_runs_out(kafka, group, member)
    assert redelivered == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]


def test_a_share_fetch_answer_lost_after_acquiring_redelivers(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b"])
    # the records are acquired (delivery count 1), then the connection closes unanswered
    lost = kafka.faults.add(api="ShareFetch", group=group, apply_then=True, drop=True)
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as member:
        lost.wait(1, timeout=60)
        member.wait_for({"value": "b"}, timeout=30)
        got = deliveries(kafka, group, member)
    assert got == [("a", 2), ("b", 2)]
    assert kafka.journal(api="ShareFetch")[0].outcome == "dropped"


def test_a_redelivery_storm_ends_with_every_record_processed_once(kafka) -> None:
    group = new_group(kafka)
    values = [f"job-{i}" for i in range(10)]
    produce(kafka, values)
    # three ShareFetch answers in a row lost after acquiring: each time every record is
    # handed out again, its delivery count one higher
    storm = kafka.faults.add(api="ShareFetch", group=group, apply_then=True, drop=True,
                             count=3)
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as member:
        storm.wait(3, timeout=60)
        wait_until(lambda: len(member.records()) >= len(values), timeout=30,
                   members=[member], what="every record processed")
        got = deliveries(kafka, group, member)
    assert sorted(value for value, _ in got) == sorted(values)
    assert {count for _, count in got} == {4}


def test_a_kicked_members_waiting_fetch_acquires_nothing_more() -> None:
    """A member kicked while a ShareFetch of its is waiting: the records it held are released
    to the others, and the waiting fetch (its session ended) takes none of them back; CI met
    that race with a killed Java consumer whose last long poll was still waiting."""
    with FakeKafka(topics={ORPHANS: 1}) as kafka:
        group = new_group(kafka, **{"share.record.lock.duration.ms": "60000"})
        with WireClient(kafka.bootstrap_servers) as client:
            client.request("Produce", 9, produce_body(ORPHANS, 0, batch([b"a"])))
            topic_id = client.request("Metadata", 12, {
                "topics": [{"name": ORPHANS, "topic_id": None}],
                "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}).topics[0].topic_id
            member = "AAAAAAAAAAAAAAAAAAAAAQ"
            acquired, epoch = join_and_acquire(client, group, member, topic_id)
            assert acquired == [(0, 0, 1)]
            client.send("ShareFetch", 1, {
                "group_id": group, "member_id": member, "share_session_epoch": epoch,
                "max_wait_ms": 5000, "min_bytes": 1, "max_bytes": 1 << 20,
                "max_records": 100, "batch_size": 100, "forgotten_topics_data": [],
                "topics": []})
            time.sleep(0.3)  # the fetch is waiting: nothing left to acquire
            kafka.kick_member(group, member)
            _, answer = client.receive("ShareFetch", 1)
        assert [r for t in answer.responses for p in t.partitions
                for r in p.acquired_records] == []
        view = kafka.share_group(group)
        assert view.in_flight.get((ORPHANS, 0), ()) == (InFlightRecord(0, "Available", 1, None),)
