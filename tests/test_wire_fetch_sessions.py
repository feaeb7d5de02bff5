"""Fetch sessions (KIP-227) at the wire, measured on Apache Kafka 4.4 (``--kafka=both``): a full
fetch opens a session, an incremental one is answered only what changed, and the session
errors sit at the answer's top level. Sessions of a second broker, and the cache's room with
fewer than 8 slots, run on the fake alone where the real broker cannot serve them."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.state.fetch_sessions import FetchSession
from fakebroker.wire_client import WireClient
from tests.bodies import batch, produce_body
from tests.test_wire_versions import leader_of

pytestmark = pytest.mark.fake_kafka(topics={"orders": 3})

NO_PARTITIONS: list[Any] = []


def entry(index: int, offset: int = 0, leader_epoch: int = -1) -> dict[str, Any]:
    return {"partition": index, "fetch_offset": offset, "partition_max_bytes": 1 << 20,
            "current_leader_epoch": leader_epoch, "log_start_offset": -1,
            "last_fetched_epoch": -1}


def fetch(client: WireClient, version: int, session_id: int, epoch: int,
          offsets: dict[int, int], forgotten: list[int] | None = None,
          topic: tuple[str, Any] = ("orders", None), leader_epochs: dict[int, int] | None = None
          ) -> Any:
    """Fetch ``orders`` partitions {index: offset} at once (max_wait 0) in session
    ``session_id`` at ``epoch``, forgetting partitions ``forgotten``; ``leader_epochs``: the
    current leader epoch a partition is fetched at (else -1, none)."""
    name, topic_id = topic
    epochs = leader_epochs or {}
    named = [{"topic": name, "topic_id": topic_id, "partitions": [
        entry(p, o, epochs.get(p, -1)) for p, o in offsets.items()]}] if offsets else []
    return client.request("Fetch", version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": session_id, "session_epoch": epoch,
        "rack_id": "", "topics": named, "forgotten_topics_data": [
            {"topic": name, "topic_id": topic_id, "partitions": forgotten}] if forgotten else []})


def answered(response: Any) -> list[tuple[int, int, int, bool]]:
    """(partition, error, high watermark, has records) of each partition answered."""
    return [(p.partition_index, p.error_code, p.high_watermark, bool(bytes(p.records or b"")))
            for t in response.responses for p in t.partitions]


def produce(client: WireClient, partition: int, *values: bytes) -> None:
    response = client.request("Produce", 9, produce_body("orders", partition,
                                                         batch(list(values))))
    assert response.responses[0].partition_responses[0].error_code == 0


def orders_id(client: WireClient) -> uuid.UUID:
    (topic,) = client.request("Metadata", 12, {"topics": [{"name": "orders"}],
                                               "allow_auto_topic_creation": False}).topics
    return topic.topic_id


@pytest.mark.parametrize("version", [7, 12, 13, 17, 18])
def test_a_full_fetch_opens_a_session_and_a_sessionless_one_does_not(kafka, version):
    with WireClient(kafka.bootstrap_servers) as client:
        topic = ("orders", orders_id(client))
        full = fetch(client, version, 0, 0, {0: 0, 1: 0}, topic=topic)
        sessionless = fetch(client, version, 0, -1, {0: 0, 1: 0}, topic=topic)
    assert (full.error_code, full.session_id != 0) == (0, True)
    assert [p for p, *_ in answered(full)] == [0, 1]
    assert (sessionless.error_code, sessionless.session_id) == (0, 0)
    assert [p for p, *_ in answered(sessionless)] == [0, 1]


@pytest.mark.parametrize("version", [12, 13])
def test_an_incremental_fetch_is_answered_only_the_partitions_with_something_new(
        kafka, version):
    with WireClient(kafka.bootstrap_servers) as client:
        topic = ("orders", orders_id(client))
        produce(client, 0, b"a")
        full = fetch(client, version, 0, 0, {0: 0, 1: 0, 2: 0}, topic=topic)
        assert answered(full) == [(0, 0, 1, True), (1, 0, 0, False), (2, 0, 0, False)]
        session = full.session_id
        # The client read partition 0 up to 1: nothing new anywhere.
        quiet = fetch(client, version, session, 1, {0: 1}, topic=topic)
        assert (quiet.error_code, quiet.session_id, answered(quiet)) == (0, session, [])
        produce(client, 2, b"b", b"c")  # partition 2, not named, fetched from its offset 0
        news = fetch(client, version, session, 2, {}, topic=topic)
        assert (news.session_id, answered(news)) == (session, [(2, 0, 2, True)])


def test_a_partition_answered_records_moves_to_the_end_of_the_session(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        full = fetch(client, 12, 0, 0, {0: 0, 1: 0, 2: 0})
        session = full.session_id
        produce(client, 0, b"a")
        first = fetch(client, 12, session, 1, {})
        produce(client, 1, b"b")
        second = fetch(client, 12, session, 2, {0: 1})
        produce(client, 1, b"c")
        produce(client, 0, b"d")
        third = fetch(client, 12, session, 3, {1: 1})
    assert answered(first) == [(0, 0, 1, True)]
    assert answered(second) == [(1, 0, 1, True)]
    assert answered(third) == [(0, 0, 2, True), (1, 0, 2, True)]  # the session: 2, 0, 1


def test_a_partition_answered_an_error_is_answered_again_once_it_clears(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        full = fetch(client, 12, 0, 0, {0: 0, 1: 0}, leader_epochs={1: 99})  # a future epoch
        session = full.session_id
        cleared = fetch(client, 12, session, 1, {1: 0})  # at no epoch: no error
        quiet = fetch(client, 12, session, 2, {})
    assert answered(full) == [(0, 0, 0, False), (1, ErrorCode.UNKNOWN_LEADER_EPOCH, -1, False)]
    assert answered(cleared) == [(1, 0, 0, False)]  # its high watermark told again
    assert answered(quiet) == []


def test_a_forgotten_partition_is_no_longer_answered(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        session = fetch(client, 12, 0, 0, {0: 0, 1: 0}).session_id
        forgot = fetch(client, 12, session, 1, {}, forgotten=[0])
        produce(client, 0, b"a")
        produce(client, 1, b"b")
        after = fetch(client, 12, session, 2, {})
    assert (forgot.error_code, answered(forgot)) == (0, [])
    assert answered(after) == [(1, 0, 1, True)]


def test_forgetting_every_partition_closes_the_session(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        session = fetch(client, 12, 0, 0, {0: 0}).session_id
        emptied = fetch(client, 12, session, 1, {}, forgotten=[0])
        after = fetch(client, 12, session, 2, {})
    assert (emptied.error_code, emptied.session_id) == (0, 0)
    assert (after.error_code, after.session_id) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0)


def test_an_unknown_session_is_fetch_session_id_not_found_at_top_level(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        response = fetch(client, 12, 12345, 1, {0: 0})
    assert (response.error_code, response.session_id, answered(response)) == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, NO_PARTITIONS)


def test_a_wrong_epoch_is_invalid_fetch_session_epoch_and_leaves_the_session_as_it_was(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        session = fetch(client, 12, 0, 0, {0: 0}).session_id
        wrong = fetch(client, 12, session, 5, {})
        repeated = fetch(client, 12, session, 1, {})  # the right epoch still serves
        stale = fetch(client, 12, session, 1, {})  # that epoch is used up
    assert (wrong.error_code, wrong.session_id, answered(wrong)) == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, NO_PARTITIONS)
    assert (repeated.error_code, repeated.session_id) == (0, session)
    assert (stale.error_code, stale.session_id) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0)


def test_a_full_fetch_naming_a_session_closes_it(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        first = fetch(client, 12, 0, 0, {0: 0}).session_id
        second = fetch(client, 12, first, 0, {0: 0}).session_id  # closes first, opens another
        closing = fetch(client, 12, second, -1, {0: 0})  # closes second, no session
        gone = [fetch(client, 12, s, 1, {}).error_code for s in (first, second)]
    assert second not in (0, first)
    assert (closing.error_code, closing.session_id) == (0, 0)
    assert gone == [ErrorCode.FETCH_SESSION_ID_NOT_FOUND] * 2


def test_a_session_of_names_fetched_with_topic_ids_is_fetch_session_topic_id_error(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        topic = ("orders", orders_id(client))
        by_names = fetch(client, 12, 0, 0, {0: 0}).session_id
        by_ids = fetch(client, 13, 0, 0, {0: 0}, topic=topic).session_id
        crossed = [fetch(client, 13, by_names, 1, {}, topic=topic).error_code,
                   fetch(client, 12, by_ids, 1, {}).error_code]
    assert crossed == [ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR] * 2


@pytest.mark.fake_only("needs a second broker (the real one has one node)")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": 2})
def test_each_broker_has_sessions_of_its_own(kafka):
    leaders = {leader_of(kafka, "orders", p): p for p in (0, 1)}
    assert len(leaders) == 2, "the partitions are led by the two brokers"
    (one, p), (other, q) = leaders.items()
    with WireClient(one) as first, WireClient(other) as second:
        session = fetch(first, 12, 0, 0, {p: 0}).session_id
        elsewhere = fetch(second, 12, session, 1, {})
        at_home = fetch(first, 12, session, 1, {})
    assert elsewhere.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert at_home.error_code == 0


@pytest.mark.fake_kafka(topics={"orders": 3},
                        overrides={"max.incremental.fetch.session.cache.slots": 8})
def test_eight_slots_hold_one_session_per_shard_and_no_more(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        opened = [fetch(client, 12, 0, 0, {0: 0}).session_id for _ in range(9)]
    assert all(opened[:8]) and len(set(opened[:8])) == 8
    assert opened[8] == 0  # its shard is full, of a session too young to evict


@pytest.mark.fake_kafka(topics={"orders": 3},
                        overrides={"max.incremental.fetch.session.cache.slots": 7})
def test_fewer_than_eight_slots_hold_no_session(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        response = fetch(client, 12, 0, 0, {0: 0})
    assert (response.error_code, response.session_id) == (0, 0)


def test_a_fetch_whose_session_moved_on_while_it_waited_is_invalid_fetch_session_epoch(kafka):
    """Kafka moves a session to its next epoch when a fetch arrives: a fetch at that next
    epoch on another connection is served while the first waits, and the first, when its
    wait ends (a record arrives), is answered INVALID_FETCH_SESSION_EPOCH with the session's
    id."""
    with WireClient(kafka.bootstrap_servers) as first, \
            WireClient(kafka.bootstrap_servers) as second:
        session = fetch(first, 12, 0, 0, {0: 0}).session_id
        waiting = first.send("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 60_000, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": session, "session_epoch": 1, "rack_id": "",
            "topics": [], "forgotten_topics_data": []})
        overtaking = overtake(second, session, epoch=2, within=30)
        produce(second, 0, b"ends the wait")
        correlation, late = first.receive("Fetch", 12)
    assert correlation == waiting
    assert (overtaking.error_code, overtaking.session_id) == (0, session)
    assert (late.error_code, late.session_id, answered(late)) == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH, session, NO_PARTITIONS)


def overtake(client: WireClient, session: int, epoch: int, within: float) -> Any:
    """The answer to a fetch of ``session`` at ``epoch`` once a fetch sent on another
    connection moved it there: refused with INVALID_FETCH_SESSION_EPOCH, which changes
    nothing, until that one arrives (the only sign of its arrival a client can see)."""
    deadline = time.monotonic() + within
    while (answer := fetch(client, 12, session, epoch, {})).error_code == \
            ErrorCode.INVALID_FETCH_SESSION_EPOCH and time.monotonic() < deadline:
        time.sleep(0.01)
    return answer


@pytest.mark.fake_only("takes a broker down and up")
@pytest.mark.fake_kafka(brokers=2, topics={"orders": 2})
def test_a_broker_back_up_has_lost_its_sessions_as_a_restarted_kafka(kafka):
    address = leader_of(kafka, "orders", 0)
    broker = next(b.id for b in kafka.brokers if f"{b.host}:{b.port}" == address)
    with WireClient(address) as client:
        session = fetch(client, 12, 0, 0, {0: 0}).session_id
    kafka.broker_down(broker)
    kafka.broker_up(broker)
    with WireClient(address) as client:
        assert fetch(client, 12, session, 1, {}).error_code == \
            ErrorCode.FETCH_SESSION_ID_NOT_FOUND


@pytest.mark.fake_only("counts the fake's own work")
def test_without_client_quotas_an_incremental_fetch_keeps_no_copy_of_its_session(
        kafka, monkeypatch):
    """What a session had told is copied, for a throttled answer to restore, only while a
    client quota could throttle the answer: without one, an incremental fetch costs what
    changed, not a pass over every partition of its session."""
    copies = []
    told = FetchSession.told
    monkeypatch.setattr(FetchSession, "told", lambda session: copies.append(1) or told(session))
    with WireClient(kafka.bootstrap_servers) as client:
        full = fetch(client, 12, 0, 0, {0: 0, 1: 0, 2: 0})
        for epoch in (1, 2, 3):
            assert answered(fetch(client, 12, full.session_id, epoch, {})) == []
    assert copies == []


def test_a_partition_with_a_diverging_epoch_is_answered_in_an_incremental_fetch(kafka):
    """Kafka's CachedPartition.maybeUpdateResponseData: a diverging epoch is always answered,
    its high watermark unchanged or not (the fetcher must learn where to truncate)."""
    with WireClient(kafka.bootstrap_servers) as client:
        produce(client, 0, b"a", b"b")
        full = fetch(client, 12, 0, 0, {0: 2})
        assert answered(full) == [(0, 0, 2, False)]
        beyond = dict(entry(0, offset=3), last_fetched_epoch=0)  # epoch 0 ends at 2 here
        incremental = client.request("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": full.session_id, "session_epoch": 1,
            "rack_id": "", "topics": [{"topic": "orders", "partitions": [beyond]}],
            "forgotten_topics_data": []})
    assert answered(incremental) == [(0, 0, 2, False)]
    (diverging,) = [p.diverging_epoch for t in incremental.responses for p in t.partitions]
    assert (diverging.epoch, diverging.end_offset) == (0, 2)
