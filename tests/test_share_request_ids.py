"""The ids Kafka 4.4 checks before it looks a share session or a share group up (KafkaApis,
handleShareFetchRequest, handleShareAcknowledgeRequest, handleShareGroupHeartbeat):

* ShareFetch and ShareAcknowledge with a null group id: INVALID_REQUEST, with no message,
  whatever session the member has under any group id (an empty group id is looked up as any
  other: its session opens, but each partition a ShareFetch of it reads is answered
  UNKNOWN_SERVER_ERROR at once, Kafka making no share-partition for it);
* ShareFetch v2 renewing acknowledgements (``is_renew_ack``) with a fetch limit other than 0
  (max wait, min or max bytes, max records): INVALID_REQUEST before the session is looked up;
  with all of them 0 the session is looked up;
* ShareGroupHeartbeat with a member id longer than 36 characters (a UUID's string form):
  INVALID_REQUEST, with no message, before the group is looked up (``isMemberIdValid``, as
  for ShareFetch and ShareAcknowledge); 36 characters are looked up.

Found by the differential fuzzer (python -m tests.fuzz differential: a null group id answered
INVALID_REQUEST by Kafka where the fake looked up the session of the empty group id; a huge
member id answered UNKNOWN_MEMBER_ID by the fake); runs on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_start_state import OTHER, two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]


def fetch(client: WireClient, group: str | None, epoch: int, topic_id) -> object:
    return client.request("ShareFetch", 1, {
        "group_id": group, "member_id": OTHER, "share_session_epoch": epoch,
        "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "forgotten_topics_data": [], "topics": [{
            "topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                  "acknowledgement_batches": []}]}]})


def acknowledge(client: WireClient, group: str | None, epoch: int) -> object:
    return client.request("ShareAcknowledge", 1, {
        "group_id": group, "member_id": OTHER, "share_session_epoch": epoch, "topics": []})


def test_a_null_group_id_is_an_invalid_request_before_any_session_is_looked_up(kafka):
    address, topic_id = two_records(kafka)
    with WireClient(address) as client:
        answer = fetch(client, "", 0, topic_id)  # a session of the empty group id
        assert (answer.error_code, [(p.partition_index, p.error_code) for t in answer.responses
                                    for p in t.partitions]) \
            == (0, [(0, ErrorCode.UNKNOWN_SERVER_ERROR)])
        assert acknowledge(client, "", 1).error_code == 0
        for answer in (fetch(client, None, 0, topic_id), fetch(client, None, 2, topic_id),
                       acknowledge(client, None, 2), acknowledge(client, None, 0)):
            assert (answer.error_code, answer.error_message) == (ErrorCode.INVALID_REQUEST,
                                                                 None)
        assert acknowledge(client, "", 2).error_code == 0  # the session was left as it was


def heartbeat(client: WireClient, member_id: str, epoch: int) -> object:
    return client.request("ShareGroupHeartbeat", 1, {
        "group_id": "share-ids-nobody", "member_id": member_id, "member_epoch": epoch,
        "subscribed_topic_names": ["orphans"] if epoch == 0 else None})


@pytest.mark.parametrize("epoch", [0, 1, -1])
def test_a_share_member_id_longer_than_a_uuid_is_an_invalid_request(kafka, epoch):
    address, _ = two_records(kafka)
    with WireClient(address) as client:
        for member_id in ("x" * 37, "x" * 255):
            answer = heartbeat(client, member_id, epoch)
            assert (answer.error_code, answer.error_message, answer.member_epoch) == (
                ErrorCode.INVALID_REQUEST, None, 0)
        if epoch != 0:  # 36 characters are looked up: the group is unknown
            assert heartbeat(client, "x" * 36, epoch).error_code \
                == ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize("limit", ["max_wait_ms", "min_bytes", "max_bytes", "max_records"])
def test_a_renewal_with_a_fetch_limit_is_an_invalid_request(kafka, limit):
    address, topic_id = two_records(kafka)
    limits = {"max_wait_ms": 0, "min_bytes": 0, "max_bytes": 0, "max_records": 0}
    with WireClient(address) as client:
        for limits_set, error in (({**limits, limit: 500}, ErrorCode.INVALID_REQUEST),
                                  (limits, ErrorCode.SHARE_SESSION_NOT_FOUND)):
            answer = client.request("ShareFetch", 2, {
                "group_id": "share-ids-nobody", "member_id": OTHER, "share_session_epoch": 3,
                "batch_size": 100, "share_acquire_mode": 0, "is_renew_ack": True,
                "forgotten_topics_data": [], "topics": [], **limits_set})
            assert (answer.error_code, answer.error_message) == (error, None)
