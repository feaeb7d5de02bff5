"""KIP-848 reconciliation (ConsumerGroupCoordinator): epochs, revocation before
reassignment, fencing and commit checks."""

from __future__ import annotations

import pytest

from fakebroker.state.consumer_groups import ConsumerGroupCoordinator, ConsumerGroupError


def coordinator(partitions: int = 4) -> ConsumerGroupCoordinator:
    return ConsumerGroupCoordinator(partitions_of=lambda: {"orders": partitions})


def beat(c: ConsumerGroupCoordinator, member_id: str, epoch: int, owned=None,
         subscribed=("orders",)):
    return c.heartbeat("g", member_id, epoch, None, None, "client", "/h",
                       list(subscribed) if subscribed is not None else None, None, owned, 0.0)


def test_a_lone_member_gets_every_partition_at_epoch_1():
    c = coordinator()
    member, assignment = beat(c, "a", 0)
    assert (member.epoch, assignment) == (1, {"orders": {0, 1, 2, 3}})
    assert c.groups["g"].state == "Stable"


def test_partitions_move_only_after_their_old_owner_revoked_them():
    c = coordinator()
    beat(c, "a", 0)
    b, b_assignment = beat(c, "b", 0)
    assert b_assignment is None or b_assignment == {}  # a still owns everything
    assert b.epoch == 2 and c.groups["g"].state == "Reconciling"
    a, a_assignment = beat(c, "a", 1, subscribed=None)
    assert a_assignment == {"orders": {0, 2}}  # told to give up 1 and 3; epoch unchanged
    assert a.epoch == 1
    b, b_assignment = beat(c, "b", 2, subscribed=None)
    assert not b_assignment  # 1 and 3 are still being revoked
    a, _ = beat(c, "a", 1, owned={"orders": {0, 2}}, subscribed=None)  # a acknowledges
    assert a.epoch == 2
    b, b_assignment = beat(c, "b", 2, subscribed=None)
    assert b_assignment == {"orders": {1, 3}} and c.groups["g"].state == "Stable"


def test_a_wrong_epoch_is_fenced_and_an_unknown_member_rejected():
    c = coordinator()
    beat(c, "a", 0)
    with pytest.raises(ConsumerGroupError) as fenced:
        beat(c, "a", 7, subscribed=None)
    assert fenced.value.error == "FENCED_MEMBER_EPOCH"
    with pytest.raises(ConsumerGroupError) as unknown:
        beat(c, "ghost", 1, subscribed=None)
    assert unknown.value.error == "UNKNOWN_MEMBER_ID"


def test_commits_must_carry_the_member_epoch():
    c = coordinator()
    beat(c, "a", 0)
    c.validate_commit("g", "a", 1)
    with pytest.raises(ConsumerGroupError) as stale:
        c.validate_commit("g", "a", 0)
    assert stale.value.error == "STALE_MEMBER_EPOCH"


def test_leaving_frees_the_partitions_for_the_rest():
    c = coordinator()
    beat(c, "a", 0)
    beat(c, "b", 0)
    beat(c, "a", 1, subscribed=None)
    beat(c, "a", 1, owned={"orders": {0, 2}}, subscribed=None)
    member, _ = beat(c, "b", 2, subscribed=None)
    left, _ = beat(c, "b", -1, subscribed=None)
    assert left.epoch == -1
    a, assignment = beat(c, "a", 2, subscribed=None)
    assert assignment == {"orders": {0, 1, 2, 3}} and a.epoch == 3


def test_the_range_assignor_gives_contiguous_ranges():
    c = coordinator(partitions=4)
    c.heartbeat("g", "a", 0, None, None, "c", "/h", ["orders"], "range", None, 0.0)
    c.heartbeat("g", "b", 0, None, None, "c", "/h", ["orders"], None, None, 0.0)
    assert c.groups["g"].target == {"a": {"orders": {0, 1}}, "b": {"orders": {2, 3}}}
