"""Metadata (key 3): brokers, the controller, and topics with their partitions' leaders.

Versions: 0-12 (3.9), 13 (4.x). Flexible from v9.

Behavior:
* Topic list: v0 empty = all topics; v1+ null = all topics, empty = none. All topics are
  every topic, Kafka's internal ones too (``is_internal``: ``__consumer_offsets`` once a
  group coordinator was looked up, ``__transaction_state`` once a transaction coordinator
  was), in the order they were made, as Kafka lists them (clients leave the internal ones
  out themselves).
* A named topic that does not exist is created when auto-creation is on and the request
  allows it (v4+ ``allow_auto_topic_creation``; always for v0-3), with the cluster's default
  partitions and replication factor (``__consumer_offsets`` and ``__transaction_state`` as
  their coordinators make them). As a KRaft Kafka broker does (it asks its controller to
  create the topic), that request is answered UNKNOWN_TOPIC_OR_PARTITION without partitions;
  the topic is there for the next one. Otherwise UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID
  when asked by id, v12+). An illegal name (``check_topic_name``) gets INVALID_TOPIC_EXCEPTION,
  auto-created or not. The creation is
  charged to the client's ``controller_mutation_rate`` as a strict CreateTopics (Kafka's
  broker forwards one at the newest version, in the client's name): a topic the quota refuses
  is not created, the answer the same (UNKNOWN_TOPIC_OR_PARTITION) and not throttled.
* Partitions of a topic list their leader (-1 with LEADER_NOT_AVAILABLE when it is down),
  leader epoch, replicas and ISR (live replicas only); down replicas are offline.
* v10+ carries topic ids; v12+ may look a topic up by id (its name is returned). Before
  v12, a topic given by id or without a name makes the whole request invalid: as Kafka's
  ``handleTopicMetadataRequest`` throws and ``MetadataRequest.getErrorResponse`` answers,
  every topic asked gets INVALID_REQUEST (its name, "" for none; its id as sent), with no
  brokers, cluster id or controller. From v12, a topic with neither name nor id makes Kafka's
  name check throw (a NullPointerException): the same answer with UNKNOWN_SERVER_ERROR.
  From v12, once one topic is asked by id the request is read by ids alone, as Kafka's
  ``handleTopicMetadataRequest`` reads it: the topics without one (their names legal, illegal
  or null) are not looked at, and an id asked twice is answered once.
* Asked for them (v8+), authorized operations (of every topic answered, a missing one too,
  but not a refused one) are every topic (and, v8-10, cluster) operation with no authorizer,
  as a Kafka broker without one answers; with one, those the principal may do (the
  cluster's 0 without DESCRIBE on it).
* With an authorizer, as Kafka's: an all-topics request lists only the topics the principal
  may DESCRIBE; a named topic it may not describe gets TOPIC_AUTHORIZATION_FAILED (its name,
  a zero id; asked by id: its id, no name) whether it exists or not; a missing topic it may
  describe is auto-created only with CREATE on the cluster or the topic, else
  TOPIC_AUTHORIZATION_FAILED. Unknown topic ids come first and refused topics last, as Kafka
  lists them.
* The answer depends only on the request and the cluster's metadata, so a broker keeps it
  until the metadata changes (``CACHEABLE``; a topic created by the request is such a change).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.common import (
    CLUSTER_OPERATIONS,
    TOPIC_OPERATIONS,
    broker_entries,
    resolve_topic,
)
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.api.throttling import mutation_quota
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.acls import CLUSTER_NAME
from fakebroker.state.cluster import INTERNAL_TOPIC_CONFIGS, Topic, check_topic_name

API_KEY = 3
CACHEABLE = True
LEADER_NOT_AVAILABLE = error_code("LEADER_NOT_AVAILABLE")
TOPIC_AUTHORIZATION_FAILED = error_code("TOPIC_AUTHORIZATION_FAILED")
UNKNOWN_TOPIC_ID = error_code("UNKNOWN_TOPIC_ID")
INVALID_REQUEST = error_code("INVALID_REQUEST")
UNKNOWN_SERVER_ERROR = error_code("UNKNOWN_SERVER_ERROR")
# Beside a topic's error: no partitions.
NOT_DESCRIBED = {"is_internal": False, "partitions": ()}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", error_fields=NOT_DESCRIBED))
AUTHORIZES = (in_handler(
    "DESCRIBE on each topic: the others are left out of an all-topics answer, else "
    "TOPIC_AUTHORIZATION_FAILED; CREATE on the cluster or the topic to auto-create one; the "
    "authorized operations asked for"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    cluster = ctx.cluster
    live = {b.id for b in cluster.brokers.values() if b.up}
    wanted = request.topics
    if 10 <= ctx.version < 12 and wanted and any(
            t.name is None or t.topic_id != ZERO_UUID for t in wanted):
        return error_answer(wanted, INVALID_REQUEST)
    if ctx.version >= 12 and wanted and any(t.topic_id != ZERO_UUID for t in wanted):
        wanted = list({t.topic_id: t for t in wanted if t.topic_id != ZERO_UUID}.values())
    if ctx.version >= 12 and wanted and any(
            t.name is None and t.topic_id == ZERO_UUID for t in wanted):
        return error_answer(wanted, UNKNOWN_SERVER_ERROR)
    if wanted is None or (ctx.version == 0 and not wanted):
        topics = [describe(t, live) for t in cluster.topics.values()
                  if ctx.allowed("DESCRIBE", "TOPIC", t.name)]
    else:
        allow = ctx.version < 4 or request.allow_auto_topic_creation
        quota = mutation_quota(ctx, strict_since=0) if allow else None
        admit = None if quota is None else quota.admit
        topics = [lookup(entry, allow, ctx, live, admit) for entry in wanted]
        if ctx.authorizer is not None:  # as Kafka lists them: unknown ids, ..., refused
            topics.sort(key=lambda t: (t["error_code"] != UNKNOWN_TOPIC_ID)
                        + (t["error_code"] == TOPIC_AUTHORIZATION_FAILED))
    answer = {
        "throttle_time_ms": 0,
        "brokers": broker_entries(ctx),
        "cluster_id": cluster.cluster_id,
        "controller_id": cluster.controller_id,
        "topics": topics,
    }
    if request.include_topic_authorized_operations:
        for topic in topics:  # every topic but a refused one, as Kafka's
            if topic["error_code"] != TOPIC_AUTHORIZATION_FAILED and topic["name"]:
                topic["topic_authorized_operations"] = ctx.authorized_operations(
                    "TOPIC", topic["name"], TOPIC_OPERATIONS)
    if request.include_cluster_authorized_operations:
        answer["cluster_authorized_operations"] = ctx.authorized_operations(
            "CLUSTER", CLUSTER_NAME, CLUSTER_OPERATIONS) if ctx.allowed(
            "DESCRIBE", "CLUSTER", CLUSTER_NAME) else 0
    return answer


def error_answer(wanted: Any, error: int) -> dict[str, Any]:
    """Kafka's ``MetadataRequest.getErrorResponse``: every topic asked gets ``error``."""
    return {"throttle_time_ms": 0, "brokers": (), "cluster_id": None, "controller_id": -1,
            "topics": [dict(NOT_DESCRIBED, error_code=error, name=t.name or "",
                            topic_id=t.topic_id) for t in wanted]}


def lookup(entry: Any, allow_auto_create: bool, ctx: RequestContext, live: set[int],
           admit: Callable[[int], bool] | None = None) -> dict[str, Any]:
    name, topic_id = entry.name, entry.topic_id
    by_id = topic_id != ZERO_UUID
    topic = resolve_topic(ctx, name, topic_id)
    if topic is not None and not ctx.allowed("DESCRIBE", "TOPIC", topic.name):
        return dict(NOT_DESCRIBED, error_code=TOPIC_AUTHORIZATION_FAILED,
                    name=None if by_id else name, topic_id=topic_id if by_id else ZERO_UUID)
    if topic is not None:
        return describe(topic, live)
    if by_id:
        return dict(NOT_DESCRIBED, error_code=error_code("UNKNOWN_TOPIC_ID"), name=None,
                    topic_id=topic_id)
    if not ctx.allowed("DESCRIBE", "TOPIC", name):
        return dict(NOT_DESCRIBED, error_code=TOPIC_AUTHORIZATION_FAILED, name=name)
    auto_create = allow_auto_create and ctx.cluster.settings.auto_create_topics
    if auto_create and not (ctx.allowed("CREATE", "CLUSTER", CLUSTER_NAME)
                            or ctx.allowed("CREATE", "TOPIC", name)):
        return dict(NOT_DESCRIBED, error_code=TOPIC_AUTHORIZATION_FAILED, name=name)
    try:
        if not auto_create:
            check_topic_name(name)
        elif name in INTERNAL_TOPIC_CONFIGS:  # made as its coordinator makes it
            ctx.cluster.coordinator_topic(name)
        else:
            ctx.cluster.create_topic(name, admit=admit)
    except ClusterError as exc:
        if exc.error != "THROTTLING_QUOTA_EXCEEDED":
            return dict(NOT_DESCRIBED, error_code=exc.code, name=name)
    return dict(NOT_DESCRIBED, error_code=error_code("UNKNOWN_TOPIC_OR_PARTITION"), name=name)


def describe(topic: Topic, live: set[int]) -> dict[str, Any]:
    """A topic's entry, its partitions as the ``live`` brokers make them."""
    partitions = []
    for p in topic.partitions:
        leader_up = p.leader in live
        replicas_up = live.issuperset(p.replicas)
        partitions.append({
            "error_code": 0 if leader_up else LEADER_NOT_AVAILABLE,
            "partition_index": p.index,
            "leader_id": p.leader if leader_up else -1,
            "leader_epoch": p.leader_epoch,
            "replica_nodes": p.replicas,
            "isr_nodes": p.isr if replicas_up else [r for r in p.isr if r in live],
            "offline_replicas": () if replicas_up else [r for r in p.replicas if r not in live],
        })
    return {
        "error_code": 0,
        "name": topic.name,
        "topic_id": topic.id,
        "is_internal": topic.internal,
        "partitions": partitions,
    }
