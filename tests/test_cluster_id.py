"""The cluster id, as Kafka makes one: a random ``Uuid`` in its ``toString`` form (22
characters of URL-safe base64), fresh for every cluster unless ``cluster_id`` sets it; the
same in every answer that names it (Metadata, DescribeCluster, what clients report).
"""

from __future__ import annotations

import re

import pytest
from confluent_kafka.admin import AdminClient

from fakebroker import FakeKafka
from fakebroker.wire_client import WireClient
from tests.bodies import DESCRIBE_CLUSTER

KAFKA_UUID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}")


def answered_ids(bootstrap_servers: str) -> tuple[str, str]:
    """The cluster id of a Metadata answer and of a DescribeCluster answer."""
    with WireClient(bootstrap_servers.split(",")[0]) as client:
        metadata = client.request("Metadata", 12, {"topics": None,
                                                   "allow_auto_topic_creation": False})
        described = client.request("DescribeCluster", 1, DESCRIBE_CLUSTER)
    return metadata.cluster_id, described.cluster_id


def test_the_cluster_id_is_a_kafka_uuid_named_alike_in_every_answer(kafka) -> None:
    from_metadata, from_describe_cluster = answered_ids(kafka.bootstrap_servers)
    assert KAFKA_UUID.fullmatch(from_metadata)
    assert from_describe_cluster == from_metadata
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    assert admin.describe_cluster(request_timeout=10).result(timeout=15).cluster_id == \
        from_metadata


@pytest.mark.fake_only("two clusters side by side, and a setting of the fake")
def test_every_cluster_has_its_own_id_unless_one_is_set() -> None:
    with FakeKafka(brokers=2) as one, FakeKafka() as other, \
            FakeKafka(cluster_id="orders-cluster") as named:
        ids = [answered_ids(cluster.bootstrap_servers)[0] for cluster in (one, other)]
        assert ids[0] != ids[1] and all(KAFKA_UUID.fullmatch(i) for i in ids)
        second_broker = one.bootstrap_servers.split(",")[1]
        assert answered_ids(second_broker) == (ids[0], ids[0])
        assert answered_ids(named.bootstrap_servers) == ("orders-cluster", "orders-cluster")
