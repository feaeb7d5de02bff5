"""The streams group coordinator (KIP-1071) as rules, without sockets: how a topology is
configured (partition counts of the internal topics, missing topics), how the sticky assignor
spreads tasks, how members reconcile, and when the target assignment waits. The same
behaviour on the wire, beside Apache Kafka, is in tests/test_wire_streams_groups.py.
"""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.streams_groups import (
    ASSIGNMENT_DELAYED,
    INCORRECTLY_PARTITIONED_TOPICS,
    MISSING_INTERNAL_TOPICS,
    MISSING_SOURCE_TOPICS,
    Heartbeat,
    StreamsGroupCoordinator,
    Subtopology,
    Target,
    TopicInfo,
    Topology,
    assign,
    configure,
    validate_group_config,
)

# Word count: lines -> (repartition "words") -> count (changelog "counts")
WORD_COUNT = Topology(0, (
    Subtopology("0", source_topics=("lines",), repartition_sink_topics=("wc-words",)),
    Subtopology("1", repartition_source_topics=(TopicInfo("wc-words"),),
                state_changelog_topics=(TopicInfo("wc-counts"),)),
))


def test_internal_topics_take_the_partition_counts_of_their_sources() -> None:
    configured = configure(WORD_COUNT, {"lines": 3})
    assert configured.tasks == {"0": 3, "1": 3}
    assert {name: p for name, (p, _, _) in configured.to_create.items()} == {
        "wc-words": 3, "wc-counts": 3}
    assert configured.problem.code == MISSING_INTERNAL_TOPICS
    assert configure(WORD_COUNT, {"lines": 3, "wc-words": 3, "wc-counts": 3}).ready


def test_a_repartition_topic_with_a_count_of_its_own_keeps_it() -> None:
    topology = Topology(0, (
        Subtopology("0", source_topics=("lines",), repartition_sink_topics=("r",)),
        Subtopology("1", repartition_source_topics=(TopicInfo("r", 5),),
                    state_changelog_topics=(TopicInfo("c"),))))
    configured = configure(topology, {"lines": 2})
    assert configured.tasks == {"0": 2, "1": 5}
    assert configured.to_create["c"][0] == 5


def test_missing_source_topics_and_wrongly_partitioned_internal_topics_are_statuses() -> None:
    missing = configure(WORD_COUNT, {})
    assert (missing.problem.code, missing.problem.detail) == (
        MISSING_SOURCE_TOPICS, "Source topics lines are missing.")
    # an existing repartition topic's count is taken as it is; a changelog must match it
    wrong = configure(WORD_COUNT, {"lines": 3, "wc-words": 3, "wc-counts": 2})
    assert (wrong.problem.code, wrong.problem.detail) == (
        INCORRECTLY_PARTITIONED_TOPICS, "Existing topic wc-counts has different number of "
        "partitions: expected 3, found 2")


def test_the_sticky_assignor_balances_every_subtopology_and_keeps_what_it_can() -> None:
    alone = assign({"0": 3, "1": 3}, {"a": "pa"}, {}, 0)
    assert alone["a"].active == {"0": {0, 1, 2}, "1": {0, 1, 2}}
    both = assign({"0": 3, "1": 3}, {"a": "pa", "b": "pb"}, alone, 0)
    # as Kafka 4.4 moved them (measured): a keeps 0_0, 0_1, 1_0
    assert both["a"].active == {"0": {0, 1}, "1": {0}}
    assert both["b"].active == {"0": {2}, "1": {1, 2}}


def test_standby_tasks_go_to_other_processes_only() -> None:
    target = assign({"0": 2}, {"a": "p1", "b": "p2", "c": "p1"}, {}, 1, stateful={"0"})
    for member, process in (("a", "p1"), ("b", "p2"), ("c", "p1")):
        others = [m for m, p in (("a", "p1"), ("b", "p2"), ("c", "p1")) if p != process]
        for p in target[member].standby.get("0", ()):
            assert any(p in target[o].active.get("0", ()) for o in others)
    standbys = sorted(p for t in target.values() for p in t.standby.get("0", ()))
    assert standbys == [0, 1]


def test_a_stateless_task_has_no_standby() -> None:
    # the word count's subtopology 0 keeps no store; 1 counts into one (measured on Kafka 4.4)
    target = assign({"0": 2, "1": 2}, {"a": "pa", "b": "pb"}, {}, 1, stateful={"1"})
    assert [t.standby for t in target.values()] == [{"1": {1}}, {"1": {0}}]
    assert configure(WORD_COUNT, {"lines": 3}).stateful == {"1"}


def join(coordinator: StreamsGroupCoordinator, member: str, now: float = 0.0,
         process: str | None = None):
    return coordinator.heartbeat(Heartbeat(
        "app", member, 0, rebalance_timeout_ms=1000, topology=WORD_COUNT, active={},
        standby={}, warmup={}, process_id=process or member), now)


def beat(coordinator: StreamsGroupCoordinator, member: str, epoch: int, now: float,
         owned: dict[str, set[int]] | None = None):
    return coordinator.heartbeat(Heartbeat(
        "app", member, epoch, active=owned, standby=None if owned is None else {},
        warmup=None if owned is None else {}), now)


def word_count_group(**configs: str) -> StreamsGroupCoordinator:
    topics = {"lines": 3, "wc-words": 3, "wc-counts": 3}
    return StreamsGroupCoordinator(partitions_of=lambda: topics,
                                   group_configs=lambda group_id: configs)


def test_the_first_assignment_waits_for_the_initial_rebalance_delay() -> None:
    coordinator = word_count_group()
    first = join(coordinator, "a")
    assert first.member.epoch == 1 and first.tasks == ({}, {}, {})
    assert [s.code for s in first.status] == [ASSIGNMENT_DELAYED]
    assert "initial rebalance delay" in first.status[0].detail
    later = beat(coordinator, "a", 1, 3.0)
    assert later.tasks[0] == {"0": {0, 1, 2}, "1": {0, 1, 2}}
    assert later.member.epoch > 1 and not later.status


def test_a_task_moves_only_after_its_owner_gave_it_up() -> None:
    coordinator = word_count_group(**{"streams.initial.rebalance.delay.ms": "0"})
    a = join(coordinator, "a").member
    assert a.active == {"0": {0, 1, 2}, "1": {0, 1, 2}}
    b = join(coordinator, "b", now=0.5)
    assert [s.code for s in b.status] == [ASSIGNMENT_DELAYED]  # the assignment interval
    b = beat(coordinator, "b", b.member.epoch, 1.5)  # the new target: b waits for a
    assert b.tasks is None and b.member.active == {}
    epoch = a.epoch
    a_answer = beat(coordinator, "a", epoch, 1.6, owned={"0": {0, 1, 2}, "1": {0, 1, 2}})
    kept = a_answer.tasks[0]
    assert kept == {"0": {0, 1}, "1": {0}}  # told what to keep, at its old epoch
    assert a_answer.member.epoch == epoch
    a_answer = beat(coordinator, "a", epoch, 1.7, owned=kept)  # it gave the rest up
    assert a_answer.member.epoch > epoch and not a_answer.member.revoking
    b = beat(coordinator, "b", b.member.epoch, 1.8, owned={})
    assert b.tasks[0] == {"0": {2}, "1": {1, 2}}
    assert coordinator.groups["app"].state == "Stable"


def test_a_silent_member_is_removed_and_its_tasks_go_to_the_others() -> None:
    coordinator = word_count_group(**{"streams.initial.rebalance.delay.ms": "0",
                                      "streams.assignment.interval.ms": "0"})
    join(coordinator, "a")
    join(coordinator, "b")
    assert coordinator.next_deadline() == 45.0
    beat(coordinator, "b", coordinator.groups["app"].members["b"].epoch, 30.0)
    coordinator.expire(45.0)
    assert list(coordinator.groups["app"].members) == ["b"]
    b = coordinator.groups["app"].members["b"]
    answer = beat(coordinator, "b", b.epoch, 46.0, owned=b.active)
    assert answer.member.active == {"0": {0, 1, 2}, "1": {0, 1, 2}}


def test_heartbeats_are_fenced_and_checked_with_kafkas_texts() -> None:
    coordinator = word_count_group()
    join(coordinator, "a")
    with pytest.raises(ClusterError, match=r"streams group member has a greater member epoch "
                                           r"\(7\) than the one known by the group "
                                           r"coordinator \(1\)") as fenced:
        beat(coordinator, "a", 7, 1.0)
    assert fenced.value.error == "FENCED_MEMBER_EPOCH"
    with pytest.raises(ClusterError, match="Member x is not a member of group app."):
        beat(coordinator, "x", 1, 1.0)
    with pytest.raises(ClusterError, match="Streams group other not found."):
        coordinator.heartbeat(Heartbeat("other", "a", 1), 1.0)
    with pytest.raises(ClusterError, match="ActiveTasks must be empty when"):
        coordinator.heartbeat(Heartbeat("app", "b", 0, rebalance_timeout_ms=1), 1.0)
    with pytest.raises(ClusterError, match="Topology can only be provided when"):
        coordinator.heartbeat(Heartbeat("app", "a", 1, topology=WORD_COUNT), 1.0)


@pytest.mark.parametrize("name, value, message", [
    ("streams.session.timeout.ms", "1000",
     "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ("streams.heartbeat.interval.ms", "20000",
     "streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ("streams.num.standby.replicas", "5",
     "streams.num.standby.replicas must be less than or equal to 2"),
    ("streams.initial.rebalance.delay.ms", "-1", "Invalid value -1 for configuration "
     "streams.initial.rebalance.delay.ms: Value must be at least 0"),
    ("streams.assignor.name", "x", "streams.assignor.name 'x' is not a registered task "
     "assignor. Registered assignors are: [sticky]."),
])
def test_streams_group_configs_are_checked_against_the_broker_limits(name, value,
                                                                     message) -> None:
    with pytest.raises(ClusterError) as refused:
        validate_group_config(name, value)
    assert (refused.value.error, refused.value.message) == ("INVALID_CONFIG", message)


def test_no_member_keeps_a_target_of_a_member_that_left() -> None:
    target = assign({"0": 1}, {"a": "a"}, {"gone": Target({"0": {0}})}, 0)
    assert target == {"a": Target({"0": {0}}, {})}
