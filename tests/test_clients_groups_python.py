"""Real Python group consumers — confluent-kafka, kafka-python, aiokafka — in 3-member groups:
every record consumed exactly once across the members, committed offsets right after
commit, and membership changes mid-stream rebalance with no record lost; a confluent-kafka
regex subscription (KIP-848) resolved by the broker, topics created later included. They run
on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

TOPIC = "orders"
PARTITIONS = 6


def produce(kafka, count: int, start: int = 0) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(start, start + count):
        producer.produce(TOPIC, key=f"k{i}".encode(), value=f"v{i}".encode())
    assert producer.flush(30) == 0


class Member(threading.Thread):
    """One group member polling in its own thread; records (partition, offset, value)."""

    started: list[Member] = []  # stopped after each test, even a failed one

    def __init__(self, kafka, client: str, group: str):
        super().__init__(daemon=True)
        Member.started.append(self)
        self.kafka, self.client, self.group = kafka, client, group
        self.seen: list[tuple[int, int, bytes]] = []
        self.refused_commits: list[str] = []  # a commit racing a rebalance is refused
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            {"confluent-kafka": self._confluent,
             "confluent-kafka-kip848": lambda: self._confluent({"group.protocol": "consumer"}),
             "kafka-python": self._kafka_python,
             "aiokafka": lambda: asyncio.run(self._aiokafka())}[self.client]()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def _confluent(self, extra: dict | None = None) -> None:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer({"bootstrap.servers": self.kafka.bootstrap_servers,
                             "group.id": self.group, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False, **(extra or {})})
        consumer.subscribe([TOPIC])
        while not self.stopping.is_set():
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            self.seen.append((message.partition(), message.offset(), message.value()))
            try:
                consumer.commit(message, asynchronous=False)
            except KafkaException as exc:  # the records come again to the new owner
                self.refused_commits.append(str(exc))
        consumer.close()

    def _kafka_python(self) -> None:
        from kafka import KafkaConsumer
        from kafka.errors import CommitFailedError, RebalanceInProgressError

        consumer = KafkaConsumer(bootstrap_servers=self.kafka.bootstrap_servers,
                                 group_id=self.group, auto_offset_reset="earliest",
                                 enable_auto_commit=False)
        consumer.subscribe([TOPIC])           # see tests/clients/consumers.py: the leader
        consumer.partitions_for_topic(TOPIC)  # must hold the topic's metadata when it assigns
        while not self.stopping.is_set():
            batches = consumer.poll(timeout_ms=200)
            for records in batches.values():
                self.seen += [(r.partition, r.offset, r.value) for r in records]
            if batches:
                try:
                    consumer.commit()
                except (CommitFailedError, RebalanceInProgressError) as exc:
                    # after a rebalance (ILLEGAL_GENERATION...) or during one: a commit
                    # while the group completes its rebalance is REBALANCE_IN_PROGRESS
                    self.refused_commits.append(str(exc))
        consumer.close()

    async def _aiokafka(self) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.errors import CommitFailedError

        consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=self.kafka.bootstrap_servers,
                                    group_id=self.group, auto_offset_reset="earliest",
                                    enable_auto_commit=False)
        await consumer.start()
        try:
            while not self.stopping.is_set():
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    self.seen += [(r.partition, r.offset, r.value) for r in records]
                if batches:
                    try:
                        await consumer.commit()
                    except CommitFailedError as exc:
                        self.refused_commits.append(str(exc))
        finally:
            await consumer.stop()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)
        assert not self.is_alive(), f"{self.client} member did not stop"
        assert self.error is None, self.error


@pytest.fixture(autouse=True)
def members_stop_after_the_test():
    """A member left polling would stay in its group on the shared real broker."""
    yield
    for member in Member.started:
        member.stopping.set()
    for member in Member.started:
        member.join(timeout=30)
    Member.started.clear()


def wait_until(condition: Callable[[], bool], timeout: float = 30, what: str = "",
               report: Callable[[], str] = str) -> None:
    """Wait for ``condition``; on timeout fail naming ``what``, with ``report()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}; {report()}"
        time.sleep(0.05)


def group_report(kafka, group: str, members: list[Member]) -> Callable[[], str]:
    """The group as the coordinator sees it and each member's failures, for a failure."""
    def report() -> str:
        view = kafka.group(group)
        state = "no group" if view is None else (
            f"{view.state} gen {view.generation_id}, "
            + ", ".join(f"{m.member_id}: {m.assignment}" for m in view.members))
        return f"group {state}; members: " + "; ".join(
            f"alive={m.is_alive()} error={m.error!r} refused commits={m.refused_commits}"
            for m in members)
    return report


def stable_with(kafka, group: str, count: int) -> Callable[[], bool]:
    def check() -> bool:
        view = kafka.group(group)
        return view is not None and view.state in ("Stable", "stable") and \
            len(view.members) == count and all(m.assignment for m in view.members)
    return check


CLIENTS = ["confluent-kafka", "confluent-kafka-kip848", "kafka-python", "aiokafka"]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_a_three_member_group_consumes_every_record_exactly_once(kafka, client):
    members = [Member(kafka, client, "billing") for _ in range(3)]
    for member in members:
        member.start()
    wait_until(stable_with(kafka, "billing", 3), what="a stable 3-member group")
    view = kafka.group("billing")
    owned = sorted(p for m in view.members for p in m.assignment[TOPIC])
    assert owned == list(range(PARTITIONS))  # each partition to exactly one member

    produce(kafka, 300)
    wait_until(lambda: sum(len(m.seen) for m in members) >= 300, what="300 records")
    # Every offset committed by a stable group: nothing is left to deliver, again or anew.
    wait_until(lambda: all(kafka.committed("billing", TOPIC, p) == kafka.offsets(TOPIC, p)[1]
                           for p in range(PARTITIONS)), what="every record committed")
    for member in members:
        member.stop()
    seen = [record for m in members for record in m.seen]
    assert sorted(v for _, _, v in seen) == sorted(f"v{i}".encode() for i in range(300))
    for partition in range(PARTITIONS):
        end = kafka.offsets(TOPIC, partition)[1]
        assert kafka.committed("billing", TOPIC, partition) == end


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.fake_kafka(brokers=3, topics={TOPIC: PARTITIONS})
def test_members_joining_and_leaving_mid_stream_lose_no_record(kafka, client):
    members = [Member(kafka, client, "audit") for _ in range(3)]
    first, second, third = members
    report = group_report(kafka, "audit", members)
    first.start()
    second.start()
    wait_until(stable_with(kafka, "audit", 2), what="a stable 2-member group",
               report=report)
    produce(kafka, 100)
    third.start()  # joins mid-stream
    produce(kafka, 100, start=100)
    wait_until(stable_with(kafka, "audit", 3), what="the third member to be assigned",
               report=report)
    first.stop()  # leaves mid-stream
    produce(kafka, 100, start=200)
    wait_until(stable_with(kafka, "audit", 2), what="the group without the first member",
               report=report)
    wait_until(lambda: {v for m in members for _, _, v in m.seen} >=
               {f"v{i}".encode() for i in range(300)}, what="every record", report=report)
    for member in (second, third):
        member.stop()
    for partition in range(PARTITIONS):
        assert kafka.committed("audit", TOPIC, partition) == \
            kafka.offsets(TOPIC, partition)[1]


@pytest.mark.fake_kafka(brokers=1, topics={"orders-eu": 2, "audit": 1})
def test_a_confluent_regex_subscription_is_resolved_by_the_broker(kafka):
    """librdkafka sends a ``^`` subscription as ConsumerGroupHeartbeat v1's regex
    (group.protocol=consumer); the coordinator assigns the matching topics, then the topics
    created later, from the next heartbeat (5 s heartbeat interval)."""
    from confluent_kafka import Consumer, Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})

    def produce_to(topic: str, prefix: str, count: int) -> set[bytes]:
        for i in range(count):
            producer.produce(topic, value=f"{prefix}{i}".encode())
        assert producer.flush(30) == 0
        return {f"{prefix}{i}".encode() for i in range(count)}

    expected = produce_to("orders-eu", "eu", 20)
    produce_to("audit", "audit", 5)
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "regex",
                         "group.protocol": "consumer", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe(["^orders-.*"])
    seen: list[bytes] = []

    def consume_until(count: int) -> None:
        deadline = time.monotonic() + 30
        while len(seen) < count:
            assert time.monotonic() < deadline, f"{len(seen)} of {count} records"
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                seen.append(message.value())
                consumer.commit(message, asynchronous=False)

    try:
        consume_until(20)
        [member] = kafka.group("regex").members
        assert "^orders-.*" in member.subscribed_regex  # as librdkafka sent it
        kafka.create_topic("orders-us", partitions=2)
        expected |= produce_to("orders-us", "us", 20)
        consume_until(40)
        assert kafka.group("regex").members[0].assignment == {"orders-eu": [0, 1],
                                                                   "orders-us": [0, 1]}
    finally:
        consumer.close()
    assert sorted(seen) == sorted(expected)


def consumer_protocol(kafka, group: str) -> bool:
    """Whether ``group`` is a consumer (KIP-848) group: its members carry epochs."""
    view = kafka.group(group)
    return view is not None and all(m.member_epoch is not None for m in view.members)


@pytest.mark.fake_kafka(brokers=1, topics={TOPIC: PARTITIONS})
def test_a_rolling_upgrade_to_the_consumer_protocol_and_back_loses_no_record(kafka):
    """A 3-member confluent-kafka group moves one member at a time from group.protocol=classic
    to consumer, then back, records flowing all along: the broker upgrades the group online
    when the first consumer-protocol member joins and downgrades it when the last one leaves
    (group.consumer.migration.policy=bidirectional, Kafka's default). Every record is consumed,
    once (again only when its commit was refused by a rebalance), and the offsets committed
    under one protocol are where the other goes on."""
    members = [Member(kafka, "confluent-kafka", "rolling") for _ in range(3)]
    everyone = list(members)  # and each member started later: every record counts
    report = group_report(kafka, "rolling", everyone)
    for member in members:
        member.start()
    wait_until(stable_with(kafka, "rolling", 3), what="a stable classic group", report=report)
    produced = 0
    for to_client, upgraded in (("confluent-kafka-kip848", True), ("confluent-kafka", False)):
        for i in range(3):
            produce(kafka, 50, start=produced)
            produced += 50
            members[i].stop()
            members[i] = Member(kafka, to_client, "rolling")
            everyone.append(members[i])
            members[i].start()
            wait_until(stable_with(kafka, "rolling", 3), what=f"{to_client} member {i}",
                       report=report)
        assert consumer_protocol(kafka, "rolling") == upgraded
    produce(kafka, 50, start=produced)
    produced += 50
    expected = {f"v{i}".encode() for i in range(produced)}
    wait_until(lambda: {v for m in everyone for _, _, v in m.seen} >= expected,
               what="every record", report=report)
    wait_until(lambda: all(kafka.committed("rolling", TOPIC, p) == kafka.offsets(TOPIC, p)[1]
                           for p in range(PARTITIONS)), what="every record committed",
               report=report)
    for member in members:
        member.stop()
    seen = [v for m in everyone for _, _, v in m.seen]
    refused = sum(len(m.refused_commits) for m in everyone)
    assert len(seen) - len(set(seen)) <= refused, report()
