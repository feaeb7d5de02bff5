"""Group consumers of the Java client 3.9.1 and kafkajs, as separate processes: 3-member
groups consume every record once; Java members joining and leaving mid-stream lose and repeat
no record; a restarted static Java member keeps its partitions without a rebalance (classic
and group.protocol=consumer); a Java Pattern subscription follows topics created later."""

from __future__ import annotations

import time

import pytest

from tests.clients.java import run_harness, start_harness
from tests.clients.kafkajs import start_kafkajs
from tests.clients.process import GroupMember, wait_until

TOPIC = "orders"
PARTITIONS = 6


def produce(kafka, count: int, prefix: str = "v", topic: str = TOPIC) -> list[str]:
    """``count`` records with values <prefix>0, <prefix>1, ...; returns the values."""
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                        "--count", str(count), "--value-prefix", prefix)
    assert lines[-1] == {"done": count}
    return [f"{prefix}{i}" for i in range(count)]


def start_member(client: str, kafka, group: str, *extra: str) -> GroupMember:
    args = ("--bootstrap", kafka.bootstrap_servers, "--topic", TOPIC, "--group", group,
            "--idle-exit-ms", "60000", *extra)
    if client == "java":
        return start_harness("group-consume", *args)
    return start_kafkajs(*args)


def wait_stable(kafka, group: str, count: int, timeout: float = 60) -> None:
    """Until the group is Stable with ``count`` members that own every partition, each
    member some."""
    deadline = time.monotonic() + timeout
    while True:
        view = kafka.group(group)
        if view is not None and view.state in ("Stable", "stable") and \
                len(view.members) == count and all(m.assignment for m in view.members) and \
                sorted(p for m in view.members for p in m.assignment.get(TOPIC, [])) == \
                list(range(PARTITIONS)):
            return
        assert time.monotonic() < deadline, f"group {group} not stable with {count}: {view}"
        time.sleep(0.1)


def member_id(member: GroupMember) -> str | None:
    """The member id its latest rebalance callback reported (None before the first)."""
    return next((e["memberId"] for e in reversed(member.events()) if "memberId" in e), None)


def positioned(member: GroupMember) -> list[int] | None:
    """The partitions a member started with --report-positions has fetch positions for,
    from its "positioned" line after its latest rebalance callback (None before that line)."""
    for event in reversed(member.events()):
        if event["event"] == "positioned":
            return sorted(int(p) for p in event["positions"])
        if event["event"] in ("assigned", "revoked", "lost"):
            return None
    return None


def wait_reconciled(kafka, group: str, members: list[GroupMember], timeout: float = 60) -> None:
    """Until the group is Stable with exactly ``members``, every partition assigned, and each
    member (started with --report-positions) has taken the partitions the broker assigned it:
    its own rebalance callbacks report them, and it has a fetch position for each.

    The broker reports Stable as soon as it has sent each member its assignment; the member
    then runs its callback and fetches its committed offsets. A test that changes the
    membership before that races it, and the Java 3.9 client can lose: a partition it gets
    while its OffsetFetch for the previous ones is pending is reset to auto.offset.reset
    instead of its committed offset (KAFKA-17674, fixed in 4.0)."""
    def reconciled() -> bool:
        view = kafka.group(group)
        if view is None or view.state not in ("Stable", "stable") or \
                len(view.members) != len(members):
            return False
        assigned = {m.member_id: sorted(m.assignment.get(TOPIC, [])) for m in view.members}
        return sorted(p for ps in assigned.values() for p in ps) == list(range(PARTITIONS)) \
            and all(assigned.get(member_id(m)) == sorted(m.assignment()) == positioned(m)
                    for m in members)

    wait_until(reconciled, timeout, members=members,
               what=f"{len(members)} members of {group} holding what the broker assigned them")


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
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_java_members_joining_and_leaving_mid_stream_lose_and_repeat_no_record(fake_kafka,
                                                                               protocol):
    def member() -> GroupMember:
        return start_member("java", fake_kafka, "audit", "--protocol", protocol,
                            "--report-positions")

    members = [member(), member()]
    try:
        wait_reconciled(fake_kafka, "audit", members)
        values = produce(fake_kafka, 100, "a")
        members.append(member())  # joins mid-stream
        values += produce(fake_kafka, 100, "b")
        wait_reconciled(fake_kafka, "audit", members)
        members[0].stop(check=True)  # leaves mid-stream: commits, then leaves the group
        values += produce(fake_kafka, 100, "c")
        wait_reconciled(fake_kafka, "audit", members[1:])
        wait_until(lambda: {r["value"] for m in members for r in m.records()} >= set(values),
                   60, members=members, what="every record")
    finally:
        for m in members:
            m.stop()
    assert sorted(r["value"] for m in members for r in m.records()) == sorted(values)
    assert [e for m in members for e in m.events("commit-failed")] == []
    for partition in range(PARTITIONS):
        assert fake_kafka.committed("audit", TOPIC, partition) == \
            fake_kafka.offsets(TOPIC, partition)[1]


@pytest.mark.java
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_a_restarted_static_java_member_keeps_its_partitions_without_a_rebalance(fake_kafka,
                                                                                 protocol):
    def member(instance: str) -> GroupMember:
        return start_member("java", fake_kafka, "static", "--instance-id", instance,
                            "--protocol", protocol, "session.timeout.ms=30000")

    static = [member("pod-0"), member("pod-1")]
    try:
        wait_stable(fake_kafka, "static", 2)
        before = fake_kafka.group("static")
        owned = {m.instance_id: m.assignment for m in before.members}
        for i, m in enumerate(static):  # the clients' callbacks may lag the broker's view
            wait_until(lambda m=m, i=i: sorted(m.assignment()) == owned[f"pod-{i}"][TOPIC], 30,
                       members=[m], what="the assigned callback")
        seen_by_peer = len(static[1].lines())
        static[0].stop(check=True)  # a static member's close() leaves only temporarily
        static[0] = member("pod-0")
        static[0].wait_for({"event": "assigned"}, timeout=60)
        wait_stable(fake_kafka, "static", 2)
        after = fake_kafka.group("static")
        assert after.generation_id == before.generation_id  # no rebalance
        assert {m.instance_id: m.assignment for m in after.members} == owned
        assert [line for line in static[1].lines()[seen_by_peer:] if "event" in line] == []
        values = produce(fake_kafka, 60)
        wait_until(lambda: sum(len(m.records()) for m in static) >= 60, 60, members=static,
                   what="the records produced after the restart")
    finally:
        for m in static:
            m.stop()
    assert sorted(r["value"] for m in static for r in m.records()) == sorted(values)


@pytest.mark.java
@pytest.mark.fake_kafka(brokers=1, topics={"orders-eu": 2, "audit": 1})
def test_a_java_pattern_subscription_follows_topics_created_later(fake_kafka):
    values = produce(fake_kafka, 20, "eu", topic="orders-eu")
    produce(fake_kafka, 5, "audit", topic="audit")
    # The 3.9 client matches the Pattern itself, on each metadata refresh (metadata.max.age.ms)
    with start_harness("group-consume", "--bootstrap", fake_kafka.bootstrap_servers,
                       "--pattern", "orders-.*", "--group", "regex", "--protocol", "consumer",
                       "--idle-exit-ms", "60000", "metadata.max.age.ms=500") as member:
        wait_until(lambda: len(member.records()) >= 20, 60, members=[member],
                   what="the records of orders-eu")
        fake_kafka.create_topic("orders-us", partitions=2)
        values += produce(fake_kafka, 20, "us", topic="orders-us")
        wait_until(lambda: len(member.records()) >= 40, 60, members=[member],
                   what="the records of orders-us, created after the subscription")
        assert fake_kafka.group("regex").members[0].assignment == {"orders-eu": [0, 1],
                                                                   "orders-us": [0, 1]}
        member.stop(check=True)
    assert sorted(r["value"] for r in member.records()) == sorted(values)
    for topic in ("orders-eu", "orders-us"):
        for partition in range(2):
            assert fake_kafka.committed("regex", topic, partition) == \
                fake_kafka.offsets(topic, partition)[1]


@pytest.mark.java
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
@pytest.mark.fake_kafka(brokers=1, topics={TOPIC: 3})
def test_first_record_times_one_cold_then_warm_group_consumers_in_one_jvm(fake_kafka, protocol):
    """The format a benchmark reads: one line per round, then {"done": N}."""
    produce(fake_kafka, 30)
    lines = run_harness("first-record", "--bootstrap", fake_kafka.bootstrap_servers, "--topic",
                        TOPIC, "--rounds", "3", "--protocol", protocol, "--group-prefix", "fr")
    assert lines[-1] == {"done": 3}
    rounds = lines[:-1]
    assert [(r["round"], r["group"], r["cold"]) for r in rounds] == [
        (0, "fr-0", True), (1, "fr-1", False), (2, "fr-2", False)]
    for r in rounds:
        assert set(r) == {"round", "group", "cold", "createMs", "firstRecordMs"}
        assert 0 < r["firstRecordMs"] < 30_000
    assert {g: fake_kafka.group(g).state for g in ("fr-0", "fr-1", "fr-2")} == dict.fromkeys(
        ("fr-0", "fr-1", "fr-2"), "Empty")  # each consumer left its group on close
