"""Session and rebalance timeouts of the classic group coordinator, on trio's MockClock:
deterministic, and no real sleeping. The one group timer (``run_timers``) applies them;
requests wait for their answers as the handlers do (``answer_of``)."""

from __future__ import annotations

import trio
import trio.testing

from fakebroker.api.common import answer_of
from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.state.classic_groups import ClassicGroupCoordinator
from fakebroker.state.groups import Groups
from fakebroker.timers import run_timers

PROTOCOLS = [("range", b"meta")]


def run(test) -> None:
    trio.run(test, clock=trio.testing.MockClock(autojump_threshold=0))


async def join(groups: Groups, member_id: str = "", instance: str | None = None,
               session_ms: int = 10_000, rebalance_ms: int = 30_000) -> dict:
    return await answer_of(groups.classic.join(
        "g", member_id, instance, "client", "/127.0.0.1", session_ms, rebalance_ms, "consumer",
        PROTOCOLS, require_known_member_id=False, now=trio.current_time()))


async def stable_group_of_two(groups: Groups, nursery) -> tuple[str, str]:
    """Two members in generation 2 (the second join rebalanced the first), group Stable."""
    first = (await join(groups))["member_id"]
    answers: list[dict] = []

    async def second_member():
        answers.append(await join(groups))

    nursery.start_soon(second_member)
    await trio.testing.wait_all_tasks_blocked()
    leader_answer = await join(groups, first)  # the first rejoins: the barrier closes
    await trio.testing.wait_all_tasks_blocked()
    second = answers[0]["member_id"]
    assert leader_answer["generation_id"] == answers[0]["generation_id"] == 2
    groups.classic.sync("g", 2, first, None, None, None, {first: b"a", second: b"b"},
                        trio.current_time())
    return first, second


def test_session_timeout_removes_a_silent_member_and_rebalances_the_rest():
    async def main():
        groups = Groups()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            first, second = await stable_group_of_two(groups, nursery)
            group = groups.classic_group("g")
            await trio.sleep(9)
            groups.classic.heartbeat("g", 2, first, None, trio.current_time())
            assert group.state.value == "Stable" and second in group.members
            await trio.sleep(1.5)  # the second member's 10 s session has run out
            assert second not in group.members
            assert group.state.value == "PreparingRebalance"
            try:
                groups.classic.heartbeat("g", 2, first, None, trio.current_time())
            except ClusterError as exc:
                assert exc.error == "REBALANCE_IN_PROGRESS"
            else:
                raise AssertionError("the survivor must be told to rejoin")
            answer = await join(groups, first)  # completes at once: all known rejoined
            assert answer["generation_id"] == 3 and answer["leader"] == first
            nursery.cancel_scope.cancel()

    run(main)


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed():
    async def main():
        groups = Groups()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            first, second = await stable_group_of_two(groups, nursery)
            groups.classic.force_rebalance("g", trio.current_time())
            started = trio.current_time()

            async def heartbeats_but_never_rejoins():
                while True:
                    await trio.sleep(3)
                    try:
                        groups.classic.heartbeat("g", 2, second, None, trio.current_time())
                    except ClusterError:
                        pass

            nursery.start_soon(heartbeats_but_never_rejoins)
            answer = await join(groups, first)
            assert trio.current_time() - started == 30  # the rebalance timeout, to the ms
            assert answer["generation_id"] == 3
            assert [m["member_id"] for m in answer["members"]] == [first]
            assert second not in groups.classic_group("g").members
            nursery.cancel_scope.cancel()

    run(main)


def test_a_member_id_handed_out_with_member_id_required_expires():
    async def main():
        groups = Groups()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            answer = groups.classic.join("g", "", None, "c", "/h", 10_000, 30_000, "consumer",
                                         PROTOCOLS, require_known_member_id=True,
                                         now=trio.current_time())
            member_id = answer["member_id"]
            assert member_id in groups.classic_group("g").pending
            await trio.sleep(10.001)
            assert member_id not in groups.classic_group("g").pending
            nursery.cancel_scope.cancel()

    run(main)


def test_the_initial_rebalance_delay_holds_the_first_join():
    async def main():
        groups = Groups(ClassicGroupCoordinator(initial_rebalance_delay_ms=3000))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            started = trio.current_time()
            answer = await join(groups)
            assert trio.current_time() - started == 3
            assert answer["generation_id"] == 1
            nursery.cancel_scope.cancel()

    run(main)


def test_a_restarted_static_members_shorter_session_ends_on_time():
    """The restart takes the old member's place without a rebalance; its 6 s session ends at
    its own deadline, not the old member's later one the timer slept to."""
    async def main():
        groups = Groups()
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            old = (await join(groups, instance="pod", session_ms=30_000))["member_id"]
            groups.classic.sync("g", 1, old, "pod", None, None, {old: b"a"}, start)
            await trio.sleep_until(start + 1)
            new = (await join(groups, instance="pod", session_ms=6_000))["member_id"]
            assert groups.classic_group("g").members[new].assignment == b"a"
            await trio.sleep_until(start + 6.999)
            assert new in groups.classic_group("g").members
            await trio.sleep_until(start + 7.001)
            assert new not in groups.classic_group("g").members
            nursery.cancel_scope.cancel()

    run(main)


def test_a_new_member_held_at_a_barrier_that_cannot_close_leaves_after_five_minutes():
    """A member listing its one protocol twice leaves no protocol for the rebalance to choose
    (see tests/test_wire_group_join_order.py): its JoinGroup waits at the barrier past its
    session and rebalance timeouts, until Kafka's new member join timeout (5 minutes) removes
    it, answering UNKNOWN_MEMBER_ID, and the group is Empty at the next generation."""
    async def main():
        groups = Groups()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            started = trio.current_time()
            answer = await answer_of(groups.classic.join(
                "g", "", None, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                PROTOCOLS * 2, require_known_member_id=False, now=started))
            assert trio.current_time() - started == 300
            assert answer["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
            group = groups.classic_group("g")
            assert group.state.value == "Empty" and group.generation_id == 1
            nursery.cancel_scope.cancel()

    run(main)


def test_a_newcomer_to_a_stuck_group_its_member_left_waits_for_its_join_timeout():
    """Once the member holding that barrier shut left, the group stays PreparingRebalance with
    no members (measured on Kafka: tests/test_wire_group_join_order.py) and a new member's
    JoinGroup waits there: neither its join nor any rebalance timeout ends that first
    rebalance, but its new member join timeout does (Kafka's removeMemberAndUpdateClassicGroup
    closes a barrier every member left has reached, a first rebalance's too): the group is
    Empty then."""
    async def main():
        groups = Groups()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_timers, groups)
            started = trio.current_time()
            groups.classic.join("g", "", None, "client", "/127.0.0.1", 10_000, 30_000,
                                "consumer", PROTOCOLS * 2, require_known_member_id=False,
                                now=started)
            group = groups.classic_group("g")
            (stuck,) = group.members
            groups.classic.leave("g", stuck, None, started)
            assert group.state.value == "PreparingRebalance" and not group.members
            answer = await join(groups, rebalance_ms=1_000)
            assert trio.current_time() - started == 300
            assert answer["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
            assert group.state.value == "Empty" and not group.members
            nursery.cancel_scope.cancel()

    run(main)
