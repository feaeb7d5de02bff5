"""fakebroker.spark's options and offsets without a Spark session: Spark's Kafka source
options checked as Spark checks them, its offset JSON, and maxOffsetsPerTrigger's split."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="needs pyspark (.ci/install-clients)")

from fakebroker.spark.offsets import from_json, rate_limit, to_json  # noqa: E402
from fakebroker.spark.options import (  # noqa: E402
    KafkaOptionError,
    SourceOptions,
    Subscription,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def parse(streaming: bool = True, **options: str) -> SourceOptions:
    return SourceOptions.parse({**BOOTSTRAP, **options}, streaming=streaming)


def test_defaults_follow_sparks_kafka_source():
    streaming = parse(subscribe="a, b")
    assert streaming.subscription == Subscription(topics=("a", "b"))
    assert (streaming.starting, streaming.ending) == ("latest", "latest")
    assert streaming.fail_on_data_loss and not streaming.include_headers
    assert streaming.max_offsets_per_trigger is None
    assert streaming.poll_timeout_ms == 120_000
    assert streaming.group_id.startswith("spark-kafka-source-")
    assert streaming.group_id.endswith("-executor")
    assert parse(streaming=False, subscribe="a").starting == "earliest"


def test_option_names_are_case_insensitive_and_kafka_settings_pass_through():
    options = SourceOptions.parse({
        "KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubscribePattern": "ord.*",
        "STARTINGOFFSETS": '{"orders": {"0": 5, "1": -2}}', "MaxOffsetsPerTrigger": "10",
        "failondataloss": "False", "kafka.client.id": "job-7",
    }, streaming=True)
    assert options.bootstrap_servers == "h:1"
    assert options.subscription.selects("orders") and not options.subscription.selects("xorders")
    assert options.starting == {"orders": {0: 5, 1: -2}}
    assert options.max_offsets_per_trigger == 10 and not options.fail_on_data_loss
    assert options.kafka_settings == {"client.id": "job-7"}


def test_assign_takes_sparks_json():
    options = parse(assign='{"b": [1], "a": [2, 0]}')
    assert options.subscription.assigned == (("a", 0), ("a", 2), ("b", 1))


@pytest.mark.parametrize(("options", "message"), [
    ({"subscribe": "a"} | {"kafka.bootstrap.servers": ""}, "'kafka.bootstrap.servers' must be"),
    ({}, "One of the options 'subscribe', 'subscribePattern', 'assign'"),
    ({"subscribe": "a", "assign": '{"a": [0]}'}, "Only one of the options"),
    ({"assign": "a:0"}, "'assign' must be JSON"),
    ({"subscribePattern": "("}, "not a regular expression"),
    ({"subscribe": "a", "startingOffsets": "first"}, "'startingOffsets' must be 'earliest'"),
    ({"subscribe": "a", "endingOffsets": "latest"}, "'endingOffsets' is for batch queries"),
    ({"subscribe": "a", "maxOffsetsPerTrigger": "0"}, "'maxOffsetsPerTrigger' must be a positive"),
    ({"subscribe": "a", "failOnDataLoss": "yes"}, "'failOnDataLoss' must be 'true' or 'false'"),
    ({"subscribe": "a", "minPartitions": "4"}, "'minPartitions' of Spark's Kafka source is not"),
    ({"subscribe": "a", "kafka.auto.offset.reset": "latest"}, "set the source option"),
    ({"subscribe": "a", "kafka.enable.auto.commit": "true"}, "'kafka.enable.auto.commit'"),
])
def test_bad_options_are_refused_by_name(options, message):
    with pytest.raises(KafkaOptionError, match=message.replace("(", r"\(")):
        parse(**options)


def test_batch_queries_cannot_start_at_latest_or_end_at_earliest():
    with pytest.raises(KafkaOptionError, match="startingOffsets can't be latest"):
        parse(streaming=False, subscribe="a", startingOffsets='{"a": {"0": -1}}')
    with pytest.raises(KafkaOptionError, match="endingOffsets can't be earliest"):
        parse(streaming=False, subscribe="a", endingOffsets="earliest")


def test_offsets_are_sparks_kafka_source_offset_json():
    offsets = {("b", 0): 4, ("a", 1): 7, ("a", 0): 3}
    assert to_json(offsets) == {"a": {"0": 3, "1": 7}, "b": {"0": 4}}
    assert from_json(to_json(offsets)) == offsets


def test_max_offsets_per_trigger_is_shared_by_backlog_as_spark_shares_it():
    begin = {("t", 0): 0, ("t", 1): 100, ("t", 2): 50}
    latest = {("t", 0): 300, ("t", 1): 200, ("t", 2): 50, ("t", 3): 2}  # t-3: a new partition
    # backlogs 300, 100, 0, 2 of 402: shares 149.25 -> 149, 49.75 -> 49, -, 0.99 -> at least 1
    assert rate_limit(200, begin, latest) == {
        ("t", 0): 149, ("t", 1): 149, ("t", 2): 50, ("t", 3): 1}
    assert rate_limit(1000, begin, latest) == latest
    assert rate_limit(10, latest, latest) == latest
