"""Share groups (KIP-932, Kafka's queues) with Kafka 4.4's own ``KafkaShareConsumer``, on the
fake and on Apache Kafka 4.4 (``--kafka=both``): records acquired, acknowledged (ACCEPT,
RELEASE, REJECT), redelivered with their delivery count, archived at the delivery limit,
shared by several consumers of one partition, and redelivered to another member when a
lock runs out or at once when its holder's connection closes (on the wire).

Each test sets ``share.auto.offset.reset=earliest`` on its group first (IncrementalAlterConfigs
on the GROUP resource), so records produced before the consumers start are delivered.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
import time
import uuid

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.wire_client import WireClient
from tests.absent import needs
from tests.bodies import batch, produce_body
from tests.clients.java import run_harness
from tests.clients.process import wait_until
from tests.clients.share import share_consumer_available, start_share_consumer

pytestmark = [
    needs(share_consumer_available(), "kafka-clients 4.4.0 (bash .ci/install-clients)"),
    pytest.mark.timeout(180),
]
TOPIC = "jobs"
GROUP_RESOURCE = 32
_groups = itertools.count()


def set_group_configs(kafka, group: str, **configs: str) -> None:
    """IncrementalAlterConfigs SET on the group (names with dots: pass ``{"a.b": v}``)."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": group,
            "configs": [{"name": k, "config_operation": 0, "value": v}
                        for k, v in configs.items()]}], "validate_only": False})
    assert [(r.error_code, r.error_message) for r in response.responses] == [(0, None)]


def new_group(kafka, **configs: str) -> str:
    """A fresh share group reading from the earliest offset, with ``configs`` set."""
    group = f"share-{next(_groups)}"
    set_group_configs(kafka, group, **{"share.auto.offset.reset": "earliest", **configs})
    return group


def produce(kafka, values: list[str]) -> None:
    """One record per value, in order (Kafka's Java producer)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("\n".join(values) + "\n")
        f.flush()
        lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", TOPIC,
                            "--values-file", f.name)
    assert lines[-1] == {"done": len(values)}


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_implicit_acknowledgement_delivers_every_record_once(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, [f"v{i}" for i in range(10)])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group) as member:
        wait_until(lambda: len(member.records()) >= 10, timeout=60, what="10 records")
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert sorted(r["value"] for r in records) == sorted(f"v{i}" for i in range(10))
    assert {r["deliveryCount"] for r in records} == {1}


def deliveries(records: list[dict], value: str) -> list[int]:
    return [r["deliveryCount"] for r in records if r["value"] == value]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_explicit_release_redelivers_and_reject_never_again(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b", "c"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit", release=["b"], reject=["c"]) as member:
        member.wait_for({"value": "b", "deliveryCount": 2}, timeout=60)
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert deliveries(records, "a") == [1]
    assert deliveries(records, "c") == [1]  # rejected: never delivered again
    # released every time: delivered again with a count one higher, until archived
    assert deliveries(records, "b")[:2] == [1, 2]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_a_record_released_until_the_delivery_limit_is_archived(kafka) -> None:
    group = new_group(kafka, **{"share.delivery.count.limit": "3"})
    produce(kafka, ["poison", "ok"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit", release=["poison"]) as member:
        member.wait_for({"value": "poison", "deliveryCount": 3}, timeout=60)
        produce(kafka, ["after"])
        member.wait_for({"value": "after"}, timeout=60)
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert deliveries(records, "poison") == [1, 2, 3]
    assert deliveries(records, "ok") == [1]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_three_consumers_share_one_partition_each_record_processed_once(kafka) -> None:
    group = new_group(kafka)
    values = [f"v{i}" for i in range(300)]
    with contextlib.ExitStack() as stack:
        members = [stack.enter_context(start_share_consumer(
            kafka.bootstrap_servers, topic=TOPIC, group=group, mode="explicit"))
            for _ in range(3)]
        produce(kafka, values)
        wait_until(lambda: sum(len(m.records()) for m in members) >= len(values), timeout=90,
                   members=members, what="every record processed")
        lines = [line for m in members for line in m.stop()]
    records = [line for line in lines if "offset" in line]
    assert sorted(r["value"] for r in records) == sorted(values)
    assert {r["deliveryCount"] for r in records} == {1}


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_an_expired_lock_redelivers_the_record_to_another_member(kafka) -> None:
    group = new_group(kafka, **{"share.record.lock.duration.ms": "15000"})
    produce(kafka, ["stuck"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              hold=["stuck"]) as first:
        first.wait_for({"event": "held"}, timeout=60)
        with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                                  mode="explicit") as second:
            line = second.wait_for({"value": "stuck"}, timeout=60)
            second.stop()
        first.kill()
    # Kafka's share consumer goes on fetching while its application holds a record, so the
    # holder's client may win the record back when its lock runs out (delivery count 2, never
    # seen by the application) and stops fetching then: the other member gets it at the
    # second lock's end. On either broker, whichever member's ShareFetch comes first.
    assert line["deliveryCount"] in (2, 3)


def share_fetch(client: WireClient, group: str, member: str, topic_id, epoch: int):
    """One ShareFetch of partition 0 (waiting up to 1 s for records)."""
    return client.request("ShareFetch", 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": 1000, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "forgotten_topics_data": [], "topics": [{
            "topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                  "acknowledgement_batches": []}]}]})


def join_and_acquire(client: WireClient, group: str, member: str, topic_id,
                     topic: str = "orphans") -> tuple[list[tuple[int, int, int]], int]:
    """Join ``group`` as ``member`` (ShareGroupHeartbeat until assigned to ``topic``), open a
    share session and fetch until records are acquired: their (first, last, delivery count),
    and the session's next epoch."""
    epoch = 0
    for _ in range(100):
        answer = client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": member, "member_epoch": epoch,
            "subscribed_topic_names": [topic] if epoch == 0 else None})
        assert answer.error_code == 0, answer.error_message
        epoch = answer.member_epoch
        if answer.assignment and answer.assignment.topic_partitions:
            break
    for session_epoch in range(20):
        answer = share_fetch(client, group, member, topic_id, session_epoch)
        assert answer.error_code == 0, answer.error_message
        acquired = [(r.first_offset, r.last_offset, r.delivery_count)
                    for t in answer.responses for p in t.partitions for r in p.acquired_records]
        if acquired:
            return acquired, session_epoch + 1
    raise AssertionError(f"{member} acquired nothing")


ORPHANS = "orphans"  # join_and_acquire's topic unless told


@pytest.mark.fake_kafka(topics={ORPHANS: 1})
def test_a_closed_connection_ends_its_share_session_and_frees_its_records_at_once(kafka):
    """Kafka forgets the share sessions of a client that disconnected and releases the records
    its member held: another member acquires them at once (delivery count 2), long before
    their 60 s lock or the 45 s member session would run out."""
    group = new_group(kafka, **{"share.record.lock.duration.ms": "60000"})
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as client:
        client.request("Produce", 9, produce_body(ORPHANS, 0, batch([b"a", b"b"])))
        topic_id = client.request("Metadata", 12, {
            "topics": [{"name": ORPHANS, "topic_id": None}],
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False}).topics[0].topic_id
    with WireClient(address) as gone:
        assert join_and_acquire(gone, group, "AAAAAAAAAAAAAAAAAAAAAQ", topic_id)[0] == \
            [(0, 1, 1)]
    with WireClient(address) as other:
        assert join_and_acquire(other, group, "AAAAAAAAAAAAAAAAAAAAAg", topic_id)[0] == \
            [(0, 1, 2)]
        # the first member's session is gone with its connection
        assert share_fetch(other, group, "AAAAAAAAAAAAAAAAAAAAAQ", topic_id, 2).error_code == \
            ErrorCode.SHARE_SESSION_NOT_FOUND


@pytest.mark.fake_kafka(overrides={"group.share.min.record.lock.duration.ms": "20000"})
def test_the_brokers_share_limits_bound_a_groups_share_configs(kafka) -> None:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": "bounded", "configs": [
                {"name": "share.record.lock.duration.ms", "config_operation": 0,
                 "value": "15000"}]}], "validate_only": True})
    assert [(r.error_code, r.error_message) for r in response.responses] == [(
        40, "share.record.lock.duration.ms must be in the range 20000 to 60000 inclusive.")]



SEGMENTED = "segmented"


@pytest.mark.fake_kafka(topics={})
def test_a_share_fetch_reads_one_segment_as_a_fetch_does(kafka) -> None:
    """Records stamped 2023, then records stamped now: more than segment.ms (7 days) apart,
    so the second batch rolls a segment of its own. A ShareFetch reads the log as Fetch
    does, one segment per read (Kafka's LocalLog.read), so it acquires the first segment's
    records only, though max_records (100) allows them all; a later fetch the rest."""
    kafka.create_topic(SEGMENTED, configs={"retention.ms": "-1"})
    group = new_group(kafka)
    address = kafka.bootstrap_servers.split(",")[0]
    now = time.time_ns() // 1_000_000
    with WireClient(address) as client:
        for records in (batch([b"a", b"b", b"c"]),
                        encode_batch([(b"k", v, [], now) for v in (b"d", b"e")])):
            (answer,) = client.request("Produce", 9, produce_body(SEGMENTED, 0, records)
                                       ).responses
            assert answer.partition_responses[0].error_code == 0
        topic_id = client.request("Metadata", 12, {
            "topics": [{"name": SEGMENTED, "topic_id": None}],
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False}).topics[0].topic_id
        member = "AAAAAAAAAAAAAAAAAAAAAw"
        first, epoch = join_and_acquire(client, group, member, topic_id, SEGMENTED)
        answer = share_fetch(client, group, member, topic_id, epoch)
    assert first == [(0, 2, 1)]
    assert answer.error_code == 0, answer.error_message
    assert [(r.first_offset, r.last_offset, r.delivery_count) for t in answer.responses
            for p in t.partitions for r in p.acquired_records] == [(3, 4, 1)]


EPOCHS = "epochs"


def share_heartbeat(client: WireClient, group: str, epoch: int,
                    member: str = "AAAAAAAAAAAAAAAAAAAAAg"):
    return client.request("ShareGroupHeartbeat", 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch,
        "subscribed_topic_names": [EPOCHS] if epoch == 0 else None})


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_a_new_share_group_starts_at_epoch_1_so_its_first_member_joins_at_2(kafka) -> None:
    """Kafka 4.4 makes a share group at group epoch 1, whether AlterShareGroupOffsets or a
    member's join makes it: the first join bumps it to 2, so a heartbeat at epoch 1 is
    fenced; again so after DeleteGroups deleted the group."""
    altered, joined = (f"epochs-{uuid.uuid4().hex[:8]}" for _ in range(2))
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        (topic,) = client.request("AlterShareGroupOffsets", 0, {"group_id": altered, "topics": [
            {"topic_name": EPOCHS, "partitions": [{"partition_index": 0,
                                                   "start_offset": 0}]}]}).responses
        assert [p.error_code for p in topic.partitions] == [0]
        (described,) = client.request("ShareGroupDescribe", 1, {
            "group_ids": [altered], "include_authorized_operations": False}).groups
        assert (described.group_epoch, described.assignment_epoch) == (1, 1)
        assert share_heartbeat(client, altered, 0).member_epoch == 2
        for _ in range(2):  # a new group, then the same group id after DeleteGroups
            answer = share_heartbeat(client, joined, 0)
            assert (answer.error_code, answer.member_epoch) == (0, 2)
            assert share_heartbeat(client, joined, 1).error_code == \
                ErrorCode.FENCED_MEMBER_EPOCH
            assert share_heartbeat(client, joined, -1).error_code == 0
            (deleted,) = client.request("DeleteGroups", 2, {"groups_names": [joined]}).results
            assert deleted.error_code == 0


def epochs_of(client: WireClient, group: str) -> tuple[int, int]:
    """The group's (group epoch, target assignment epoch), from ShareGroupDescribe."""
    (described,) = client.request("ShareGroupDescribe", 1, {
        "group_ids": [group], "include_authorized_operations": False}).groups
    return described.group_epoch, described.assignment_epoch


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_a_share_groups_target_assignment_waits_out_its_assignment_interval(kafka) -> None:
    """Kafka 4.4 computes a share group's target assignment at most once per
    share.assignment.interval.ms (here 15 s): within it the group epoch moves on (a join, a
    leave) while members are answered at the target's epoch. The last member leaving makes
    the target the group epoch's, and the next join computes one at once."""
    group = f"epochs-{uuid.uuid4().hex[:8]}"
    first, second = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"
    set_group_configs(kafka, group, **{"share.assignment.interval.ms": "15000"})
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert share_heartbeat(client, group, 0, first).member_epoch == 2
        assert share_heartbeat(client, group, 0, second).member_epoch == 2
        assert epochs_of(client, group) == (3, 2)
        assert share_heartbeat(client, group, -1, second).error_code == 0
        assert share_heartbeat(client, group, 2, first).member_epoch == 2
        assert epochs_of(client, group) == (4, 2)
        assert share_heartbeat(client, group, -1, first).error_code == 0
        assert epochs_of(client, group) == (5, 5)
        assert share_heartbeat(client, group, 0, first).member_epoch == 6


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_a_partition_is_assigned_once_its_share_state_is_initialized(kafka) -> None:
    """Kafka 4.4 assigns a share group only the partitions whose share state its share
    coordinator has initialized, which it asks for after the heartbeat that subscribed them:
    the join answers no partition; a later heartbeat, finding the state initialized and not
    assigned, bumps the group epoch (here within a 15 s assignment interval: the target and
    the member stay at 2; a rejoin naming its topic twice changes nothing: subscriptions are
    sets). The state outlives the member: DeleteShareGroupOffsets deletes it
    after the member left, and the next join, the state gone, is assigned nothing."""
    group = f"epochs-{uuid.uuid4().hex[:8]}"
    set_group_configs(kafka, group, **{"share.assignment.interval.ms": "15000"})
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        joined = share_heartbeat(client, group, 0)
        assert (joined.error_code, joined.member_epoch) == (0, 2)
        assert joined.assignment.topic_partitions == []
        wait_until(lambda: share_heartbeat(client, group, 2).error_code == 0
                   and epochs_of(client, group) == (3, 2), timeout=10,
                   what="the group epoch bumped for the initialized partition")
        later = share_heartbeat(client, group, 2)
        assert (later.error_code, later.member_epoch, later.assignment) == (0, 2, None)
        again = client.request("ShareGroupHeartbeat", 1, {  # the same topics, one named twice
            "group_id": group, "member_id": "AAAAAAAAAAAAAAAAAAAAAg", "member_epoch": 0,
            "subscribed_topic_names": [EPOCHS, EPOCHS]})
        assert (again.error_code, again.member_epoch) == (0, 2)
        assert epochs_of(client, group) == (3, 2)
        assert share_heartbeat(client, group, -1).error_code == 0
        (deleted,) = client.request("DeleteShareGroupOffsets", 0, {
            "group_id": group, "topics": [{"topic_name": EPOCHS}]}).responses
        assert (deleted.topic_name, deleted.error_code) == (EPOCHS, 0)
        rejoined = share_heartbeat(client, group, 0)
        assert (rejoined.member_epoch, rejoined.assignment.topic_partitions) == (5, [])


@pytest.mark.fake_kafka(topics={ORPHANS: 1})
def test_a_share_fetch_with_negative_max_bytes_fails_a_partition_with_records(kafka) -> None:
    """Kafka 4.4 fails reading a partition that has records to acquire when the ShareFetch's
    max_bytes is negative (its DelayedShareFetch: "Request max bytes must be greater than 0"):
    the partition answers UNKNOWN_SERVER_ERROR, nothing is acquired nor counted, and the
    session goes on: the next fetch acquires the records at delivery count 1. Found by the
    differential fuzzer (seed 2, #36669)."""
    group, member = new_group(kafka), "AAAAAAAAAAAAAAAAAAAAAQ"
    address = kafka.bootstrap_servers.split(",")[0]
    with WireClient(address) as client:
        client.request("Produce", 9, produce_body(ORPHANS, 0, batch([b"a", b"b"])))
        topic_id = client.request("Metadata", 12, {
            "topics": [{"name": ORPHANS, "topic_id": None}], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False}).topics[0].topic_id
        epoch = 0
        for _ in range(50):  # until the partition is assigned (its share state initialized)
            answer = client.request("ShareGroupHeartbeat", 1, {
                "group_id": group, "member_id": member, "member_epoch": epoch,
                "subscribed_topic_names": [ORPHANS] if epoch == 0 else None})
            epoch = answer.member_epoch
            if answer.assignment and answer.assignment.topic_partitions:
                break
            time.sleep(0.1)
        request = {"group_id": group, "member_id": member, "share_session_epoch": 0,
                   "max_wait_ms": 1000, "min_bytes": 1, "max_bytes": -1, "max_records": 100,
                   "batch_size": 100, "forgotten_topics_data": [], "topics": [{
                       "topic_id": topic_id, "partitions": [{
                           "partition_index": 0, "acknowledgement_batches": []}]}]}
        failed = client.request("ShareFetch", 1, request)
        assert failed.error_code == 0
        assert [(p.error_code, p.acquired_records) for t in failed.responses
                for p in t.partitions] == [(ErrorCode.UNKNOWN_SERVER_ERROR, [])]
        then = client.request("ShareFetch", 1, {**request, "share_session_epoch": 1,
                                                "max_bytes": 1 << 20})
        assert [(r.first_offset, r.last_offset, r.delivery_count) for t in then.responses
                for p in t.partitions for r in p.acquired_records] == [(0, 1, 1)]


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_a_share_member_may_heartbeat_at_its_previous_epoch(kafka) -> None:
    """Kafka 4.4 accepts a share member's heartbeat at the epoch it had before its last change
    (a member that missed an answer) and answers its current epoch; a smaller epoch other than
    that one is fenced, naming both. Found by the differential fuzzer (seed 2, #40455)."""
    group = f"epochs-{uuid.uuid4().hex[:8]}"
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert share_heartbeat(client, group, 0).member_epoch == 2
        epochs = [2]  # until the initialized partition is assigned, at a new epoch
        wait_until(lambda: epochs.append(share_heartbeat(client, group, epochs[-1]).member_epoch)
                   or epochs[-1] == 3, timeout=10, what="the member at epoch 3")
        again = share_heartbeat(client, group, 2)
        assert (again.error_code, again.member_epoch) == (0, 3)
        fenced = share_heartbeat(client, group, 1)
        assert (fenced.error_code, fenced.error_message) == (
            ErrorCode.FENCED_MEMBER_EPOCH,
            "The share group member has a smaller member epoch (1) than the one known by the "
            "group coordinator (3), and it does not match the previous member epoch (2). The "
            "member must abandon all its partitions and rejoin.")


@pytest.mark.fake_kafka(topics={EPOCHS: 1, ORPHANS: 1})
@pytest.mark.parametrize(("named", "answered"), [
    ([EPOCHS, EPOCHS], [(EPOCHS, None)]),
    (["nope", ORPHANS, EPOCHS, "nope", EPOCHS],
     [(EPOCHS, None), ("nope", "This server does not host this topic-partition."),
      (ORPHANS, "There is no offset information to delete."),
      ("nope", "This server does not host this topic-partition.")]),
])
def test_delete_share_group_offsets_answers_the_deleted_topics_first_each_once(
        kafka, named, answered) -> None:
    """Kafka 4.4 answers the topics whose share state it deleted first, a topic named twice
    once, then every topic it refused (unknown, or no state) in the request's order."""
    group = f"deleted-{uuid.uuid4().hex[:8]}"
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        assert share_heartbeat(client, group, 0).member_epoch == 2
        wait_until(lambda: share_heartbeat(client, group, 2).error_code == 0
                   and epochs_of(client, group)[0] == 3, timeout=10,
                   what="the share state of epochs initialized")
        assert share_heartbeat(client, group, -1).error_code == 0
        deleted = client.request("DeleteShareGroupOffsets", 0, {
            "group_id": group, "topics": [{"topic_name": name} for name in named]})
    assert deleted.error_code == 0
    assert [(r.topic_name, r.error_message) for r in deleted.responses] == answered
    assert [r.error_code for r in deleted.responses] == [
        0 if message is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for _, message in answered]


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_delete_share_group_offsets_of_a_group_without_share_state_answers_no_topic(kafka):
    """A share group whose member subscribed only to a topic that does not exist never had
    share state initialized: Kafka 4.4 answers a DeleteShareGroupOffsets of it with no topic at
    all, an unknown one or a real one alike (seed 1's #309151 of the differential fuzzer)."""
    group = f"stateless-{uuid.uuid4().hex[:8]}"
    member = "AAAAAAAAAAAAAAAAAAAAAg"
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        joined = client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": member, "member_epoch": 0,
            "subscribed_topic_names": ["nowhere"]})
        assert joined.error_code == 0
        assert client.request("ShareGroupHeartbeat", 1, {
            "group_id": group, "member_id": member, "member_epoch": -1,
            "subscribed_topic_names": None}).error_code == 0
        deleted = client.request("DeleteShareGroupOffsets", 0, {
            "group_id": group, "topics": [{"topic_name": "nope"}, {"topic_name": EPOCHS}]})
    assert (deleted.error_code, deleted.responses) == (0, [])


@pytest.mark.fake_kafka(topics={EPOCHS: 1})
def test_a_group_an_alter_made_has_share_state_for_delete_share_group_offsets(kafka):
    """An AlterShareGroupOffsets naming a known topic records share state for the group, even
    when none of its partitions exists: a DeleteShareGroupOffsets then answers each topic
    (seed 1's #182261 of the differential fuzzer)."""
    group = f"altered-{uuid.uuid4().hex[:8]}"
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        (altered,) = client.request("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [
            {"topic_name": EPOCHS, "partitions": [{"partition_index": 7,
                                                   "start_offset": 0}]}]}).responses
        assert [p.error_code for p in altered.partitions] == [
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        deleted = client.request("DeleteShareGroupOffsets", 0, {
            "group_id": group, "topics": [{"topic_name": "nope"}]})
    assert [(r.topic_name, r.error_code) for r in deleted.responses] == [
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
