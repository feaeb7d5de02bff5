"""Workloads 2, 3 and 6: produce N 100-byte records, consume them, memory per payload byte.

* produce: one Producer at confluent-kafka's default batching (linger.ms 5, batch.size 1 MB,
  batch.num.messages 10000, acks all) sends N records of 100 bytes to partition 0 of a fresh
  one-partition topic; the time runs from the first ``produce()`` until ``flush()`` returns,
  and every record must be acknowledged. (Not checked with ListOffsets: tansu 0.6 answers a
  stale latest offset for a while after a burst of produces.)
* consume: a Consumer assigns that partition from the beginning and ``consume()``s batches of
  up to 10000 until it has read up to offset N; the time runs from the first record (librdkafka
  waits ~500 ms after ``assign()`` before it even asks for the offset, whatever the broker).
  One setting differs from the defaults, ``fetch.queue.backoff.ms`` 0 (see CONSUMER_TUNING).
* memory: the broker process's resident set size after the produce minus before it, divided by
  the payload bytes (N x 100); the whole RSS per payload byte is reported too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from fakebroker.bench.clients import QUIET, create_topics, unique
from fakebroker.bench.systems import Running

RECORD_BYTES = 100
# librdkafka pauses fetching for fetch.queue.backoff.ms (1 s) whenever its local queue holds
# queued.min.messages (100k): a Python loop drains slower than any broker fills it, so at the
# defaults every broker measures the same ~130k records/s. Without the pause the figure is
# the broker's.
CONSUMER_TUNING = {"fetch.queue.backoff.ms": 0}
TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Throughput:
    produce_rps: float
    consumed: int  # records the consumer got: all of them, unless the broker deleted some
    consume_rps: float
    rss_per_byte: float  # growth of the broker's RSS over the produce, per payload byte
    total_rss_per_byte: float  # the broker's whole RSS after the produce, per payload byte


def produce(bootstrap: str, topic: str, count: int) -> float:
    """Send ``count`` records; records per second. Raises if any was not acknowledged."""
    failed: list[str] = []

    def on_error(error, _message) -> None:  # called for failed deliveries only
        failed.append(str(error))

    producer = Producer({"bootstrap.servers": bootstrap, "on_delivery": on_error,
                         "delivery.report.only.error": True, **QUIET})
    value = b"x" * RECORD_BYTES
    send = producer.produce
    begin = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                send(topic, value, partition=0)
                break
            except BufferError:  # the client's queue is full: let it drain
                producer.poll(0.001)
    left = producer.flush(TIMEOUT_S)
    elapsed = time.perf_counter() - begin
    if left or failed:
        first = failed[0] if failed else "timeout"
        raise KafkaException(f"{left + len(failed)} records not delivered ({first})")
    return count / elapsed


def consume(bootstrap: str, topic: str, count: int) -> tuple[int, float]:
    """Read partition 0 from the beginning to offset ``count``: (records read, records per
    second from the first record on). Fewer than ``count`` records come back only from a
    broker that deleted some (the librdkafka mock keeps about 5 MB per partition)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("bench"),
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         **CONSUMER_TUNING, **QUIET})
    try:
        got = 0
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.perf_counter() + TIMEOUT_S
        begin: float | None = None
        while True:
            messages = consumer.consume(10000, timeout=1.0)
            if begin is None and messages:
                begin = time.perf_counter()
            for message in messages:
                error = message.error()
                if error is None:
                    got += 1
                elif error.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(error)
                elif message.offset() >= count:  # nothing left to read
                    return got, got / (time.perf_counter() - (begin or 0.0))
            if got >= count and begin is not None:
                return got, got / (time.perf_counter() - begin)
            if time.perf_counter() > deadline:
                raise KafkaException(f"consumed {got} of {count} records in {TIMEOUT_S} s")
    finally:
        consumer.close()


def run(system: Running, count: int) -> Throughput:
    """Produce then consume ``count`` records on a fresh topic of ``system``."""
    topic = unique("throughput")
    create_topics(system, [topic])
    broker = psutil.Process(system.pid)
    rss_before = broker.memory_info().rss
    produce_rps = produce(system.bootstrap, topic, count)
    rss_after = broker.memory_info().rss
    consumed, consume_rps = consume(system.bootstrap, topic, count)
    payload = count * RECORD_BYTES
    return Throughput(produce_rps, consumed, consume_rps, (rss_after - rss_before) / payload,
                      rss_after / payload)
