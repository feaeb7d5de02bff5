"""A share session outlives the connection that opened it while a ShareFetch of that connection
is still in flight: Kafka 4.4 reads nothing more of a connection whose request it is still
answering (its channel is muted), so it notices the close, and forgets the connection's share
session, only once that long poll has ended; the fake handles the requests a closed
connection sent to their end, then ends its sessions. Found by the differential fuzzer
(python -m tests.fuzz differential: a session-opening ShareFetch pending when the harness
closed its connection, its session still known to Kafka several inputs later); runs on the
fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import time

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_share_groups import new_group
from tests.test_share_start_state import OTHER, two_records

pytestmark = [pytest.mark.fake_kafka(topics={"orphans": 1}), pytest.mark.timeout(120)]
WAIT_MS = 3000


def session_error(client: WireClient, group: str) -> int:
    """ShareAcknowledge at an epoch no session has: INVALID_SHARE_SESSION_EPOCH while OTHER's
    session exists, SHARE_SESSION_NOT_FOUND once it is gone."""
    return client.request("ShareAcknowledge", 1, {
        "group_id": group, "member_id": OTHER, "share_session_epoch": 32767,
        "topics": []}).error_code


def test_a_share_session_lives_until_the_long_poll_of_its_closed_connection_ends(kafka):
    address, topic_id = two_records(kafka)
    group = new_group(kafka)  # no member joined: the fetch acquires nothing and waits
    waiting = WireClient(address)
    waiting.send("ShareFetch", 1, {
        "group_id": group, "member_id": OTHER, "share_session_epoch": 0,
        "max_wait_ms": WAIT_MS, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "forgotten_topics_data": [], "topics": [{
            "topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                  "acknowledgement_batches": []}]}]})
    started = time.monotonic()
    with WireClient(address) as client:
        while session_error(client, group) != ErrorCode.INVALID_SHARE_SESSION_EPOCH:
            assert time.monotonic() - started < 1, "the fetch opened no session"
        waiting.close()
        time.sleep(0.5)
        assert session_error(client, group) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
        while session_error(client, group) == ErrorCode.INVALID_SHARE_SESSION_EPOCH:
            assert time.monotonic() - started < WAIT_MS / 1000 + 5
            time.sleep(0.1)
        assert time.monotonic() - started >= WAIT_MS / 1000 - 0.5  # not before the poll ends
        assert session_error(client, group) == ErrorCode.SHARE_SESSION_NOT_FOUND
