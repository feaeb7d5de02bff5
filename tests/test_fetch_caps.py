"""What bounds a Fetch answer beside the request's own max_bytes, as Apache Kafka 4.4's
``KafkaApis.handleFetchRequest`` bounds it: the broker's ``fetch.max.bytes`` and what the
consumer's ``consumer_byte_rate`` allows in one quota window (the quota times 10 s). The
answer's records fill the least of the three (the last batch cut short, as Kafka reads a byte
range of its log), the first batch whole all the same, and min_bytes is bounded by it too.
Run on both brokers with ``--kafka=both``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, produce_body
from tests.quotas import a_name, alter, described, quota_free_client

EXACT = 0
RECORDS = batch([b"x" * 1000])  # one batch of 1,071 bytes


@pytest.fixture
def admin(kafka: Any) -> Iterator[WireClient]:
    """A wire client of the broker with no quota set while the test runs."""
    yield from quota_free_client(kafka)


def produced(client: WireClient, topic: str, records: bytes, count: int) -> None:
    for _ in range(count):
        (answer,) = client.request("Produce", 9, produce_body(topic, 0, records)).responses
        assert answer.partition_responses[0].error_code == 0


def consumer_quota(admin: WireClient, client_id: str, rate: float) -> None:
    assert alter(admin, [((("client-id", client_id),), {"consumer_byte_rate": rate})]) == [
        ((("client-id", client_id),), "NONE", None)]
    described(admin, [("client-id", EXACT, client_id)],
              {frozenset({("client-id", client_id)}): {"consumer_byte_rate": rate}})


def first_fetch(kafka: Any, topic: str, client_id: str, max_bytes: int = 1 << 20) -> Any:
    with WireClient(kafka.bootstrap_servers, client_id=client_id) as consumer:
        return consumer.request("Fetch", 12, dict(fetch_body(topic, 0, 0), max_bytes=max_bytes))


@pytest.mark.parametrize(("rate", "least", "most"), [(150.0, 1, 1000), (100.0, 700, 2500)])
def test_a_consumers_fetch_reads_what_its_quota_allows_in_ten_seconds(
        kafka: Any, admin: WireClient, rate: float, least: int, most: int) -> None:
    """Three batches of 1,071 bytes. 150 B/s allows 1,500 bytes a window: the fetch reads
    1,500 bytes (a batch and the head of the next), which with the answer's own bytes is just
    over the quota: throttled for well under a second (all three batches would call for ~12
    s). 100 B/s allows 1,000 bytes, less than the first batch, which is read whole all the
    same (as beyond max_bytes, KIP-74): ~1 s. A throttled answer carries no data."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    produced(admin, app, RECORDS, 3)
    consumer_quota(admin, app, rate)
    answer = first_fetch(kafka, app, app)
    assert least <= answer.throttle_time_ms <= most, answer.throttle_time_ms
    assert answer.responses == []


def test_a_fetch_asking_less_than_the_quota_window_gets_what_it_asks(
        kafka: Any, admin: WireClient) -> None:
    """max_bytes 1,200 under a 1,500-byte window: the first batch and 129 bytes of the next
    (clients drop a batch cut short), within the quota: not throttled."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    produced(admin, app, RECORDS, 3)
    consumer_quota(admin, app, 150.0)
    answer = first_fetch(kafka, app, app, max_bytes=1200)
    assert answer.throttle_time_ms == 0
    assert len(answer.responses[0].partitions[0].records) == 1200


def test_another_client_id_is_not_held_to_the_quota(kafka: Any, admin: WireClient) -> None:
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    produced(admin, app, RECORDS, 3)
    consumer_quota(admin, app, 150.0)
    answer = first_fetch(kafka, app, a_name("other"))
    assert len(answer.responses[0].partitions[0].records) == 3 * len(RECORDS)


fetch_max_1024 = pytest.mark.fake_kafka(topics={"small": 1, "large": 1},
                                        overrides={"fetch.max.bytes": "1024"})


@fetch_max_1024
def test_fetch_max_bytes_bounds_every_answer_but_its_first_batch(kafka: Any) -> None:
    """Batches of 671 bytes: 1,024 bytes, the second cut short; of 1,071: the first whole."""
    small = batch([b"x" * 600])
    with WireClient(kafka.bootstrap_servers) as client:
        produced(client, "small", small, 3)
        produced(client, "large", RECORDS, 2)
        answers = [client.request("Fetch", 12, fetch_body(topic, 0, 0))
                   for topic in ("small", "large")]
    assert [len(a.responses[0].partitions[0].records) for a in answers] == [1024, len(RECORDS)]


@fetch_max_1024
def test_fetch_max_bytes_bounds_min_bytes(kafka: Any) -> None:
    """min_bytes of 1 MB is 1,024 bytes here: one batch of ~1,070 answers at once, not after
    max_wait_ms."""
    with WireClient(kafka.bootstrap_servers, timeout=30) as client:
        produced(client, "large", RECORDS, 1)
        body = dict(fetch_body("large", 0, 0), min_bytes=1 << 20, max_wait_ms=10_000)
        started = time.monotonic()
        answer = client.request("Fetch", 12, body)
        waited = time.monotonic() - started
    assert len(answer.responses[0].partitions[0].records) == len(RECORDS)
    assert waited < 5, waited


@fetch_max_1024
def test_fetch_max_bytes_is_a_read_only_static_config(kafka: Any) -> None:
    with WireClient(kafka.bootstrap_servers) as client:
        (broker,) = client.request("Metadata", 12, {
            "topics": [], "allow_auto_topic_creation": False}).brokers
        (result,) = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 4, "resource_name": str(broker.node_id),
             "configuration_keys": ["fetch.max.bytes"]}],
            "include_synonyms": False, "include_documentation": False}).results
    [(name, value, source, read_only)] = [(c.name, c.value, c.config_source, c.read_only)
                                          for c in result.configs]
    assert (name, value, source, read_only) == ("fetch.max.bytes", "1024", 4, True)


@pytest.mark.fake_kafka(topics={"pair": 2})
@pytest.mark.parametrize(("max_bytes", "partition_max_bytes", "sizes"), [
    (1500, 1 << 20, [1500, 0]),  # the first partition fills the answer, the second gets none
    (1 << 20, 1200, [1200, 1200]),  # each partition fills its own limit
    (2500, 1200, [1200, 1200]),  # and the second its share of what is left: 1,300 > 1,200
    (2000, 1200, [1200, 0]),  # 800 left, less than the second's first batch: none of it
])
@pytest.mark.parametrize("isolation_level", [0, 1])
def test_partitions_share_the_answers_bytes_in_order(
        kafka: Any, max_bytes: int, partition_max_bytes: int, sizes: list[int],
        isolation_level: int) -> None:
    """Two partitions of two 1,071-byte batches: a partition reads within its own limit and
    what the answer has left; a batch is cut short only after a whole one (a partition whose
    first batch does not fit gets nothing, as Kafka drops an incomplete first entry); the
    same read_committed, below the last stable offset."""
    with WireClient(kafka.bootstrap_servers) as client:
        for partition in (0, 1):
            for _ in range(2):
                client.request("Produce", 9, produce_body("pair", partition, RECORDS))
        body = dict(fetch_body("pair", 0, 0), max_bytes=max_bytes,
                    isolation_level=isolation_level)
        body["topics"][0]["partitions"] = [
            {"partition": p, "fetch_offset": 0, "partition_max_bytes": partition_max_bytes}
            for p in (0, 1)]
        (topic,) = client.request("Fetch", 12, body).responses
    assert [len(p.records or b"") for p in topic.partitions] == sizes


def session_fetch(client: WireClient, topic: str, session_id: int, epoch: int,
                  offset: int | None) -> Any:
    """A Fetch v12 of ``topic``-0 in session ``session_id`` at ``epoch``: naming the
    partition at ``offset``, or (None) naming nothing, the session's entry standing."""
    named = [] if offset is None else fetch_body(topic, 0, offset)["topics"]
    return client.request("Fetch", 12, dict(fetch_body(topic, 0, 0), topics=named,
                                            session_id=session_id, session_epoch=epoch,
                                            forgotten_topics_data=[]))


def test_a_throttled_incremental_fetch_leaves_its_session_untold(
        kafka: Any, admin: WireClient) -> None:
    """A session opened on an empty partition was told its high watermark, 0. A batch is
    appended; the next incremental fetch reads it, over a quota of 100 B/s: throttled, no
    partitions, as Kafka's ``getThrottledResponse``, which updates nothing in the session.
    So once the throttle is over, a fetch from past the batch (no records to read) is still
    answered the partition: its high watermark, 1, was never told."""
    app = a_name("app")
    kafka.create_topic(app, partitions=1)
    with WireClient(kafka.bootstrap_servers, client_id=app) as consumer:
        opened = session_fetch(consumer, app, 0, 0, 0)
        assert (opened.error_code, opened.responses[0].partitions[0].high_watermark) == (0, 0)
        consumer_quota(admin, app, 100.0)
        produced(admin, app, RECORDS, 1)
        throttled = session_fetch(consumer, app, opened.session_id, 1, None)
        assert (throttled.error_code, throttled.session_id, throttled.responses) == (
            0, opened.session_id, [])
        assert throttled.throttle_time_ms > 0
        time.sleep(throttled.throttle_time_ms / 1000)
        told = session_fetch(consumer, app, opened.session_id, 2, 1)
    assert told.throttle_time_ms == 0
    assert [(p.partition_index, p.high_watermark, len(p.records or b""))
            for t in told.responses for p in t.partitions] == [(0, 1, 0)]
