"""A user's suite, in a folder of its own, takes the installed plugin's ``kafka`` fixture and
passes unchanged on the fake (``--kafka=fake``), on a local Apache Kafka the session starts
(``--kafka=real`` alone) and on a running cluster named by ``--kafka-bootstrap``: here the
broker under test (``kafka``: a fake one, or under ``--kafka=real`` the session's Apache
Kafka, tests/real_kafka.py), also reached only over SASL_SSL with ``--kafka-client-config``
(the secure preset's broker, tests/security.py). Each test there has names of its own
(``kafka.name``), its topics and groups deleted after it, nothing else on the cluster
touched, also with two pytest-xdist workers at once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakebroker.real_cluster import RealCluster
from tests.real_kafka import require_real_kafka
from tests.security import PASSWORDS, SECURE

pytestmark = pytest.mark.timeout(240)

USER_TESTS = '''
import pytest
from confluent_kafka import Consumer, Producer

from fakebroker.client_config import for_librdkafka


@pytest.mark.fake_kafka(topics={"orders": 3})
def test_an_order_is_read_back_by_a_new_group(kafka):
    orders, billing = kafka.name("orders"), kafka.name("billing")
    assert kafka.topics() == {orders: 3}
    producer = Producer(for_librdkafka(kafka.client_config))
    producer.produce(orders, key=b"o-1", value=b"paid", partition=1)
    assert producer.flush(30) == 0
    consumer = Consumer({**for_librdkafka(kafka.client_config), "group.id": billing,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([orders])
    message = None
    for _ in range(60):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            break
    assert (message.key(), message.value()) == (b"o-1", b"paid")
    consumer.commit(message, asynchronous=False)
    consumer.close()
    assert [r.value for r in kafka.records(orders, 1)] == [b"paid"]
    assert kafka.offsets(orders, 1)[1] == 1
    assert kafka.committed(billing, orders, 1) == 1
    assert kafka.group(billing).state == "Empty"


def test_a_topic_made_by_the_test_is_its_own(kafka):
    kafka.create_topic(kafka.name("audit"), partitions=2)
    assert kafka.topics() == {kafka.name("audit"): 2}


@pytest.mark.fake_only("a fault rule: only the fake has them")
def test_a_fault_on_the_fake(kafka):
    rule = kafka.faults.add(api="Produce", delay_ms=10)
    assert rule.hits == 0


@pytest.mark.fake_kafka(brokers=3)
def test_a_topic_replicated_on_three_brokers(kafka):
    from confluent_kafka.admin import AdminClient

    topic = kafka.name("replicated")
    kafka.create_topic(topic, partitions=1, replication_factor=3)
    admin = AdminClient(for_librdkafka(kafka.client_config))
    (partition,) = admin.list_topics(topic, timeout=30).topics[topic].partitions.values()
    assert len(partition.replicas) == 3
'''
# What -rs says of the last test on a real cluster of fewer than three brokers.
TOO_FEW = "the fake_kafka marker asks for 3 brokers; the real cluster has 1"


def run_user_suite(folder: Path, *args: str, env: dict[str, str] | None = None,
                   timeout: float = 200) -> subprocess.CompletedProcess[str]:
    """``pytest ARGS`` in the user's folder, with the installed plugin (the checkout's under
    PYTHONPATH, as the whole suite), ``env`` added to the environment."""
    (folder / "test_orders.py").write_text(USER_TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args],
        cwd=folder, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=timeout)


def outcome(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.strip().splitlines()[-1]


def test_the_users_suite_passes_on_the_fake(tmp_path):
    result = run_user_suite(tmp_path, "--kafka=fake")
    assert result.returncode == 0, result.stdout + result.stderr
    assert outcome(result).startswith("4 passed")


# The 3-node session: measured 182 s for its four tests (three JVMs started, a topic
# replicated on all three made and deleted) on the 2-core machine at a load of ~40, plus the
# nodes' stop.
THREE_NODES_SESSION = 420


@pytest.mark.real_kafka
@pytest.mark.timeout(THREE_NODES_SESSION + 60)
@pytest.mark.parametrize("nodes", [1, 3])
def test_kafka_real_without_a_cluster_runs_on_a_local_kafka_the_session_starts(tmp_path, nodes):
    """Of one node (the default) or a KRaft cluster of three (``--kafka-nodes 3``); the test
    marked for three brokers is skipped on one node, saying why, and runs on three."""
    require_real_kafka()
    result = run_user_suite(tmp_path, "--kafka=real", f"--kafka-nodes={nodes}",
                            timeout=THREE_NODES_SESSION)
    assert result.returncode == 0, result.stdout + result.stderr
    if nodes == 1:
        assert outcome(result).startswith("2 passed, 2 skipped")
        assert TOO_FEW in result.stdout
    else:
        assert outcome(result).startswith("3 passed, 1 skipped")


def test_kafka_real_without_a_cluster_or_an_install_says_how_to_install_one(tmp_path):
    result = run_user_suite(tmp_path, "--kafka=real", "-k", "made_by",
                            env={"FAKEBROKER_CLIENTS_DIR": str(tmp_path / "nothing")})
    assert result.returncode == 1
    assert "Apache Kafka 4.4.0 is not installed" in result.stdout
    assert "run `fakebroker kafka install`" in result.stdout


@pytest.fixture
def shared_cluster(kafka) -> Iterator[RealCluster]:
    """The broker under test as a user's running cluster: with a topic and a group that are
    not the tests', which must be there after the run."""
    from confluent_kafka import Consumer

    cluster = RealCluster(kafka.bootstrap_servers)
    cluster.create_topic("not-the-tests", partitions=1)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": "not-the-tests-group"})
    try:
        consumer.commit(offsets=[_partition("not-the-tests", 0, 5)], asynchronous=False)
    finally:
        consumer.close()
    yield cluster
    cluster.close()


def _partition(topic: str, partition: int, offset: int):
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, partition, offset)


def assert_only_what_was_there_before(cluster: RealCluster) -> None:
    assert cluster.topics() == {"not-the-tests": 1}
    assert cluster.committed("not-the-tests-group", "not-the-tests", 0) == 5
    listed = cluster.admin.list_consumer_groups().result(timeout=30).valid
    assert [g.group_id for g in listed if g.group_id.startswith("fakebroker-")] == []


def test_the_users_suite_passes_on_a_running_cluster_and_leaves_it_as_it_was(
        tmp_path, shared_cluster):
    result = run_user_suite(tmp_path, "--kafka=both",
                            f"--kafka-bootstrap={shared_cluster.bootstrap_servers}", "-rA")
    assert result.returncode == 0, result.stdout + result.stderr
    for test in ("test_an_order_is_read_back_by_a_new_group",
                 "test_a_topic_made_by_the_test_is_its_own"):
        assert f"PASSED test_orders.py::{test}[fake]" in result.stdout
        assert f"PASSED test_orders.py::{test}[real]" in result.stdout
    assert "PASSED test_orders.py::test_a_fault_on_the_fake[fake]" in result.stdout
    assert "PASSED test_orders.py::test_a_topic_replicated_on_three_brokers[fake]" in \
        result.stdout
    assert outcome(result).startswith("6 passed, 1 skipped")
    assert TOO_FEW in result.stdout
    assert_only_what_was_there_before(shared_cluster)


def test_two_xdist_workers_share_a_running_cluster_each_with_its_own_names(
        tmp_path, shared_cluster):
    result = run_user_suite(tmp_path, "--kafka=real", "-n", "2",
                            f"--kafka-bootstrap={shared_cluster.bootstrap_servers}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert outcome(result).startswith("2 passed, 2 skipped")
    assert_only_what_was_there_before(shared_cluster)


# A managed cluster's client properties, as a Java client takes them (the how-to's).
CLIENT_PROPERTIES = """\
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="admin" password="{password}";
ssl.truststore.type=PEM
ssl.truststore.location={ca_file}
"""


@pytest.mark.fake_kafka(**SECURE)
def test_the_users_suite_passes_on_a_cluster_reached_only_over_sasl_ssl(tmp_path, kafka):
    """The broker under test's SASL_SSL listener, its client properties in a file: the
    plugin's inspection and the user's clients (``kafka.client_config``) log in as admin (a
    super user there: the preset's authorizer allows nobody else without ACLs)."""
    properties = tmp_path / "client.properties"
    properties.write_text(CLIENT_PROPERTIES.format(password=PASSWORDS["admin"],
                                                   ca_file=kafka.ssl["ca_file"]))
    result = run_user_suite(tmp_path, "--kafka=real",
                            f"--kafka-bootstrap={kafka.listeners['SASL_SSL']}",
                            f"--kafka-client-config={properties}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert outcome(result).startswith("2 passed, 2 skipped")


def test_a_client_config_the_inspection_cannot_honour_fails_the_session_naming_it(tmp_path):
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n")
    result = run_user_suite(tmp_path, "--kafka=real", "--kafka-bootstrap=127.0.0.1:9",
                            f"--kafka-client-config={properties}", "-k", "made_by")
    assert result.returncode == 1
    assert "sasl.mechanism=GSSAPI: fakebroker's inspection logs in with" in result.stdout
