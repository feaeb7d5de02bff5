"""Share groups (KIP-932, Kafka's queues) with Kafka 4.4's own ``KafkaShareConsumer``, on the
fake and on Apache Kafka 4.4 (``--kafka=both``): records acquired, acknowledged (ACCEPT,
RELEASE, REJECT), redelivered with their delivery count, archived at the delivery limit,
shared by several consumers of one partition, and redelivered to another member when a
lock runs out.

Each test sets ``share.auto.offset.reset=earliest`` on its group first (IncrementalAlterConfigs
on the GROUP resource), so records produced before the consumers start are delivered.
"""

from __future__ import annotations

import itertools

import pytest

from tests.clients.java import run_harness
from tests.clients.process import wait_until
from tests.clients.share import share_consumer_available, start_share_consumer
from tests.wire import WireClient

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
    path_values = "\n".join(values) + "\n"
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(path_values)
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
