"""KIP-848 reconciliation (ConsumerGroupCoordinator): epochs, revocation before
reassignment, fencing, commit checks, regex subscriptions and static members."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.consumer_groups import (
    ConsumerGroupCoordinator,
    Heartbeat,
)


class Cluster:
    """The topics a coordinator sees (name -> partition count), changed by the tests."""

    def __init__(self, **topics: int):
        self.topics = dict(topics)
        self.coordinator = ConsumerGroupCoordinator(partitions_of=lambda: dict(self.topics))
        self.epochs: dict[str, int] = {}
        self.clock = 0.0

    def beat(self, member_id: str, epoch: int | None = None, **fields):
        """A heartbeat as a client sends it: a join (epoch 0) is a full request; later ones
        carry the member's current epoch unless told otherwise."""
        if epoch is None:
            epoch = self.epochs[member_id]
        if epoch == 0:
            fields.setdefault("rebalance_timeout_ms", 300_000)
            fields.setdefault("owned", {})
            if "subscribed_topic_regex" not in fields:
                fields.setdefault("subscribed_topic_names", ["orders"])
        member, assignment = self.coordinator.heartbeat(
            Heartbeat("g", member_id, epoch, **fields), self.clock)
        self.epochs[member.member_id] = member.epoch
        return member, assignment

    def error(self, member_id: str, epoch: int | None = None, **fields) -> str:
        with pytest.raises(ClusterError) as refused:
            self.beat(member_id, epoch, **fields)
        return refused.value.error

    @property
    def group(self):
        return self.coordinator.groups["g"]


def test_a_lone_member_gets_every_partition_at_epoch_2():
    """A new group is at epoch 1; its first member's subscription bumps it (Kafka 4.4)."""
    c = Cluster(orders=4)
    member, assignment = c.beat("a", 0)
    assert (member.epoch, assignment) == (2, {"orders": {0, 1, 2, 3}})
    assert c.group.state == "Stable"


def test_partitions_move_only_after_their_old_owner_revoked_them():
    c = Cluster(orders=4)
    c.beat("a", 0)
    b, b_assignment = c.beat("b", 0)
    assert b_assignment == {}  # a still owns everything
    assert b.epoch == 3 and c.group.state == "Reconciling"
    a, a_assignment = c.beat("a")
    assert a_assignment == {"orders": {0, 1}}  # told to give up 2 and 3; epoch unchanged
    assert a.epoch == 2
    b, b_assignment = c.beat("b")
    assert b_assignment is None  # 2 and 3 are still being revoked
    a, _ = c.beat("a", owned={"orders": {0, 1}})  # a acknowledges
    assert a.epoch == 3
    b, b_assignment = c.beat("b")
    assert b_assignment == {"orders": {2, 3}} and c.group.state == "Stable"


def test_the_uniform_assignor_is_sticky_and_balanced():
    c = Cluster(orders=6)
    for member in "abc":
        c.beat(member, 0)
    before = c.group.target
    assert sorted(len(ps["orders"]) for ps in before.values()) == [2, 2, 2]
    c.beat("a", -1)
    after = c.group.target
    for member in "bc":  # the stayers keep theirs and share a's
        assert before[member]["orders"] <= after[member]["orders"]
    assert sorted(p for ps in after.values() for p in ps["orders"]) == list(range(6))
    assert sorted(len(ps["orders"]) for ps in after.values()) == [3, 3]


def test_a_wrong_epoch_is_fenced_and_an_unknown_member_rejected():
    c = Cluster(orders=4)
    c.beat("a", 0)
    assert c.error("a", 7) == "FENCED_MEMBER_EPOCH"
    assert c.error("ghost", 1) == "UNKNOWN_MEMBER_ID"
    assert c.coordinator.groups.get("other") is None
    with pytest.raises(ClusterError) as unknown_group:
        c.coordinator.heartbeat(Heartbeat("other", "a", 1), 0.0)
    assert unknown_group.value.error == "GROUP_ID_NOT_FOUND"


def test_the_previous_epoch_is_accepted_only_with_owned_partitions_still_assigned():
    c = Cluster(orders=2)
    c.beat("a", 0)
    c.beat("b", 0)
    c.beat("a", owned={"orders": {0, 1}})
    c.beat("a", owned={"orders": {0}})  # revoked 1: a is at epoch 3, previous 2
    assert c.epochs["a"] == 3
    member, _ = c.beat("a", 2, owned={"orders": {0}})  # a response was lost
    assert member.epoch == 3
    assert c.error("a", 2, owned={"orders": {1}}) == "FENCED_MEMBER_EPOCH"
    assert c.error("a", 2) == "FENCED_MEMBER_EPOCH"  # owned partitions not given


@pytest.mark.parametrize("fields,message", [
    ({"rebalance_timeout_ms": -1}, "RebalanceTimeoutMs must be provided"),
    ({"owned": None}, "TopicPartitions must be empty"),
    ({"owned": {"orders": {0}}}, "TopicPartitions must be empty"),
    ({"subscribed_topic_names": None, "subscribed_topic_regex": None},
     "Either SubscribedTopicNames or SubscribedTopicRegex"),
    ({"instance_id": " "}, "InstanceId can't be empty"),
])
def test_malformed_joins_are_invalid_requests(fields, message):
    c = Cluster(orders=1)
    with pytest.raises(ClusterError) as refused:
        c.beat("a", 0, **fields)
    assert refused.value.error == "INVALID_REQUEST" and message in str(refused.value)
    assert "g" not in c.coordinator.groups or not c.group.members


def test_a_member_id_is_required_from_v1_and_generated_at_v0():
    c = Cluster(orders=1)
    assert c.error("", 0) == "INVALID_REQUEST"
    member, _ = c.beat("", 0, version=0)
    assert member.member_id


def test_an_unknown_assignor_is_unsupported():
    c = Cluster(orders=1)
    assert c.error("a", 0, server_assignor="sticky") == "UNSUPPORTED_ASSIGNOR"


def test_commits_must_carry_the_member_epoch():
    c = Cluster(orders=4)
    c.beat("a", 0)
    c.coordinator.validate_commit("g", "a", 2)
    with pytest.raises(ClusterError) as stale:
        c.coordinator.validate_commit("g", "a", 1)
    assert stale.value.error == "STALE_MEMBER_EPOCH"


def test_leaving_frees_the_partitions_for_the_rest():
    c = Cluster(orders=4)
    c.beat("a", 0)
    c.beat("b", 0)
    c.beat("a")
    c.beat("a", owned={"orders": {0, 1}})
    c.beat("b")
    left, _ = c.beat("b", -1)
    assert left.epoch == -1
    a, assignment = c.beat("a")
    assert assignment == {"orders": {0, 1, 2, 3}} and a.epoch == 4


def test_the_range_assignor_gives_contiguous_ranges():
    c = Cluster(orders=4)
    c.beat("a", 0, server_assignor="range")
    c.beat("b", 0)
    assert c.group.target == {"a": {"orders": {0, 1}}, "b": {"orders": {2, 3}}}


# -- regex subscriptions ------------------------------------------------------------------


def test_a_regex_subscribes_to_every_topic_it_matches_as_a_whole():
    c = Cluster(**{"orders-eu": 2, "orders-us": 1, "old-orders-eu": 1, "audit": 1})
    member, assignment = c.beat("a", 0, subscribed_topic_regex="orders-.*")
    assert member.subscribed == [] and member.regex == "orders-.*"
    assert (member.epoch, assignment) == (1, {})  # resolved after this answer, as Kafka's
    assert (c.group.group_epoch, c.group.assignment_epoch) == (2, 1)
    member, assignment = c.beat("a")
    assert (member.epoch, assignment) == (2, {"orders-eu": {0, 1}, "orders-us": {0}})


def test_a_regex_the_group_has_resolved_is_assigned_at_once():
    c = Cluster(**{"orders-eu": 2})
    c.beat("a", 0, subscribed_topic_regex="orders-.*")
    c.beat("a")
    b, _ = c.beat("b", 0, subscribed_topic_regex="orders-.*")
    assert b.epoch == c.group.group_epoch == c.group.assignment_epoch == 3
    assert c.group.target["b"] == {"orders-eu": {1}}


def test_topics_created_and_deleted_are_re_resolved_at_the_next_heartbeat():
    c = Cluster(**{"orders-eu": 2})
    c.beat("a", 0, subscribed_topic_regex="orders-.*")
    c.beat("b", 0, subscribed_topic_regex="orders-.*")
    c.beat("a", owned={"orders-eu": {0, 1}})
    c.beat("a", owned={"orders-eu": {0}})
    c.beat("b")
    epoch = c.group.group_epoch
    c.topics["orders-us"] = 2
    _, assignment = c.beat("b")  # any member's heartbeat notices the new topic
    assert c.group.group_epoch == epoch + 1
    assert assignment == {"orders-eu": {1}, "orders-us": {1}}
    _, assignment = c.beat("a")
    assert assignment == {"orders-eu": {0}, "orders-us": {0}}
    del c.topics["orders-eu"]
    _, assignment = c.beat("a")
    assert c.group.group_epoch == epoch + 2
    assert c.group.target == {"a": {"orders-us": {0}}, "b": {"orders-us": {1}}}
    assert assignment == {"orders-us": {0}}


def test_topics_subscribed_by_name_before_they_exist_are_assigned_once_created():
    c = Cluster()
    _, assignment = c.beat("a", 0, subscribed_topic_names=["later"])
    assert assignment == {}
    c.topics["later"] = 2
    _, assignment = c.beat("a")
    assert assignment == {"later": {0, 1}}


def test_members_may_mix_names_and_regexes():
    c = Cluster(**{"orders": 2, "audit-1": 1, "audit-2": 1})
    c.beat("names", 0, subscribed_topic_names=["orders"])
    c.beat("regex", 0, subscribed_topic_regex="audit-[0-9]+")
    c.beat("names")  # any member's next heartbeat assigns the resolved regex's topics
    assert c.group.target == {"names": {"orders": {0, 1}},
                              "regex": {"audit-1": {0}, "audit-2": {0}}}


def test_an_invalid_regex_is_refused_and_changes_nothing():
    c = Cluster(orders=1)
    assert c.error("a", 0, subscribed_topic_regex="orders-(") == "INVALID_REGULAR_EXPRESSION"
    assert not c.group.members if "g" in c.coordinator.groups else True
    c.beat("a", 0, subscribed_topic_regex="ord.*")
    epoch = c.group.group_epoch
    assert c.error("a", subscribed_topic_regex="[") == "INVALID_REGULAR_EXPRESSION"
    assert c.group.members["a"].regex == "ord.*" and c.group.group_epoch == epoch


def test_changing_the_regex_rebalances():
    c = Cluster(**{"orders": 1, "audit": 1})
    c.beat("a", 0, subscribed_topic_regex="orders")
    _, assignment = c.beat("a")
    assert assignment == {"orders": {0}}
    _, assignment = c.beat("a", subscribed_topic_regex="audit")
    assert assignment == {}  # orders revoked first; audit resolved after this answer
    _, assignment = c.beat("a", owned={})
    assert assignment == {"audit": {0}}


# -- static members -----------------------------------------------------------------------


def static_group() -> Cluster:
    c = Cluster(orders=4)
    c.beat("a", 0, instance_id="pod-a")
    c.beat("b", 0, instance_id="pod-b")
    c.beat("a", instance_id="pod-a")
    c.beat("a", instance_id="pod-a", owned={"orders": {0, 1}})
    c.beat("b", instance_id="pod-b")
    assert c.group.state == "Stable"
    return c


def test_a_static_member_leaving_temporarily_keeps_its_partitions():
    c = static_group()
    epoch = c.group.group_epoch
    left, _ = c.beat("a", -2, instance_id="pod-a")
    assert left.epoch == -2
    assert c.group.group_epoch == epoch
    assert c.group.members["a"].assigned == {"orders": {0, 1}}
    _, assignment = c.beat("b", instance_id="pod-b")
    assert assignment is None  # b gets nothing of a's


def test_a_restarted_static_member_takes_over_its_assignment_without_a_rebalance():
    c = static_group()
    epoch, b_before = c.group.group_epoch, c.group.members["b"].assigned
    c.beat("a", -2, instance_id="pod-a")
    member, assignment = c.beat("a2", 0, instance_id="pod-a")
    assert (member.member_id, member.epoch) == ("a2", epoch)
    assert assignment == {"orders": {0, 1}}
    assert set(c.group.members) == {"a2", "b"} and c.group.group_epoch == epoch
    _, b_assignment = c.beat("b", instance_id="pod-b")
    assert b_assignment is None and c.group.members["b"].assigned == b_before
    assert c.group.state == "Stable"


def test_an_instance_id_held_by_a_live_member_is_unreleased():
    c = static_group()
    assert c.error("intruder", 0, instance_id="pod-a") == "UNRELEASED_INSTANCE_ID"
    assert set(c.group.members) == {"a", "b"}


def test_the_replaced_static_member_is_fenced():
    c = static_group()
    c.beat("a", -2, instance_id="pod-a")
    c.beat("a2", 0, instance_id="pod-a")
    assert c.error("a", 2, instance_id="pod-a") == "FENCED_INSTANCE_ID"
    assert c.error("a", -2, instance_id="pod-a") == "FENCED_INSTANCE_ID"
    assert c.error("x", 2, instance_id="pod-x") == "UNKNOWN_MEMBER_ID"


def test_a_temporary_leave_needs_an_instance_id():
    c = static_group()
    assert c.error("a", -2) == "INVALID_REQUEST"


def test_a_static_member_that_does_not_return_is_removed_after_its_session_timeout():
    c = static_group()
    c.beat("a", -2, instance_id="pod-a")
    c.clock = 30.0
    c.beat("b", instance_id="pod-b")
    c.coordinator.expire(46.0)  # a's session began at its last heartbeat, at 0
    assert set(c.group.members) == {"b"}
    _, assignment = c.beat("b", instance_id="pod-b")
    assert assignment == {"orders": {0, 1, 2, 3}}


def test_a_static_member_leaving_for_good_rebalances():
    c = static_group()
    c.beat("a", -1, instance_id="pod-a")
    assert set(c.group.members) == {"b"}
    _, assignment = c.beat("b", instance_id="pod-b")
    assert assignment == {"orders": {0, 1, 2, 3}}


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_removed():
    c = Cluster(orders=2)
    c.beat("a", 0, rebalance_timeout_ms=10_000)
    c.beat("b", 0)
    c.beat("a")  # told to give up a partition, from now (0) on
    c.clock = 9.0
    c.beat("a", owned={"orders": {0, 1}})  # still owns both: heartbeats do not extend it
    assert c.coordinator.next_deadline() == 10.0
    c.coordinator.expire(10.0)
    assert set(c.group.members) == {"b"}
    _, assignment = c.beat("b")
    assert assignment == {"orders": {0, 1}}


def test_a_members_session_lasts_its_groups_session_timeout_else_the_brokers():
    c = Cluster(orders=1)
    c.coordinator.group_configs = lambda group_id: {"consumer.session.timeout.ms": "50000"}
    member, _ = c.beat("a", 0)
    assert member.deadline == 50.0
    c.coordinator.group_configs = lambda group_id: {}
    c.clock = 1.0
    member, _ = c.beat("a")
    assert member.deadline == 46.0  # the broker's 45 s
