"""Transactions on the wire: the coordinator's answers and errors, the markers in the log, the
last stable offset and what read_committed readers are told. They run on the fake and on
Apache Kafka (``--kafka=both``); on Kafka the markers and committed offsets of an ended
transaction are written just after EndTxn answers, so those checks wait for them."""

from __future__ import annotations

import time
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import decode_records, encode_batch
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, join_body, produce_body

pytestmark = pytest.mark.fake_kafka(topics={"orders": 2})
# Answers a client retries after a short wait (Kafka's coordinator may still be loading).
RETRIABLE = {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
             ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS}
READ_COMMITTED, READ_UNCOMMITTED = 1, 0
# The coordinator's scan for timed-out transactions every 2 s (Kafka's default: 10 s).
SCANNED_EVERY_2_S = pytest.mark.fake_kafka(topics={"orders": 2}, overrides={
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "2000"})


def new_id() -> str:
    return f"txn-{uuid.uuid4().hex[:8]}"


def coordinator(kafka, transactional_id: str) -> WireClient:
    """A connection to the transactional id's coordinator (found as clients find it)."""
    with WireClient(kafka.bootstrap_servers) as client:
        found = eventually(lambda: (answer := client.request("FindCoordinator", 4, {
            "key_type": 1, "coordinator_keys": [transactional_id]}).coordinators[0]
        ).error_code == 0 and answer, "a transaction coordinator")
    return WireClient(f"{found.host}:{found.port}")


def retried(client: WireClient, api: str, version: int, body: dict):
    """The answer once it is not a retriable coordinator error."""
    deadline = time.monotonic() + 30
    while True:
        answer = client.request(api, version, body)
        if answer.error_code not in RETRIABLE or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def init(client: WireClient, transactional_id: str, timeout_ms: int = 60_000,
         producer_id: int = -1, epoch: int = -1, version: int = 4):
    return retried(client, "InitProducerId", version, {
        "transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms,
        "producer_id": producer_id, "producer_epoch": epoch})


def add_partitions(client: WireClient, transactional_id: str, producer_id: int, epoch: int,
                   topics: dict[str, list[int]], version: int = 3) -> dict[tuple[str, int], int]:
    answer = client.request("AddPartitionsToTxn", version, {
        "v3_and_below_transactional_id": transactional_id,
        "v3_and_below_producer_id": producer_id, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": p} for t, p in topics.items()]})
    return {(t.name, p.partition_index): p.partition_error_code
            for t in answer.results_by_topic_v3_and_below for p in t.results_by_partition}


def end(client: WireClient, transactional_id: str, producer_id: int, epoch: int,
        commit: bool, version: int = 4):
    return client.request("EndTxn", version, {
        "transactional_id": transactional_id, "producer_id": producer_id,
        "producer_epoch": epoch, "committed": commit})


def txn_batch(values: list[bytes], producer_id: int, epoch: int, sequence: int = 0) -> bytes:
    return encode_batch([(b"k", v, [], 1_700_000_000_000) for v in values],
                        producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                        transactional=True)


def produce(client: WireClient, transactional_id: str, partition: int, records: bytes,
            version: int = 9) -> int:
    body = produce_body("orders", partition, records)
    body["transactional_id"] = transactional_id
    return client.request("Produce", version, body).responses[0].partition_responses[0]\
        .error_code


def fetch(client: WireClient, partition: int, offset: int, isolation: int):
    body = fetch_body("orders", partition, offset)
    body["isolation_level"] = isolation
    return client.request("Fetch", 12, body).responses[0].partitions[0]


def latest(client: WireClient, partition: int, isolation: int) -> int:
    return client.request("ListOffsets", 5, {"replica_id": -1, "isolation_level": isolation,
                                             "topics": [{"name": "orders", "partitions": [
                                                 {"partition_index": partition,
                                                  "timestamp": -1}]}]}
                          ).topics[0].partitions[0].offset


def describe(client: WireClient, transactional_id: str):
    return client.request("DescribeTransactions", 0,
                          {"transactional_ids": [transactional_id]}).transaction_states[0]


# -- InitProducerId ---------------------------------------------------------------------------


def test_init_producer_id_keeps_the_producer_id_and_bumps_the_epoch_fencing_the_old_one(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client:
        first = init(client, txn_id)
        second = init(client, txn_id)
        assert (first.error_code, second.error_code) == (0, 0)
        assert second.producer_id == first.producer_id
        assert second.producer_epoch == first.producer_epoch + 1
        zombie = first.producer_id, first.producer_epoch
        assert add_partitions(client, txn_id, *zombie, {"orders": [0]}) == {
            ("orders", 0): ErrorCode.PRODUCER_FENCED}
        assert add_partitions(client, txn_id, *zombie, {"orders": [0]}, version=1) == {
            ("orders", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
        assert end(client, txn_id, *zombie, True).error_code == ErrorCode.PRODUCER_FENCED
        assert end(client, txn_id, *zombie, True, version=1).error_code == \
            ErrorCode.INVALID_PRODUCER_EPOCH
        with WireClient(kafka.bootstrap_servers) as broker:
            assert produce(broker, txn_id, 0, txn_batch([b"z"], *zombie)) == \
                ErrorCode.INVALID_PRODUCER_EPOCH  # the leader's verification: fenced
        # KIP-360: the current id and epoch may ask for the next; an old epoch is fenced
        # (named INVALID_PRODUCER_EPOCH before v4, KIP-588).
        for version, fenced in ((3, ErrorCode.INVALID_PRODUCER_EPOCH),
                                (4, ErrorCode.PRODUCER_FENCED)):
            assert init(client, txn_id, producer_id=first.producer_id,
                        epoch=first.producer_epoch, version=version).error_code == fenced
        bumped = init(client, txn_id, producer_id=second.producer_id,
                      epoch=second.producer_epoch, version=4)
        assert (bumped.error_code, bumped.producer_epoch) == (0, second.producer_epoch + 1)
    assert kafka.offsets("orders", 0)[1] == 0


def test_init_producer_id_names_a_producer_by_any_id_but_minus_one(kafka):
    # KafkaApis reads every producer id but -1 (with an epoch) as the one the client had: a
    # negative one is another id than the transactional id's, so the client is fenced.
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client:
        ids = init(client, txn_id)
        for producer_id in (-2, -(2**40) - 256):
            fenced = init(client, txn_id, producer_id=producer_id, epoch=ids.producer_epoch)
            assert (fenced.error_code, fenced.producer_id) == (ErrorCode.PRODUCER_FENCED, -1)
        assert init(client, txn_id).producer_epoch == ids.producer_epoch + 1


def test_init_producer_id_refuses_an_empty_id_and_a_timeout_above_the_maximum(kafka):
    with WireClient(kafka.bootstrap_servers) as client:
        empty = client.request("InitProducerId", 4, {
            "transactional_id": "", "transaction_timeout_ms": 60_000})
        assert (empty.error_code, empty.producer_id) == (ErrorCode.INVALID_REQUEST, -1)
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client:
        for version in (0, 3, 4, 5):
            long = init(client, txn_id, timeout_ms=900_001, version=version)
            assert (long.error_code, long.producer_id, long.producer_epoch) == (
                ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1)


def test_init_producer_id_during_a_transaction_aborts_it_and_answers_the_epoch_after(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        first = init(client, txn_id)
        ids = first.producer_id, first.producer_epoch
        assert add_partitions(client, txn_id, *ids, {"orders": [0]}) == {("orders", 0): 0}
        assert produce(broker, txn_id, 0, txn_batch([b"a", b"b"], *ids)) == 0
        assert latest(broker, 0, READ_COMMITTED) == 0  # open: the LSO is its first offset
        again = init(client, txn_id)  # CONCURRENT_TRANSACTIONS, then retried
        assert again.error_code == 0 and again.producer_id == first.producer_id
        assert again.producer_epoch == first.producer_epoch + 2  # fenced, then bumped
        eventually(lambda: latest(broker, 0, READ_COMMITTED) == 3, "the abort marker")
        assert [t.producer_id for t in fetch(broker, 0, 0, READ_COMMITTED)
                .aborted_transactions] == [first.producer_id]


# -- AddPartitionsToTxn, EndTxn ---------------------------------------------------------------


def test_add_partitions_names_unknown_ids_and_partitions(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client:
        assert add_partitions(client, txn_id, 1234, 0, {"orders": [0]}) == {
            ("orders", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
        ids = init(client, txn_id)
        assert add_partitions(client, txn_id, ids.producer_id + 1, ids.producer_epoch,
                              {"orders": [0]}) == {
            ("orders", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
        assert add_partitions(client, txn_id, ids.producer_id, ids.producer_epoch,
                              {"orders": [0, 9], "nowhere": [0]}) == {
            ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
            ("orders", 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ("nowhere", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert describe(client, txn_id).transaction_state == "Empty"  # nothing was added


def test_end_txn_commits_once_and_answers_retries_as_kafka(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert end(client, txn_id, pid, epoch, True).error_code == ErrorCode.INVALID_TXN_STATE
        assert add_partitions(client, txn_id, pid, epoch, {"orders": [0, 1]}) == {
            ("orders", 0): 0, ("orders", 1): 0}
        state = describe(client, txn_id)
        assert (state.transaction_state, state.producer_id, state.producer_epoch) == (
            "Ongoing", pid, epoch)
        assert [(t.topic, sorted(t.partitions)) for t in state.topics] == [("orders", [0, 1])]
        assert produce(broker, txn_id, 0, txn_batch([b"a"], pid, epoch)) == 0
        assert end(client, txn_id, pid, epoch, True).error_code == 0
        eventually(lambda: describe(client, txn_id).transaction_state == "CompleteCommit",
                   "the commit completes")
        completed = describe(client, txn_id)
        assert list(completed.topics) == [] and completed.transaction_start_time_ms > 0
        assert end(client, txn_id, pid, epoch, True).error_code == 0  # a retry
        assert end(client, txn_id, pid, epoch, False).error_code == ErrorCode.INVALID_TXN_STATE
        assert end(client, txn_id, pid + 1, epoch, True).error_code == \
            ErrorCode.INVALID_PRODUCER_ID_MAPPING
        assert end(client, "unknown-" + txn_id, pid, epoch, True).error_code == \
            ErrorCode.INVALID_PRODUCER_ID_MAPPING
        eventually(lambda: latest(broker, 1, READ_COMMITTED) == 1, "the marker of orders/1")
        assert latest(broker, 0, READ_COMMITTED) == 2  # the record, then its marker
        marker = decode_records(fetch(broker, 0, 1, READ_COMMITTED).records or b"")[0]
        assert (marker.offset, marker.is_control, marker.is_transactional) == (1, True, True)
        assert (marker.key, marker.value[:2]) == (b"\x00\x00\x00\x01", b"\x00\x00")  # commit
        assert (marker.producer_id, marker.producer_epoch) == (pid, epoch)


def test_end_txn_v5_bumps_the_epoch_at_every_end_and_answers_a_retry_with_it(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id, version=5)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert produce(broker, txn_id, 0, txn_batch([b"a"], pid, epoch), version=12) == 0
        committed = end(client, txn_id, pid, epoch, True, version=5)
        assert (committed.error_code, committed.producer_id, committed.producer_epoch) == (
            0, pid, epoch + 1)
        eventually(lambda: describe(client, txn_id).transaction_state == "CompleteCommit",
                   "the commit completes")  # until then Kafka answers CONCURRENT_TRANSACTIONS
        retry = end(client, txn_id, pid, epoch, True, version=5)
        assert (retry.error_code, retry.producer_epoch) == (0, epoch + 1)
        assert end(client, txn_id, pid, epoch, False, version=5).error_code == \
            ErrorCode.INVALID_TXN_STATE
        eventually(lambda: latest(broker, 0, READ_COMMITTED) == 2, "the commit marker")
        # The next transaction runs at the new epoch, its sequences from 0 again.
        assert produce(broker, txn_id, 0, txn_batch([b"b"], pid, epoch + 1), version=12) == 0
        aborted = retried(client, "EndTxn", 5, {  # Kafka may still be ending the first
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch + 1,
            "committed": False})
        assert (aborted.error_code, aborted.producer_epoch) == (0, epoch + 2)
        eventually(lambda: latest(broker, 0, READ_COMMITTED) == 4, "the abort marker")
        assert [(t.producer_id, t.first_offset) for t in
                fetch(broker, 0, 2, READ_COMMITTED).aborted_transactions] == [(pid, 2)]


# -- the produce path -------------------------------------------------------------------------


def test_a_transactional_produce_to_a_partition_not_added_is_refused_by_version(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        records = txn_batch([b"x"], ids.producer_id, ids.producer_epoch)
        assert produce(broker, txn_id, 0, records, version=9) == ErrorCode.INVALID_TXN_STATE
        assert produce(broker, txn_id, 0, records, version=10) == ErrorCode.INVALID_TXN_STATE
        assert produce(broker, txn_id, 0, records, version=11) == \
            ErrorCode.TRANSACTION_ABORTABLE
        assert kafka.offsets("orders", 0)[1] == 0
        # Produce v12 (transactions v2): the leader adds the partition itself.
        assert produce(broker, txn_id, 0, records, version=12) == 0
        state = describe(client, txn_id)
        assert state.transaction_state == "Ongoing"
        assert [(t.topic, list(t.partitions)) for t in state.topics] == [("orders", [0])]


def test_read_committed_stops_at_the_first_open_transaction_and_is_told_of_aborts(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert add_partitions(client, txn_id, pid, epoch, {"orders": [0]}) == {
            ("orders", 0): 0}
        assert produce(broker, txn_id, 0, txn_batch([b"a", b"b"], pid, epoch)) == 0
        assert produce(broker, "", 0, batch([b"plain"])) == 0  # after the open transaction
        open_committed = fetch(broker, 0, 0, READ_COMMITTED)
        assert (open_committed.high_watermark, open_committed.last_stable_offset) == (3, 0)
        assert not open_committed.records and list(open_committed.aborted_transactions) == []
        uncommitted = fetch(broker, 0, 0, READ_UNCOMMITTED)
        assert uncommitted.last_stable_offset == 0 and uncommitted.aborted_transactions is None
        assert len(decode_records(uncommitted.records)) == 3
        assert (latest(broker, 0, READ_COMMITTED), latest(broker, 0, READ_UNCOMMITTED)) == (0, 3)
        assert end(client, txn_id, pid, epoch, False).error_code == 0
        eventually(lambda: latest(broker, 0, READ_COMMITTED) == 4, "the abort marker")
        after = fetch(broker, 0, 0, READ_COMMITTED)
        assert (after.high_watermark, after.last_stable_offset) == (4, 4)
        assert [(t.producer_id, t.first_offset) for t in after.aborted_transactions] == [
            (pid, 0)]
        at_marker = fetch(broker, 0, 3, READ_COMMITTED)  # the abort ends at its marker
        assert [t.first_offset for t in at_marker.aborted_transactions] == [0]
        assert list(fetch(broker, 0, 4, READ_COMMITTED).aborted_transactions) == []
    assert kafka.offsets("orders", 0) == (0, 4)  # the high watermark counts the marker


# -- offsets in a transaction -----------------------------------------------------------------


def test_transactional_offsets_are_pending_until_the_commit(kafka):
    txn_id, group = new_id(), f"group-{uuid.uuid4().hex[:8]}"
    offsets = {"group_id": group, "topics": [{"name": "orders", "partitions": [
        {"partition_index": 0, "committed_offset": 42, "committed_metadata": "m"}]}]}

    def txn_commit(version: int) -> int:
        return client.request("TxnOffsetCommit", version, dict(
            offsets, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch)
        ).topics[0].partitions[0].error_code

    def fetched(require_stable: bool):
        return group_client.request("OffsetFetch", 7, {
            "group_id": group, "require_stable": require_stable,
            "topics": [{"name": "orders", "partition_indexes": [0]}]}).topics[0].partitions[0]

    with WireClient(kafka.bootstrap_servers) as finder:
        found = eventually(lambda: (c := finder.request("FindCoordinator", 3, {
            "key": group, "key_type": 0})).error_code == 0 and c, "a group coordinator")
    with coordinator(kafka, txn_id) as client, \
            WireClient(f"{found.host}:{found.port}") as group_client:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert txn_commit(3) == ErrorCode.INVALID_TXN_STATE  # its group was not added
        assert client.request("AddOffsetsToTxn", 3, {
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
            "group_id": group}).error_code == 0
        assert txn_commit(3) == 0
        unstable = fetched(require_stable=True)
        assert (unstable.error_code, unstable.committed_offset) == (
            ErrorCode.UNSTABLE_OFFSET_COMMIT, -1)
        assert (fetched(require_stable=False).committed_offset) == -1
        assert end(client, txn_id, pid, epoch, True).error_code == 0
        eventually(lambda: fetched(require_stable=True).committed_offset == 42,
                   "the offset committed with the transaction")
        assert fetched(require_stable=True).metadata == "m"
    assert kafka.committed(group, "orders", 0) == 42


def test_list_transactions_filters_by_state_and_producer_id(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client:
        ids = init(client, txn_id)
        assert add_partitions(client, txn_id, ids.producer_id, ids.producer_epoch,
                              {"orders": [1]}) == {("orders", 1): 0}
        listed = client.request("ListTransactions", 1, {
            "state_filters": ["Ongoing", "Sleeping"], "producer_id_filters": [ids.producer_id],
            "duration_filter": -1})
        assert listed.error_code == 0 and list(listed.unknown_state_filters) == ["Sleeping"]
        assert [(t.transactional_id, t.producer_id, t.transaction_state)
                for t in listed.transaction_states] == [
            (txn_id, ids.producer_id, "Ongoing")]
        assert list(client.request("ListTransactions", 0, {
            "state_filters": ["CompleteCommit"], "producer_id_filters": [ids.producer_id]}
        ).transaction_states) == []
        by_pattern = client.request("ListTransactions", 2, {
            "state_filters": [], "producer_id_filters": [], "duration_filter": -1,
            "transactional_id_pattern": txn_id[:6] + ".*"})
        assert txn_id in [t.transactional_id for t in by_pattern.transaction_states]
        assert not [t for t in client.request("ListTransactions", 2, {
            "state_filters": [], "producer_id_filters": [], "duration_filter": -1,
            "transactional_id_pattern": txn_id[:6]}).transaction_states
            if t.transactional_id == txn_id]  # the whole id must match
        bad = client.request("ListTransactions", 2, {
            "state_filters": [], "producer_id_filters": [], "duration_filter": -1,
            "transactional_id_pattern": "(unclosed"})
        assert bad.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
        longer = client.request("ListTransactions", 1, {
            "state_filters": [], "producer_id_filters": [ids.producer_id],
            "duration_filter": 3_600_000})
        assert list(longer.transaction_states) == []  # not running for an hour yet
        unknown = describe(client, "unknown-" + txn_id)
        assert unknown.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        assert end(client, txn_id, ids.producer_id, ids.producer_epoch, False).error_code == 0


def test_txn_offset_commit_checks_the_member_and_its_generation_kip_447(kafka):
    txn_id, group = new_id(), f"group-{uuid.uuid4().hex[:8]}"
    with WireClient(kafka.bootstrap_servers) as finder:
        found = eventually(lambda: (c := finder.request("FindCoordinator", 3, {
            "key": group, "key_type": 0})).error_code == 0 and c, "a group coordinator")
    with WireClient(f"{found.host}:{found.port}") as group_client:
        asked = group_client.request("JoinGroup", 5, join_body(group=group))
        assert asked.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = group_client.request("JoinGroup", 5, join_body(asked.member_id, group=group))
        member, generation = joined.member_id, joined.generation_id
        assert group_client.request("SyncGroup", 3, {
            "group_id": group, "generation_id": generation, "member_id": member,
            "assignments": [{"member_id": member, "assignment": b""}]}).error_code == 0
    with coordinator(kafka, txn_id) as client:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert client.request("AddOffsetsToTxn", 3, {
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
            "group_id": group}).error_code == 0

        def txn_commit(member_id: str, generation_id: int) -> int:
            return client.request("TxnOffsetCommit", 3, {
                "transactional_id": txn_id, "group_id": group, "producer_id": pid,
                "producer_epoch": epoch, "generation_id_or_member_epoch": generation_id,
                "member_id": member_id, "topics": [{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 3}]}]}
            ).topics[0].partitions[0].error_code

        assert txn_commit(member, generation + 1) == ErrorCode.ILLEGAL_GENERATION
        assert txn_commit("someone-else", generation) == ErrorCode.UNKNOWN_MEMBER_ID
        assert txn_commit(member, generation) == 0
        assert end(client, txn_id, pid, epoch, True).error_code == 0
    eventually(lambda: kafka.committed(group, "orders", 0) == 3, "the committed offset")


def test_describe_producers_names_the_open_transactions_first_offset(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert produce(broker, "", 1, batch([b"before"])) == 0
        assert add_partitions(client, txn_id, pid, epoch, {"orders": [1]}) == {
            ("orders", 1): 0}
        assert produce(broker, txn_id, 1, txn_batch([b"a", b"b"], pid, epoch)) == 0

        def producers():
            answer = broker.request("DescribeProducers", 0, {"topics": [
                {"name": "orders", "partition_indexes": [1, 7]}]}).topics[0].partitions
            return {p.partition_index: p for p in answer}

        found = producers()
        assert found[7].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        [active] = [p for p in found[1].active_producers if p.producer_id == pid]
        assert (active.producer_epoch, active.last_sequence, active.coordinator_epoch,
                active.current_txn_start_offset) == (epoch, 1, -1, 1)
        assert end(client, txn_id, pid, epoch, True).error_code == 0
        ended = eventually(lambda: [p for p in producers()[1].active_producers
                                    if p.producer_id == pid
                                    and p.current_txn_start_offset == -1], "the marker")
        assert ended[0].coordinator_epoch >= 0


@SCANNED_EVERY_2_S
def test_a_timed_out_transaction_lives_until_the_coordinator_s_next_scan_aborts_it(kafka):
    """Kafka's coordinator aborts the transactions past their timeout on a scan every
    transaction.abort.timed.out.transaction.cleanup.interval.ms, not at each deadline: a
    probe timing out at once is aborted by a scan, which marks when scans fall; transactions
    begun just after it are still Ongoing 900 ms past their timeout, answered as any ongoing
    one (AddOffsetsToTxn NONE; InitProducerId CONCURRENT_TRANSACTIONS, aborting it then), and
    the one left is aborted by the next scan."""
    probe, late, reinit = new_id(), new_id(), new_id()
    with coordinator(kafka, probe) as client1, coordinator(kafka, late) as client2, \
            coordinator(kafka, reinit) as client3:
        first = init(client1, probe, timeout_ms=1)
        add_partitions(client1, probe, first.producer_id, first.producer_epoch,
                       {"orders": [0]})
        eventually(lambda: describe(client1, probe).transaction_state == "CompleteAbort",
                   "a scan aborted the probe", timeout=10)
        scanned = time.monotonic()
        second = init(client2, late, timeout_ms=100)
        add_partitions(client2, late, second.producer_id, second.producer_epoch,
                       {"orders": [0]})
        third = init(client3, reinit, timeout_ms=100)
        add_partitions(client3, reinit, third.producer_id, third.producer_epoch,
                       {"orders": [1]})
        time.sleep(max(0.0, scanned + 1.0 - time.monotonic()))
        assert describe(client2, late).transaction_state == "Ongoing"
        assert client2.request("AddOffsetsToTxn", 3, {
            "transactional_id": late, "producer_id": second.producer_id,
            "producer_epoch": second.producer_epoch, "group_id": new_id()}).error_code == 0
        assert client3.request("InitProducerId", 4, {
            "transactional_id": reinit, "transaction_timeout_ms": 100, "producer_id": -1,
            "producer_epoch": -1}).error_code == ErrorCode.CONCURRENT_TRANSACTIONS
        eventually(lambda: describe(client2, late).transaction_state == "CompleteAbort",
                   "the next scan aborted it", timeout=10)
        assert time.monotonic() - scanned > 1.5  # the scan 2 s after the probe's


@SCANNED_EVERY_2_S
def test_the_scan_interval_is_described_as_a_read_only_static_broker_config(kafka):
    """The override is in the broker's server.properties (``--override`` for the fake): not
    changeable at run time, Kafka's default (10 s) its synonym."""
    name = "transaction.abort.timed.out.transaction.cleanup.interval.ms"
    with WireClient(kafka.bootstrap_servers) as client:
        (broker,) = client.request("Metadata", 12, {
            "topics": [], "allow_auto_topic_creation": False}).brokers
        (result,) = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 4, "resource_name": str(broker.node_id),
             "configuration_keys": [name]}],
            "include_synonyms": True, "include_documentation": False}).results
    assert result.error_code == 0
    static, default = 4, 5  # STATIC_BROKER_CONFIG, DEFAULT_CONFIG
    (config,) = result.configs
    assert (config.value, config.config_source, config.read_only, config.is_sensitive) == (
        "2000", static, True, False)
    assert [(s.name, s.value, s.source) for s in config.synonyms] == [
        (name, "2000", static), (name, "10000", default)]


@SCANNED_EVERY_2_S
def test_a_timed_out_transaction_is_aborted_and_later_ends_answered_by_its_version(kafka):
    """Kafka aborts a transaction past its timeout with its epoch fenced. A transactions v1
    producer's end is then PRODUCER_FENCED; a v2 one's (begun by Produce v12, ended by EndTxn
    v5) names the epoch one below, which v2 takes for a retry: an abort is answered as done,
    a commit INVALID_TXN_STATE."""
    v1, v2 = new_id(), new_id()
    with coordinator(kafka, v1) as client1, coordinator(kafka, v2) as client2, \
            WireClient(kafka.bootstrap_servers) as broker:
        first = init(client1, v1, timeout_ms=1000)
        assert add_partitions(client1, v1, first.producer_id, first.producer_epoch,
                              {"orders": [0]}) == {("orders", 0): 0}
        assert produce(broker, v1, 0, txn_batch([b"v1"], first.producer_id,
                                                first.producer_epoch)) == 0
        second = init(client2, v2, timeout_ms=1000, version=5)
        assert produce(broker, v2, 1, txn_batch([b"v2"], second.producer_id,
                                                second.producer_epoch), version=12) == 0
        for client, txn_id in ((client1, v1), (client2, v2)):  # scanned for every 2 s
            eventually(lambda c=client, t=txn_id: describe(c, t).transaction_state
                       == "CompleteAbort", "the timed-out transaction aborted", timeout=10)
        assert describe(client1, v1).producer_epoch == first.producer_epoch + 1
        ids = first.producer_id, first.producer_epoch
        assert end(client1, v1, *ids, True).error_code == ErrorCode.PRODUCER_FENCED
        assert end(client1, v1, *ids, False).error_code == ErrorCode.PRODUCER_FENCED
        ids = second.producer_id, second.producer_epoch
        assert end(client2, v2, *ids, True, version=5).error_code == \
            ErrorCode.INVALID_TXN_STATE
        aborted = end(client2, v2, *ids, False, version=5)
        assert (aborted.error_code, aborted.producer_epoch) == (0, second.producer_epoch + 1)
        assert produce(broker, v1, 0, txn_batch([b"late"], first.producer_id,
                                                first.producer_epoch, 1)) == \
            ErrorCode.INVALID_PRODUCER_EPOCH
        for partition in (0, 1):
            assert latest(broker, partition, READ_COMMITTED) == 2  # the record, its abort


def test_end_txn_v5_with_no_transaction_aborts_by_bumping_the_epoch_and_refuses_a_commit(kafka):
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id, version=5)
        pid, epoch = ids.producer_id, ids.producer_epoch

        def end_v5(epoch: int, commit: bool, version: int = 5) -> tuple[int, int]:
            answer = end(client, txn_id, pid, epoch, commit, version=version)
            return answer.error_code, answer.get("producer_epoch", -1)

        assert end_v5(epoch, True) == (ErrorCode.INVALID_TXN_STATE, -1)  # Empty
        assert end_v5(epoch, False) == (0, epoch + 1)  # nothing to abort: a new epoch
        epoch += 1
        assert produce(broker, txn_id, 0, txn_batch([b"a"], pid, epoch), version=12) == 0
        assert end_v5(epoch, True) == (0, epoch + 1)
        eventually(lambda: describe(client, txn_id).transaction_state == "CompleteCommit",
                   "the commit completes")
        assert end_v5(epoch + 1, True) == (ErrorCode.INVALID_TXN_STATE, -1)  # no new one
        assert end_v5(epoch + 2, True) == (ErrorCode.PRODUCER_FENCED, -1)
        assert end_v5(epoch + 1, True, version=4) == (0, -1)  # v4: the same end again
        assert end_v5(epoch + 1, False) == (0, epoch + 2)


def finalized_transaction_version(kafka) -> int | None:
    """The level ApiVersions v3+ names; supported 0-2 from v4 (v3 leaves out supported
    features of minimum 0, KAFKA-17011)."""
    with WireClient(kafka.bootstrap_servers) as client:
        levels = set()
        for version in (3, 4, 5):
            answer = client.request("ApiVersions", version, {
                "client_software_name": "wire", "client_software_version": "1.0"})
            supported = [(f.min_version, f.max_version) for f in answer.supported_features
                         if f.name == "transaction.version"]
            assert supported == ([(0, 2)] if version >= 4 else [])
            levels.add(next((f.max_version_level for f in answer.finalized_features
                             if f.name == "transaction.version"), None))
    (level,) = levels
    return level


def test_transaction_version_2_is_finalized_as_kafka_4_finalizes_it(kafka):
    assert finalized_transaction_version(kafka) == 2


@pytest.mark.fake_only("the cluster's transaction_version setting")
@pytest.mark.fake_kafka(topics={"orders": 2}, transaction_version=1)
def test_the_transaction_version_setting_is_the_level_finalized_at_start(kafka):
    assert finalized_transaction_version(kafka) == 1  # Java 4 clients then run v1


def set_transaction_version(kafka, level: int) -> None:
    """UpdateFeatures v1 (a safe downgrade, or an upgrade), then wait until ApiVersions
    lists the level (a Kafka broker applies it from its metadata log a moment later)."""
    with WireClient(kafka.bootstrap_servers) as client:
        answer = client.request("UpdateFeatures", 1, {"timeout_ms": 60000, "feature_updates": [
            {"feature": "transaction.version", "max_version_level": level,
             "upgrade_type": 1 if level == 2 else 2}]})
    assert answer.error_code == 0
    eventually(lambda: finalized_transaction_version(kafka) == level,
               f"transaction.version {level}")


@pytest.mark.fake_kafka(topics={"orders": 2})
def test_transaction_version_1_finalized_at_run_time_still_lets_v2_requests_add(kafka):
    """The finalized level tells clients which transactions to run (Java 4 clients run v1
    below 2); Kafka 4.4 still adds implicitly for a Produce v12 or TxnOffsetCommit v5."""
    set_transaction_version(kafka, 1)
    try:
        txn_id = new_id()
        with coordinator(kafka, txn_id) as client, \
                WireClient(kafka.bootstrap_servers) as broker:
            ids = init(client, txn_id)
            records = txn_batch([b"x"], ids.producer_id, ids.producer_epoch)
            assert produce(broker, txn_id, 0, records, version=12) == 0
            group = f"group-{txn_id}"
            with WireClient(kafka.bootstrap_servers) as finder:
                found = eventually(lambda: (c := finder.request("FindCoordinator", 3, {
                    "key": group, "key_type": 0})).error_code == 0 and c, "a group coordinator")
            with WireClient(f"{found.host}:{found.port}") as groups:
                answer = groups.request("TxnOffsetCommit", 5, {
                    "transactional_id": txn_id, "group_id": group,
                    "producer_id": ids.producer_id, "producer_epoch": ids.producer_epoch,
                    "generation_id": -1, "member_id": "", "group_instance_id": None,
                    "topics": [{"name": "orders", "partitions": [{
                        "partition_index": 0, "committed_offset": 1,
                        "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
            assert answer.topics[0].partitions[0].error_code == 0
            state = describe(client, txn_id)
            assert state.transaction_state == "Ongoing"
            assert [(t.topic, list(t.partitions)) for t in state.topics
                    if t.topic == "orders"] == [("orders", [0])]
    finally:
        set_transaction_version(kafka, 2)


def aborted_one_by_one(kafka, topic: str, count: int, size: int) -> None:
    """``count`` transactions of one producer, each one record of ``size`` bytes (a 1,071
    byte batch for 1,000, stamped now) aborted before the next: record 2k, marker 2k + 1."""
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        for k in range(count):
            eventually(lambda: add_partitions(client, txn_id, pid, epoch, {topic: [0]})
                       == {(topic, 0): 0}, "the partition added (Kafka ends the last abort)")
            records = encode_batch([(b"k", b"x" * size, [], int(time.time() * 1000))],
                                   producer_id=pid, producer_epoch=epoch, base_sequence=k,
                                   transactional=True)
            body = dict(produce_body(topic, 0, records), transactional_id=txn_id)
            assert broker.request("Produce", 9, body).responses[0].partition_responses[0]\
                .error_code == 0
            assert retried(client, "EndTxn", 4, {"transactional_id": txn_id, "producer_id": pid,
                                                 "producer_epoch": epoch, "committed": False}
                           ).error_code == 0
            eventually(lambda marked=2 * k + 2: committed_fetch(
                broker, topic, 0, 1 << 20).last_stable_offset == marked, "the abort marker")


def committed_fetch(client: WireClient, topic: str, offset: int, limit: int):
    body = fetch_body(topic, 0, offset)
    body["isolation_level"] = READ_COMMITTED
    body["topics"][0]["partitions"][0]["partition_max_bytes"] = limit
    return client.request("Fetch", 12, body).responses[0].partitions[0]


def test_read_committed_lists_the_aborts_up_to_the_offset_index_entry_past_its_bytes(kafka):
    """Kafka bounds the aborted transactions of a read_committed answer with its sparse
    offset index (an entry every 4,096 bytes appended: the offset 7 batch at byte 4518, 15
    at 9114, 23 at 13710, 31 at 18306 for 16 aborted records of 1,149 bytes with their
    markers): it lists those ending at or after the fetch offset and starting before the
    first entry at or past the end of the bytes it read (a cut-short batch's included),
    else before the log end: so a cut answer is told of the aborts up to that entry."""
    topic = f"aborts-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=1)
    aborted_one_by_one(kafka, topic, 16, 1000)
    with WireClient(kafka.bootstrap_servers) as broker:
        answers = {(offset, limit): committed_fetch(broker, topic, offset, limit)
                   for offset, limit in [(0, 2500), (8, 500), (24, 9000), (32, 9000)]}
    assert {asked: (len(a.records if isinstance(a.records, bytes) else b"".join(a.records)),
                    [t.first_offset for t in a.aborted_transactions])
            for asked, a in answers.items()} == {
        (0, 2500): (2500, [0, 2, 4, 6]),  # cut in record 4: bound by the entry (7, 4518)
        (8, 500): (1071, [8, 10, 12, 14]),  # its first batch whole, from 4596: (15, 9114)
        (24, 9000): (4596, [24, 26, 28, 30]),  # to the end, past the last entry: the log end
        (32, 9000): (0, []),  # at the last stable offset: none
    }


def corrupted(records: bytes) -> bytes:
    """``records`` with its batch's CRC wrong (the CRC's first byte flipped)."""
    return records[:17] + bytes([records[17] ^ 0xFF]) + records[18:]


def produce_answer(client: WireClient, transactional_id: str, records: bytes, acks: int = -1
                   ) -> tuple[int, int]:
    """Produce v9 of ``records`` to orders/0: the partition's (error code, base offset)."""
    body = produce_body("orders", 0, records, acks=acks)
    body["transactional_id"] = transactional_id
    answer = client.request("Produce", 9, body).responses[0].partition_responses[0]
    return answer.error_code, answer.base_offset


def test_a_transactional_batch_is_verified_before_acks_its_crc_and_its_records(kafka):
    # Kafka's ReplicaManager asks the coordinator about a transactional batch's producer
    # before anything else of the append: a fenced epoch or an unknown producer id is
    # answered before an invalid acks, a wrong CRC, or records a compacted topic refuses.
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        fenced = init(client, txn_id)
        ids = init(client, txn_id)
        assert ids.producer_epoch == fenced.producer_epoch + 1
        assert add_partitions(client, txn_id, ids.producer_id, ids.producer_epoch,
                              {"orders": [0]}) == {("orders", 0): 0}
        stale = txn_batch([b"x"], ids.producer_id, fenced.producer_epoch)
        unknown = txn_batch([b"x"], ids.producer_id + 1000, ids.producer_epoch)
        current = txn_batch([b"x"], ids.producer_id, ids.producer_epoch)
        epoch_error = (ErrorCode.INVALID_PRODUCER_EPOCH, -1)
        assert produce_answer(broker, txn_id, corrupted(stale)) == epoch_error
        assert produce_answer(broker, txn_id, stale, acks=32767) == epoch_error
        assert produce_answer(broker, txn_id, corrupted(unknown)) == \
            (ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1)
        # The current epoch passes the coordinator: then acks, then the CRC.
        assert produce_answer(broker, txn_id, current, acks=32767) == \
            (ErrorCode.INVALID_REQUIRED_ACKS, -1)
        assert produce_answer(broker, txn_id, corrupted(current)) == \
            (ErrorCode.CORRUPT_MESSAGE, -1)
        assert kafka.offsets("orders", 0)[1] == 0
        assert produce_answer(broker, txn_id, current) == (0, 0)
        # A transaction ongoing on the partition: a batch of another epoch is still asked
        # about first.
        newer = txn_batch([b"y"], ids.producer_id, ids.producer_epoch + 1)
        assert produce_answer(broker, txn_id, corrupted(newer)) == epoch_error
        assert end(client, txn_id, ids.producer_id, ids.producer_epoch, False).error_code == 0


def test_produce_v12_adds_the_partition_before_it_checks_the_batch(kafka):
    # Transactions v2: the leader's verification adds the partition to the transaction, and
    # it comes first: a batch refused for its CRC has begun the transaction all the same.
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        records = corrupted(txn_batch([b"x"], ids.producer_id, ids.producer_epoch))
        assert produce(broker, txn_id, 0, records, version=12) == ErrorCode.CORRUPT_MESSAGE
        state = describe(client, txn_id)
        assert state.transaction_state == "Ongoing"
        assert [(t.topic, list(t.partitions)) for t in state.topics] == [("orders", [0])]
        assert end(client, txn_id, ids.producer_id, ids.producer_epoch, False, version=5
                   ).error_code == 0



def test_transactional_batches_of_two_producers_refuse_the_whole_request(kafka):
    # ReplicaManager.handleProduceAppend: one producer id and epoch per request, before any
    # partition is verified or appended.
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        ids = init(client, txn_id)
        assert add_partitions(client, txn_id, ids.producer_id, ids.producer_epoch,
                              {"orders": [0, 1]}) == {("orders", 0): 0, ("orders", 1): 0}
        ours = txn_batch([b"x"], ids.producer_id, ids.producer_epoch)
        refused = ("INVALID_PRODUCER_ID_MAPPING",
                   "Transactional records contained more than one producer ID")
        for other in (txn_batch([b"x"], ids.producer_id + 1000, ids.producer_epoch),
                      txn_batch([b"x"], ids.producer_id, ids.producer_epoch + 1)):
            answer = broker.request("Produce", 9, {
                "acks": -1, "timeout_ms": 5000, "transactional_id": txn_id, "topic_data": [
                    {"name": "orders", "partition_data": [{"index": 0, "records": ours},
                                                          {"index": 1, "records": other}]},
                    {"name": "ghost", "partition_data": [{"index": 0, "records": ours}]}]})
            assert [(t.name, p.index, ErrorCode(p.error_code).name, p.error_message)
                    for t in answer.responses for p in t.partition_responses] == [
                ("orders", 0, *refused), ("orders", 1, *refused), ("ghost", 0, *refused)]
        assert [kafka.offsets("orders", p)[1] for p in (0, 1)] == [0, 0]
        assert end(client, txn_id, ids.producer_id, ids.producer_epoch, False).error_code == 0


def write_markers(client: WireClient, producer_id: int, epoch: int, coordinator_epoch: int,
                  partition: int) -> str:
    """WriteTxnMarkers v1 of one abort marker to orders/``partition``: its error's name."""
    answer = client.request("WriteTxnMarkers", 1, {"markers": [{
        "producer_id": producer_id, "producer_epoch": epoch, "transaction_result": False,
        "coordinator_epoch": coordinator_epoch,
        "topics": [{"name": "orders", "partition_indexes": [partition]}]}]})
    return ErrorCode(answer.markers[0].topics[0].partitions[0].error_code).name


def test_a_marker_is_checked_against_the_producer_epoch_its_partition_last_took(kafka):
    # ProducerAppendInfo.appendEndTxnMarker: the producer epoch, then the coordinator epoch,
    # of the producer's state on that partition alone; an epoch written on another partition
    # fences nothing here.
    pid = 900_000 + uuid.uuid4().int % 100_000  # never handed out by either broker
    with WireClient(kafka.bootstrap_servers) as broker:
        assert write_markers(broker, pid, 5, 3, partition=0) == "NONE"
        assert write_markers(broker, pid, 2, 0, partition=1) == "NONE"
        assert write_markers(broker, pid, 4, 3, partition=0) == "INVALID_PRODUCER_EPOCH"
        assert write_markers(broker, pid, 6, 1, partition=0) == \
            "TRANSACTION_COORDINATOR_FENCED"
        assert write_markers(broker, pid, 6, 3, partition=0) == "NONE"
        assert write_markers(broker, pid, 1, 0, partition=1) == "INVALID_PRODUCER_EPOCH"
        # A batch of an older epoch than the partition's last marker is fenced there only.
        stale = encode_batch([(b"k", b"v", [], 1_700_000_000_000)], producer_id=pid,
                             producer_epoch=3, base_sequence=0)
        assert produce(broker, None, 0, stale) == ErrorCode.INVALID_PRODUCER_EPOCH
        assert produce(broker, None, 1, stale) == 0
        assert write_markers(broker, pid, 2, 0, partition=1) == "INVALID_PRODUCER_EPOCH"


def test_a_leader_checks_the_producer_epoch_it_holds_before_it_asks_the_coordinator(kafka):
    # Kafka 4.4's leader, before it verifies a transactional batch, whatever transactional id
    # the request names: an epoch older than the producer's last on the partition is
    # INVALID_PRODUCER_EPOCH at once (before the CRC), and a partition holding the
    # producer's open transaction at the batch's epoch appends without asking.
    txn_id = new_id()
    with coordinator(kafka, txn_id) as client, WireClient(kafka.bootstrap_servers) as broker:
        init(client, txn_id)
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert add_partitions(client, txn_id, pid, epoch, {"orders": [0]}) == {("orders", 0): 0}
        assert produce(broker, txn_id, 0, txn_batch([b"x"], pid, epoch)) == 0
        assert produce(broker, "", 0, txn_batch([b"y"], pid, epoch, sequence=1)) == 0
        for version in (9, 12):
            for named in ("unknown-" + txn_id, ""):
                assert produce(broker, named, 0, corrupted(txn_batch([b"x"], pid, epoch - 1)),
                               version=version) == ErrorCode.INVALID_PRODUCER_EPOCH
                # A partition not holding the producer, or a later epoch: the coordinator
                # is asked.
                unknown = ErrorCode.INVALID_PRODUCER_ID_MAPPING if named \
                    else ErrorCode.INVALID_REQUEST
                assert produce(broker, named, 1, txn_batch([b"x"], pid, epoch - 1),
                               version=version) == unknown
                assert produce(broker, named, 0, txn_batch([b"x"], pid, epoch + 1),
                               version=version) == unknown
        assert end(client, txn_id, pid, epoch, False).error_code == 0
        # The abort's marker ended the transaction on the partition; its epoch stays there.
        eventually(lambda: produce(broker, "unknown-" + txn_id, 0, txn_batch(
            [b"x"], pid, epoch, sequence=2)) == ErrorCode.INVALID_PRODUCER_ID_MAPPING,
            "the abort marker written")
        assert produce(broker, "unknown-" + txn_id, 0, corrupted(txn_batch(
            [b"x"], pid, epoch - 1))) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_an_offsets_partition_checks_the_producer_epoch_it_holds_before_asking(kafka):
    # The same rule for TxnOffsetCommit, on the group's __consumer_offsets partition: once it
    # holds the producer's offsets, any transactional id passes at that epoch, even for a
    # group not added (v2); an older epoch is INVALID_PRODUCER_EPOCH, also after the end.
    txn_id, group = new_id(), f"group-{uuid.uuid4().hex[:8]}"
    with coordinator(kafka, txn_id) as client:
        init(client, txn_id)
        ids = init(client, txn_id)
        pid, epoch = ids.producer_id, ids.producer_epoch

        def txn_commit(named: str, version: int, at: int) -> str:
            return ErrorCode(client.request("TxnOffsetCommit", version, {
                "transactional_id": named, "group_id": group, "producer_id": pid,
                "producer_epoch": at, "topics": [{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 1}]}]}
            ).topics[0].partitions[0].error_code).name

        assert txn_commit("unknown-" + txn_id, 2, epoch - 1) == "INVALID_PRODUCER_ID_MAPPING"
        assert txn_commit("unknown-" + txn_id, 2, -256) == "INVALID_PRODUCER_ID_MAPPING"
        assert txn_commit("", 2, epoch) == "INVALID_REQUEST"
        assert client.request("AddOffsetsToTxn", 3, {
            "transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
            "group_id": group}).error_code == 0
        assert txn_commit(txn_id, 2, epoch) == "NONE"
        for version in (2, 5):
            for named, unknown in (("unknown-" + txn_id, "INVALID_PRODUCER_ID_MAPPING"),
                                   ("", "INVALID_REQUEST")):
                assert [txn_commit(named, version, at)
                        for at in (epoch - 1, epoch, epoch + 1)] == [
                    "INVALID_PRODUCER_EPOCH", "NONE", unknown]
        assert end(client, txn_id, pid, epoch, False).error_code == 0
        eventually(lambda: txn_commit("unknown-" + txn_id, 2, epoch)
                   == "INVALID_PRODUCER_ID_MAPPING", "the abort marker written")
        assert txn_commit("unknown-" + txn_id, 2, epoch - 1) == "INVALID_PRODUCER_EPOCH"


def _txn(transactional_id: str, topic: str, producer_id: int = 5) -> dict:
    return {"transactional_id": transactional_id, "producer_id": producer_id,
            "producer_epoch": 0, "verify_only": False,
            "topics": [{"name": topic, "partitions": [0]}]}


@pytest.mark.parametrize(("entries", "answered"), [
    # the last entry's partitions are checked: an unknown topic among them
    ((("t", "orders"), ("t", "nope")), [("t", "nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)] * 2),
    # they are known, so the coordinator's verdict, written over the first entry's topics
    ((("t", "nope"), ("t", "orders")),
     [("t", "nope", ErrorCode.INVALID_PRODUCER_ID_MAPPING)] * 2),
    ((("t", "nope"), ("u", "orders"), ("t", "orders")),
     [("t", "nope", ErrorCode.INVALID_PRODUCER_ID_MAPPING),
      ("u", "orders", ErrorCode.INVALID_PRODUCER_ID_MAPPING),
      ("t", "nope", ErrorCode.INVALID_PRODUCER_ID_MAPPING)]),
])
def test_a_batch_naming_a_transactional_id_twice_answers_each_entry_alike(
        kafka, entries, answered):
    """A partition leader's AddPartitionsToTxn (v4+) keyed by transactional id, as Kafka's
    partitionsByTransaction and errorResponseForTransaction read it."""
    client = coordinator(kafka, "t")
    with client, WireClient(kafka.bootstrap_servers) as other:
        eventually(lambda: other.request("FindCoordinator", 4, {
            "key_type": 1, "coordinator_keys": ["u"]}).coordinators[0].error_code == 0,
            "a transaction coordinator for u")
        answer = client.request("AddPartitionsToTxn", 5, {
            "transactions": [_txn(t, topic) for t, topic in entries]})
    assert answer.error_code == 0
    assert [(r.transactional_id, topic.name, partition.partition_error_code)
            for r in answer.results_by_transaction for topic in r.topic_results
            for partition in topic.results_by_partition] == answered
