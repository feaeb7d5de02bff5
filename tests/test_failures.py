"""Natural failures: the cluster changes as a real one would, and the wire shows it."""

from __future__ import annotations

import errno
import socket
import struct
import time

import pytest
import trio
import trio.testing

from fakebroker.protocol.errors import ClusterError, ErrorCode
from fakebroker.protocol.framing import decode_response, encode_request
from fakebroker.runtime import open_cluster
from fakebroker.server import KEEPS_PORT_WHILE_DOWN
from fakebroker.wire_client import WireClient
from tests.test_faults import produce
from tests.test_wire_groups import joined_member
from tests.test_wire_versions import batch, fetch_body, produce_body

pytestmark = [
    pytest.mark.fake_only("natural failures (leader and coordinator moves, brokers down, "
                          "truncation...) are the fake's operations"),
    pytest.mark.fake_kafka(brokers=3, topics={
        "orders": 1, "replicated": {"partitions": 1, "replication_factor": 3}}),
]


def address(kafka, broker_id: int) -> str:
    broker = next(b for b in kafka.brokers if b.id == broker_id)
    return f"{broker.host}:{broker.port}"


def leader(kafka, topic: str, partition: int = 0) -> int:
    return kafka.call(lambda: kafka.cluster.state.partition(topic, partition).leader)


def metadata_partition(client: WireClient, topic: str):
    response = client.request("Metadata", 12, {"topics": [{"name": topic}],
                                               "allow_auto_topic_creation": False})
    return response, response.topics[0].partitions[0]


def produce_to(kafka, broker_id: int, topic: str, values: list[bytes]) -> int:
    with WireClient(address(kafka, broker_id)) as client:
        response = client.request("Produce", 9, produce_body(topic, 0, batch(values)))
    return response.responses[0].partition_responses[0].error_code


def test_a_moved_leader_bumps_the_epoch_and_the_old_leader_refuses(fake_kafka):
    old = leader(fake_kafka, "orders")
    assert produce_to(fake_kafka, old, "orders", [b"a", b"b"]) == 0
    new = fake_kafka.move_leader("orders", 0)
    assert new != old and leader(fake_kafka, "orders") == new
    assert produce_to(fake_kafka, old, "orders", [b"c"]) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert produce_to(fake_kafka, new, "orders", [b"c"]) == 0
    with WireClient(address(fake_kafka, new)) as client:
        _, partition = metadata_partition(client, "orders")
        assert (partition.leader_id, partition.leader_epoch) == (new, 1)
        stale = fetch_body("orders", 0, 0)
        stale["topics"][0]["partitions"][0]["current_leader_epoch"] = 0
        fenced = client.request("Fetch", 12, stale).responses[0].partitions[0]
        assert fenced.error_code == ErrorCode.FENCED_LEADER_EPOCH
        epochs = client.request("OffsetForLeaderEpoch", 4, {"replica_id": -1, "topics": [
            {"topic": "orders", "partitions": [
                {"partition": 0, "current_leader_epoch": 1, "leader_epoch": 0}]}]})
        answer = epochs.topics[0].partitions[0]
        assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (0, 0, 2)


def test_a_leader_can_be_moved_to_a_named_broker(fake_kafka):
    target = next(b.id for b in fake_kafka.brokers if b.id != leader(fake_kafka, "orders"))
    assert fake_kafka.move_leader("orders", 0, broker=target) == target
    with pytest.raises(ClusterError, match="already leads"):
        fake_kafka.move_leader("orders", 0, broker=target)
    with pytest.raises(ClusterError, match="no partition orders/9"):
        fake_kafka.move_leader("orders", 9)


def test_a_broker_down_closes_its_port_and_leaves_the_metadata(fake_kafka):
    down = leader(fake_kafka, "replicated")
    offline_leader = leader(fake_kafka, "orders")
    with WireClient(address(fake_kafka, down)) as connected:
        fake_kafka.broker_down(down)
        assert connected.is_closed_by_peer()
    with pytest.raises(OSError):
        socket.create_connection(address(fake_kafka, down).rsplit(":", 1), timeout=2).close()
    survivor = next(b.id for b in fake_kafka.brokers if b.id != down)
    with WireClient(address(fake_kafka, survivor)) as client:
        response, moved = metadata_partition(client, "replicated")
        assert down not in [b.node_id for b in response.brokers]
        assert moved.leader_id not in (down, -1) and moved.leader_epoch == 1
        assert down in moved.offline_replicas and down not in moved.isr_nodes
        _, orders = metadata_partition(client, "orders")
        if offline_leader == down:
            assert (orders.error_code, orders.leader_id) == (ErrorCode.LEADER_NOT_AVAILABLE, -1)
    with pytest.raises(ClusterError, match="is down"):
        fake_kafka.move_leader("replicated", 0, broker=down)


def test_a_broker_back_up_serves_again_on_its_port(fake_kafka):
    broker = leader(fake_kafka, "orders")
    fake_kafka.broker_down(broker)
    fake_kafka.broker_up(broker)
    with WireClient(address(fake_kafka, broker)) as client:
        _, partition = metadata_partition(client, "orders")
        assert (partition.error_code, partition.leader_id) == (0, broker)
        assert partition.leader_epoch == 2  # leaderless in epoch 1, re-elected in 2 (as Kafka)
        assert produce(client) == 0
    with pytest.raises(ClusterError, match="is up"):
        fake_kafka.broker_up(broker)


@pytest.mark.skipif(not KEEPS_PORT_WHILE_DOWN, reason="a downed broker keeps its port on Linux")
def test_a_downed_broker_keeps_its_port_and_refuses_connections_until_it_is_up(fake_kafka):
    """No other socket can take a downed broker's port, so it comes up on it again; meanwhile
    a client connecting is refused at once."""
    broker = leader(fake_kafka, "orders")
    host, port = address(fake_kafka, broker).rsplit(":", 1)
    fake_kafka.broker_down(broker)
    for option in ("SO_REUSEADDR", "SO_REUSEPORT", None):
        with socket.socket() as other:
            if option is not None:
                other.setsockopt(socket.SOL_SOCKET, getattr(socket, option), 1)
            with pytest.raises(OSError) as taken:
                other.bind((host, int(port)))
            assert taken.value.errno == errno.EADDRINUSE, option
    started = time.monotonic()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5).close()
    assert time.monotonic() - started < 1
    fake_kafka.broker_up(broker)
    with WireClient(address(fake_kafka, broker)) as client:
        _, partition = metadata_partition(client, "orders")
        assert (partition.error_code, partition.leader_id) == (0, broker)
        assert produce(client) == 0


def test_a_broker_going_down_while_it_accepts_a_connection_closes_it_and_serves_on():
    """The connection is closed, the broker does not fail, and it serves again once up: also
    when its accept is already scheduled, in the same trio batch as the broker_down (the
    accept then finds the socket no longer listening)."""
    def closed_by_peer(sock: socket.socket) -> bool:
        sock.setblocking(False)
        try:
            return sock.recv(1) == b""
        except ConnectionResetError:
            return True

    async def main() -> None:
        async with open_cluster(brokers=2) as cluster:
            broker = cluster.state.brokers[1]
            for _ in range(20):
                await trio.testing.wait_all_tasks_blocked()  # the broker waits to accept
                with socket.create_connection((broker.host, broker.port)) as late:
                    await trio.lowlevel.checkpoint()  # the broker's accept may now be scheduled
                    cluster.broker_down(1)
                    await trio.testing.wait_all_tasks_blocked()
                    assert closed_by_peer(late)
                await cluster.broker_up(1)
            stream = await trio.open_tcp_stream(broker.host, broker.port)
            async with stream:
                await stream.send_all(encode_request(3, 12, 7, "late", {"topics": None}))
                answer = b""
                while len(answer) < 4 or len(answer) < 4 + struct.unpack(">i", answer[:4])[0]:
                    answer += await stream.receive_some()
            correlation_id, metadata = decode_response(3, 12, answer[4:])
            assert correlation_id == 7 and sorted(b.node_id for b in metadata.brokers) == [1, 2]

    trio.run(main)


def test_deleted_records_put_consumers_out_of_range(fake_kafka):
    broker = leader(fake_kafka, "orders")
    produce_to(fake_kafka, broker, "orders", [b"a", b"b", b"c"])
    assert fake_kafka.delete_records("orders", 0, 2) == 2
    assert fake_kafka.offsets("orders", 0) == (2, 3)
    with WireClient(address(fake_kafka, broker)) as client:
        below = client.request("Fetch", 12, fetch_body("orders", 0, 0)).responses[0]
        assert below.partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"c"]
    with pytest.raises(ClusterError, match="outside"):
        fake_kafka.delete_records("orders", 0, 9)


def test_truncation_loses_records_and_bumps_the_epoch(fake_kafka):
    broker = leader(fake_kafka, "orders")
    produce_to(fake_kafka, broker, "orders", [b"a"])
    produce_to(fake_kafka, broker, "orders", [b"b"])
    assert fake_kafka.truncate("orders", 0, 1) == 1
    assert [r.value for r in fake_kafka.records("orders", 0)] == [b"a"]
    with WireClient(address(fake_kafka, broker)) as client:
        _, partition = metadata_partition(client, "orders")
        assert partition.leader_epoch == 1
        beyond = client.request("Fetch", 12, fetch_body("orders", 0, 2)).responses[0]
        assert beyond.partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_a_moved_coordinator_sends_members_elsewhere(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers.split(",")[0]) as client:
        old = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0}).node_id
    with WireClient(address(fake_kafka, old)) as member:
        joined = joined_member(member)
        new = fake_kafka.move_coordinator("g")
        beat = member.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == ErrorCode.NOT_COORDINATOR
        found = member.request("FindCoordinator", 3, {"key": "g", "key_type": 0})
        assert found.node_id == new != old
    with WireClient(address(fake_kafka, new)) as member:
        beat = member.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == 0  # the group moved with its coordinator


def test_a_forced_rebalance_reaches_members_through_heartbeats(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers.split(",")[0]) as client:
        home = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0}).node_id
    with WireClient(address(fake_kafka, home)) as member:
        joined = joined_member(member)
        fake_kafka.rebalance("g")
        beat = member.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == ErrorCode.REBALANCE_IN_PROGRESS
    with pytest.raises(ClusterError, match="no group"):
        fake_kafka.rebalance("nobody")


def test_latency_delays_every_request_to_one_broker(fake_kafka):
    fake_kafka.set_latency(1, 250)
    with WireClient(address(fake_kafka, 1)) as slow, WireClient(address(fake_kafka, 2)) as fast:
        started = time.monotonic()
        fast.request("Metadata", 12, {"topics": None})
        assert time.monotonic() - started < 0.2
        slow.request("Metadata", 12, {"topics": None})
        assert time.monotonic() - started >= 0.25
    fake_kafka.set_latency(1, 0)


def test_a_kicked_member_is_told_it_is_unknown_and_the_group_moves_on(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers.split(",")[0]) as client:
        home = client.request("FindCoordinator", 3, {"key": "g", "key_type": 0}).node_id
    with WireClient(address(fake_kafka, home)) as member:
        joined = joined_member(member)
        fake_kafka.kick_member("g", joined.member_id)
        beat = member.request("Heartbeat", 4, {"group_id": "g", "member_id": joined.member_id,
                                               "generation_id": joined.generation_id})
        assert beat.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert fake_kafka.group("g").state == "Empty" and not fake_kafka.group("g").members
    with pytest.raises(ClusterError, match="no member"):
        fake_kafka.kick_member("g", joined.member_id)


def metadata_view(client: WireClient) -> tuple:
    """Brokers, and each topic's partitions with leader, epoch and ISR, of an all-topics
    Metadata answer."""
    response = client.request("Metadata", 12, {"topics": None})
    return (sorted(b.node_id for b in response.brokers), sorted(
        (t.name, [(p.partition_index, p.leader_id, p.leader_epoch, sorted(p.isr_nodes))
                  for p in t.partitions]) for t in response.topics))


def admin_request(kafka, api: str, version: int, body: dict) -> None:
    with WireClient(address(kafka, 1)) as admin:
        admin.request(api, version, body)


# change -> (what comes first, the change)
CHANGES = {
    "leader moved": (None, lambda kafka: kafka.move_leader("replicated", 0)),
    "broker down": (None, lambda kafka: kafka.broker_down(2)),
    "broker up": (lambda kafka: kafka.broker_down(2), lambda kafka: kafka.broker_up(2)),
    "unclean election": (None, lambda kafka: kafka.truncate("orders", 0, 0)),
    "topic created": (None, lambda kafka: kafka.create_topic("fresh", partitions=2)),
    "partitions added": (None, lambda kafka: admin_request(kafka, "CreatePartitions", 3, {
        "topics": [{"name": "orders", "count": 3, "assignments": None}],
        "timeout_ms": 1000})),
    "topic deleted": (None, lambda kafka: admin_request(kafka, "DeleteTopics", 6, {
        "topics": [{"name": "orders"}], "timeout_ms": 1000})),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_kept_metadata_answer_is_never_given_after_the_metadata_changed(fake_kafka, change):
    """A broker gives the same Metadata request its kept answer (journaled like any other)
    until the cluster changes; the answer after a change is the one a new client gets."""
    first, make_change = CHANGES[change]
    if first is not None:
        first(fake_kafka)
    with WireClient(address(fake_kafka, 1), client_id="kept") as client:
        before = metadata_view(client)
        assert metadata_view(client) == before  # the kept answer
        make_change(fake_kafka)
        after = metadata_view(client)
        with WireClient(address(fake_kafka, 1), client_id="new") as fresh:
            assert after == metadata_view(fresh) != before
    assert len(fake_kafka.journal(api="Metadata", client_id="kept")) == 3
