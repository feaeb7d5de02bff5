"""A confluent-kafka consumer joining a full group: what its application sees, with the classic
protocol (group.max.size) and with KIP-848 (group.consumer.max.size). It runs on the fake and on
Apache Kafka (``--kafka=both``) started with the same overrides."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fakebroker.wire_client import WireClient
from tests.test_wire_group_max_size import consumers, full_group
from tests.test_wire_groups import coordinator

pytestmark = pytest.mark.fake_kafka(
    topics={"orders": 2}, overrides={"group.max.size": "2", "group.consumer.max.size": "2"})


def first_error(kafka, protocol: str):
    """The first error a consumer of group g polls, within 20 s."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "g",
                         "group.protocol": protocol})
    try:
        consumer.subscribe(["orders"])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                return message.error()
        raise AssertionError("no error polled")
    finally:
        consumer.close()


def test_a_classic_consumer_of_a_full_group_polls_group_max_size_reached(kafka):
    from confluent_kafka import KafkaError

    address = coordinator(kafka)
    with WireClient(address) as a, WireClient(address) as b, ThreadPoolExecutor(1) as pool:
        full_group(kafka, a, b, pool)
        error = first_error(kafka, "classic")
    assert error.code() == KafkaError.GROUP_MAX_SIZE_REACHED
    assert "JoinGroup failed" in error.str()


def test_a_kip848_consumer_of_a_full_group_fails_fatally(kafka):
    from confluent_kafka import KafkaError

    with WireClient(coordinator(kafka)) as client:
        consumers(kafka, client, None, None)
        error = first_error(kafka, "consumer")
    assert error.code() == KafkaError._FATAL
    assert "ConsumerGroupHeartbeat fatal error: Broker: Consumer group has reached maximum " \
        "size" in error.str()
