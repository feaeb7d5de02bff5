"""Log compaction as Apache Kafka 4.4's cleaner does it (``cleanup.policy=compact``): the
latest record of each key in the cleaned part only (the active segment untouched), offsets
keeping their numbers with gaps, the log start staying; tombstones kept for
``delete.retention.ms`` and removed by a later cleaning, one after a later write. Each record
here is stamped a second after the one before and ``segment.ms`` is 500 ms, so every record
rolls a segment of its own (Kafka rolls by record timestamps). The cleaner idles 100 ms
between looks (``log.cleaner.backoff.ms``, the marker's overrides, shared with
tests/test_retention.py). Run on both brokers with ``--kafka=both``."""

from __future__ import annotations

import time
from typing import Any

from fakebroker.protocol.errors import ErrorCode
from fakebroker.protocol.records import encode_batch
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.bodies import produce_body
from tests.test_retention import retention_checked

COMPACTED = {"cleanup.policy": "compact", "segment.ms": "500",
             "min.cleanable.dirty.ratio": "0.01"}


class Writer:
    """Appends one keyed record a batch, each stamped a second after the last."""

    def __init__(self, kafka: Any, topic: str) -> None:
        self.kafka, self.topic = kafka, topic
        self.timestamp = time.time_ns() // 1_000_000 - 600_000  # ten minutes ago

    def __call__(self, key: bytes, value: bytes | None) -> int:
        self.timestamp += 1000
        with WireClient(self.kafka.bootstrap_servers.split(",")[0]) as client:
            records = encode_batch([(key, value, [], self.timestamp)])
            answer = client.request("Produce", 9, produce_body(self.topic, 0, records))
        (partition,) = answer.responses[0].partition_responses
        assert partition.error_code == 0, ErrorCode(partition.error_code).name
        return partition.base_offset


def stored(kafka: Any, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for r in kafka.records(topic, 0)]


def becomes(kafka: Any, topic: str, expected: list[tuple[int, bytes | None, bytes | None]]
            ) -> None:
    wait_for(lambda: stored(kafka, topic) == expected, f"{topic} to hold {expected}")


@retention_checked
def test_the_cleaned_part_keeps_the_latest_record_of_each_key(kafka: Any) -> None:
    """k1 and k2 twice each, then k1 again in the active segment: the cleaned part keeps
    k1@2 and k2@3 (k1@4, in the active segment, does not count: it is not cleaned); the
    log start stays 0 and the offsets keep their numbers."""
    kafka.create_topic("table", configs=COMPACTED)
    write = Writer(kafka, "table")
    for key, value in ((b"k1", b"a"), (b"k2", b"b"), (b"k1", b"c"), (b"k2", b"d"),
                       (b"k1", b"e")):
        write(key, value)
    becomes(kafka, "table", [(2, b"k1", b"c"), (3, b"k2", b"d"), (4, b"k1", b"e")])
    assert kafka.offsets("table", 0) == (0, 5)


@retention_checked
def test_a_tombstone_stays_until_a_cleaning_after_its_delete_retention(kafka: Any) -> None:
    """A tombstone's first cleaning keeps it (and sets its batch's delete horizon: now plus
    delete.retention.ms, here 0); nothing is dirty after it, so it stays until a later write
    makes the log dirty again: the next cleaning removes it."""
    kafka.create_topic("table", configs=dict(COMPACTED, **{"delete.retention.ms": "0"}))
    write = Writer(kafka, "table")
    write(b"a", b"1")
    write(b"a", None)
    write(b"b", b"2")
    becomes(kafka, "table", [(1, b"a", None), (2, b"b", b"2")])
    write(b"c", b"3")
    becomes(kafka, "table", [(2, b"b", b"2"), (3, b"c", b"3")])
    assert kafka.offsets("table", 0) == (0, 4)
