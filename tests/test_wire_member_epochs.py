"""Member epochs of KIP-848 consumer groups and streams groups as Kafka's coordinator keeps and
checks them, where the differential fuzzer (python -m tests.fuzz differential) found the fake
off Kafka's: a repeated subscribed topic name is no new subscription (no epoch bump, so a later
rejoin at epoch 0 is still accepted), OffsetFetch checks the epoch of every asker but an admin
(null member id, negative epoch) before the topics it names, and the topology's topic names and
an empty group id are refused before any epoch. They run on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import time
import uuid

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import join_body, subscription
from tests.test_wire_group_migration import ClassicMember
from tests.test_wire_groups import coordinator
from tests.test_wire_streams_groups import Member as StreamsMember
from tests.test_wire_streams_groups import new_app, word_count
from tests.test_wire_versions import versions_of

pytestmark = [pytest.mark.fake_kafka(topics={"orders": 1, "lines": 3}),
              pytest.mark.timeout(120)]
MEMBER = "AAAAAAAAAAAAAAAAAAAAAQ"


def heartbeat(client: WireClient, group: str, **fields):
    return client.request("ConsumerGroupHeartbeat", 1, {
        "group_id": group, "member_id": MEMBER, "member_epoch": 0,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["orders"],
        "topic_partitions": [], **fields})


def joined(kafka, group: str) -> tuple[WireClient, int]:
    """A client of the group's coordinator and the epoch of MEMBER, joined to ``group``."""
    client = WireClient(coordinator(kafka, group))
    answer = heartbeat(client, group)
    assert answer.error_code == 0, answer
    return client, answer.member_epoch


# -- ConsumerGroupHeartbeat -----------------------------------------------------------------


def test_a_repeated_topic_name_is_the_same_subscription_and_moves_no_epoch(kafka):
    client, epoch = joined(kafka, "repeated")
    with client:
        repeated = heartbeat(client, "repeated", subscribed_topic_names=["orders", "orders"])
        assert (repeated.error_code, repeated.member_epoch) == (0, epoch)
        # the member's epoch never moved, so its previous epoch is still the join's 0: a
        # rejoin at epoch 0 owning nothing is the lost answer's retry, accepted
        rejoined = heartbeat(client, "repeated")
        assert (rejoined.error_code, rejoined.member_epoch) == (0, epoch)
        (group,) = client.request("ConsumerGroupDescribe", 1, {"group_ids": ["repeated"]}).groups
        assert [list(m.subscribed_topic_names) for m in group.members] == [["orders"]]
        assert group.group_epoch == epoch


def test_a_member_may_rejoin_at_epoch_0_whatever_its_epoch(kafka):
    # Kafka 4.4 (KAFKA-19233): a heartbeat at epoch 0 from a member the group holds is a
    # rejoin, never fenced, even once the member's epoch moved twice (its previous epoch no
    # longer 0). Found by the differential fuzzer.
    client, epoch = joined(kafka, "rejoined")
    with client:
        # Kafka computes a group's target assignment at most once per
        # group.consumer.assignment.interval.ms (1 s): past it, the change moves the epoch
        time.sleep(1.1)
        moved = heartbeat(client, "rejoined", subscribed_topic_names=["ord"])
        assert (moved.error_code, moved.member_epoch) == (0, epoch + 1)
        # its previous epoch is now the join's: that one is still accepted (a lost answer)
        assert heartbeat(client, "rejoined", member_epoch=epoch, rebalance_timeout_ms=-1,
                         subscribed_topic_names=None).error_code == 0
        rejoined = heartbeat(client, "rejoined")
        assert rejoined.error_code == 0
        assert rejoined.member_epoch >= epoch + 1
        late = heartbeat(client, "rejoined", member_epoch=rejoined.member_epoch + 1,
                         rebalance_timeout_ms=-1, subscribed_topic_names=None)
        assert late.error_code == ErrorCode.FENCED_MEMBER_EPOCH  # any other epoch is checked


def test_a_classic_members_repeated_topic_name_moves_no_epoch_either(kafka):
    client, _ = joined(kafka, "mixed")
    with client:
        classic = ClassicMember(client, group="mixed")
        classic.join()
        assert classic.sync().error_code == 0

        def group_epoch() -> int:
            (group,) = client.request("ConsumerGroupDescribe", 1, {"group_ids": ["mixed"]}).groups
            return group.group_epoch

        before = group_epoch()
        rejoined = client.request("JoinGroup", 9, join_body(classic.member_id, group="mixed",
                                                            protocols=[{
            "name": "range", "metadata": subscription("orders", "orders")}]))
        assert (rejoined.error_code, rejoined.generation_id) == (0, classic.generation)
        assert group_epoch() == before


# -- OffsetFetch v10 ------------------------------------------------------------------------


def fetch(client: WireClient, group: str, member: str | None, epoch: int,
          topic_ids: list[uuid.UUID]) -> tuple[int, list[list[int]]]:
    """OffsetFetch v10 of partition 0 of each topic id: the group's error and each topic's
    partition errors."""
    (answer,) = client.request("OffsetFetch", 10, {"require_stable": False, "groups": [{
        "group_id": group, "member_id": member, "member_epoch": epoch,
        "topics": [{"topic_id": t, "partition_indexes": [0]} for t in topic_ids]}]}).groups
    return answer.error_code, [[p.error_code for p in t.partitions] for t in answer.topics]


def orders_id(client: WireClient) -> uuid.UUID:
    answer = client.request("Metadata", 12, {"topics": [{"name": "orders", "topic_id": ZERO_UUID}],
                                             "allow_auto_topic_creation": False})
    return answer.topics[0].topic_id


@pytest.mark.parametrize(("member", "epoch", "error"), [
    (MEMBER, -1, ErrorCode.STALE_MEMBER_EPOCH),  # a member's negative epoch is stale
    (MEMBER, -2, ErrorCode.STALE_MEMBER_EPOCH),
    ("", -1, ErrorCode.UNKNOWN_MEMBER_ID),  # empty is not null: a member the group lacks
    ("", 0, ErrorCode.UNKNOWN_MEMBER_ID),
    (None, -1, 0),  # an admin client's fetch: not checked
], ids=["member-1", "member-2", "empty-1", "empty0", "null-1"])
def test_offset_fetch_checks_every_asker_but_an_admin(kafka, member, epoch, error):
    client, _ = joined(kafka, "fetched")
    with client:
        assert fetch(client, "fetched", member, epoch, [orders_id(client)]) == (
            error, [] if error else [[0]])


def test_offset_fetch_checks_the_epoch_before_the_topic_ids(kafka):
    client, epoch = joined(kafka, "fetched-ids")
    with client:
        unknown = uuid.uuid4()
        assert fetch(client, "fetched-ids", MEMBER, epoch + 1, [unknown, orders_id(client)]) \
            == (ErrorCode.STALE_MEMBER_EPOCH, [])
        assert fetch(client, "fetched-ids", MEMBER, epoch, [unknown]) == (
            0, [[ErrorCode.UNKNOWN_TOPIC_ID]])
        # no group: nothing to check, as an empty group's offsets; the unknown ids last
        assert fetch(client, "no-such-group", MEMBER, 7, [unknown, orders_id(client)]) == (
            0, [[0], [ErrorCode.UNKNOWN_TOPIC_ID]])


# -- streams groups ---------------------------------------------------------------------------


@pytest.mark.parametrize(("changelog", "message"), [
    ("app-counts\u00e9changelog",
     "Topic names app-counts\u00e9changelog are not valid topic names."),
    ("__consumer_offsets",
     "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is "
     "prohibited."),
], ids=["illegal", "internal"])
def test_a_topologys_topic_names_are_checked_before_the_member_epoch(kafka, changelog,
                                                                     message):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = StreamsMember(client, app)
        member.join()
        topology = word_count(app)
        topology["subtopologies"][1]["state_changelog_topics"][0]["name"] = changelog
        # at the member's epoch, a topology alone is an INVALID_REQUEST; its names go first
        refused = member.send(topology=topology)
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.STREAMS_INVALID_TOPOLOGY, message)


@pytest.mark.parametrize("api", ["StreamsGroupDescribe", "ConsumerGroupDescribe",
                                 "ShareGroupDescribe"])
def test_a_modern_group_describe_refuses_an_empty_group_id_first(kafka, api):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        answer = client.request(api, max(versions_of(kafka, api)), {
            "group_ids": ["no-such-app", "", "no-such-app-2"]})
    # the empty id's answer first, the others in the order of their coordinator's partitions
    first, *others = answer.groups
    assert (first.group_id, first.error_code, first.error_message) == (
        "", ErrorCode.INVALID_GROUP_ID, None)
    assert sorted((g.group_id, g.error_code) for g in others) == [
        ("no-such-app", ErrorCode.GROUP_ID_NOT_FOUND),
        ("no-such-app-2", ErrorCode.GROUP_ID_NOT_FOUND)]
