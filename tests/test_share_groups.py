"""Share groups (KIP-932, Kafka's queues) with Kafka 4.4's own ``KafkaShareConsumer``, on the
fake and on Apache Kafka 4.4 (``--kafka=both``): records acquired, acknowledged (ACCEPT,
RELEASE, REJECT), redelivered with their delivery count, archived at the delivery limit,
shared by several consumers of one partition, and redelivered to another member when a
lock runs out.

Each test sets ``share.auto.offset.reset=earliest`` on its group first (IncrementalAlterConfigs
on the GROUP resource), so records produced before the consumers start are delivered.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile

import pytest

from fakebroker.wire_client import WireClient
from tests.clients.java import run_harness
from tests.clients.process import wait_until
from tests.clients.share import share_consumer_available, start_share_consumer

pytestmark = [
    pytest.mark.skipif(not share_consumer_available(), reason="kafka-clients 4.4.0 not installed"),
    pytest.mark.timeout(180),
]
TOPIC = "jobs"
GROUP_RESOURCE = 32
_groups = itertools.count()


def set_group_configs(kafka, group: str, **configs: str) -> None:
    """IncrementalAlterConfigs SET on the group (names with dots: pass ``{"a.b": v}``)."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": group,
            "configs": [{"name": k, "config_operation": 0, "value": v}
                        for k, v in configs.items()]}], "validate_only": False})
    assert [(r.error_code, r.error_message) for r in response.responses] == [(0, None)]


def new_group(kafka, **configs: str) -> str:
    """A fresh share group reading from the earliest offset, with ``configs`` set."""
    group = f"share-{next(_groups)}"
    set_group_configs(kafka, group, **{"share.auto.offset.reset": "earliest", **configs})
    return group


def produce(kafka, values: list[str]) -> None:
    """One record per value, in order (Kafka's Java producer)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("\n".join(values) + "\n")
        f.flush()
        lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", TOPIC,
                            "--values-file", f.name)
    assert lines[-1] == {"done": len(values)}


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_implicit_acknowledgement_delivers_every_record_once(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, [f"v{i}" for i in range(10)])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group) as member:
        wait_until(lambda: len(member.records()) >= 10, timeout=60, what="10 records")
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert sorted(r["value"] for r in records) == sorted(f"v{i}" for i in range(10))
    assert {r["deliveryCount"] for r in records} == {1}


def deliveries(records: list[dict], value: str) -> list[int]:
    return [r["deliveryCount"] for r in records if r["value"] == value]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_explicit_release_redelivers_and_reject_never_again(kafka) -> None:
    group = new_group(kafka)
    produce(kafka, ["a", "b", "c"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit", release=["b"], reject=["c"]) as member:
        member.wait_for({"value": "b", "deliveryCount": 2}, timeout=60)
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert deliveries(records, "a") == [1]
    assert deliveries(records, "c") == [1]  # rejected: never delivered again
    # released every time: delivered again with a count one higher, until archived
    assert deliveries(records, "b")[:2] == [1, 2]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_a_record_released_until_the_delivery_limit_is_archived(kafka) -> None:
    group = new_group(kafka, **{"share.delivery.count.limit": "3"})
    produce(kafka, ["poison", "ok"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              mode="explicit", release=["poison"]) as member:
        member.wait_for({"value": "poison", "deliveryCount": 3}, timeout=60)
        produce(kafka, ["after"])
        member.wait_for({"value": "after"}, timeout=60)
        lines = member.stop()
    records = [line for line in lines if "offset" in line]
    assert deliveries(records, "poison") == [1, 2, 3]
    assert deliveries(records, "ok") == [1]


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_three_consumers_share_one_partition_each_record_processed_once(kafka) -> None:
    group = new_group(kafka)
    values = [f"v{i}" for i in range(300)]
    with contextlib.ExitStack() as stack:
        members = [stack.enter_context(start_share_consumer(
            kafka.bootstrap_servers, topic=TOPIC, group=group, mode="explicit"))
            for _ in range(3)]
        produce(kafka, values)
        wait_until(lambda: sum(len(m.records()) for m in members) >= len(values), timeout=90,
                   members=members, what="every record processed")
        lines = [line for m in members for line in m.stop()]
    records = [line for line in lines if "offset" in line]
    assert sorted(r["value"] for r in records) == sorted(values)
    assert {r["deliveryCount"] for r in records} == {1}


@pytest.mark.fake_kafka(topics={TOPIC: 1})
def test_an_expired_lock_redelivers_the_record_to_another_member(kafka) -> None:
    group = new_group(kafka, **{"share.record.lock.duration.ms": "15000"})
    produce(kafka, ["stuck"])
    with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                              hold=["stuck"]) as first:
        first.wait_for({"event": "held"}, timeout=60)
        with start_share_consumer(kafka.bootstrap_servers, topic=TOPIC, group=group,
                                  mode="explicit") as second:
            line = second.wait_for({"value": "stuck"}, timeout=60)
            second.stop()
        first.kill()
    assert line["deliveryCount"] == 2


@pytest.mark.fake_kafka(overrides={"group.share.min.record.lock.duration.ms": "20000"})
def test_the_brokers_share_limits_bound_a_groups_share_configs(kafka) -> None:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": "bounded", "configs": [
                {"name": "share.record.lock.duration.ms", "config_operation": 0,
                 "value": "15000"}]}], "validate_only": True})
    assert [(r.error_code, r.error_message) for r in response.responses] == [(
        40, "share.record.lock.duration.ms must be in the range 20000 to 60000 inclusive.")]
