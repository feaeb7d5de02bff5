"""The request path without sockets: a request frame in, an outcome out, and one journal entry
per request, whichever way it went."""

from __future__ import annotations

import logging
import struct
from typing import Any

import pytest
import trio
import trio.testing

from fakebroker.api import HANDLERS
from fakebroker.faults.rules import FaultRegistry
from fakebroker.journal import Journal
from fakebroker.options import SECURITY_PROTOCOLS
from fakebroker.pipeline import WAIT, Close, Peer, Pipeline, Throttled
from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.framing import decode_response, encode_request
from fakebroker.state.cluster import Cluster
from fakebroker.wire_client import api_key
from tests.test_wire_versions import batch, fetch_body, produce_body

METADATA = {"topics": [{"name": "orders"}], "allow_auto_topic_creation": False}


def a_pipeline() -> Pipeline:
    """A one-broker cluster's pipeline, whose fetches wait on the clock alone; the broker has
    a listener of each security protocol (ports 9092-9095), so any peer may be on it."""
    cluster = Cluster()
    broker = cluster.add_broker("127.0.0.1", 9092, endpoints={
        name: 9092 + k for k, name in enumerate(SECURITY_PROTOCOLS)})
    cluster.create_topic("orders", 2)
    return Pipeline(cluster, broker, FaultRegistry(seed=1), Journal(), trio.sleep)


def frame(api: str, version: int, body: Any, correlation_id: int = 1) -> bytes:
    """A request frame without its size prefix, as the server hands it over."""
    return encode_request(api_key(api), version, correlation_id, "tester", body)[4:]


def decoded(api: str, version: int, answer: Any) -> tuple[int, Any]:
    assert isinstance(answer, bytes | bytearray), answer
    return decode_response(api_key(api), version, bytes(answer[4:]))


def journal_rows(pipeline: Pipeline) -> list[tuple[Any, ...]]:
    return [(e.api, e.correlation_id, e.targets, e.errors, e.fault, e.outcome)
            for e in pipeline.journal.query()]


def test_a_request_that_cannot_wait_is_answered_at_once_and_journaled():
    pipeline = a_pipeline()
    answer = pipeline.answer_now(frame("Metadata", 12, METADATA, correlation_id=7),
                                 Peer(3, "/10.0.0.9"))
    correlation_id, response = decoded("Metadata", 12, answer)
    assert correlation_id == 7 and [t.name for t in response.topics] == ["orders"]
    [entry] = pipeline.journal.query()
    assert (entry.api, entry.version, entry.correlation_id, entry.client_id, entry.connection,
            entry.client_host, entry.targets, entry.outcome) == (
        "Metadata", 12, 7, "tester", 3, "/10.0.0.9", ["orders"], "answered")


def test_answer_now_leaves_a_request_that_may_wait_untouched():
    pipeline = a_pipeline()
    peer = Peer(1, "/127.0.0.1")
    assert pipeline.answer_now(frame("Fetch", 12, fetch_body("orders", 0, 0)), peer) is WAIT
    rule = pipeline.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER")
    assert pipeline.answer_now(frame("Metadata", 12, METADATA), peer) is WAIT
    rule.remove()
    pipeline.broker.latency_ms = 5
    assert pipeline.answer_now(frame("Metadata", 12, METADATA), peer) is WAIT
    assert pipeline.journal.query() == [] and rule.hits == 0


def test_a_repeated_request_gets_the_kept_answer_journaled_as_the_first():
    pipeline = a_pipeline()
    peer = Peer(1, "/127.0.0.1")
    first = pipeline.answer_now(frame("Metadata", 12, METADATA, correlation_id=1), peer)
    again = pipeline.answer_now(frame("Metadata", 12, METADATA, correlation_id=2), peer)
    assert decoded("Metadata", 12, again) == (2, decoded("Metadata", 12, first)[1])
    assert journal_rows(pipeline) == [("Metadata", 1, ["orders"], [], None, "answered"),
                                      ("Metadata", 2, ["orders"], [], None, "answered")]


@pytest.mark.parametrize("request_frame, reason", [
    (b"\x00\x03\x00", "malformed request (3 bytes)"),
    (struct.pack(">hhih", 999, 0, 1, -1), "unsupported API key 999"),
    (struct.pack(">hhih", 3, 99, 1, -1), "unsupported version 99 of API key 3"),
    (struct.pack(">hhih", 3, 12, 1, 40) + b"short", "malformed request (api 3 v12)"),
], ids=["shorter than a header", "unknown API", "unknown version", "bytes that do not parse"])
def test_a_request_that_cannot_be_served_closes_its_connection_unjournaled(request_frame,
                                                                          reason):
    pipeline = a_pipeline()
    outcome = pipeline.answer_now(request_frame, Peer(1, "/127.0.0.1"))
    assert isinstance(outcome, Close) and outcome.reason.startswith(reason)
    assert pipeline.journal.query() == []


def test_an_acks_0_produce_has_no_answer_and_a_failed_one_closes_the_connection():
    pipeline = a_pipeline()
    peer = Peer(1, "/127.0.0.1")
    quiet = produce_body("orders", 0, batch([b"quiet"]), acks=0)
    assert pipeline.answer_now(frame("Produce", 9, quiet), peer) is None
    failed = produce_body("nope", 0, batch([b"x"]), acks=0)
    pipeline.cluster.auto_create_topics = False
    outcome = pipeline.answer_now(frame("Produce", 9, failed, correlation_id=2), peer)
    assert isinstance(outcome, Close) and "acks=0" in outcome.reason
    assert [e.outcome for e in pipeline.journal.query()] == [
        "no answer", f"closed: {outcome.reason}"]


def test_a_handler_bug_closes_the_connection_logged_with_its_traceback(monkeypatch, caplog):
    def broken(request: Any, context: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setitem(HANDLERS, api_key("Metadata"), broken)
    pipeline = a_pipeline()
    with caplog.at_level(logging.ERROR, logger="fakebroker"):
        outcome = pipeline.answer_now(frame("Metadata", 12, METADATA), Peer(1, "/127.0.0.1"))
    assert outcome == Close("internal error: RuntimeError('a bug')")
    assert [r.exc_info[0] for r in caplog.records] == [RuntimeError]
    assert journal_rows(pipeline)[0][-1] == "closed: internal error: RuntimeError('a bug')"


def run(test: Any) -> None:
    trio.run(test, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_request_that_waits_is_answered_when_its_handler_is_done():
    pipeline = a_pipeline()

    async def test() -> None:
        started = trio.current_time()
        answer = await pipeline.answer(frame("Fetch", 12, fetch_body(
            "orders", 0, 0, max_wait_ms=500)), Peer(1, "/127.0.0.1"))
        assert trio.current_time() - started == pytest.approx(0.5)
        assert decoded("Fetch", 12, answer)[1].responses[0].partitions[0].error_code == 0

    run(test)
    assert journal_rows(pipeline) == [("Fetch", 1, ["orders/0"], [], None, "answered")]


def test_faults_are_applied_on_the_way_and_journaled():
    pipeline = a_pipeline()
    pipeline.faults.add(api="Metadata", topic="orders", error="LEADER_NOT_AVAILABLE",
                        throttle_ms=400)

    async def test() -> None:
        outcome = await pipeline.answer(frame("Metadata", 12, METADATA), Peer(1, "/x"))
        assert isinstance(outcome, Throttled) and outcome.seconds == 0.4
        response = decoded("Metadata", 12, outcome.frame)[1]
        assert response.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE
        assert response.throttle_time_ms == 400

    run(test)
    assert journal_rows(pipeline) == [
        ("Metadata", 1, ["orders"], ["LEADER_NOT_AVAILABLE"],
         "#1 LEADER_NOT_AVAILABLE+throttle_ms=400", "answered")]


def test_a_hung_request_ends_when_its_peer_leaves():
    pipeline = a_pipeline()
    pipeline.faults.add(api="Metadata", hang=True)
    peer = Peer(1, "/127.0.0.1")

    async def test() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(leave, peer, 60)
            outcome = await pipeline.answer(frame("Metadata", 12, METADATA), peer)
            assert trio.current_time() == pytest.approx(60)
            assert isinstance(outcome, Close) and "the peer left a hung request" in \
                outcome.reason

    run(test)
    assert journal_rows(pipeline) == [("Metadata", 1, ["orders"], [], "#1 hang", "hung")]


def test_a_held_request_goes_on_when_released_and_ends_if_its_peer_leaves_first():
    pipeline = a_pipeline()
    rule = pipeline.faults.add(api="Metadata", hold=True, count=2)
    stays, leaves = Peer(1, "/127.0.0.1"), Peer(2, "/127.0.0.1")
    outcomes = {}

    async def send(peer: Peer) -> None:
        outcomes[peer.connection_id] = await pipeline.answer(frame("Metadata", 12, METADATA),
                                                             peer)

    async def test() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send, stays)
            nursery.start_soon(send, leaves)
            await rule.wait(2)
            assert rule.held == 2 and outcomes == {}
            leaves.gone.set()
            await trio.testing.wait_all_tasks_blocked()  # all that leaving sets off is done
            assert rule.held == 1 and isinstance(outcomes[2], Close)
            assert rule.release() == 1
        assert decoded("Metadata", 12, outcomes[1])[1].topics[0].name == "orders"

    run(test)
    assert sorted(e.outcome for e in pipeline.journal.query()) == ["answered", "held"]
    assert {e.fault for e in pipeline.journal.query()} == {"#1 hold"}


async def leave(peer: Peer, after_s: float) -> None:
    """The peer closes its side after ``after_s`` seconds."""
    await trio.sleep(after_s)
    peer.gone.set()


def test_a_request_cancelled_with_its_connection_is_journaled_so():
    pipeline = a_pipeline()

    async def test() -> None:
        with trio.move_on_after(1):
            await pipeline.answer(frame("Fetch", 12, fetch_body(
                "orders", 0, 0, max_wait_ms=5000)), Peer(1, "/127.0.0.1"))

    run(test)
    assert journal_rows(pipeline)[0][-1] == "cancelled: connection closed"


def test_fault_rules_match_the_listener_and_the_principal_of_the_connection():
    pipeline = a_pipeline()
    on_ssl = pipeline.faults.add(api="Metadata", listener="SASL_SSL", count=None,
                                 error="LEADER_NOT_AVAILABLE")
    alice = pipeline.faults.add(api="Metadata", principal="User:alice", count=None,
                                error="UNKNOWN_TOPIC_OR_PARTITION")
    peers = {
        "anonymous": Peer(1, "/127.0.0.1"),
        "alice on SASL_PLAINTEXT": Peer(2, "/127.0.0.1", listener="SASL_PLAINTEXT",
                                        principal="User:alice"),
        "bob on SASL_SSL": Peer(3, "/127.0.0.1", listener="SASL_SSL", principal="User:bob"),
        "alice on SASL_SSL": Peer(4, "/127.0.0.1", listener="SASL_SSL",
                                  principal="User:alice"),
    }
    errors: dict[str, int] = {}

    async def test() -> None:
        for name, peer in peers.items():
            outcome = await pipeline.answer(frame("Metadata", 12, METADATA), peer)
            errors[name] = decoded("Metadata", 12, outcome)[1].topics[0].error_code

    run(test)
    assert errors == {
        "anonymous": 0,
        "alice on SASL_PLAINTEXT": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "bob on SASL_SSL": ErrorCode.LEADER_NOT_AVAILABLE,
        "alice on SASL_SSL": ErrorCode.LEADER_NOT_AVAILABLE,  # the first rule decides
    }
    assert (on_ssl.hits, alice.hits) == (2, 2)


def test_the_journal_records_and_filters_each_requests_listener_and_principal():
    pipeline = a_pipeline()
    pipeline.answer_now(frame("Metadata", 12, METADATA), Peer(1, "/127.0.0.1"))
    pipeline.answer_now(frame("Metadata", 12, METADATA, correlation_id=2),  # a kept answer
                        Peer(2, "/127.0.0.1", listener="SSL", principal="User:CN=client"))
    pipeline.answer_now(frame("Metadata", 11, METADATA, correlation_id=3),
                        Peer(3, "/127.0.0.1", listener="SASL_SSL", principal="User:alice"))
    assert [(e.correlation_id, e.listener, e.principal) for e in pipeline.journal.query()] == [
        (1, "PLAINTEXT", "User:ANONYMOUS"), (2, "SSL", "User:CN=client"),
        (3, "SASL_SSL", "User:alice")]
    assert [e.correlation_id for e in pipeline.journal.query(listener="SSL")] == [2]
    assert [e.correlation_id for e in pipeline.journal.query(principal="User:alice")] == [3]
    assert pipeline.journal.query(listener="SSL", principal="User:alice") == []


def test_a_handler_sees_the_listener_and_principal_of_its_request(monkeypatch):
    seen: list[tuple[str, str]] = []
    metadata = HANDLERS[api_key("Metadata")]

    def spy(request: Any, context: Any) -> Any:
        seen.append((context.listener, context.principal))
        return metadata(request, context)

    monkeypatch.setitem(HANDLERS, api_key("Metadata"), spy)
    pipeline = a_pipeline()
    pipeline.answer_now(frame("Metadata", 12, METADATA), Peer(1, "/127.0.0.1"))
    pipeline.answer_now(frame("Metadata", 11, METADATA),
                        Peer(2, "/127.0.0.1", listener="SASL_SSL", principal="User:alice"))
    assert seen == [("PLAINTEXT", "User:ANONYMOUS"), ("SASL_SSL", "User:alice")]
