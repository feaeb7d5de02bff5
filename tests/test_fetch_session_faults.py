"""Fetch sessions meet the fault rules (the fake alone: Kafka has none). A rule's session
error makes a real client start its session again, and it reads every record exactly once;
a rule on a partition reaches it in an incremental fetch that does not name it, as the fetch
reads every partition of its session, and the partition is answered again once it clears,
as Kafka answers a partition after an error.

Which clients fetch in sessions, measured: kafka-python and the Java client do;
confluent-kafka (librdkafka) does not (epoch -1, every partition every time), and recovers
all the same."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.clients.consumers import CLIENTS, start_consumer
from tests.clients.java import compile_harness
from tests.clients.producers import produce
from tests.test_wire_fetch_sessions import answered, fetch

pytestmark = [pytest.mark.timeout(180), pytest.mark.fake_kafka(topics={"orders": 3})]
IN_SESSIONS = {"kafka-python", "java"}


@pytest.fixture(params=CLIENTS)
def client(request) -> str:
    if request.param == "java":
        compile_harness()  # fails (not skips) when the Java client is not installed
    return request.param


def values(count: int, start: int = 0) -> list[bytes]:
    return [f"v{i}".encode() for i in range(start, start + count)]


def session_ids(fake_kafka) -> set[int]:
    """The ids of the sessions the (one) broker holds."""
    def ids() -> set[int]:
        cache = fake_kafka.cluster.state.brokers[1].fetch_sessions
        return {session.id for session in cache} if cache is not None else set()
    return fake_kafka.call(ids)


@pytest.mark.parametrize("error", ["FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH"])
def test_a_session_error_starts_a_new_session_and_every_record_is_read_once(
        fake_kafka, client, error):
    produce(fake_kafka.bootstrap_servers, "orders", values(30))
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "sessions")
    consumer.wait_for(30)
    before = session_ids(fake_kafka)
    fault = fake_kafka.faults.add(api="Fetch", error=error, count=2)
    fault.wait(2, timeout=60)  # the consumer kept fetching through both
    produce(fake_kafka.bootstrap_servers, "orders", values(30, start=30))
    consumed = consumer.wait_for(60)
    after = session_ids(fake_kafka)
    consumer.stop()
    assert sorted((v for _, _, v in consumed), key=lambda v: int(v[1:])) == values(60)
    assert fake_kafka.journal(api="Fetch", error=error)
    if client in IN_SESSIONS:
        assert len(before) == 1 and after - before, "a new session, opened by a full fetch"
        if error == "INVALID_FETCH_SESSION_EPOCH":  # the full fetch closed the old one
            assert not before & after
    else:
        assert before == after == set()


def test_a_partition_fault_reaches_a_partition_the_incremental_fetch_does_not_name(
        fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as wire:
        session = fetch(wire, 12, 0, 0, {0: 0, 1: 0}).session_id
        fake_kafka.faults.add(api="Fetch", topic="orders", partition=1,
                              error="NOT_LEADER_OR_FOLLOWER", count=1)
        faulted = fetch(wire, 12, session, 1, {})
        cleared = fetch(wire, 12, session, 2, {})
    assert [(p, e) for p, e, *_ in answered(faulted)] == [
        (1, ErrorCode.NOT_LEADER_OR_FOLLOWER)]
    assert answered(cleared) == [(1, 0, 0, False)]  # told again once the error cleared
