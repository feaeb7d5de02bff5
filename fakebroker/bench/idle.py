"""Workload 7: CPU of an idle broker while 50 consumers long-poll empty partitions.

50 confluent-kafka consumers (this process) each assign partition 0 of its own empty topic at
the end and poll; the client's defaults make every one of them send a Fetch with
``fetch.wait.max.ms`` = 500, which the broker holds until it expires, again and again. After a
settling period the broker process's CPU time (user + system, psutil) over a window, divided by
the window, is the share of one core it uses while idle.
"""

from __future__ import annotations

import threading
import time

import psutil
from confluent_kafka import OFFSET_END, Consumer, TopicPartition

from fakebroker.bench.clients import QUIET, create_topics, unique
from fakebroker.bench.systems import Running

CONSUMERS = 50


def _poll(consumer: Consumer, stop: threading.Event) -> None:
    while not stop.is_set():
        consumer.poll(0.2)


def run(system: Running, settle_s: float, window_s: float) -> float:
    """Percent of one core the broker used over ``window_s`` seconds of idle long polls."""
    topics = [unique("idle") for _ in range(CONSUMERS)]
    create_topics(system, topics)
    consumers = [Consumer({"bootstrap.servers": system.bootstrap, "group.id": unique("idle"),
                           "enable.auto.commit": False, **QUIET}) for _ in topics]
    stop = threading.Event()
    threads = []
    try:
        for consumer, topic in zip(consumers, topics, strict=True):
            consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
            threads.append(threading.Thread(target=_poll, args=(consumer, stop), daemon=True))
            threads[-1].start()
        time.sleep(settle_s)
        broker = psutil.Process(system.pid)
        before = broker.cpu_times()
        begin = time.perf_counter()
        time.sleep(window_s)
        after = broker.cpu_times()
        wall = time.perf_counter() - begin
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for consumer in consumers:
            consumer.close()
    used = (after.user - before.user) + (after.system - before.system)
    return 100 * used / wall
