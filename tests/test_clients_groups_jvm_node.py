"""Group consumers of the Java client 3.9.1 and kafkajs, as separate processes: 3-member
groups consume every record once; a restarted static Java member keeps its partitions
without a rebalance."""

from __future__ import annotations

import time

import pytest

from tests.clients.java import run_harness, start_harness
from tests.clients.kafkajs import start_kafkajs
from tests.clients.process import GroupMember

TOPIC = "orders"
PARTITIONS = 6


def produce(kafka, count: int) -> None:
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", TOPIC,
                        "--count", str(count))
    assert lines[-1] == {"done": count}


def start_member(client: str, kafka, group: str, *extra: str) -> GroupMember:
    args = ("--bootstrap", kafka.bootstrap_servers, "--topic", TOPIC, "--group", group,
            "--idle-exit-ms", "60000", *extra)
    if client == "java":
        return start_harness("group-consume", *args)
    return start_kafkajs(*args)


def wait_stable(kafka, group: str, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        view = kafka.group(group)
        if view is not None and view.state in ("Stable", "stable") and \
                len(view.members) == count and \
                sorted(p for m in view.members for p in m.assignment.get(TOPIC, [])) == \
                list(range(PARTITIONS)):
            return
        assert time.monotonic() < deadline, f"group {group} not stable with {count}: {view}"
        time.sleep(0.1)


@pytest.mark.java
@pytest.mark.parametrize("client,protocol", [("java", "classic"), ("java", "consumer"),
                                             ("kafkajs", "classic")])
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_a_three_member_group_consumes_every_record_once(fake_kafka, client, protocol):
    extra = ("--protocol", protocol) if protocol != "classic" else ()
    members = [start_member(client, fake_kafka, "billing", *extra) for _ in range(3)]
    try:
        wait_stable(fake_kafka, "billing", 3)
        produce(fake_kafka, 300)
        deadline = time.monotonic() + 60
        while sum(len(m.records()) for m in members) < 300:
            assert time.monotonic() < deadline, [m.stderr_tail() for m in members]
            time.sleep(0.1)
    finally:
        for member in members:
            member.stop()
    values = sorted(r["value"] for m in members for r in m.records())
    assert values == sorted(f"v{i}" for i in range(300))
    for partition in range(PARTITIONS):
        assert fake_kafka.committed("billing", TOPIC, partition) == \
            fake_kafka.offsets(TOPIC, partition)[1]


@pytest.mark.java
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_a_restarted_static_java_member_keeps_its_partitions_without_a_rebalance(fake_kafka):
    static = [start_member("java", fake_kafka, "static", "--instance-id", f"pod-{i}",
                           "session.timeout.ms=30000") for i in range(2)]
    try:
        wait_stable(fake_kafka, "static", 2)
        before = fake_kafka.group("static")
        owned = {m.instance_id: m.assignment for m in before.members}
        seen_by_peer = len(static[1].lines())
        static[0].stop()  # a static member's close() does not leave the group
        static[0] = start_member("java", fake_kafka, "static", "--instance-id", "pod-0",
                                 "session.timeout.ms=30000")
        static[0].wait_for({"event": "assigned"}, timeout=60)
        after = fake_kafka.group("static")
        assert after.generation_id == before.generation_id  # no rebalance
        assert {m.instance_id: m.assignment for m in after.members} == owned
        assert [line for line in static[1].lines()[seen_by_peer:] if "event" in line] == []
    finally:
        for member in static:
            member.stop()
