"""DescribeClientQuotas and AlterClientQuotas set and find client quotas, answered as Apache
Kafka 4.4 answers them, and a producer over its ``producer_byte_rate`` is throttled as Kafka
throttles it (the ``kafka`` fixture: run with ``--kafka=both``).

Apache Kafka applies a change on its controller and answers Describe from each broker's copy
of the metadata, a moment later: ``described`` waits until the answer is the one expected.
The real broker is shared by the session: each test names its own users and client-ids and
removes every quota when it ends (``quotas_removed``)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.protocol.errors import error_name as kafka_error_name
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, join_body, produce_body
from tests.quotas import (
    DEFAULT,
    EXACT,
    INVALID,
    SPECIFIED,
    Pairs,
    a_name,
    alter,
    describe,
    described,
    entity,
    found,
    op,
    quota_free_client,
)


@pytest.fixture
def client(kafka: Any) -> Iterator[WireClient]:
    """A wire client of the broker with no quota set while the test runs."""
    yield from quota_free_client(kafka)


@pytest.mark.parametrize("version", [0, 1])
def test_quotas_set_on_users_and_client_ids_are_found_by_exact_default_and_any_matches(
        client: WireClient, version: int) -> None:
    alice, app = a_name("alice"), a_name("app")
    both = ((("user", alice), ("client-id", app)), {"producer_byte_rate": 1024.0,
                                                      "request_percentage": 12.5})
    results = alter(client, [both, ((("user", alice),), {"consumer_byte_rate": 2048.0}),
                                ((("user", None),), {"producer_byte_rate": 4096.0})],
                    version=version)
    assert sorted(results, key=str) == sorted([  # in any order: Kafka's is a hash map's
        ((("client-id", app), ("user", alice)), "NONE", None),
        ((("user", alice),), "NONE", None),
        ((("user", None),), "NONE", None)], key=str)
    user_and_app = frozenset({("user", alice), ("client-id", app)})
    described(client, [("user", EXACT, alice)], {
        user_and_app: {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
        frozenset({("user", alice)}): {"consumer_byte_rate": 2048.0}})
    assert found(describe(client, [("user", EXACT, alice)], strict=True, version=version)) \
        == {frozenset({("user", alice)}): {"consumer_byte_rate": 2048.0}}
    assert found(describe(client, [("user", DEFAULT, None)], version=version)) == {
        frozenset({("user", None)}): {"producer_byte_rate": 4096.0}}
    assert found(describe(client, [("client-id", SPECIFIED, None), ("user", SPECIFIED, None)],
                          strict=True, version=version)) == {
        user_and_app: {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}
    assert found(describe(client, [], strict=True, version=version)) == {}


def test_an_alteration_lists_its_entity_client_id_first_and_removes_keys(
        client: WireClient) -> None:
    bob, app = a_name("bob"), a_name("app")
    pairs = (("user", bob), ("client-id", app))
    [(listed, error, message)] = alter(client, [(pairs, {"producer_byte_rate": 1000.0})])
    assert (listed, error, message) == ((("client-id", app), ("user", bob)), "NONE", None)
    described(client, [("user", EXACT, bob)],
              {frozenset(pairs): {"producer_byte_rate": 1000.0}})
    assert alter(client, [(pairs, {"producer_byte_rate": None, "consumer_byte_rate": None})]) \
        == [((("client-id", app), ("user", bob)), "NONE", None)]
    described(client, [("user", EXACT, bob)], {})


def test_validate_only_checks_and_changes_nothing(client: WireClient) -> None:
    carol = a_name("carol")
    assert alter(client, [((("user", carol),), {"producer_byte_rate": 10.0})],
                 validate_only=True) == [((("user", carol),), "NONE", None)]
    assert alter(client, [((("user", carol),), {"producer_byte_rate": 1.5})],
                 validate_only=True) == [
        ((("user", carol),), INVALID, "producer_byte_rate cannot be a fractional value.")]
    time.sleep(0.5)  # what the real broker would have applied by now
    assert found(describe(client, [("user", EXACT, carol)])) == {}


@pytest.mark.parametrize(("pairs", "ops", "message"), [
    ((("user", "u"),), {"producer_byte_rate": 1.5},
     "producer_byte_rate cannot be a fractional value."),
    ((("user", "u"),), {"consumer_byte_rate": 0.0},
     "Quota consumer_byte_rate must be greater than 0"),
    ((("user", "u"),), {"producer_byte_rate": 1e20},
     "Proposed value for producer_byte_rate is too large for a LONG."),
    ((("client-id", "c"),), {"bogus": 1.0}, "Invalid configuration key bogus"),
    ((("user", "u"),), {"connection_creation_rate": 1.0},
     "Invalid configuration key connection_creation_rate"),
    ((("ip", "127.0.0.1"),), {"producer_byte_rate": 1.0},
     "Invalid configuration key producer_byte_rate"),
    ((("ip", "127.0.0.1"),), {"connection_creation_rate": 3e9},
     "Proposed value for connection_creation_rate is too large for an INT."),
    ((("group", "g"),), {"producer_byte_rate": 1.0},
     "Unhandled client quota entity type: group"),
    ((("user", ""),), {"producer_byte_rate": 1.0}, "Empty user not supported"),
    ((), {"producer_byte_rate": 1.0}, "Invalid empty client quota entity"),
    ((("ip", "127.0.0.1"), ("user", "u")), {"connection_creation_rate": 1.0},
     "Invalid quota entity combination, IP entity shouldnot be combined with User or "
     "ClientId"),
])
def test_a_refused_alteration_gets_kafkas_invalid_request_message(
        client: WireClient, pairs: Pairs, ops: dict[str, float], message: str) -> None:
    [(_, error, said)] = alter(client, [(pairs, ops)])
    assert (error, said) == (INVALID, message)
    assert found(describe(client, [])) == {}


def test_a_key_or_an_entity_named_twice_is_refused_as_a_duplicate_entity(
        client: WireClient) -> None:
    dave = a_name("dave")
    twice = f"Ignoring duplicate entity ClientQuotaEntity(entries={{user={dave}}})"
    answer = client.request("AlterClientQuotas", 1, {"entries": [{
        "entity": entity(("user", dave)),
        "ops": [op("producer_byte_rate", 5.0), op("producer_byte_rate", 6.0)]}],
        "validate_only": False})
    assert [(r.error_code, r.error_message) for r in answer.entries] == [(42, twice)]
    # Named twice in one request: refused, yet Kafka applies the first entry.
    assert alter(client, [((("user", dave),), {"producer_byte_rate": 5.0}),
                          ((("user", dave),), {"consumer_byte_rate": 6.0})]) == [
        ((("user", dave),), INVALID, twice)]
    described(client, [("user", EXACT, dave)],
              {frozenset({("user", dave)}): {"producer_byte_rate": 5.0}})


def test_ip_quotas_and_their_default_are_kept_apart_from_users(client: WireClient) -> None:
    results = alter(client, [((("ip", "127.0.0.1"),), {"connection_creation_rate": 50.0}),
                             ((("ip", None),), {"connection_creation_rate": 70.0})])
    assert sorted(results, key=str) == sorted([
        ((("ip", "127.0.0.1"),), "NONE", None), ((("ip", None),), "NONE", None)], key=str)
    described(client, [("ip", SPECIFIED, None)], {
        frozenset({("ip", "127.0.0.1")}): {"connection_creation_rate": 50.0},
        frozenset({("ip", None)}): {"connection_creation_rate": 70.0}})
    assert found(describe(client, [("user", SPECIFIED, None)])) == {}


@pytest.mark.parametrize(("components", "error", "message"), [
    ([("user", EXACT, None)], INVALID,
     "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ([("user", DEFAULT, "x")], INVALID,
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ([("user", SPECIFIED, "x")], INVALID,
     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
    ([("user", 3, None)], INVALID, "Unknown match type 3"),
    ([("group", SPECIFIED, None)], "UNSUPPORTED_VERSION", "Unsupported entity type group"),
    ([("", SPECIFIED, None)], INVALID, "Invalid empty entity type."),
    ([("user", SPECIFIED, None), ("user", DEFAULT, None)], INVALID,
     "Entity type user cannot appear more than once in the filter."),
    ([("ip", SPECIFIED, None), ("client-id", SPECIFIED, None)], INVALID,
     "Invalid entity filter component combination. IP filter component should not be used "
     "with user or clientId filter component."),
])
def test_a_refused_filter_gets_its_error_at_the_top_and_no_entries(
        client: WireClient, components: list[tuple[str, int, str | None]], error: str,
        message: str) -> None:
    answer = describe(client, components)
    assert (kafka_error_name(answer.error_code), answer.error_message, answer.entries) == (
        error, message, None)


def test_a_producer_over_its_byte_rate_is_throttled_and_its_connection_muted(
        kafka: Any, client: WireClient) -> None:
    """11 samples of 1 s: 150 KB in a moment is 15 KB/s over the 10 s Kafka assumes at least,
    1.5 times a 10,000 B/s quota: the answers from the ~100 KB mark on carry a throttle
    time growing by a second per 10 KB, and the next answer waits it out."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    assert alter(client, [((("client-id", app),), {"producer_byte_rate": 10000.0})]) == [
        ((("client-id", app),), "NONE", None)]
    described(client, [("client-id", EXACT, app)],
              {frozenset({("client-id", app)}): {"producer_byte_rate": 10000.0}})
    records = batch([b"x" * 10000])
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as producer:
        throttles = [producer.request("Produce", 9, produce_body(app, 0, records))
                     .throttle_time_ms for _ in range(12)]
        started = time.monotonic()
        producer.request("Metadata", 12, {"topics": [], "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        muted = time.monotonic() - started
    assert throttles[:8] == [0] * 8, throttles
    assert 500 <= throttles[-1] <= 2500, throttles
    assert throttles[-1] > throttles[-2], throttles
    assert muted >= throttles[-1] / 1000 * 0.8, (muted, throttles)


@pytest.mark.fake_only("the set_client_quota operation is the fake's")
def test_the_set_client_quota_operation_sets_what_describe_lists(kafka: Any) -> None:
    kafka.set_client_quota("producer_byte_rate", 1024, user="alice", client_id="<default>")
    with pytest.raises(ClusterError, match="producer_byte_rate cannot be a fractional value"):
        kafka.set_client_quota("producer_byte_rate", 1.5, user="alice")
    with WireClient(kafka.bootstrap_servers) as wire:
        assert found(describe(wire, [])) == {
            frozenset({("user", "alice"), ("client-id", None)}): {"producer_byte_rate": 1024}}
        kafka.set_client_quota("producer_byte_rate", None, user="alice", client_id="<default>")
        assert found(describe(wire, [])) == {}


def test_a_consumer_over_its_byte_rate_is_throttled_with_an_empty_fetch(
        kafka: Any, client: WireClient) -> None:
    """A 10,000 B/s consumer quota, 30 KB a fetch: three fetches (90 KB over the 10 s Kafka
    assumes at least) are within it; the fourth goes over and is answered with a throttle
    time (~2 s) and no data, its bytes not counted: so is the next, after the mute."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    records = batch([b"x" * 10000])
    for _ in range(3):
        client.request("Produce", 9, produce_body(app, 0, records))
    assert alter(client, [((("client-id", app),), {"consumer_byte_rate": 10000.0})]) == [
        ((("client-id", app),), "NONE", None)]
    described(client, [("client-id", EXACT, app)],
              {frozenset({("client-id", app)}): {"consumer_byte_rate": 10000.0}})
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as consumer:
        answers = [consumer.request("Fetch", 12, fetch_body(app, 0, 0)) for _ in range(5)]
    throttles = [a.throttle_time_ms for a in answers]
    assert throttles[:3] == [0, 0, 0], throttles
    assert all(len(a.responses[0].partitions[0].records) > 30000 for a in answers[:3])
    assert all(1000 <= t <= 3000 for t in throttles[3:]), throttles
    assert [a.responses for a in answers[3:]] == [[], []]


def test_a_throttled_full_fetch_opens_no_session(kafka: Any, client: WireClient) -> None:
    """As above, each fetch a full one opening a session (epoch 0): those answered open
    one; the throttled one, answered without data, opens none (session id 0)."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    for _ in range(3):
        client.request("Produce", 9, produce_body(app, 0, batch([b"x" * 10000])))
    assert alter(client, [((("client-id", app),), {"consumer_byte_rate": 10000.0})]) == [
        ((("client-id", app),), "NONE", None)]
    described(client, [("client-id", EXACT, app)],
              {frozenset({("client-id", app)}): {"consumer_byte_rate": 10000.0}})
    full = {**fetch_body(app, 0, 0), "session_id": 0, "session_epoch": 0}
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as consumer:
        answers = [consumer.request("Fetch", 12, full) for _ in range(4)]
    assert [a.throttle_time_ms > 0 for a in answers] == [False, False, False, True]
    assert all(a.session_id for a in answers[:3]) and answers[3].session_id == 0


def request_quota(client: WireClient, app: str, percent: float) -> None:
    """Hold client-id ``app`` to ``request_percentage`` = ``percent``, once it applies."""
    assert alter(client, [((("client-id", app),), {"request_percentage": percent})]) == [
        ((("client-id", app),), "NONE", None)]
    described(client, [("client-id", EXACT, app)],
              {frozenset({("client-id", app)}): {"request_percentage": percent}})


def sync_body(group: str, generation: int, member_id: str,
              assignments: Sequence[str] = ()) -> dict[str, Any]:
    return {"group_id": group, "generation_id": generation, "member_id": member_id,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": b"\x00\x00"} for m in assignments]}


def test_a_client_over_its_request_quota_is_throttled_on_fetch_join_and_sync_too(
        kafka: Any, client: WireClient) -> None:
    """A request quota of 0.00001 percent (a microsecond of handler time in 10 s): the
    handling of a Fetch, a JoinGroup and a SyncGroup goes over it, and each answer carries
    the request quota's bound, one window (1000 ms); the throttled Fetch gets no data."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    client.request("Produce", 9, produce_body(app, 0, batch([b"x"])))
    request_quota(client, app, 0.00001)
    group = a_name("group")
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as consumer:
        fetched = consumer.request("Fetch", 12, fetch_body(app, 0, 0))
        found = consumer.request("FindCoordinator", 3, {"key": group, "key_type": 0})
    with WireClient(f"{found.host}:{found.port}", client_id=app, timeout=30) as member:
        required = member.request("JoinGroup", 9, join_body(group=group))
        joined = member.request("JoinGroup", 9, join_body(required.member_id, group=group))
        synced = member.request("SyncGroup", 5, sync_body(
            group, joined.generation_id, joined.member_id, [joined.member_id]))
    assert (fetched.throttle_time_ms, fetched.responses) == (1000, [])
    assert (required.error_code, required.throttle_time_ms) == (
        ErrorCode.MEMBER_ID_REQUIRED, 1000)
    assert (joined.error_code, joined.throttle_time_ms) == (0, 1000)
    assert (synced.error_code, synced.throttle_time_ms) == (0, 1000)


def test_waiting_is_not_charged_to_the_request_quota(kafka: Any, client: WireClient) -> None:
    """A request quota of 1 percent (100 ms of handler time in 10 s) holds a client whose
    Fetches long-poll 400 ms each, whose JoinGroup waits 400 ms at the barrier for the other
    member and whose SyncGroup waits 400 ms for the leader's: Kafka charges a request its
    handler's work, not its time parked in purgatory, so none of them is throttled."""
    app = a_name("app")
    group = a_name("group")
    kafka.create_topic(app, partitions=1)
    request_quota(client, app, 1.0)
    found = client.request("FindCoordinator", 3, {"key": group, "key_type": 0})
    home = f"{found.host}:{found.port}"
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as consumer:
        polls = [consumer.request("Fetch", 12, fetch_body(app, 0, 0, max_wait_ms=400))
                 for _ in range(4)]
    with WireClient(home, client_id=app, timeout=30) as leader, \
            WireClient(home, client_id=app, timeout=30) as follower:
        first = leader.request("JoinGroup", 9, join_body(group=group))
        first = leader.request("JoinGroup", 9, join_body(first.member_id, group=group))
        leader.request("SyncGroup", 5, sync_body(group, first.generation_id, first.member_id,
                                                 [first.member_id]))
        second = follower.request("JoinGroup", 9, join_body(group=group))
        follower.send("JoinGroup", 9, join_body(second.member_id, group=group))
        time.sleep(0.4)  # the follower waits at the barrier for the leader to rejoin
        rejoined = leader.request("JoinGroup", 9, join_body(first.member_id, group=group))
        _, joined = follower.receive("JoinGroup", 9)
        follower.send("SyncGroup", 5, sync_body(group, joined.generation_id, joined.member_id))
        time.sleep(0.4)  # the follower waits for the leader's assignment
        synced = leader.request("SyncGroup", 5, sync_body(
            group, rejoined.generation_id, rejoined.member_id,
            [rejoined.member_id, joined.member_id]))
        _, assigned = follower.receive("SyncGroup", 5)
    assert [(p.throttle_time_ms, p.responses[0].partitions[0].records) for p in polls] == [
        (0, b"")] * 4
    assert (rejoined.error_code, joined.error_code, synced.error_code,
            assigned.error_code) == (0, 0, 0, 0)
    assert [a.throttle_time_ms for a in (rejoined, joined, synced, assigned)] == [0] * 4


def test_an_acks_0_produce_is_exempt_from_the_request_quota(
        kafka: Any, client: WireClient) -> None:
    """Kafka charges an acks=0 Produce no request time: over a request quota of 0.00001
    percent, the Metadata sent after one is answered at once (with the quota's one-window
    throttle time), where a charged Produce would have muted the connection a second."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    request_quota(client, app, 0.00001)
    with WireClient(kafka.bootstrap_servers, client_id=app, timeout=30) as producer:
        producer.send("Produce", 9, produce_body(app, 0, batch([b"x"]), acks=0))
        started = time.monotonic()
        answer = producer.request("Metadata", 12, {
            "topics": [], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False})
        took = time.monotonic() - started
    assert answer.throttle_time_ms == 1000
    assert took < 0.5, f"the Metadata after an acks=0 Produce waited {took:.2f} s"
