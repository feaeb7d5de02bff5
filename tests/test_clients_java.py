"""The Apache Kafka Java client, for real, in a JVM: its default idempotent producer, a
group-less consumer, a consumer group, Spark's read pattern and the AdminClient, against the
fake cluster over TCP. By default the 3.9.1 client (the line Spark's connector uses); the
round trip and the group test run on both 3.9.1 and 4.4.0 (the ``java_client`` fixture). They
run on the fake and on Apache Kafka (``--kafka=both``)."""

from __future__ import annotations

import time

import pytest

from tests.clients.java import HarnessError, run_harness, start_harness
from tests.test_wire_versions import metadata

pytestmark = pytest.mark.java

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def produce(kafka, topic: str, count: int, *props: str,
            client_version: str | None = None) -> list[dict]:
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", topic,
                        "--count", str(count), "--headers", *props,
                        client_version=client_version)
    assert lines[-1] == {"done": count}
    return lines[:-1]


def records_of(lines: list[dict]) -> list[dict]:
    return [line for line in lines if "offset" in line and "value" in line]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.fake_kafka(topics={"orders": 3})
def test_java_idempotent_producer_and_consumer_see_every_record_once(kafka, codec,
                                                                     java_client):
    acks = produce(kafka, "orders", 200, f"compression.type={codec}",
                   client_version=java_client)
    lines = run_harness("consume", "--bootstrap", kafka.bootstrap_servers,
                        "--topic", "orders", client_version=java_client)
    assert lines[-1] == {"done": 200}
    consumed = records_of(lines)
    assert sorted((r["partition"], r["offset"]) for r in consumed) == sorted(
        (a["partition"], a["offset"]) for a in acks)
    assert sorted(r["value"] for r in consumed) == sorted(f"v{i}" for i in range(200))
    for record in consumed:
        i = record["value"][1:]
        assert record["key"] == f"k{i}" and record["headers"] == [["h", i]]
    stored = {(p, r.offset): r for p in range(3) for r in kafka.records("orders", p)}
    for record in consumed:
        match = stored[(record["partition"], record["offset"])]
        assert match.timestamp == record["timestamp"] and match.value == record["value"].encode()
        assert match.producer_id >= 0  # the default producer is idempotent


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
@pytest.mark.fake_kafka(brokers=3, topics={"orders": 4})
def test_java_group_members_share_the_partitions_and_commit_every_record_once(
        kafka, java_client, protocol):
    """Two members of one group (group.protocol classic or consumer) split the partitions,
    read every record once and commit each partition's end offset."""
    members = [start_harness("group-consume", "--bootstrap", kafka.bootstrap_servers,
                             "--topic", "orders", "--group", "ledger", "--protocol", protocol,
                             "--idle-exit-ms", "60000", client_version=java_client)
               for _ in range(2)]
    try:
        deadline = time.monotonic() + 60
        while True:  # until both members own partitions: the group is settled
            view = kafka.group("ledger")
            owned = sorted(p for m in (view.members if view else [])
                           for p in m.assignment.get("orders", []))
            if view is not None and len(view.members) == 2 and owned == [0, 1, 2, 3] and \
                    all(m.assignment.get("orders") for m in view.members):
                break
            assert time.monotonic() < deadline, f"group not settled: {view}"
            time.sleep(0.1)
        produce(kafka, "orders", 200, client_version=java_client)
        while sum(len(m.records()) for m in members) < 200:
            assert time.monotonic() < deadline + 30, [m.stderr_tail() for m in members]
            time.sleep(0.1)
    finally:
        for member in members:
            member.stop()
    assert all(m.records() for m in members)  # both had partitions with records
    values = sorted(r["value"] for m in members for r in m.records())
    assert values == sorted(f"v{i}" for i in range(200))
    for partition in range(4):
        assert kafka.committed("ledger", "orders", partition) == \
            kafka.offsets("orders", partition)[1]


@pytest.mark.fake_kafka(brokers=3, topics={"events": 6})
def test_java_reads_the_way_spark_does_micro_batch_after_micro_batch(kafka):
    """Spark's Kafka source: per micro-batch the driver lists earliest and latest offsets,
    the executors assign + seek + poll each partition's [start, end) without a group; records
    produced between micro-batches land in the next one, each record exactly once."""
    produce(kafka, "events", 120)
    with start_harness("spark-read", "--bootstrap", kafka.bootstrap_servers,
                       "--topic", "events", "--batches", "3") as reader:
        reader.wait_for({"batch": 0, "records": 120})
        produce(kafka, "events", 60)
        reader.proc.stdin.write(b"next\n")
        reader.proc.stdin.flush()
        reader.wait_for({"batch": 1, "records": 60})
        reader.proc.stdin.write(b"next\n")
        reader.proc.stdin.flush()
        lines = reader.wait(timeout=30)
    assert reader.returncode == 0 and lines[-1] == {"done": 180}

    ranges = [line for line in lines if "start" in line]
    assert len(ranges) == 3 * 6
    final = {p: kafka.offsets("events", p) for p in range(6)}
    for line in ranges:
        assert line["earliest"] == 0 and line["end"] == line["latest"]
        assert line["start"] == (0 if line["batch"] == 0 else previous_end(ranges, line))
    assert {line["partition"]: line["end"] for line in ranges if line["batch"] == 2} == {
        p: high for p, (_, high) in final.items()}
    assert [line["records"] for line in lines if "records" in line] == [120, 60, 0]

    read = [(r["partition"], r["offset"]) for r in records_of(lines)]
    stored = [(p, r.offset) for p in range(6) for r in kafka.records("events", p)]
    assert sorted(read) == stored


def previous_end(ranges: list[dict], line: dict) -> int:
    (before,) = [x["end"] for x in ranges
                 if x["batch"] == line["batch"] - 1 and x["partition"] == line["partition"]]
    return before


@pytest.mark.fake_kafka(brokers=3)
def test_java_admin_creates_describes_lists_and_deletes(kafka):
    bootstrap = ("--bootstrap", kafka.bootstrap_servers)
    brokers = sorted(b.id for b in kafka.brokers)  # three fake brokers, one real one
    (created,) = run_harness("admin-create-topic", *bootstrap, "--topic", "audit",
                             "--partitions", "4", "--replication", str(len(brokers)),
                             "--config", "retention.ms=1000")
    assert (created["partitions"], created["replication"]) == (4, len(brokers))

    (described,) = run_harness("admin-describe-topic", *bootstrap, "--topic", "audit")
    assert len(described["partitions"]) == 4
    assert described["topicId"] != "AAAAAAAAAAAAAAAAAAAAAA"
    assert sorted({p["leader"] for p in described["partitions"]}) == brokers
    assert all(sorted(p["replicas"]) == brokers for p in described["partitions"])

    configs = {c["name"]: c for c in run_harness("admin-describe-configs", *bootstrap,
                                                 "--topic", "audit") if "name" in c}
    assert configs["retention.ms"]["value"] == "1000"
    assert configs["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["cleanup.policy"]["value"] == "delete"
    assert configs["cleanup.policy"]["isDefault"]

    produce(kafka, "audit", 40)
    latest = run_harness("admin-list-offsets", *bootstrap, "--topic", "audit",
                         "--spec", "latest")
    assert {o["partition"]: o["offset"] for o in latest} == {
        p: kafka.offsets("audit", p)[1] for p in range(4)}
    earliest = run_harness("admin-list-offsets", *bootstrap, "--topic", "audit",
                           "--spec", "earliest")
    assert {o["offset"] for o in earliest} == {0}
    busiest = max(range(4), key=lambda p: kafka.offsets("audit", p)[1])
    newest = run_harness("admin-list-offsets", *bootstrap, "--topic", "audit",
                         "--partition", str(busiest), "--spec", "max-timestamp")
    stored = kafka.records("audit", busiest)
    top = max(r.timestamp for r in stored)
    assert newest[0]["offset"] == next(r.offset for r in stored if r.timestamp == top)

    (deleted,) = run_harness("admin-delete-records", *bootstrap, "--topic", "audit",
                             "--partition", str(busiest), "--before", "3")
    assert deleted["lowWatermark"] == 3 == kafka.offsets("audit", busiest)[0]

    (cluster,) = run_harness("admin-describe-cluster", *bootstrap)
    assert cluster["clusterId"] == metadata(kafka).cluster_id
    assert sorted(n["id"] for n in cluster["nodes"]) == brokers


@pytest.mark.fake_kafka(topics={"orders": 1})
def test_java_admin_surfaces_kafkas_named_errors(kafka):
    with pytest.raises(HarnessError) as exists:
        run_harness("admin-create-topic", "--bootstrap", kafka.bootstrap_servers,
                    "--topic", "orders", "--partitions", "1", "--replication", "1")
    assert exists.value.error_obj["error"] == "TopicExistsException"
    with pytest.raises(HarnessError) as factor:
        run_harness("admin-create-topic", "--bootstrap", kafka.bootstrap_servers,
                    "--topic", "wide", "--partitions", "1", "--replication", "3")
    assert factor.value.error_obj["error"] == "InvalidReplicationFactorException"
