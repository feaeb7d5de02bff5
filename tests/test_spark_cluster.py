"""Executors in other JVMs: the example pipeline on Spark's ``local-cluster`` master (a
master, a worker and two executor processes, as a real cluster has them), its tasks reading
the fake cluster through the address its brokers advertise."""

from __future__ import annotations

import time

import pytest

from tests.spark_support import (
    SPARK_TIMEOUT,
    as_records,
    events,
    expected_totals,
    produce,
    require_spark_with_connector,
)

require_spark_with_connector()

from examples import event_totals  # noqa: E402
from fakebroker.spark import session  # noqa: E402

pytestmark = [pytest.mark.spark, SPARK_TIMEOUT]

USERS = 7


@pytest.fixture(scope="module")
def spark_cluster():
    """Two executors of one core and 512 MB, each its own JVM, started by a worker; yielded
    once both have registered with the driver (they start after the session does)."""
    with session(master="local-cluster[2,1,1024]", app_name="fakebroker-cluster",
                 config={"spark.executor.memory": "512m"}) as spark:
        deadline = time.monotonic() + 60
        while executors(spark) < 2:
            assert time.monotonic() < deadline, "the two executors did not register in 60 s"
            time.sleep(0.2)
        yield spark


def executors(spark) -> int:
    """Executors registered with the driver (getExecutorMemoryStatus also lists the driver)."""
    return spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


# The brokers listen on 127.0.0.1 and advertise "localhost": a client that bootstraps at
# 127.0.0.1 reaches brokers 2 and 3 only through the address Metadata gives it.
@pytest.mark.fake_kafka(brokers=3, topics={"events": 3, "totals": 1}, advertised_host="localhost")
def test_executors_in_other_jvms_read_and_publish_through_the_advertised_address(
        spark_cluster, fake_kafka, tmp_path):
    assert executors(spark_cluster) == 2  # each a JVM of its own
    produced = events(USERS, 600)
    produce(fake_kafka.bootstrap_servers, "events", as_records(produced))
    assert {b.host for b in fake_kafka.brokers} == {"localhost"}

    bootstrap = f"127.0.0.1:{fake_kafka.brokers[0].port}"  # broker 1 only, by its listener
    query = event_totals.start(
        spark_cluster, bootstrap_servers=bootstrap, events_topic="events",
        totals_topic="totals", checkpoint=str(tmp_path / "checkpoint"))
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    assert [p["numInputRows"] for p in query.recentProgress] == [600]

    totals = event_totals.published_totals(spark_cluster, bootstrap, "totals")
    assert totals == expected_totals(produced)
    # Tasks run only on executors here (local-cluster: the driver runs none): the executors'
    # consumers fetched from every broker, two of which they knew only by advertised address.
    fetchers = {(e.broker, e.client_id) for e in fake_kafka.journal(api="Fetch")}
    assert {b for b, client in fetchers if "executor" in client} == {1, 2, 3}
