"""The client matrix's four rounds for the Python clients (tests/matrix/): kafka-python, aiokafka
and confluent-kafka (librdkafka; also Debian's python3-confluent-kafka on librdkafka 2.0.2).

    python python_rounds.py CLIENT ROUND BOOTSTRAP TOPIC GROUP

A program of its own, importing only its client (it runs under Debian's system Python too).
Prints one JSON line: {"outcome": "pass"} or {"outcome": "<exception's class name>",
"message": ...}; what each round does is in tests/matrix/rounds.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

RECORDS = 6
PER_PARTITION = 2  # in the group round's three partitions
# Kafka answers CreateTopics before its broker's metadata holds the topic: a describe at once
# may meet UNKNOWN_TOPIC_OR_PARTITION a moment longer; the admin rounds describe until it shows.
UNKNOWN_TOPIC = 3
DEADLINE_S = 60.0


class Failed(Exception):
    """The round ran without a client error but not to its end (records missing...)."""


def expected() -> list[bytes]:
    return [b"v%d" % i for i in range(RECORDS)]


# -- kafka-python ------------------------------------------------------------------------------


def kafka_python(round_: str, bootstrap: str, topic: str, group: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

    if round_ == "produce":
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        try:
            for i in range(RECORDS):
                producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=0).get(timeout=20)
        finally:
            producer.close()
    elif round_ == "assign-consume":
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        try:
            partition = TopicPartition(topic, 0)
            consumer.assign([partition])
            consumer.seek_to_beginning(partition)
            values: list[bytes] = []
            deadline = time.monotonic() + DEADLINE_S
            while len(values) < RECORDS and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    values.extend(r.value for r in records)
            check_values(values)
        finally:
            consumer.close()
    elif round_ == "group":
        # Each member polls on a thread of its own: a member's poll blocks in its join.
        members = [KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                 auto_offset_reset="earliest", enable_auto_commit=False,
                                 session_timeout_ms=10000, heartbeat_interval_ms=500)
                   for _ in range(3)]
        for member in members:  # kafka-python 3.0.12's lost rejoin: tests/clients/consumers.py
            member.partitions_for_topic(topic)
        done, committed, close = threading.Event(), threading.Barrier(4), threading.Event()
        read: set[tuple[int, int]] = set()
        held: list[set] = [set(), set(), set()]  # a member's partition once read to its end
        failures: list[Exception] = []

        def member_loop(index: int) -> None:
            member = members[index]
            try:
                while not done.is_set():
                    for records in member.poll(timeout_ms=100).values():
                        read.update((r.partition, r.offset) for r in records)
                    held[index] = at_end(member.assignment(), member.position)
                member.commit()
            except Exception as error:  # noqa: BLE001 - handed to the round
                failures.append(error)
            finally:
                # Every member commits before any leaves: a leave starts a rebalance, in
                # which a commit may be refused.
                committed.wait(30)
                close.wait(30)
                member.close()

        threads = [threading.Thread(target=member_loop, args=(i,), daemon=True)
                   for i in range(3)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + DEADLINE_S
        try:
            while not (len(read) >= RECORDS and spread(held)) and not failures:
                if time.monotonic() > deadline:
                    raise Failed(f"read {len(read)} of {RECORDS}; assignments {held}")
                time.sleep(0.05)
        finally:
            done.set()
            committed.wait(30)
            close.set()
            for thread in threads:
                thread.join(30)
        if failures:
            raise failures[0]
        check_count(len(read))
    elif round_ == "admin":
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic(topic, 2, 1)])
            described = admin.describe_topics([topic])
            deadline = time.monotonic() + DEADLINE_S
            while described[0]["error_code"] == UNKNOWN_TOPIC and time.monotonic() < deadline:
                time.sleep(0.1)  # see UNKNOWN_TOPIC
                described = admin.describe_topics([topic])
            check_partitions(len(described[0]["partitions"]))
            admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            admin.delete_topics([topic])
        finally:
            admin.close()
    else:
        raise ValueError(round_)


# -- aiokafka ----------------------------------------------------------------------------------


def aiokafka(round_: str, bootstrap: str, topic: str, group: str) -> None:
    asyncio.run(aiokafka_round(round_, bootstrap, topic, group))


async def aiokafka_round(round_: str, bootstrap: str, topic: str, group: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    if round_ == "produce":
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            for i in range(RECORDS):
                await producer.send_and_wait(topic, b"v%d" % i, key=b"k%d" % i, partition=0)
        finally:
            await producer.stop()
    elif round_ == "assign-consume":
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            partition = TopicPartition(topic, 0)
            consumer.assign([partition])
            await consumer.seek_to_beginning(partition)
            values: list[bytes] = []
            deadline = time.monotonic() + DEADLINE_S
            while len(values) < RECORDS and time.monotonic() < deadline:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    values.extend(r.value for r in records)
            check_values(values)
        finally:
            await consumer.stop()
    elif round_ == "group":
        members = [AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    session_timeout_ms=10000, heartbeat_interval_ms=500)
                   for _ in range(3)]
        started = []
        try:
            for member in members:
                await member.start()
                started.append(member)
            read: set[tuple[int, int]] = set()
            deadline = time.monotonic() + DEADLINE_S
            held: list[set] = [set(), set(), set()]  # a member's partition once read to its end
            while not (len(read) >= RECORDS and spread(held)):
                if time.monotonic() > deadline:
                    raise Failed(f"read {len(read)} of {RECORDS}; assignments "
                                 f"{[sorted(m.assignment()) for m in members]}")
                for index, member in enumerate(members):
                    assignment = member.assignment()
                    positions = [await member.position(p) for p in assignment]
                    held[index] = assignment if len(assignment) == 1 and all(
                        position >= PER_PARTITION for position in positions) else set()
                    for records in (await member.getmany(timeout_ms=100)).values():
                        read.update((r.partition, r.offset) for r in records)
            check_count(len(read))
            for member in members:
                await member.commit()
        finally:
            for member in started:
                await member.stop()
    elif round_ == "admin":
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 2, 1)])
            described = await admin.describe_topics([topic])
            deadline = time.monotonic() + DEADLINE_S
            while described[0]["error_code"] == UNKNOWN_TOPIC and time.monotonic() < deadline:
                await asyncio.sleep(0.1)  # see UNKNOWN_TOPIC
                described = await admin.describe_topics([topic])
            check_partitions(len(described[0]["partitions"]))
            await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            await admin.delete_topics([topic])
        finally:
            await admin.close()
    else:
        raise ValueError(round_)


# -- confluent-kafka (librdkafka) --------------------------------------------------------------


def confluent_kafka(round_: str, bootstrap: str, topic: str, group: str) -> None:
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    def raise_for(error) -> None:
        if error is not None:
            raise KafkaException(error)

    if round_ == "produce":
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                             "message.timeout.ms": 60000})
        errors: list = []
        for i in range(RECORDS):
            producer.produce(topic, b"v%d" % i, key=b"k%d" % i, partition=0,
                             on_delivery=lambda error, _: errors.append(error))
        if producer.flush(90) != 0:
            raise Failed("records still queued after 90 s")
        for error in errors:
            raise_for(error)
    elif round_ == "assign-consume":
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                             "enable.auto.commit": False})
        try:
            consumer.assign([TopicPartition(topic, 0, -2)])  # OFFSET_BEGINNING
            values: list[bytes] = []
            deadline = time.monotonic() + DEADLINE_S
            while len(values) < RECORDS and time.monotonic() < deadline:
                for message in consumer.consume(RECORDS, timeout=0.2):
                    raise_for(message.error())
                    values.append(message.value())
            check_values(values)
        finally:
            consumer.close()
    elif round_ == "group":
        members = [Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             "session.timeout.ms": 10000, "heartbeat.interval.ms": 500})
                   for _ in range(3)]
        try:
            for member in members:
                member.subscribe([topic])
            read: set[tuple[int, int]] = set()
            deadline = time.monotonic() + DEADLINE_S
            held: list[set] = [set(), set(), set()]  # a member's partition once read to its end
            while not (len(read) >= RECORDS and spread(held)):
                if time.monotonic() > deadline:
                    raise Failed(f"read {len(read)} of {RECORDS}; assignments "
                                 f"{[[p.partition for p in m.assignment()] for m in members]}")
                for index, member in enumerate(members):
                    assignment = member.assignment()
                    held[index] = {p.partition for p in assignment} if len(assignment) == 1 \
                        and member.position(assignment)[0].offset >= PER_PARTITION else set()
                    for message in member.consume(RECORDS, timeout=0.1):
                        raise_for(message.error())
                        read.add((message.partition(), message.offset()))
            check_count(len(read))
            for member in members:
                member.commit(asynchronous=False)
        finally:
            for member in members:
                member.close()
    elif round_ == "admin":
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(20)
        deadline = time.monotonic() + DEADLINE_S
        listed = admin.list_topics(topic, timeout=10).topics[topic]
        while listed.error is not None and time.monotonic() < deadline:
            listed = admin.list_topics(topic, timeout=10).topics[topic]
        raise_for(listed.error)
        check_partitions(len(listed.partitions))
        for future in admin.describe_configs([ConfigResource("topic", topic)]).values():
            future.result(20)
        admin.delete_topics([topic])[topic].result(20)
    else:
        raise ValueError(round_)


# -- shared checks -----------------------------------------------------------------------------


def check_values(values: list[bytes]) -> None:
    if values != expected():
        raise Failed(f"read {values}")


def check_count(read: int) -> None:
    if read != RECORDS:
        raise Failed(f"read {read} records, not {RECORDS}")


def check_partitions(count: int) -> None:
    if count != 2:
        raise Failed(f"described {count} partitions")


def at_end(assignment: set, position) -> set:
    """A member's assignment when it is one partition read to its end, else nothing."""
    return assignment if len(assignment) == 1 and all(
        position(p) >= PER_PARTITION for p in assignment) else set()


def spread(held: list[set]) -> bool:
    """Each member holds one partition read to its end, and together the topic's three."""
    return all(len(h) == 1 for h in held) and len(set().union(*held)) == 3


CLIENTS = {"kafka-python": kafka_python, "aiokafka": aiokafka,
           "confluent-kafka": confluent_kafka}


def main() -> None:
    client, round_, bootstrap, topic, group = sys.argv[1:6]
    try:
        CLIENTS[client](round_, bootstrap, topic, group)
        print(json.dumps({"outcome": "pass"}), flush=True)
    except Exception as error:  # noqa: BLE001 - the outcome is the error's class
        print(json.dumps({"outcome": named(error), "message": str(error)[:500]}), flush=True)


def named(error: Exception) -> str:
    """The exception's class name; librdkafka's one exception class by its error's name."""
    code = error.args[0] if error.args else None
    if type(error).__name__ == "KafkaException" and hasattr(code, "name"):
        return f"KafkaException.{code.name()}"
    return type(error).__name__


if __name__ == "__main__":
    main()
