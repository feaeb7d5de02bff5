"""Workloads 2, 3 and 6: produce N 100-byte records, consume them, memory per payload byte.

* produce: one Producer at confluent-kafka's default batching (linger.ms 5, batch.size 1 MB,
  batch.num.messages 10000, acks all) sends N records of 100 bytes to partition 0 of a fresh
  one-partition topic; the time runs from the first ``produce()`` until ``flush()`` returns,
  and every record must be acknowledged. (Not checked with ListOffsets: tansu 0.6 answers a
  stale latest offset for a while after a burst of produces.)
* consume: a Consumer assigns that partition from the beginning and ``consume()``s batches of
  up to 10000 until it has read up to offset N; the time runs from the first record (librdkafka
  waits ~500 ms after ``assign()`` before it even asks for the offset, whatever the broker).
  Twice: with the client's queue back-off removed (``CONSUMER_TUNING``), which measures the
  broker, and at librdkafka's defaults, which measures how often the client pauses; each time
  the client's back-off pauses are counted (``PauseCounter``).
* the broker's CPU time (user + system, psutil) over the produce, per record: unlike records
  per second, which the client's own pace and the machine's load set, it is the broker's cost.
* the client's own pace, the ceiling of the produce figure: the same loop of ``produce()``
  calls with the client's queue made large enough for all N records, so that it never waits
  for an acknowledgement; the time runs from the first ``produce()`` until the last returns
  (then ``flush()``, not timed, checks that every record was acknowledged). The loop's pace,
  not the broker's, sets the produce figure where the two are close.
* memory: the broker process's resident set size after the produce minus before it, divided by
  the payload bytes (N x 100); the whole RSS per payload byte is reported too. "Before" is
  after a warm-up (WARM_UP records produced to a topic of their own), so what a broker loads
  once, on its first Produce (fakebroker imports a request's modules when one first comes),
  counts as the broker's size, not as memory per stored byte.
"""

from __future__ import annotations

import logging
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
# librdkafka's consumer stops fetching a partition for fetch.queue.backoff.ms (1 s) each time
# its local queue holds queued.min.messages (100k records) or queued.max.messages.kbytes
# (64 MiB, ~650k of these records). The Python loop drains the queue at its own pace, so a
# broker that refills it faster pays more pauses: at the defaults the figure ranks the client's
# pace against the broker's, and a faster broker can come out slower. With both limits at
# their maximum the queue never fills (N records are ~100 MB) and the figure is the broker's
# delivery; fetch.wait.max.ms 10 bounds a fetch that finds nothing new.
CONSUMER_TUNING = {"queued.min.messages": 10_000_000, "queued.max.messages.kbytes": 2_097_151,
                   "fetch.wait.max.ms": 10}
TIMEOUT_S = 300.0
WARM_UP = 1000


@dataclass(frozen=True)
class Consumed:
    """One consume run: records read, records per second from the first record on, and how
    many times the client paused fetching because its queue was full."""

    records: int  # all N of them, unless the broker deleted some
    rps: float
    pauses: int


@dataclass(frozen=True)
class Throughput:
    produce_rps: float
    produce_cpu_us: float  # the broker's CPU time over the produce, per record (load-robust)
    enqueue_rps: float  # the client's own pace: produce() calls with its queue never full
    consume: Consumed  # the client's queue back-off removed
    consume_default: Consumed  # at librdkafka's defaults
    rss_per_byte: float  # growth of the broker's RSS over the produce, per payload byte
    total_rss_per_byte: float  # the broker's whole RSS after the produce, per payload byte


# librdkafka's largest queue (queue.buffering.max.messages, .kbytes): N records always fit.
UNBOUNDED_QUEUE = {"queue.buffering.max.messages": 2_147_483_647,
                   "queue.buffering.max.kbytes": 2_147_483_647}


def produce(bootstrap: str, topic: str, count: int, *, enqueue_only: bool = False) -> float:
    """Send ``count`` records; records per second until ``flush()`` returns, or with
    ``enqueue_only`` until the last ``produce()`` returns (the queue holding them all). Raises
    if any was not acknowledged."""
    failed: list[str] = []

    def on_error(error, _message) -> None:  # called for failed deliveries only
        failed.append(str(error))

    producer = Producer({"bootstrap.servers": bootstrap, "on_delivery": on_error,
                         "delivery.report.only.error": True, **QUIET,
                         **(UNBOUNDED_QUEUE if enqueue_only else {})})
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
    enqueued = time.perf_counter() - begin
    left = producer.flush(TIMEOUT_S)
    elapsed = enqueued if enqueue_only else time.perf_counter() - begin
    if left or failed:
        first = failed[0] if failed else "timeout"
        raise KafkaException(f"{left + len(failed)} records not delivered ({first})")
    return count / elapsed


class PauseCounter(logging.Handler):
    """Counts librdkafka's queue back-off pauses in its ``fetch`` debug log: the line
    "Fetch backoff for <fetch.queue.backoff.ms>ms: Local: Queue full", logged each time a
    partition stops fetching because its queue reached queued.min.messages or
    queued.max.messages.kbytes. Nothing else is kept or printed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.pauses = 0
        self.logger = logging.getLogger(unique("fakebroker.bench.rdkafka"))
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Fetch backoff for" in text and "Queue full" in text:
            self.pauses += 1

    def client_config(self) -> dict[str, object]:
        """The consumer settings that send the ``fetch`` debug log here (and every other log
        line of that client, which goes nowhere else)."""
        return {"debug": "fetch", "log_level": 7, "logger": self.logger}

    def detach(self) -> None:
        self.logger.removeHandler(self)


def consume(bootstrap: str, topic: str, count: int, tuning: dict[str, object]) -> Consumed:
    """Read partition 0 from the beginning to offset ``count`` with the consumer settings
    ``tuning`` (beside librdkafka's defaults). Fewer than ``count`` records come back only from
    a broker that deleted some (the librdkafka mock keeps about 5 MB per partition)."""
    counter = PauseCounter()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("bench"),
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         **tuning, **counter.client_config()})
    try:
        return _read(consumer, topic, count, counter)
    finally:
        consumer.close()  # serves the last log lines too
        counter.detach()


def _read(consumer: Consumer, topic: str, count: int, counter: PauseCounter) -> Consumed:
    begin: float | None = None
    got = 0

    def done() -> Consumed:
        return Consumed(got, got / (time.perf_counter() - (begin or 0.0)), counter.pauses)

    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    deadline = time.perf_counter() + TIMEOUT_S
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
                return done()
        if got >= count and begin is not None:
            return done()
        if time.perf_counter() > deadline:
            raise KafkaException(f"consumed {got} of {count} records in {TIMEOUT_S} s")


def run(system: Running, count: int) -> Throughput:
    """Produce ``count`` records on a fresh topic of ``system``, then consume them with the
    back-off removed, then at librdkafka's defaults."""
    topic, warm_up, ceiling = unique("throughput"), unique("warm-up"), unique("ceiling")
    create_topics(system, [topic, warm_up, ceiling])
    produce(system.bootstrap, warm_up, WARM_UP)
    broker = psutil.Process(system.pid)
    rss_before, cpu_before = broker.memory_info().rss, _cpu_seconds(broker)
    produce_rps = produce(system.bootstrap, topic, count)
    rss_after, cpu_after = broker.memory_info().rss, _cpu_seconds(broker)
    tuned = consume(system.bootstrap, topic, count, CONSUMER_TUNING)
    default = consume(system.bootstrap, topic, count, {})
    enqueue_rps = produce(system.bootstrap, ceiling, count, enqueue_only=True)
    payload = count * RECORD_BYTES
    return Throughput(produce_rps, (cpu_after - cpu_before) / count * 1e6, enqueue_rps, tuned,
                      default, (rss_after - rss_before) / payload, rss_after / payload)


def _cpu_seconds(process: psutil.Process) -> float:
    """User + system CPU time of ``process`` and its threads (a JVM's too)."""
    times = process.cpu_times()
    return times.user + times.system
