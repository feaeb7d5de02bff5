"""Legacy message formats (magic 0 and 1) served as Kafka serves them: produce converts records
into the format the topic's log stores, fetch down-converts them for fetchers of an older
format (fakebroker.protocol.conversion, fakebroker.state.message_format).

Kafka 3.9.1 judges what a 3.x broker does (its log always stores magic 2, and it still serves
Produce v0-2 and Fetch v0-3): those tests run one body on the fake emulating 3.9 and on Apache
Kafka 3.9.1 and compare the bytes. Kafka 4.4.0 judges what 4.x kept (``kafka`` fixture, both
brokers). What only releases before 3.0 did (a log that stores magic 0 or 1) no broker here
can show: those tests say so and name the Kafka source they follow.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fakebroker import FakeKafka
from fakebroker.protocol.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.protocol.record_entries import entries
from fakebroker.protocol.records import decode_records, encode_batch, read_batch_headers
from fakebroker.real_cluster import RealCluster
from fakebroker.real_cluster import wait_for as eventually
from fakebroker.wire_client import WireClient
from tests.absent import absent
from tests.bodies import fetch_body, produce_body
from tests.clients.java import INSTALL_HINT, OLD_CLIENT, clients_dir, compile_java

T0 = 1_700_000_000_000
RECORDS = [(b"k%d" % i, b"v%d" % i, [], T0 + i) for i in range(3)]
WITH_HEADERS = [(k, v, [("h", b"x")], ts) for k, v, _, ts in RECORDS]
INVALID_RECORD = error_code("INVALID_RECORD")
UNSUPPORTED_COMPRESSION_TYPE = error_code("UNSUPPORTED_COMPRESSION_TYPE")
Result = TypeVar("Result")


def new_topic(cluster: Any, configs: dict[str, str] | None = None) -> str:
    name = f"legacy-{uuid.uuid4().hex[:10]}"
    cluster.create_topic(name, configs=configs)
    return name


def produce(cluster: Any, topic: str, version: int, records: bytes) -> tuple[int, int, int]:
    """(error code, base offset, log append time) of one Produce at ``version``."""
    with WireClient(cluster.bootstrap_servers.split(",")[0]) as client:
        answer = client.request("Produce", version, produce_body(topic, 0, records))
    partition = answer.responses[0].partition_responses[0]
    return partition.error_code, partition.base_offset, partition.log_append_time_ms


def fetch(cluster: Any, topic: str, version: int, offset: int = 0, max_bytes: int = 1 << 20
          ) -> tuple[int, bytes]:
    """(error code, records bytes) of one Fetch at ``version`` from ``offset``, reading at
    most ``max_bytes`` of the partition."""
    body = fetch_body(topic, 0, offset)
    body["topics"][0]["partitions"][0]["partition_max_bytes"] = max_bytes
    with WireClient(cluster.bootstrap_servers.split(",")[0]) as client:
        answer = client.request("Fetch", version, body)
    partition = answer.responses[0].partitions[0]
    records = partition.records
    return partition.error_code, b"".join(records) if isinstance(records, list) \
        else records or b""


def on_fake_and_kafka_3_9_1(real_kafka_3_9: Any, body: Callable[[Any], Result]) -> Result:
    """``body``'s result on the fake emulating 3.9, which must equal Apache Kafka 3.9.1's."""
    with FakeKafka(kafka_version="3.9") as fake:
        on_fake = body(fake)
    real = RealCluster(real_kafka_3_9.bootstrap_servers)
    try:
        on_real = body(real)
    finally:
        real.close()
    assert on_fake == on_real
    return on_fake


def shapes(data: bytes) -> list[tuple[int, int, list[int]]]:
    """(magic, codec, offsets) of each whole entry of a fetch answer."""
    return [(magic, read_batch_headers(data[start:end])[0].compression,
             [r.offset for r in decode_records(data[start:end])])
            for start, end, magic in entries(data, allow_partial=True)]


# -- produce: records into the log's format ------------------------------------------------


@pytest.mark.real_kafka
def test_legacy_produce_is_stored_as_one_magic_2_batch_per_request_as_on_3_9_1(real_kafka_3_9):
    def body(cluster: Any) -> bytes:
        topic = new_topic(cluster)
        for magic, codec in ((1, NONE), (0, NONE), (1, GZIP), (0, SNAPPY), (1, LZ4)):
            legacy = encode_batch([(k, v, [], ts) for k, v, _, ts in RECORDS], magic=magic,
                                  compression=codec)
            assert produce(cluster, topic, 2, legacy)[0] == 0
        return fetch(cluster, topic, 4)[1]

    stored = on_fake_and_kafka_3_9_1(real_kafka_3_9, body)  # byte for byte
    assert [(h.magic, h.base_offset, h.record_count, h.compression, h.max_timestamp)
            for h in read_batch_headers(stored)] == [
        (2, 0, 3, NONE, T0 + 2), (2, 3, 3, NONE, -1), (2, 6, 3, GZIP, T0 + 2),
        (2, 9, 3, SNAPPY, -1), (2, 12, 3, LZ4, T0 + 2)]
    assert [r.timestamp for r in decode_records(stored)][3:6] == [-1, -1, -1]  # magic 0


@pytest.mark.real_kafka
def test_several_entries_with_a_compressed_one_or_of_mixed_magic_are_invalid_as_on_3_9_1(
        real_kafka_3_9):
    plain = [(k, v, [], ts) for k, v, _, ts in RECORDS]

    def body(cluster: Any) -> list[int]:
        topic = new_topic(cluster)
        return [produce(cluster, topic, 2, records)[0] for records in (
            encode_batch(plain, magic=1, compression=GZIP) * 2,
            encode_batch(plain, magic=1) + encode_batch(plain, magic=1, compression=GZIP),
            encode_batch(plain, magic=0) + encode_batch(plain, magic=1),
            encode_batch(plain, magic=1) + encode_batch(plain, magic=1),
        )]

    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) == [INVALID_RECORD] * 3 + [0]


# -- fetch v0-3: down-conversion ------------------------------------------------------------


@pytest.mark.real_kafka
def test_fetch_v0_to_v3_read_down_converted_records_as_kafka_3_9_1_sends_them(real_kafka_3_9):
    def body(cluster: Any) -> dict[tuple[int, int], bytes]:
        topic = new_topic(cluster)
        produce(cluster, topic, 3, encode_batch(WITH_HEADERS))
        produce(cluster, topic, 3, encode_batch(WITH_HEADERS, compression=GZIP))
        return {(version, offset): fetch(cluster, topic, version, offset)[1]
                for version in range(4) for offset in (0, 1, 4)}

    answers = on_fake_and_kafka_3_9_1(real_kafka_3_9, body)  # byte for byte
    stored = len(encode_batch(WITH_HEADERS)) + len(encode_batch(WITH_HEADERS, compression=GZIP))
    # v0-1 read magic 0, v2-3 magic 1, the codec kept; an uncompressed batch loses the records
    # before the fetch offset, a compressed one goes whole.
    assert shapes(answers[0, 1]) == [(0, NONE, [1]), (0, NONE, [2]), (0, GZIP, [3, 4, 5])]
    assert shapes(answers[3, 4]) == [(1, GZIP, [3, 4, 5])]
    # The answer is as long as the stored read: magic 0 is shorter, so an overflow entry
    # (offset -1, a size past the end) fills it; magic 1 is longer, so it is cut short.
    assert len(answers[0, 0]) == len(answers[3, 0]) == stored
    assert answers[0, 0][185:197].hex() == "ffffffffffffffff0000003d"
    assert shapes(answers[3, 0]) == [(1, NONE, [0]), (1, NONE, [1]), (1, NONE, [2])]
    assert {r.headers for r in decode_records(answers[3, 1])} == {()}
    assert {r.timestamp for r in decode_records(answers[1, 0])} == {-1}
    assert [r.timestamp for r in decode_records(answers[2, 0])] == [T0, T0 + 1, T0 + 2]


@pytest.mark.real_kafka
def test_a_zstd_batch_is_not_down_converted_as_on_3_9_1(real_kafka_3_9):
    def body(cluster: Any) -> list[tuple[int, bytes]]:
        topic = new_topic(cluster)
        produce(cluster, topic, 7, encode_batch(RECORDS))
        produce(cluster, topic, 7, encode_batch(RECORDS, compression=ZSTD))
        return [fetch(cluster, topic, 3, offset) for offset in (0, 3)]

    (after_one, first), (refused, nothing) = on_fake_and_kafka_3_9_1(real_kafka_3_9, body)
    # After a converted batch the zstd one becomes an overflow entry; first in the read, the
    # partition is refused.
    assert after_one == 0 and shapes(first) == [(1, NONE, [0]), (1, NONE, [1]),
                                                (1, NONE, [2])]
    assert (refused, nothing) == (UNSUPPORTED_COMPRESSION_TYPE, b"")


@pytest.mark.real_kafka
def test_a_zstd_batch_costs_the_rest_of_its_128_kib_chunk_as_on_3_9_1(real_kafka_3_9):
    # After the first batch Kafka converts the read in chunks of up to 128 KiB of stored
    # batches (LazyDownConversionRecordsSend); a zstd batch fails its whole chunk, whose
    # place an overflow entry fills, and when more than one such entry is needed the send
    # fails: the broker closes the connection.
    big = [(b"big", bytes(range(256)) * 400, [], T0)]  # 100 KiB, stored uncompressed
    batches = [encode_batch(records, compression=codec) for records, codec in (
        (RECORDS, NONE), (big, NONE), (RECORDS, ZSTD), (RECORDS, NONE), (big * 2, NONE),
        (RECORDS, ZSTD))]

    def body(cluster: Any) -> list[Any]:
        topic = new_topic(cluster)
        for batch in batches:
            assert produce(cluster, topic, 7, batch)[0] == 0
        offsets = [[offset for *_, found in shapes(fetch(cluster, topic, 3, start, limit)[1])
                    for offset in found]
                   for start, limit in ((0, sum(map(len, batches[:3]))), (7, 1 << 20))]
        with pytest.raises(ConnectionError):
            fetch(cluster, topic, 3, 0)
        return offsets

    # From 0: offset 3 went in the failed chunk [3, 4-6]; from 7: [10, 11], over 128 KiB
    # alone, is a chunk of its own, and the zstd batch after it the overflow entry.
    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) == [[0, 1, 2], [7, 8, 9, 10, 11]]


@pytest.mark.real_kafka
def test_log_append_time_is_kept_in_down_converted_records_as_on_3_9_1(real_kafka_3_9):
    plain = [(k, v, [], ts) for k, v, _, ts in RECORDS]

    def body(cluster: Any) -> list[Any]:
        topic = new_topic(cluster, {"message.timestamp.type": "LogAppendTime"})
        times = [produce(cluster, topic, 2, encode_batch(plain, magic=1, compression=codec))[2]
                 for codec in (GZIP, NONE)]
        answers = [fetch(cluster, topic, version)[1] for version in (1, 3)]
        timestamps = [[(r.timestamp, r.timestamp_type) for r in decode_records(data)]
                      for data in answers]
        assert timestamps == [[(-1, 0)] * 6, [(times[0], 1)] * 3 + [(times[1], 1)] * 2]
        return [(shapes(data), len(data)) for data in answers]  # the times differ

    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) == [
        ([(0, GZIP, [0, 1, 2]), (0, NONE, [3]), (0, NONE, [4]), (0, NONE, [5])], 206),
        ([(1, GZIP, [0, 1, 2]), (1, NONE, [3]), (1, NONE, [4])], 206)]


@pytest.mark.real_kafka
def test_a_transaction_marker_first_in_a_down_converted_read_as_on_3_9_1(real_kafka_3_9):
    # Kafka drops control batches from a down-converted read; when the read starts with one,
    # its send re-reads from the second batch after the first converted one, so that batch
    # goes twice (LazyDownConversionRecords, 3.9): clients skip offsets they have.
    from confluent_kafka import Producer

    def body(cluster: Any) -> list[Any]:
        topic = new_topic(cluster)
        config = {"bootstrap.servers": cluster.bootstrap_servers}
        producer = Producer({**config, "transactional.id": topic})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, b"in", partition=0)
        producer.commit_transaction(30)
        eventually(lambda: len(cluster.records(topic, 0, markers=True)) == 2,
                   "the commit marker")
        only_marker = fetch(cluster, topic, 3, 1)[1]
        plain = Producer(config)
        plain.produce(topic, b"a", partition=0)
        plain.produce(topic, b"b", partition=0)
        assert plain.flush(30) == 0
        data = fetch(cluster, topic, 3, 1)[1]
        return [only_marker, [(r.offset, r.value) for r in decode_records(data)], len(data)]

    only_marker, records, size = on_fake_and_kafka_3_9_1(real_kafka_3_9, body)
    assert only_marker.hex() == "ffffffffffffffff0000003d"  # nothing converted: an overflow
    assert records == [(2, b"a"), (3, b"b")] * 2


def old_client_round(cluster: Any, api_version: tuple[int, ...]) -> list[tuple[Any, ...]]:
    """kafka-python speaking as a client of ``api_version`` (0.9: Produce v1 and Fetch v1,
    magic 0; 0.10.1: Produce v2 and Fetch v3, magic 1): four records sent plain, four gzip,
    then all eight read back (offset, key, value, timestamp, timestamp type)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = new_topic(cluster)
    for codec in (None, "gzip"):
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers,
                                 api_version=api_version, compression_type=codec,
                                 linger_ms=50)
        sent = [producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, partition=0,
                              timestamp_ms=T0 + i if api_version >= (0, 10) else None)
                for i in range(4)]
        producer.flush(30)
        assert [future.get(30).partition for future in sent] == [0] * 4
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             api_version=api_version, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0)])
    read: list[tuple[Any, ...]] = []

    def all_read() -> bool:
        for batch in consumer.poll(timeout_ms=500).values():
            read.extend((m.offset, m.key, m.value, m.timestamp, m.timestamp_type) for m in batch)
        return len(read) >= 8

    eventually(all_read, "eight records")
    consumer.close()
    return read


@pytest.mark.real_kafka
@pytest.mark.parametrize("api_version", [(0, 9), (0, 10, 1)], ids=["0.9", "0.10.1"])
def test_an_old_client_produces_and_consumes_as_on_3_9_1(real_kafka_3_9, api_version):
    read = on_fake_and_kafka_3_9_1(real_kafka_3_9,
                                   lambda cluster: old_client_round(cluster, api_version))

    timestamps = [(None, None)] * 4 if api_version < (0, 10) \
        else [(T0 + i, 0) for i in range(4)]
    assert read == [(o, b"k%d" % (o % 4), b"v%d" % (o % 4), *timestamps[o % 4])
                    for o in range(8)]


def test_an_old_client_gets_the_same_from_a_log_of_magic_1():
    """No broker here runs 0.10.2 (a log of magic 1): the answer Kafka's source gives
    (``LogValidator`` and ``KafkaApis.maybeConvertFetchedData``, 2.8.2) is that a client
    reads what it would from 3.x."""
    for api_version in ((0, 9), (0, 10, 1)):
        with FakeKafka(kafka_version="0.10.2") as fake:
            on_0_10 = old_client_round(fake, api_version)
        with FakeKafka(kafka_version="3.9") as fake:
            assert old_client_round(fake, api_version) == on_0_10


OLD_PRODUCE_CONSUME = Path(__file__).resolve().parent / "java" / "OldProduceConsume.java"


def java_0_11_round(cluster: Any, codec: str) -> list[dict[str, Any]]:
    """tests/java/OldProduceConsume.java: the Java client 0.11.0.3 sends four records with
    ``codec`` and reads them back (skipped when that client is not installed, failed under
    CI, which installs it)."""
    folder = clients_dir() / f"java-{OLD_CLIENT}"
    jars = sorted(folder.glob("*.jar"))
    if not (folder / ".stamp").is_file() or shutil.which("javac") is None:
        absent(f"the Java client {OLD_CLIENT} is not installed in {folder}: {INSTALL_HINT}")
    compiled = compile_java(OLD_PRODUCE_CONSUME, jars, folder / "old-produce-consume")
    run = subprocess.run(
        ["java", "-cp", os.pathsep.join(map(str, [compiled, *jars])), "OldProduceConsume",
         cluster.bootstrap_servers.split(",")[0], new_topic(cluster), "4", codec],
        capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-3000:]
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4"])
def test_the_java_0_11_client_round_trips_magic_1_with_a_0_10_2_broker(codec):
    """No broker here runs 0.10.2: the Java client 0.11.0.3 speaks Produce v2 (magic 1) and
    Fetch v3 to it and reads the log of magic 1 as stored (Kafka 2.8.2's ``LogValidator``
    keeps magic-1 entries in place; ``KafkaApis`` converts nothing for Fetch v2+)."""
    with FakeKafka(kafka_version="0.10.2") as fake:
        read = java_0_11_round(fake, codec)

    assert read == [{"offset": i, "key": f"k{i}", "value": f"v{i}", "timestamp": T0 + i,
                     "type": "CreateTime"} for i in range(4)]


# -- message.format.version and compression.type ----------------------------------------------


@pytest.mark.real_kafka
def test_on_3_9_message_format_version_is_taken_described_and_ignored_as_on_3_9_1(
        real_kafka_3_9):
    def body(cluster: Any) -> list[Any]:
        old = new_topic(cluster, {"message.format.version": "0.10.2"})
        plain = new_topic(cluster)
        with pytest.raises(ClusterError) as refused:
            new_topic(cluster, {"message.format.version": "4.0"})
        with WireClient(cluster.bootstrap_servers.split(",")[0]) as client:
            described = client.request("DescribeConfigs", 4, {"resources": [
                {"resource_type": 2, "resource_name": name,
                 "configuration_keys": ["message.format.version"]} for name in (old, plain)],
                "include_synonyms": True, "include_documentation": False})
        produce(cluster, old, 2, encode_batch([(b"k", b"v", [], T0)], magic=1))
        return [[(c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
                 for r in described.results for c in r.configs],
                (refused.value.error, refused.value.message),
                fetch(cluster, old, 4)[1][16], fetch(cluster, old, 2)[1][16]]

    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) == [
        [("0.10.2", 1, [("message.format.version", "0.10.2", 1),
                        ("log.message.format.version", "3.0-IV1", 5)]),
         ("3.0-IV1", 5, [("log.message.format.version", "3.0-IV1", 5)])],
        ("INVALID_CONFIG", "Invalid value 4.0 for configuration message.format.version: "
                           "Version 4.0 is not a valid version"),
        2, 1]  # stored as magic 2 all the same, down-converted for Fetch v2


@pytest.mark.real_kafka
def test_on_3_9_a_topic_without_down_conversion_refuses_old_fetchers_as_3_9_1_does(
        real_kafka_3_9):
    def body(cluster: Any) -> list[Any]:
        topic = new_topic(cluster, {"message.downconversion.enable": "false"})
        with pytest.raises(ClusterError) as refused:
            new_topic(cluster, {"message.downconversion.enable": "maybe"})
        produce(cluster, topic, 3, encode_batch(RECORDS))
        with WireClient(cluster.bootstrap_servers.split(",")[0]) as client:
            described = client.request("DescribeConfigs", 4, {"resources": [
                {"resource_type": 2, "resource_name": topic,
                 "configuration_keys": ["message.downconversion.enable"]}],
                "include_synonyms": True, "include_documentation": False})
        [config] = described.results[0].configs
        return [[fetch(cluster, topic, version, offset)[0]
                 for version, offset in ((1, 0), (3, 0), (3, 5), (4, 0))],
                (config.value, config.config_type,
                 [(s.name, s.value, s.source) for s in config.synonyms]),
                refused.value.message]

    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) == [
        [error_code("UNSUPPORTED_VERSION")] * 3 + [0],  # before OFFSET_OUT_OF_RANGE too
        ("false", 1, [("message.downconversion.enable", "false", 1),
                      ("log.message.downconversion.enable", "true", 5)]),
        "Invalid value maybe for configuration message.downconversion.enable: Expected value "
        "to be either true or false"]


@pytest.mark.real_kafka
def test_on_3_9_a_zstd_topic_refuses_fetch_below_v10_as_3_9_1_does(real_kafka_3_9):
    def body(cluster: Any) -> list[int]:
        topic = new_topic(cluster, {"compression.type": "zstd"})
        produce(cluster, topic, 7, encode_batch(RECORDS))
        return [fetch(cluster, topic, version)[0] for version in (4, 9, 10)]

    assert on_fake_and_kafka_3_9_1(real_kafka_3_9, body) \
        == [UNSUPPORTED_COMPRESSION_TYPE, UNSUPPORTED_COMPRESSION_TYPE, 0]


def test_kafka_4_serves_fetch_below_v10_from_a_zstd_topic(kafka):
    topic = new_topic(kafka, {"compression.type": "zstd"})
    produce(kafka, topic, 7, encode_batch(RECORDS))

    for version in (4, 9):
        error, data = fetch(kafka, topic, version)
        assert error == 0 and shapes(data) == [(2, ZSTD, [0, 1, 2])]


def test_kafka_4_knows_no_message_format_version(kafka):
    with pytest.raises(ClusterError) as refused:
        new_topic(kafka, {"message.format.version": "3.0-IV1"})

    assert (refused.value.error, refused.value.message) \
        == ("INVALID_CONFIG", "Unknown topic config name: message.format.version")


# An uncompressed batch of RECORDS recompressed by a gzip topic, as Kafka 4.4.0 stores it.
GZIP_STORED = bytes.fromhex(
    "0000000000000000000000640000000002401e77c80001000000020000018bcfe568000000018bcfe56802"
    "ffffffffffffffffffffffffffff000000031f8b08000000000000ff1361606060c936602933601061606262"
    "c9366429330432595858b28d58ca8c1800f728062921000000")


def test_a_topics_compression_type_recompresses_what_producers_send(kafka):
    topic = new_topic(kafka, {"compression.type": "gzip"})

    assert produce(kafka, topic, 3, encode_batch(RECORDS))[0] == 0
    assert fetch(kafka, topic, 4)[1] == GZIP_STORED  # byte for byte: Java's gzip


# -- releases before 3.0: logs of magic 0 and 1 (judged by Kafka's source) ---------------------


def test_before_0_11_the_log_stores_magic_1_and_fetch_v0_1_down_convert_to_magic_0():
    """No broker here runs 0.10.x: this follows Kafka's source (2.8.2, whose rules for a log
    of magic 1 are 0.10's): ``kafka.log.LogValidator`` keeps magic-1 entries in place and
    rebuilds magic-0 ones as magic 1 (``convertAndAssignOffsetsNonCompressed``), and
    ``KafkaApis.maybeConvertFetchedData`` down-converts for Fetch v0-1 only."""
    plain = [(k, v, [], ts) for k, v, _, ts in RECORDS]
    wrapped = encode_batch(plain, magic=1, compression=GZIP)
    with FakeKafka(kafka_version="0.10.2") as fake:
        topic = new_topic(fake)
        assert produce(fake, topic, 2, wrapped)[:2] == (0, 0)
        assert produce(fake, topic, 2, encode_batch(plain, magic=0))[:2] == (0, 3)
        _, as_stored = fetch(fake, topic, 2)
        _, for_v1 = fetch(fake, topic, 1)

    assert as_stored[:len(wrapped)][8:] == wrapped[8:]  # the wrapper in place: offset 2
    assert shapes(as_stored) == [(1, GZIP, [0, 1, 2]), (1, NONE, [3]), (1, NONE, [4]),
                                 (1, NONE, [5])]
    assert [r.timestamp for r in decode_records(as_stored)] == [T0, T0 + 1, T0 + 2, -1, -1, -1]
    assert shapes(for_v1) == [(0, GZIP, [0, 1, 2]), (0, NONE, [3]), (0, NONE, [4]),
                              (0, NONE, [5])]


def test_before_3_0_a_topics_message_format_version_chooses_its_logs_magic():
    """No broker here runs 2.8: this follows Kafka 2.8.2's source. ``LogConfig`` takes
    ``message.format.version`` (``ApiVersionValidator``: a version that release knows, default
    its newest, ``2.8-IV1``); ``LogValidator`` rebuilds a magic-2 batch as magic 1 for a log of
    0.10.x, refusing idempotent or transactional records (``validateBatch``:
    UNSUPPORTED_FOR_MESSAGE_FORMAT) and, through ``MemoryRecordsBuilder``, headers
    (IllegalArgumentException: UNKNOWN_SERVER_ERROR); a fetch of a newer version reads the
    stored magic 1, and a log of 0.9.0 stores magic 0, which no fetch up-converts and
    ``Log.fetchOffsetByTimestamp`` cannot search by time (UNSUPPORTED_FOR_MESSAGE_FORMAT)."""
    with FakeKafka(kafka_version="2.8") as fake:
        old = new_topic(fake, {"message.format.version": "0.10.2"})
        oldest = new_topic(fake, {"message.format.version": "0.9.0"})
        current = new_topic(fake)
        with pytest.raises(ClusterError) as refused:
            new_topic(fake, {"message.format.version": "3.0"})
        results = [produce(fake, old, 3, encode_batch(RECORDS))[0],
                    produce(fake, old, 3, encode_batch(RECORDS, producer_id=7, producer_epoch=0,
                                                       base_sequence=0))[0],
                    produce(fake, old, 3, encode_batch(WITH_HEADERS))[0],
                    produce(fake, oldest, 3, encode_batch(RECORDS, compression=GZIP))[0]]
        _, from_old = fetch(fake, old, 4)
        _, from_oldest = fetch(fake, oldest, 4)
        _, from_current = fetch(fake, current, 4)
        with WireClient(fake.bootstrap_servers) as client:
            by_time = [client.request("ListOffsets", 1, {"replica_id": -1, "topics": [
                {"name": name, "partitions": [{"partition_index": 0, "timestamp": T0}]}]}
            ).topics[0].partitions[0].error_code for name in (oldest, old)]
        with WireClient(fake.bootstrap_servers) as client:
            described = client.request("DescribeConfigs", 1, {"resources": [
                {"resource_type": 2, "resource_name": current,
                 "configuration_keys": ["message.format.version"]}],
                "include_synonyms": False})

    assert results == [0, error_code("UNSUPPORTED_FOR_MESSAGE_FORMAT"),
                       error_code("UNKNOWN_SERVER_ERROR"), 0]
    assert shapes(from_old) == [(1, NONE, [0]), (1, NONE, [1]), (1, NONE, [2])]
    assert shapes(from_oldest) == [(0, GZIP, [0, 1, 2])]
    assert by_time == [error_code("UNSUPPORTED_FOR_MESSAGE_FORMAT"), 0]  # magic 0: no times
    assert {r.timestamp for r in decode_records(from_oldest)} == {-1}
    assert from_current == b""
    assert [c.value for c in described.results[0].configs] == ["2.8-IV1"]
    assert refused.value.message == ("Invalid value 3.0 for configuration "
                                     "message.format.version: Version `3.0` is not a valid "
                                     "version")
