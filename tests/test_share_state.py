"""The share-group state (fakebroker.state.share_groups, share_partitions) without sockets:
records acquired, acknowledged, released, archived at the delivery limit, locks expiring, the
start offset moving; share sessions' epochs; the simple assignor; the group configs' checks."""

from __future__ import annotations

import pytest

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.share_groups import (
    Heartbeat,
    ShareGroupCoordinator,
    compute_target,
    validate_group_config,
)
from fakebroker.state.share_partitions import (
    ACCEPT,
    GAP,
    REJECT,
    RELEASE,
    RENEW,
    Acquired,
    RecordState,
    SharePartition,
)

LOCK_S, LIMIT = 30.0, 5
BATCHES = [(0, 2), (3, 3), (4, 9)]  # the log's batches: (base offset, last offset)


def acquire(share: SharePartition, member: str = "m1", max_records: int = 500,
            now: float = 0.0, log_end: int = 10) -> list[Acquired]:
    return share.acquire(member, BATCHES, 0, log_end, max_records, 2000, now, LOCK_S)


def states(share: SharePartition) -> dict[int, tuple[RecordState, int]]:
    return {o: (r.state, r.delivery_count) for o, r in share.in_flight()}


def fresh() -> SharePartition:
    share = SharePartition()
    share.initialize(0)
    return share


def test_records_are_acquired_in_whole_batches_up_to_max_records() -> None:
    share = fresh()
    assert acquire(share, max_records=2) == [Acquired(0, 2, 1)]  # a batch is never split
    assert acquire(share, "m2", max_records=2) == [Acquired(3, 9, 1)]
    assert acquire(share, "m3") == []  # nothing left to acquire


def test_accept_moves_the_start_offset_past_acknowledged_records() -> None:
    share = fresh()
    acquire(share)
    share.acknowledge("m1", [(0, 3, [ACCEPT])], 1.0, LOCK_S, LIMIT)
    assert share.start_offset == 4
    assert states(share)[4] == (RecordState.ACQUIRED, 1)


def test_a_released_record_is_delivered_again_with_its_count_one_higher() -> None:
    share = fresh()
    acquire(share)
    share.acknowledge("m1", [(0, 9, [ACCEPT, RELEASE, *[ACCEPT] * 8])], 1.0, LOCK_S, LIMIT)
    assert share.start_offset == 1
    assert acquire(share, "m2") == [Acquired(1, 1, 2)]


def test_reject_and_gap_archive_records_for_good() -> None:
    share = fresh()
    acquire(share)
    share.acknowledge("m1", [(0, 1, [REJECT, GAP])], 1.0, LOCK_S, LIMIT)
    assert states(share).get(0) is None and share.start_offset == 2
    share.acknowledge("m1", [(2, 9, [RELEASE])], 1.0, LOCK_S, LIMIT)
    assert [r.first_offset for r in acquire(share, "m2")] == [2]


def test_released_at_the_delivery_limit_a_record_is_archived() -> None:
    share = fresh()
    acquire(share)
    share.acknowledge("m1", [(3, 9, [ACCEPT])], 1.0, LOCK_S, LIMIT)
    for count in range(1, LIMIT + 1):
        if count > 1:
            assert acquire(share) == [Acquired(0, 2, count)]
        share.acknowledge("m1", [(0, 2, [RELEASE])], 1.0, LOCK_S, LIMIT)
    assert share.start_offset == 10  # archived: nothing left in flight
    assert acquire(share) == []


def test_an_expired_lock_makes_the_record_available_to_another_member() -> None:
    share = fresh()
    acquire(share)
    assert share.next_deadline() == LOCK_S
    assert not share.expire(LOCK_S - 0.001, LIMIT)
    assert share.expire(LOCK_S, LIMIT)
    assert acquire(share, "m2", now=LOCK_S) == [Acquired(0, 9, 2)]


def test_renew_extends_the_lock() -> None:
    share = fresh()
    acquire(share)
    share.acknowledge("m1", [(0, 9, [RENEW])], 20.0, LOCK_S, LIMIT)
    assert not share.expire(LOCK_S, LIMIT)
    assert share.next_deadline() == 20.0 + LOCK_S


@pytest.mark.parametrize("member, first, last, types, error", [
    ("m2", 0, 0, [ACCEPT], "INVALID_RECORD_STATE"),  # another member's record
    ("m1", 10, 10, [ACCEPT], "INVALID_REQUEST"),  # past every record delivered
    ("m1", 0, 2, [ACCEPT, ACCEPT], "INVALID_REQUEST"),  # neither one type nor one per offset
    ("m1", 0, 0, [7], "INVALID_REQUEST"),
])
def test_an_acknowledgement_that_cannot_apply_is_refused_and_changes_nothing(
        member, first, last, types, error) -> None:
    share = fresh()
    acquire(share)
    before = states(share)
    with pytest.raises(ClusterError) as refused:
        share.acknowledge(member, [(first, last, types)], 1.0, LOCK_S, LIMIT)
    assert refused.value.error == error
    assert states(share) == before


def test_records_deleted_from_the_log_leave_the_in_flight_window() -> None:
    share = fresh()
    acquire(share, max_records=1)
    assert share.acquire("m1", BATCHES, 4, 10, 500, 2000, 0.0, LOCK_S) == [Acquired(4, 9, 1)]
    assert share.start_offset == 4


def test_no_more_records_in_flight_than_the_partition_limit() -> None:
    share = fresh()
    assert share.acquire("m1", BATCHES, 0, 10, 500, 3, 0.0, LOCK_S) == [Acquired(0, 2, 1)]


def test_a_fetch_reads_one_segment_from_the_lowest_available_record() -> None:
    """Segments from offsets 0 and 4: a fetch acquires up to the end of the segment of its
    fetch offset, the lowest Available record (else the end offset), never across it."""
    share = fresh()

    def read_end(offset: int) -> int | None:
        return 4 if offset < 4 else None

    def fetch(member: str) -> list[Acquired]:
        return share.acquire(member, BATCHES, 0, 10, 500, 2000, 0.0, LOCK_S, read_end)

    assert fetch("m1") == [Acquired(0, 3, 1)]
    assert fetch("m2") == [Acquired(4, 9, 1)]
    share.acknowledge("m1", [(0, 3, [RELEASE])], 1.0, LOCK_S, LIMIT)
    share.acknowledge("m2", [(4, 9, [RELEASE])], 1.0, LOCK_S, LIMIT)
    assert fetch("m3") == [Acquired(0, 3, 2)]  # released in both segments: the first's
    assert fetch("m3") == [Acquired(4, 9, 2)]


def test_the_simple_assignor_shares_partitions_when_members_outnumber_them() -> None:
    assert compute_target({"a": {"t"}, "b": {"t"}, "c": {"t"}}, {"t": 1}) == {
        "a": {"t": {0}}, "b": {"t": {0}}, "c": {"t": {0}}}
    spread = compute_target({"a": {"t"}, "b": {"t"}}, {"t": 4})
    assert sorted(p for a in spread.values() for p in a["t"]) == [0, 1, 2, 3]
    assert all(len(a["t"]) == 2 for a in spread.values())


def heartbeat(coordinator: ShareGroupCoordinator, member: str, epoch: int, now: float = 0.0,
              topics: list[str] | None = None):
    return coordinator.heartbeat(Heartbeat("g", member, epoch, subscribed_topic_names=topics),
                                 now)


def test_members_join_heartbeat_and_leave_with_kafkas_answers() -> None:
    coordinator = ShareGroupCoordinator(partitions_of=lambda: {"t": 2})
    member, assignment = heartbeat(coordinator, "a", 0, topics=["t"])
    # a new group starts at 1; t's partitions are assigned once their share state is
    # initialized, after this heartbeat
    assert (member.epoch, assignment) == (2, {})
    # within the assignment interval (1 s) of the last target: b waits at its epoch
    member, assignment = heartbeat(coordinator, "b", 0, 0.5, topics=["t"])
    assert (member.epoch, assignment, coordinator.groups["g"].group_epoch) == (2, {}, 3)
    member, assignment = heartbeat(coordinator, "a", 2, 1.0)
    assert member.epoch == 3 and sum(map(len, assignment.values())) == 1
    with pytest.raises(ClusterError, match=r"greater member epoch \(5\)") as fenced:
        heartbeat(coordinator, "a", 5)
    assert fenced.value.error == "FENCED_MEMBER_EPOCH"
    with pytest.raises(ClusterError, match="Member x is not a member of group g."):
        heartbeat(coordinator, "x", 3)
    assert heartbeat(coordinator, "a", -1)[0].epoch == -1
    coordinator.expire(45.5)  # b's session, from its join at 0.5
    assert coordinator.groups["g"].state == "Empty"


def test_the_first_fetch_starts_at_the_log_end_by_default() -> None:
    coordinator = ShareGroupCoordinator(partitions_of=lambda: {"t": 1})
    heartbeat(coordinator, "a", 0, topics=["t"])
    assert coordinator.acquire("g", "a", "t", 0, BATCHES, 0, 10, 500, 0.0) == []
    assert coordinator.groups["g"].partitions[("t", 0)].start_offset == 10


def test_share_sessions_move_epoch_by_epoch_and_closing_releases_records() -> None:
    released = []
    coordinator = ShareGroupCoordinator(partitions_of=lambda: {"t": 1})
    coordinator.on_release = lambda: released.append(True)
    coordinator.configs["g"] = {"share.auto.offset.reset": "earliest"}
    heartbeat(coordinator, "a", 0, topics=["t"])
    coordinator.open_session("g", "a", [("t", 0)])
    assert coordinator.acquire("g", "a", "t", 0, BATCHES, 0, 10, 500, 0.0) == [
        Acquired(0, 9, 1)]
    with pytest.raises(ClusterError) as stale:
        coordinator.session("g", "a", 2)
    assert stale.value.error == "INVALID_SHARE_SESSION_EPOCH"
    assert coordinator.session("g", "a", 1).epoch == 2
    coordinator.close_session("g", "a")
    assert released
    with pytest.raises(ClusterError) as gone:
        coordinator.session("g", "a", 2)
    assert gone.value.error == "SHARE_SESSION_NOT_FOUND"


@pytest.mark.parametrize("name, value, message", [
    ("share.record.lock.duration.ms", "999", "Invalid value 999 for configuration "
     "share.record.lock.duration.ms: Value must be at least 1000"),
    ("share.record.lock.duration.ms", "1000",
     "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."),
    ("share.delivery.count.limit", "11",
     "share.delivery.count.limit must be in the range 2 to 10 inclusive."),
    ("share.session.timeout.ms", "x", "Invalid value x for configuration "
     "share.session.timeout.ms: Not a number of type INT"),
])
def test_group_configs_are_checked_against_the_broker_limits(name, value, message) -> None:
    with pytest.raises(ClusterError) as refused:
        validate_group_config(name, value)
    assert (refused.value.error, refused.value.message) == ("INVALID_CONFIG", message)


def test_the_start_offset_described_is_the_one_written_with_the_acknowledgements() -> None:
    share = fresh()
    assert share.described(10) == (-1, -1)  # nothing written yet
    acquire(share)
    share.acknowledge("m1", [(0, 4, [ACCEPT]), (5, 9, [REJECT])], 1.0, LOCK_S, LIMIT)
    assert share.start_offset == 10
    assert share.described(10) == (0, 0)  # written once, before the start offset moved
    share.acknowledge("m1", [(3, 3, [ACCEPT])], 1.0, LOCK_S, LIMIT)  # settled: no write
    assert share.described(12) == (0, 2)
