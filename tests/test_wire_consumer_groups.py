"""KIP-848 consumer groups on the wire (ConsumerGroupHeartbeat, ConsumerGroupDescribe): what a
member sees at each step of reconciliation, fencing, request checks, regex subscriptions and
static members. The rules as the coordinator applies them are specified in
tests/test_consumer_group_protocol.py; these tests check them where a client sees them, on the
fake and on Apache Kafka (``--kafka=both``).

Kafka's coordinator learns of topics and resolves regexes in the background, so a member
heartbeats until its assignment arrives (``Member.until``), as a client does; epochs are
Kafka's to number: a member uses the epoch it was given.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import coordinator
from tests.test_wire_versions import topic_id

pytestmark = pytest.mark.fake_kafka(topics={"orders": 4})
REBALANCE_TIMEOUT_MS = 300_000


class Member:
    """One KIP-848 consumer's side of ConsumerGroupHeartbeat v1: a client-made member id, the
    epoch it was last given, the assignment it was last given and what it reports owning."""

    def __init__(self, kafka, client: WireClient, group: str = "g", *,
                 instance_id: str | None = None, member_id: str | None = None):
        self.client, self.group, self.instance_id = client, group, instance_id
        self.member_id = member_id or str(uuid.uuid4())
        self.epoch = 0
        self.assigned: dict[str, set[int]] = {}  # topic name -> partitions
        self._names = {topic_id(kafka, name): name for name in kafka.topics()}
        self._kafka = kafka

    def send(self, epoch: int | None = None, **fields):
        """One heartbeat at ``epoch`` (default: the current one); the answer, unread."""
        body = {"group_id": self.group, "member_id": self.member_id,
                "member_epoch": self.epoch if epoch is None else epoch,
                "instance_id": self.instance_id, **fields}
        return self.client.request("ConsumerGroupHeartbeat", 1, body)

    def error(self, epoch: int | None = None, **fields) -> int:
        return self.send(epoch, **fields).error_code

    def heartbeat(self, epoch: int | None = None, **fields):
        """A heartbeat that must succeed; takes the epoch and assignment it brings."""
        answer = self.send(epoch, **fields)
        assert answer.error_code == 0, answer
        self.epoch = answer.member_epoch
        if answer.assignment is not None:
            self.assigned = {self._name(t.topic_id): set(t.partitions)
                             for t in answer.assignment.topic_partitions}
        return answer

    def join(self, **fields):
        fields.setdefault("rebalance_timeout_ms", REBALANCE_TIMEOUT_MS)
        fields.setdefault("topic_partitions", [])
        if "subscribed_topic_regex" not in fields:
            fields.setdefault("subscribed_topic_names", ["orders"])
        return self.heartbeat(0, **fields)

    def acknowledge(self):
        """Report owning exactly the assignment last given (revoked ones given up)."""
        return self.heartbeat(topic_partitions=[
            {"topic_id": self._id(name), "partitions": sorted(ps)}
            for name, ps in sorted(self.assigned.items())])

    def until(self, condition: Callable[[Member], bool], what: str, timeout: float = 30,
              acknowledge: bool = True):
        """Heartbeat until ``condition(self)``, acknowledging what it is given (or not)."""
        deadline = time.monotonic() + timeout
        while not condition(self):
            assert time.monotonic() < deadline, f"{what}: {self.assigned}, epoch {self.epoch}"
            time.sleep(0.05)
            self.acknowledge() if acknowledge else self.heartbeat()

    def leave(self, epoch: int = -1):
        return self.heartbeat(epoch)

    def _name(self, topic: uuid.UUID) -> str:
        if topic not in self._names:  # a topic created since
            self._names = {topic_id(self._kafka, n): n for n in self._kafka.topics()}
        return self._names[topic]

    def _id(self, name: str) -> uuid.UUID:
        return next(i for i, n in self._names.items() if n == name)


def owns(expected: dict[str, set[int]]) -> Callable[[Member], bool]:
    return lambda member: member.assigned == expected


def described(client: WireClient, group: str = "g"):
    (answer,) = client.request("ConsumerGroupDescribe", 0, {"group_ids": [group]}).groups
    assert answer.error_code == 0, answer
    return answer


def stable_pair(kafka, client: WireClient, **fields) -> tuple[Member, Member]:
    """Two members a and b of group g, settled: each owns half of orders' 4 partitions."""
    a, b = (Member(kafka, client, **fields.pop(name, {})) for name in ("a", "b"))
    a.join(**fields)
    a.until(owns({"orders": {0, 1, 2, 3}}), "a lone member gets every partition")
    b.join(**fields)
    deadline = time.monotonic() + 30
    while not (len(a.assigned.get("orders", ())) == len(b.assigned.get("orders", ())) == 2):
        assert time.monotonic() < deadline, (a.assigned, b.assigned)
        time.sleep(0.05)
        a.acknowledge()
        b.acknowledge()
    assert a.assigned["orders"] | b.assigned["orders"] == {0, 1, 2, 3}
    return a, b


def test_a_lone_member_gets_every_partition(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = Member(kafka, client)
        joined = member.join()
        assert joined.member_epoch == 2 and joined.heartbeat_interval_ms > 0  # a new group: 1
        member.until(owns({"orders": {0, 1, 2, 3}}), "every partition")
        group = described(client)
        assert (group.group_state, group.group_epoch) == ("Stable", member.epoch)
        assert [m.member_id for m in group.members] == [member.member_id]
    [seen] = kafka.group("g").members
    assert (seen.member_id, seen.member_epoch, seen.assignment) == (
        member.member_id, member.epoch, {"orders": [0, 1, 2, 3]})


def test_partitions_move_only_after_their_old_owner_revoked_them(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b = Member(kafka, client), Member(kafka, client)
        a.join()
        a.until(owns({"orders": {0, 1, 2, 3}}), "a lone member gets every partition")
        a_epoch = a.epoch
        b.join()
        assert b.assigned == {}  # a owns everything
        # Told to give up half (Kafka may compute the new target assignment a moment later:
        # the group is Assigning meanwhile).
        a.until(lambda m: len(m.assigned["orders"]) == 2, "a told to revoke half",
                acknowledge=False)
        kept = a.assigned["orders"]
        assert a.epoch == a_epoch  # its epoch moves once it revoked
        assert described(client).group_state == "Reconciling"
        b.heartbeat()
        assert b.assigned == {} and b.epoch > a_epoch  # the two are still a's
        a.acknowledge()
        assert a.epoch == b.epoch
        b.heartbeat()
        assert b.assigned == {"orders": {0, 1, 2, 3} - kept}
        b.acknowledge()
        assert described(client).group_state == "Stable"


def test_a_wrong_epoch_is_fenced_and_an_unknown_member_or_group_rejected(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = Member(kafka, client)
        member.join()
        assert member.error(member.epoch + 7) == ErrorCode.FENCED_MEMBER_EPOCH
        assert Member(kafka, client).error(member.epoch) == ErrorCode.UNKNOWN_MEMBER_ID
        stranger = Member(kafka, client, "other")
        assert stranger.error(1) == ErrorCode.GROUP_ID_NOT_FOUND
        assert member.heartbeat().error_code == 0  # still a member at its epoch


@pytest.mark.parametrize("fields,message", [
    ({"rebalance_timeout_ms": -1}, "RebalanceTimeoutMs must be provided"),
    ({"topic_partitions": None}, "TopicPartitions must be empty"),
    ({"subscribed_topic_names": None}, "Either SubscribedTopicNames or SubscribedTopicRegex"),
    ({"instance_id": " "}, "InstanceId can't be empty"),
])
def test_malformed_joins_are_invalid_requests(kafka, fields, message):
    with WireClient(coordinator(kafka)) as client:
        join = {"rebalance_timeout_ms": REBALANCE_TIMEOUT_MS, "topic_partitions": [],
                "subscribed_topic_names": ["orders"], **fields}
        member = Member(kafka, client, instance_id=join.pop("instance_id", None))
        answer = member.send(0, **join)
        assert answer.error_code == ErrorCode.INVALID_REQUEST
        assert message in answer.error_message
        listed = client.request("ListGroups", 5, {"types_filter": ["consumer"]}).groups
        assert all(not described(client, g.group_id).members for g in listed)


def test_owned_partitions_at_join_are_an_invalid_request(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = Member(kafka, client)
        answer = member.send(0, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                             subscribed_topic_names=["orders"], topic_partitions=[
                                 {"topic_id": topic_id(kafka, "orders"), "partitions": [0]}])
        assert answer.error_code == ErrorCode.INVALID_REQUEST
        assert "TopicPartitions must be empty" in answer.error_message


def test_a_member_id_is_required_from_v1_and_made_by_the_coordinator_at_v0(kafka):
    join = {"group_id": "g", "member_id": "", "member_epoch": 0,
            "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS, "subscribed_topic_names": ["orders"],
            "topic_partitions": []}
    with WireClient(coordinator(kafka)) as client:
        refused = client.request("ConsumerGroupHeartbeat", 1, join)
        assert refused.error_code == ErrorCode.INVALID_REQUEST
        made = client.request("ConsumerGroupHeartbeat", 0, join)
        assert made.error_code == 0 and made.member_id


def test_an_unknown_server_assignor_is_unsupported(kafka):
    with WireClient(coordinator(kafka)) as client:
        answer = Member(kafka, client).send(
            0, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, subscribed_topic_names=["orders"],
            topic_partitions=[], server_assignor="sticky")
        assert answer.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR


def test_leaving_frees_the_partitions_for_the_rest(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b = stable_pair(kafka, client)
        left = b.leave()
        assert (left.error_code, left.member_epoch) == (0, -1)
        a.until(owns({"orders": {0, 1, 2, 3}}), "the leaver's partitions")
        assert [m.member_id for m in described(client).members] == [a.member_id]


def test_the_range_assignor_gives_each_member_a_contiguous_range(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b = stable_pair(kafka, client, server_assignor="range")
        ranges = sorted([sorted(a.assigned["orders"]), sorted(b.assigned["orders"])])
        assert ranges == [[0, 1], [2, 3]]
        assert described(client).assignor_name == "range"


def test_the_group_uses_the_assignor_most_members_name_and_uniform_once_none_does(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b, c = (Member(kafka, client) for _ in range(3))
        a.join(server_assignor="range")
        b.join()  # naming none
        assert described(client).assignor_name == "range"
        c.join(server_assignor="uniform")
        b.heartbeat(server_assignor="uniform")
        assert described(client).assignor_name == "uniform"
        b.leave()
        c.leave()
        assert described(client).assignor_name == "range"
        a.leave()
        assert described(client).assignor_name == "uniform"


def test_a_heartbeat_that_changes_the_groups_assignor_bumps_the_group_epoch(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = Member(kafka, client)
        member.join(subscribed_topic_names=[], server_assignor="uniform")
        epoch = described(client).group_epoch
        member.heartbeat(server_assignor="uniform")
        assert described(client).group_epoch == epoch
        member.heartbeat(server_assignor="range")
        group = described(client)
        assert (group.assignor_name, group.group_epoch) == ("range", epoch + 1)


def test_in_a_tie_the_heartbeats_of_the_member_alone_with_its_assignor_bump_the_epoch(kafka):
    """Kafka 4.4's two counts order a tie differently (fakebroker.state.server_assignors):
    the group's says uniform, the count of a heartbeat of the member alone with range says
    range, so each of its heartbeats is a change of assignor."""
    with WireClient(coordinator(kafka)) as client:
        a, b = Member(kafka, client), Member(kafka, client)
        for member in (a, b):
            member.join(subscribed_topic_names=[], server_assignor="uniform")
        a.heartbeat(server_assignor="range")
        group = described(client)
        assert group.assignor_name == "uniform"
        epochs = [group.group_epoch]
        for beat in (a.heartbeat, a.heartbeat, b.heartbeat):
            beat()
            epochs.append(described(client).group_epoch)
        first = epochs[0]
        assert epochs == [first, first + 1, first + 2, first + 2]


# -- regex subscriptions ------------------------------------------------------------------


@pytest.mark.fake_kafka(topics={"orders-eu": 2, "orders-us": 1, "old-orders-eu": 1, "audit": 1})
def test_a_regex_subscribes_to_every_topic_it_matches_as_a_whole(kafka):
    with WireClient(coordinator(kafka)) as client:
        member = Member(kafka, client)
        member.join(subscribed_topic_regex="orders-.*")
        member.until(owns({"orders-eu": {0, 1}, "orders-us": {0}}), "the matching topics")
        (described_member,) = described(client).members
        assert described_member.subscribed_topic_regex == "orders-.*"
        assert described_member.subscribed_topic_names == []


@pytest.mark.fake_kafka(topics={"orders-eu": 2})
def test_topics_created_later_are_assigned_at_a_later_heartbeat(kafka):
    with WireClient(coordinator(kafka)) as client:
        by_regex, by_name = Member(kafka, client), Member(kafka, client)
        by_regex.join(subscribed_topic_regex="orders-.*")
        by_name.join(subscribed_topic_names=["later"])
        by_regex.until(owns({"orders-eu": {0, 1}}), "orders-eu")
        assert by_name.assigned == {}
        kafka.create_topic("orders-us", partitions=1)
        kafka.create_topic("later", partitions=2)
        by_regex.until(owns({"orders-eu": {0, 1}, "orders-us": {0}}), "the new matching topic")
        by_name.until(owns({"later": {0, 1}}), "the topic subscribed before it existed")


def test_an_invalid_regex_is_refused(kafka):
    with WireClient(coordinator(kafka)) as client:
        answer = Member(kafka, client).send(
            0, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, topic_partitions=[],
            subscribed_topic_regex="orders-(")
        assert answer.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


# -- static members -----------------------------------------------------------------------


def static_pair(kafka, client: WireClient) -> tuple[Member, Member]:
    return stable_pair(kafka, client, a={"instance_id": "pod-a"}, b={"instance_id": "pod-b"})


def test_a_restarted_static_member_takes_over_its_assignment_without_a_rebalance(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, b = static_pair(kafka, client)
        epoch, a_owned, b_owned = described(client).group_epoch, a.assigned, b.assigned
        left = a.leave(-2)  # leaving temporarily: a restart
        assert left.member_epoch == -2
        assert described(client).group_epoch == epoch
        restarted = Member(kafka, client, instance_id="pod-a")
        restarted.join()
        assert (restarted.epoch, restarted.assigned) == (epoch, a_owned)
        b.heartbeat()
        assert b.assigned == b_owned and described(client).group_epoch == epoch
        assert {m.member_id for m in described(client).members} == {
            restarted.member_id, b.member_id}


def test_an_instance_id_held_by_a_live_member_is_unreleased(kafka):
    with WireClient(coordinator(kafka)) as client:
        static_pair(kafka, client)
        intruder = Member(kafka, client, instance_id="pod-a")
        assert intruder.error(0, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                              subscribed_topic_names=["orders"], topic_partitions=[]) == \
            ErrorCode.UNRELEASED_INSTANCE_ID
        assert len(described(client).members) == 2


def test_the_replaced_static_member_is_fenced(kafka):
    with WireClient(coordinator(kafka)) as client:
        a, _ = static_pair(kafka, client)
        epoch = a.epoch
        a.leave(-2)
        Member(kafka, client, instance_id="pod-a").join()
        assert a.error(epoch) == ErrorCode.FENCED_INSTANCE_ID
        assert a.error(-2) == ErrorCode.FENCED_INSTANCE_ID
