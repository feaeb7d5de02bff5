"""The cookbook: each failure the seed documents describe, scripted against the fake broker,
with real consumers (confluent-kafka, kafka-python, Java) recovering and no record lost.

The documentation's cookbook (docs/how-to/cookbook.md) shows these tests as they are
(tests/test_docs.py checks it).
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.clients.consumers import CLIENTS, read_committed, start_consumer
from tests.clients.java import DEFAULT_CLIENT_VERSION, compile_harness
from tests.clients.producers import (
    TRANSACTIONAL_CLIENTS,
    TransactionalProducer,
    TransactionFailed,
    commit_offset,
    produce,
)

pytestmark = pytest.mark.timeout(180)
# How often the coordinator aborts the transactions past their timeout (Kafka: 10 s).
SCAN = "transaction.abort.timed.out.transaction.cleanup.interval.ms"


@pytest.fixture(params=CLIENTS)
def client(request) -> str:
    if request.param == "java":
        compile_harness()  # fails (not skips) when the Java client is not installed
    return request.param


@pytest.fixture(params=TRANSACTIONAL_CLIENTS)
def txn_client(request) -> str:
    if request.param == "java":
        compile_harness()  # fails (not skips) when the Java client is not installed
    return request.param


# What each client calls a producer fenced by a newer epoch of its transactional id.
FENCED = {"confluent-kafka": "_FENCED", "kafka-python": "ProducerFencedError",
          "java": "ProducerFencedException"}


def too_late(client: str) -> str:
    """What a client calls its commit after the timeout's abort: fenced (the abort bumped the
    epoch), but under transactions v2 (the Java 4.x client; EndTxn v5) Kafka takes the old
    epoch for a retry of the abort's end, and a commit of it is INVALID_TXN_STATE."""
    if client == "java" and not DEFAULT_CLIENT_VERSION.startswith("3."):
        return "InvalidTxnStateException"
    return FENCED[client]


def values(count: int, start: int = 0) -> list[bytes]:
    return [f"v{i}".encode() for i in range(start, start + count)]


def wait_until(condition, timeout: float = 15):
    """The first truthy value of ``condition()`` within ``timeout`` seconds (else the last)."""
    deadline = time.monotonic() + timeout
    while not (result := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return result


def refusal(call) -> TransactionFailed | None:
    """Call ``call()``: how it was refused, or None."""
    try:
        call()
    except TransactionFailed as refused:
        return refused
    return None


def consumed_values(consumed) -> list[bytes]:
    return sorted((value for _, _, value in consumed), key=lambda v: int(v[1:]))


# cookbook: leader moved
@pytest.mark.fake_kafka(brokers=2, topics={"orders": 3})
def test_consumers_follow_a_moved_leader(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(30))
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "leader-moved")
    consumer.wait_for(10)
    fake_kafka.move_leader("orders", 0)  # epoch bump; the old leader refuses from now on
    refused = fake_kafka.faults.add(api="Fetch", topic="orders", partition=1,
                                    error="NOT_LEADER_OR_FOLLOWER", count=2)
    produce(fake_kafka.bootstrap_servers, "orders", values(30, start=30))
    consumed = consumer.wait_for(60)
    refused.wait(2, timeout=30)  # the consumer kept fetching through both refusals
    consumer.stop()
    assert consumed_values(consumed) == values(60)  # every record, exactly once
    assert fake_kafka.journal(api="Fetch", error="NOT_LEADER_OR_FOLLOWER")


# cookbook: offset out of range
@pytest.mark.fake_kafka(topics={"orders": 1})
def test_consumers_reset_when_their_offset_was_deleted(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(10))
    commit_offset(fake_kafka.bootstrap_servers, "out-of-range", "orders", 0, 3)
    fake_kafka.delete_records("orders", 0, before=6)  # the committed offset 3 is gone
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "out-of-range")
    consumer.wait_for(4)  # auto.offset.reset=earliest: from the new log start, 6
    produce(fake_kafka.bootstrap_servers, "orders", values(5, start=10))
    consumed = consumer.wait_for(9)
    assert wait_until(lambda: fake_kafka.committed("out-of-range", "orders", 0) == 15)
    consumer.stop()
    assert consumed_values(consumed) == values(9, start=6)
    assert fake_kafka.journal(api="Fetch", error="OFFSET_OUT_OF_RANGE")


# cookbook: coordinator moved
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 3})
def test_consumers_find_a_moved_coordinator(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(30))
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "moving",
                              **{"heartbeat.interval.ms": 500})
    consumer.wait_for(10)
    fake_kafka.move_coordinator("moving")
    produce(fake_kafka.bootstrap_servers, "orders", values(30, start=30))
    consumed = consumer.wait_for_values(values(60))
    consumer.stop()
    assert set(consumed_values(consumed)) == set(values(60))  # none lost
    assert fake_kafka.journal(error="NOT_COORDINATOR")
    assert sum(fake_kafka.committed("moving", "orders", p) or 0 for p in range(3)) == 60


# cookbook: rebalance during heartbeat
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_consumers_rejoin_when_a_heartbeat_says_rebalance(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(30))
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "rebalancing",
                              **{"heartbeat.interval.ms": 500})
    consumer.wait_for(10)
    assert wait_until(lambda: fake_kafka.group("rebalancing").state == "Stable")
    generation = fake_kafka.group("rebalancing").generation_id
    fake_kafka.rebalance("rebalancing")  # the coordinator starts a rebalance, and
    told = fake_kafka.faults.add(api="Heartbeat", group="rebalancing",  # a heartbeat says so
                                 error="REBALANCE_IN_PROGRESS")
    produce(fake_kafka.bootstrap_servers, "orders", values(30, start=30))
    consumed = consumer.wait_for_values(values(60))
    told.wait(1, timeout=15)
    rejoined = wait_until(lambda: fake_kafka.journal(api="JoinGroup")[-1].seq > fake_kafka.journal(
        api="Heartbeat", error="REBALANCE_IN_PROGRESS")[0].seq)
    consumer.stop()
    assert set(consumed_values(consumed)) == set(values(60))
    assert rejoined and fake_kafka.group("rebalancing").generation_id > generation


# cookbook: ILLEGAL_GENERATION on commit
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_a_commit_refused_for_an_old_generation_loses_nothing(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(30))
    refused = fake_kafka.faults.add(api="OffsetCommit", group="stale",
                                    error="ILLEGAL_GENERATION", after=1)
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "stale")
    consumer.wait_for_values(values(30))
    produce(fake_kafka.bootstrap_servers, "orders", values(30, start=30))
    consumed = consumer.wait_for_values(values(60))
    committed = wait_until(  # records after the refused commit are read and committed again
        lambda: sum(fake_kafka.committed("stale", "orders", p) or 0 for p in range(3)) == 60)
    consumer.stop()
    assert refused.hits == 1
    assert consumer.commit_errors()  # the application saw its commit fail...
    assert set(consumed_values(consumed)) == set(values(60)) and committed  # ...lost nothing


# cookbook: request timeout
@pytest.mark.fake_kafka(topics={"orders": 1})
def test_a_fetch_that_never_answers_times_out_and_is_retried(fake_kafka, client):
    produce(fake_kafka.bootstrap_servers, "orders", values(10))
    hung = fake_kafka.faults.add(api="Fetch", hang=True, after=1)
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "patient",
                              **{"request.timeout.ms": 5000})
    hung.wait(1, timeout=60)
    produce(fake_kafka.bootstrap_servers, "orders", values(10, start=10))
    consumed = consumer.wait_for(20, timeout=90)
    consumer.stop()
    assert consumed_values(consumed) == values(20)
    assert [e.outcome for e in fake_kafka.journal(api="Fetch", faulted=True)] == ["hung"]


# cookbook: lost ack
@pytest.mark.fake_kafka(topics={"orders": 1})
def test_an_idempotent_producer_survives_a_lost_ack_without_duplicates(fake_kafka, client):
    lost = fake_kafka.faults.add(api="Produce", drop=True, apply_then=True)
    produce(fake_kafka.bootstrap_servers, "orders", values(20), client=client)
    assert lost.hits == 1  # one batch was appended, then its connection dropped
    assert [r.value for r in fake_kafka.records("orders", 0)] == values(20)
    consumer = start_consumer(client, fake_kafka.bootstrap_servers, "orders", "after-lost-ack")
    assert consumed_values(consumer.wait_for(20)) == values(20)
    consumer.stop()


# cookbook: transaction coordinator moved
@pytest.mark.fake_only("moves the transaction coordinator to another broker")
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 2})
def test_a_transaction_follows_its_moved_coordinator(kafka, txn_client):
    producer = TransactionalProducer(txn_client, kafka.bootstrap_servers, "mover")
    producer.begin()
    producer.send("orders", values(10))
    kafka.move_coordinator("mover")  # the old coordinator answers NOT_COORDINATOR now
    producer.send("orders", values(10, start=10))
    producer.commit()  # finds the new coordinator, and commits there
    producer.close()
    assert kafka.journal(error="NOT_COORDINATOR")
    assert kafka.transactions()["mover"].state == "CompleteCommit"
    assert sorted(read_committed(kafka.bootstrap_servers, "orders", 20),
                  key=lambda v: int(v[1:])) == values(20)  # each committed record once


# cookbook: EndTxn answer lost
@pytest.mark.fake_only("drops EndTxn's answer")
@pytest.mark.fake_kafka(topics={"orders": 2})
def test_a_commit_whose_answer_is_lost_is_retried_and_applied_once(kafka, txn_client):
    lost = kafka.faults.add(api="EndTxn", transactional_id="ledger", apply_then=True,
                            drop=True)
    producer = TransactionalProducer(txn_client, kafka.bootstrap_servers, "ledger")
    producer.begin()
    producer.send("orders", values(10))
    producer.commit()  # committed, its answer lost; the retry is told it succeeded
    producer.begin()
    producer.send("orders", values(10, start=10))
    producer.commit()
    producer.close()
    assert lost.hits == 1 and len(kafka.journal(api="EndTxn")) == 3
    stored = [r for p in range(2) for r in kafka.records("orders", p)]
    assert sorted((r.value for r in stored), key=lambda v: int(v[1:])) == values(20)
    assert {r.transaction for r in stored} == {"committed"}  # in the log once, committed
    assert sorted(read_committed(kafka.bootstrap_servers, "orders", 20),
                  key=lambda v: int(v[1:])) == values(20)


# cookbook: zombie fenced
@pytest.mark.fake_kafka(topics={"orders": 2})
def test_a_second_instance_fences_the_zombie(kafka, txn_client):
    zombie = TransactionalProducer(txn_client, kafka.bootstrap_servers, "payments")
    zombie.begin()
    zombie.send("orders", values(5))  # in the log, its transaction open
    successor = TransactionalProducer(txn_client, kafka.bootstrap_servers, "payments")
    successor.begin()  # its InitProducerId aborted the zombie's transaction, epoch bumped
    successor.send("orders", values(10, start=5))
    successor.commit()
    with pytest.raises(TransactionFailed) as refused:
        zombie.commit()
    assert refused.value.name == FENCED[txn_client] and refused.value.fatal
    zombie.close()
    successor.close()
    assert sorted(read_committed(kafka.bootstrap_servers, "orders", 10),
                  key=lambda v: int(v[1:])) == values(10, start=5)  # none of the zombie's
    outcomes = [r.transaction for p in range(2) for r in kafka.records("orders", p)]
    assert sorted(outcomes) == ["aborted"] * 5 + ["committed"] * 10


# cookbook: transaction timed out
@pytest.mark.fake_kafka(topics={"orders": 2}, overrides={SCAN: "2000"})
def test_a_transaction_past_its_timeout_is_aborted(kafka, txn_client):
    producer = TransactionalProducer(txn_client, kafka.bootstrap_servers, "slowpoke",
                                     **{"transaction.timeout.ms": 3000})
    producer.begin()
    producer.send("orders", values(5))
    assert wait_until(lambda: kafka.transactions()["slowpoke"].state == "CompleteAbort",
                      timeout=30)  # the coordinator looks every 2 s (default 10 s)
    with pytest.raises(TransactionFailed) as refused:
        producer.commit()  # the abort bumped the epoch first: this producer is fenced
    assert refused.value.name == too_late(txn_client) and refused.value.fatal
    producer.close()
    assert read_committed(kafka.bootstrap_servers, "orders", 0) == []
    assert [r.transaction for p in range(2) for r in kafka.records("orders", p)] == [
        "aborted"] * 5


# cookbook: commit races the timeout
@pytest.mark.fake_only("holds EndTxn until the timeout fired")
# Scans every 1 ms: librdkafka retries the held EndTxn transaction.timeout.ms after sending it,
# just after the deadline, and the abort must come first.
@pytest.mark.fake_kafka(topics={"orders": 2}, overrides={SCAN: "1"})
def test_a_commit_that_loses_the_race_with_the_timeout_is_fenced(kafka, txn_client):
    held = kafka.faults.add(api="EndTxn", transactional_id="racer", hold=True)
    producer = TransactionalProducer(txn_client, kafka.bootstrap_servers, "racer",
                                     **{"transaction.timeout.ms": 3000})
    producer.begin()
    producer.send("orders", values(5))
    refusals: list[TransactionFailed | None] = []
    committing = threading.Thread(target=lambda: refusals.append(refusal(producer.commit)))
    committing.start()
    held.wait(1, timeout=30)  # the commit is on its way, parked at the coordinator
    assert wait_until(lambda: kafka.transactions()["racer"].state == "CompleteAbort")
    held.release()  # the commit arrives after the timeout's abort bumped the epoch
    committing.join(60)
    assert refusals[0] is not None and refusals[0].name == too_late(txn_client)
    late = kafka.journal(api="EndTxn")[-1]  # as Kafka answers each EndTxn version:
    assert list(late.errors) == ["INVALID_PRODUCER_EPOCH" if late.version < 2  # KIP-588
                                 else "PRODUCER_FENCED" if late.version < 5 else
                                 "INVALID_TXN_STATE"]  # v5: transactions v2 (KIP-890)
    producer.close()
    assert read_committed(kafka.bootstrap_servers, "orders", 0) == []
    assert [r.transaction for p in range(2) for r in kafka.records("orders", p)] == [
        "aborted"] * 5
