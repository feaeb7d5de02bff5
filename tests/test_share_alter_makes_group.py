"""Which AlterShareGroupOffsets makes a share group that does not exist, on Kafka 4.4: one
naming a topic that exists, whatever its partitions (one past the topic's, or none at all); one
naming no topic, or only topics that do not exist, makes no group: DeleteShareGroupOffsets and
ShareGroupHeartbeat then answer GROUP_ID_NOT_FOUND and ListGroups lists none.

Found by the differential fuzzer (python -m tests.fuzz differential, seed 3's #72254-#73468: an
alter whose topic name was mutated made the group on the fake alone, and later requests to it
answered NONE and UNKNOWN_MEMBER_ID where Kafka answered GROUP_ID_NOT_FOUND); runs on the fake
and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import itertools

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_start_state import MEMBER, two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]
_groups = itertools.count()


def exists(client: WireClient, group: str) -> bool:
    """Whether the broker has ``group``, as three requests see it, which must agree."""
    deleted = client.request("DeleteShareGroupOffsets", 0, {
        "group_id": group, "topics": [{"topic_name": "orphans"}]})
    heartbeat = client.request("ShareGroupHeartbeat", 1, {
        "group_id": group, "member_id": MEMBER, "member_epoch": 3, "rack_id": None,
        "subscribed_topic_names": None})
    listed = client.request("ListGroups", 5, {"states_filter": [], "types_filter": []})
    seen = (deleted.error_code, deleted.error_message, heartbeat.error_code,
            heartbeat.error_message, group in [g.group_id for g in listed.groups])
    if seen == (ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group} not found.",
                ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group} not found.", False):
        return False
    assert seen == (0, None, ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {MEMBER} is not a member of group {group}.", True)
    return True


@pytest.mark.parametrize(("topics", "made"), [
    ([("orphans", [0])], True),
    ([("orphans", [5])], True),
    ([("orphans", [])], True),
    ([("nosuch", [0]), ("orphans", [7])], True),
    ([("nosuch", [0])], False),
    ([], False),
], ids=["known-partition", "past-the-topic", "no-partition", "unknown-and-known", "unknown-topic",
        "no-topic"])
def test_an_alter_makes_a_missing_group_only_when_it_names_a_known_topic(kafka, topics, made):
    address, _ = two_records(kafka)
    group = f"altered-{next(_groups)}"
    with WireClient(address) as client:
        answer = client.request("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [
            {"topic_name": name, "partitions": [
                {"partition_index": p, "start_offset": 1} for p in partitions]}
            for name, partitions in topics]})
        assert answer.error_code == 0
        assert exists(client, group) is made
