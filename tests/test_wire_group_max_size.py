"""group.max.size and group.consumer.max.size on the wire: which request a full group refuses,
with what, and who is left out when a rebalancing group fills up. They run on the fake and on
Apache Kafka (``--kafka=both``) started with the same overrides."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import join_body
from tests.test_wire_consumer_groups import Member, described
from tests.test_wire_groups import coordinator

pytestmark = pytest.mark.fake_kafka(
    topics={"orders": 2}, overrides={"group.max.size": "2", "group.consumer.max.size": "2"})
FULL = "The consumer group has reached its maximum capacity of 2 members."


def sync(client: WireClient, joined, assignments: list | None = None):
    return client.request("SyncGroup", 5, {
        "group_id": "g", "generation_id": joined.generation_id, "member_id": joined.member_id,
        "protocol_type": "consumer", "protocol_name": "range", "assignments": assignments or []})


def join(client: WireClient, version: int = 9, **fields):
    """Both steps of a JoinGroup from a new member (one before v4)."""
    first = client.request("JoinGroup", version, dict(join_body(), **fields))
    if first.error_code != ErrorCode.MEMBER_ID_REQUIRED:
        return first
    return client.request("JoinGroup", version, dict(join_body(first.member_id), **fields))


def wait_for_state(kafka, state: str) -> None:
    deadline = time.monotonic() + 10
    while kafka.group("g").state != state:
        assert time.monotonic() < deadline, kafka.group("g").state
        time.sleep(0.01)


def full_group(kafka, a: WireClient, b: WireClient, pool: ThreadPoolExecutor, **fields):
    """Members a (the leader) and b in a Stable group of two: their join answers."""
    first = join(a, **fields)
    assert first.error_code == 0 and sync(a, first).error_code == 0
    second = pool.submit(join, b, **fields)
    wait_for_state(kafka, "PreparingRebalance")
    first = a.request("JoinGroup", 9, dict(join_body(first.member_id), **fields))
    second = second.result(timeout=10)
    assert first.generation_id == second.generation_id == 2
    assert sync(a, first).error_code == sync(b, second).error_code == 0
    return first, second


def test_a_full_classic_group_refuses_a_new_member_at_its_first_join(kafka):
    address = coordinator(kafka)
    with WireClient(address) as a, WireClient(address) as b, WireClient(address) as c, \
            ThreadPoolExecutor(1) as pool:
        full_group(kafka, a, b, pool)
        for version in (9, 4, 3, 0):
            refused = c.request("JoinGroup", version, join_body())
            assert (refused.error_code, refused.member_id, refused.generation_id) == \
                (ErrorCode.GROUP_MAX_SIZE_REACHED, "", -1)
        assert kafka.group("g").state == "Stable"
        assert len(kafka.group("g").members) == 2


def test_a_member_id_handed_out_while_there_was_room_is_refused_at_the_second_join(kafka):
    """Three ids handed out (MEMBER_ID_REQUIRED) while the group had room: the rebalance
    that takes in the second member waits for the third id too, until its session (6 s)
    ends unused (Kafka's join barrier holds for pending members); that id's join is then
    refused, the group full."""
    address = coordinator(kafka)
    with WireClient(address) as a, WireClient(address, timeout=30) as b, \
            WireClient(address) as c, ThreadPoolExecutor(1) as pool:
        required = [client.request("JoinGroup", 9, join_body()) for client in (a, b)]
        required.append(c.request("JoinGroup", 9, dict(join_body(), session_timeout_ms=6000)))
        handed_out = time.monotonic()
        assert [r.error_code for r in required] == [ErrorCode.MEMBER_ID_REQUIRED] * 3
        first = a.request("JoinGroup", 9, join_body(required[0].member_id))
        assert first.error_code == 0 and sync(a, first).error_code == 0
        second = pool.submit(b.request, "JoinGroup", 9, join_body(required[1].member_id))
        wait_for_state(kafka, "PreparingRebalance")
        with WireClient(address, timeout=30) as rejoining:
            first = rejoining.request("JoinGroup", 9, join_body(first.member_id))
        assert time.monotonic() - handed_out > 5.5  # the third id's session ran out first
        second = second.result(timeout=10)
        assert first.generation_id == second.generation_id == 2
        assert sync(a, first).error_code == sync(b, second).error_code == 0
        refused = c.request("JoinGroup", 9, join_body(required[2].member_id))
        assert (refused.error_code, refused.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
        assert len(kafka.group("g").members) == 2


def test_the_last_member_to_rejoin_a_filled_rebalance_is_left_out(kafka):
    address = coordinator(kafka)
    fields = {"rebalance_timeout_ms": 3000}
    with WireClient(address) as a, WireClient(address) as b, WireClient(address) as c, \
            ThreadPoolExecutor(2) as pool:
        first, second = full_group(kafka, a, b, pool, **fields)
        rejoined = pool.submit(a.request, "JoinGroup", 9,
                               dict(join_body(first.member_id), **fields))
        wait_for_state(kafka, "PreparingRebalance")
        newcomer = pool.submit(join, c, **fields)  # only a waits: c takes the other place
        deadline = time.monotonic() + 10
        while len(kafka.group("g").members) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        started = time.monotonic()
        left_out = b.request("JoinGroup", 9, dict(join_body(second.member_id), **fields))
        assert (left_out.error_code, left_out.member_id) == \
            (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
        rejoined, newcomer = rejoined.result(timeout=10), newcomer.result(timeout=10)
        waited = time.monotonic() - started
        assert rejoined.error_code == newcomer.error_code == 0
        assert rejoined.generation_id == newcomer.generation_id == 3
        assert {m.member_id for m in rejoined.members} == {first.member_id, newcomer.member_id}
        assert waited > 2  # b's place is not given up: the barrier waits out the timeout
        assert b.request("Heartbeat", 4, {
            "group_id": "g", "generation_id": 3, "member_id": second.member_id}).error_code \
            == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_restarted_static_member_finds_its_full_classic_group_closed(kafka):
    address = coordinator(kafka)
    with WireClient(address) as a, WireClient(address) as b, ThreadPoolExecutor(1) as pool:
        first = join(a, group_instance_id="pod-a")
        assert first.error_code == 0 and sync(a, first).error_code == 0
        second = pool.submit(join, b)
        wait_for_state(kafka, "PreparingRebalance")
        first = a.request("JoinGroup", 9, join_body(first.member_id, instance="pod-a"))
        second = second.result(timeout=10)
        assert sync(a, first).error_code == sync(b, second).error_code == 0
        restarted = a.request("JoinGroup", 9, join_body(instance="pod-a"))
        assert (restarted.error_code, restarted.member_id) == \
            (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
        assert {m.member_id for m in kafka.group("g").members} == {
            first.member_id, second.member_id}


def consumers(kafka, client: WireClient, *instances: str | None) -> list[Member]:
    members = [Member(kafka, client, instance_id=instance) for instance in instances]
    for member in members:
        member.join()
    return members


def join_error(member: Member):
    return member.send(0, rebalance_timeout_ms=300_000, subscribed_topic_names=["orders"],
                       topic_partitions=[])


def test_a_full_consumer_group_refuses_a_new_member_with_kafkas_message(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b = consumers(kafka, client, None, None)
        refused = join_error(Member(kafka, client))
        assert (refused.error_code, refused.error_message) == \
            (ErrorCode.GROUP_MAX_SIZE_REACHED, FULL)
        assert (refused.member_id, refused.member_epoch) == (None, 0)
        assert a.send().error_code == b.send().error_code == 0
        a.leave()
        assert join_error(Member(kafka, client)).error_code == 0


def test_a_full_consumer_group_refuses_any_heartbeat_of_a_member_it_does_not_hold(kafka):
    with WireClient(coordinator(kafka)) as client:
        consumers(kafka, client, None, None)
        stranger = Member(kafka, client)
        stranger.epoch = 5
        refused = stranger.send()
        assert (refused.error_code, refused.error_message) == \
            (ErrorCode.GROUP_MAX_SIZE_REACHED, FULL)


def test_a_static_consumer_that_left_temporarily_still_counts_but_may_come_back(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, _ = consumers(kafka, client, "pod-a", "pod-b")
        held = join_error(Member(kafka, client, instance_id="pod-a"))
        assert held.error_code == ErrorCode.UNRELEASED_INSTANCE_ID  # not a new member
        a.leave(-2)
        for newcomer in (Member(kafka, client), Member(kafka, client, instance_id="pod-c")):
            refused = join_error(newcomer)
            assert (refused.error_code, refused.error_message) == \
                (ErrorCode.GROUP_MAX_SIZE_REACHED, FULL)
        restarted = Member(kafka, client, instance_id="pod-a")
        restarted.join()  # its place was kept: no error
        assert restarted.member_id in {m.member_id for m in described(client).members}
