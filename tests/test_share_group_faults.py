"""What only the fake offers share groups: ``kafka.share_group(name)`` (members,
assignments, in-flight records with their state and delivery count) and two faults on
demand, through the same operation everywhere (Python, HTTP, ctl, scenarios): every
acquisition lock of a group runs out now (``expire_share_locks``), a member is fenced
(``kick_member``). Kafka 4.4's ``KafkaShareConsumer`` is the client."""

from __future__ import annotations

import pytest

from fakebroker.state.views import InFlightRecord
from tests.clients.process import wait_until
from tests.clients.share import share_consumer_available, start_share_consumer
from tests.test_share_groups import TOPIC, new_group, produce

pytestmark = [
    pytest.mark.skipif(not share_consumer_available(), reason="kafka-clients 4.4.0 not installed"),
    pytest.mark.fake_only("inspection and faults are the fake's"),
    pytest.mark.fake_kafka(topics={TOPIC: 1}),
    pytest.mark.timeout(120),
]


def in_flight(kafka, group: str) -> tuple[InFlightRecord, ...]:
    view = kafka.share_group(group)
    return view.in_flight.get((TOPIC, 0), ()) if view is not None else ()


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
        kafka.kick_member(group, holder.member_id)
        assert in_flight(kafka, group) == (InFlightRecord(0, "Available", 1, None),)
        first.kill()
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit") as second:
        line = second.wait_for({"value": "job"}, timeout=30)
        second.stop()
    assert line["deliveryCount"] == 2
