"""DescribeTopicPartitions (key 75): topics and their partitions, a page at a time (KIP-966).

Versions: 0 (4.x). Flexible from v0.

Behavior, as Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache answer
(the Java AdminClient's ``describeTopics`` and ``kafka-topics --describe`` use it):
* No topics named: every topic (internal ones too), else the named ones; either way only
  names at or after the cursor's topic, sorted. A cursor whose topic the named list leaves
  out, or whose partition is negative, gets INVALID_REQUEST on every topic named.
* A page holds at most ``response_partition_limit`` partitions, bounded to 1..2000 (Kafka's
  ``max.request.partition.size.limit`` default). The cursor's topic starts at the cursor's
  partition, the others at 0. A topic cut short ends the page with ``next_cursor`` at its
  first partition left out; a topic reached with no room left ends it with ``next_cursor`` at
  that topic's partition 0 (the topic itself not listed).
* A named topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION (an illegal name:
  INVALID_TOPIC_EXCEPTION), with no partitions; it takes no room on the page.
* Partitions: the leader (-1 when it is down; no error, unlike Metadata), its epoch, every
  replica, the ISR and offline replicas as the fake's Metadata gives them, and the eligible
  leader replicas and last known ELR (KIP-966; never null: Java clients crash on null, as on
  kfake's). With eligible.leader.replicas.version 1 (a new Kafka 4.4 cluster's level), a
  partition whose every in-sync replica is down (a controlled shutdown: ``broker_down``) has
  its last leader as both: Kafka's controller moves an in-sync replica shut down cleanly
  into the ELR while the ISR is below min.insync.replicas (an empty ISR always is), and
  records the last leader as last known ELR when the ISR empties (PartitionChangeBuilder;
  measured on a 3-node Kafka 4.4, RF 1, its broker stopped). Once it leads again both are
  empty. Otherwise both are empty: the fake keeps no replica that left the ISR while the
  partition still had a leader (Kafka's ELR would hold such a replica while the ISR stays
  below min.insync.replicas).
* Every topic listed carries its authorized operations (all topic operations with no
  authorizer). With an authorizer, topics the principal may not DESCRIBE are left out of an
  all-topics answer, and a named one gets TOPIC_AUTHORIZATION_FAILED with a zero id, after
  the others.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.common import TOPIC_OPERATIONS
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.cluster import Topic, check_topic_name
from fakebroker.state.features import ELIGIBLE_LEADER_REPLICAS_VERSION

API_KEY = 75
# Kafka's max.request.partition.size.limit default: the most partitions one page holds.
MAX_PARTITIONS = 2000
TOPIC_AUTHORIZATION_FAILED = error_code("TOPIC_AUTHORIZATION_FAILED")
# Beside a topic's error: no partitions.
NOT_DESCRIBED = {"is_internal": False, "partitions": ()}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", error_fields=NOT_DESCRIBED))
AUTHORIZES = (in_handler(
    "DESCRIBE on each topic: the others are left out of an all-topics answer, else "
    "TOPIC_AUTHORIZATION_FAILED; each topic's authorized operations"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    cursor = request.cursor
    after = cursor.topic_name if cursor is not None else ""
    every = not request.topics
    if every:
        names = set(ctx.cluster.topics)
    else:
        names = {t.name for t in request.topics}
    names = {name for name in names if name >= after}
    if cursor is not None and (cursor.partition_index < 0
                               or not every and cursor.topic_name not in names):
        return invalid(request)
    allowed = []
    refused = []
    for name in sorted(names):
        if ctx.allowed("DESCRIBE", "TOPIC", name):
            allowed.append(name)
        elif not every:
            refused.append(dict(NOT_DESCRIBED, error_code=TOPIC_AUTHORIZATION_FAILED,
                                name=name))
    answer = page(ctx, allowed, after, cursor.partition_index if cursor else 0,
                  max(min(MAX_PARTITIONS, request.response_partition_limit), 1), every)
    for topic in answer["topics"]:
        topic["topic_authorized_operations"] = ctx.authorized_operations(
            "TOPIC", topic["name"], TOPIC_OPERATIONS)
    answer["topics"].extend(refused)
    return answer


def page(ctx: RequestContext, names: list[str], cursor_topic: str, cursor_partition: int,
         room: int, every: bool) -> dict[str, Any]:
    """The answer for ``names`` (sorted), at most ``room`` partitions, as Kafka's
    ``getTopicMetadataForDescribeTopicResponse`` pages them."""
    live = {b.id for b in ctx.cluster.brokers.values() if b.up}
    elr = ctx.cluster.features.at_least(ELIGIBLE_LEADER_REPLICAS_VERSION, 1)
    topics: list[dict[str, Any]] = []
    answer: dict[str, Any] = {"throttle_time_ms": 0, "topics": topics, "next_cursor": None}
    for name in names:
        if room == 0:
            answer["next_cursor"] = {"topic_name": name, "partition_index": 0}
            break
        topic = ctx.cluster.topics.get(name)
        if topic is None:
            if not every:
                topics.append(missing(name))
            continue
        start = cursor_partition if name == cursor_topic else 0
        end = min(len(topic.partitions), start + room)
        partitions = [describe(topic, index, live, elr) for index in range(start, end)]
        topics.append({"error_code": 0, "name": name, "topic_id": topic.id,
                       "is_internal": topic.internal, "partitions": partitions})
        if end < len(topic.partitions):
            answer["next_cursor"] = {"topic_name": name, "partition_index": end}
            break
        room -= len(partitions)
    return answer


def invalid(request: Any) -> dict[str, Any]:
    """Kafka's answer to a bad cursor (its InvalidRequestException through
    ``getErrorResponse``): INVALID_REQUEST on every topic named, no cursor."""
    return {"throttle_time_ms": 0, "next_cursor": None, "topics": [
        dict(NOT_DESCRIBED, error_code=error_code("INVALID_REQUEST"), name=t.name)
        for t in request.topics]}


def missing(name: str) -> dict[str, Any]:
    """The entry of a named topic that does not exist."""
    try:
        check_topic_name(name)
    except ClusterError as exc:
        return dict(NOT_DESCRIBED, error_code=exc.code, name=name)
    return dict(NOT_DESCRIBED, error_code=error_code("UNKNOWN_TOPIC_OR_PARTITION"), name=name)


def describe(topic: Topic, index: int, live: set[int], elr: bool) -> dict[str, Any]:
    """One partition's entry, as the ``live`` brokers make it; ``elr``: eligible leader
    replicas are on (see the module doc)."""
    p = topic.partitions[index]
    replicas_up = live.issuperset(p.replicas)
    # Leaderless: its last leader, down, kept its place (no live in-sync replica took it).
    last_leader = [p.leader] if elr and p.leader not in live else []
    return {
        "error_code": 0,
        "partition_index": p.index,
        "leader_id": p.leader if p.leader in live else -1,
        "leader_epoch": p.leader_epoch,
        "replica_nodes": p.replicas,
        "isr_nodes": p.isr if replicas_up else [r for r in p.isr if r in live],
        "eligible_leader_replicas": last_leader,
        "last_known_elr": last_leader,
        "offline_replicas": () if replicas_up else [r for r in p.replicas if r not in live],
    }
