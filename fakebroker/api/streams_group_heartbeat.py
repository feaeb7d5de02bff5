"""StreamsGroupHeartbeat (key 88): a Kafka Streams member (``group.protocol=streams``,
KIP-1071) joins with its topology, heartbeats, is assigned tasks by the broker, leaves.

Versions: 0 (4.1), 1 (4.2+: AcceptableRecoveryLag as int64, TopologyDescriptionRequired).
Flexible.

Behavior (fakebroker/state/streams_groups.py has the details):
* Epoch 0 joins with the topology, -1 leaves; otherwise the member's epoch (or its previous
  one with tasks it still owns), else FENCED_MEMBER_EPOCH. UNKNOWN_MEMBER_ID for an unknown
  member, GROUP_ID_NOT_FOUND for an unknown group or an id a group of another kind holds,
  INVALID_REQUEST / STREAMS_INVALID_TOPOLOGY for the request shapes Kafka refuses, with its
  messages (a topology naming one of Kafka's internal topics or an illegal topic name is
  STREAMS_INVALID_TOPOLOGY first, whatever the epoch, as Kafka's broker checks it before its
  coordinator); NOT_COORDINATOR on another broker; GROUP_MAX_SIZE_REACHED for a join of a new
  member once the group has group.streams.max.size members.
* The broker configures the topology: the internal topics missing (repartition, changelog)
  are created with the partition counts it decides, after the answer names them in a
  MISSING_INTERNAL_TOPICS status; missing source topics are a MISSING_SOURCE_TOPICS status.
* The answer carries the member's epoch, the group's heartbeat interval
  (``streams.heartbeat.interval.ms``), Kafka's task offset interval (60 s) and acceptable
  recovery lag (10000), the statuses, and when they changed (always on a join) the active,
  standby and warm-up tasks by subtopology; the endpoint information epoch stays 0 and no
  topology description is asked for (Kafka asks only with a plugin configured).
* An error answer carries no member id, epoch 0, an empty status list and acceptable recovery
  lag -1, as Kafka's.
* streams.version finalized at 0 (UpdateFeatures) turns streams groups off:
  UNSUPPORTED_VERSION with a null message, as Kafka answers then.
"""

from __future__ import annotations

from typing import Any

import trio

from fakebroker.api.access import groups
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.cluster import INTERNAL_TOPICS, invalid_topic_name
from fakebroker.state.features import STREAMS_VERSION
from fakebroker.state.streams_groups import (
    ACCEPTABLE_RECOVERY_LAG,
    TASK_OFFSET_INTERVAL_MS,
    Heartbeat,
    Subtopology,
    Tasks,
    TopicInfo,
    Topology,
)

API_KEY = 88
NOT_ANSWERED = {"member_id": "", "member_epoch": 0, "heartbeat_interval_ms": 0,
                "task_offset_interval_ms": 0, "acceptable_recovery_lag": -1, "status": ()}
ERROR_PLACEMENT = Placement(top_fields=NOT_ANSWERED)
AUTHORIZES = (groups("READ"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    answer: dict[str, Any] = dict(NOT_ANSWERED, throttle_time_ms=0, status=[])
    if not ctx.cluster.features.at_least(STREAMS_VERSION, 1):  # streams groups turned off
        answer["error_code"] = error_code("UNSUPPORTED_VERSION")
        return answer
    problem = None if request.topology is None else topic_name_problem(request.topology)
    if problem is not None:
        answer.update(error_code=error_code("STREAMS_INVALID_TOPOLOGY"), error_message=problem)
        return answer
    if not ctx.is_coordinator(request.group_id):
        answer["error_code"] = error_code("NOT_COORDINATOR")
        return answer
    tags = request.client_tags
    heartbeat = Heartbeat(
        group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, instance_id=request.instance_id,
        rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        topology=None if request.topology is None else topology(request.topology),
        active=tasks(request.active_tasks), standby=tasks(request.standby_tasks),
        warmup=tasks(request.warmup_tasks), process_id=request.process_id,
        client_tags=None if tags is None else {t.key: t.value for t in tags},
        user_endpoint=None if (endpoint := request.user_endpoint) is None
        else (endpoint.host, endpoint.port),
        shutdown_application=request.shutdown_application,
        client_id=ctx.header.client_id or "", client_host=ctx.client_host)
    coordinator = ctx.cluster.groups.streams
    try:
        result = coordinator.heartbeat(heartbeat, trio.current_time())
    except ClusterError as exc:
        answer.update(error_code=error_code(exc.error), error_message=exc.message)
        return answer
    member = result.member
    answer.update(error_code=0, member_id=member.member_id, member_epoch=member.epoch,
                  status=[{"status_code": s.code, "status_detail": s.detail}
                          for s in result.status])
    if member.epoch >= 0:  # not for a leave
        answer.update(heartbeat_interval_ms=coordinator.heartbeat_interval_ms(request.group_id),
                      task_offset_interval_ms=TASK_OFFSET_INTERVAL_MS,
                      acceptable_recovery_lag=ACCEPTABLE_RECOVERY_LAG,
                      acceptable_recovery_lag_legacy=ACCEPTABLE_RECOVERY_LAG)
    if result.tasks is not None:
        active, standby, warmup = result.tasks
        answer.update(active_tasks=task_ids(active), standby_tasks=task_ids(standby),
                      warmup_tasks=task_ids(warmup))
    for name, (partitions, factor, configs) in result.to_create.items():
        try:  # as Kafka's coordinator asks its controller, after answering
            ctx.cluster.create_topic(name, partitions=partitions,
                                     replication_factor=factor if factor > 0 else None,
                                     configs=dict(configs))
        except ClusterError:
            pass  # the next heartbeat reports the topic still missing
    return answer


def topic_name_problem(sent: Any) -> str | None:
    """Kafka's broker-side check of the topology's topic names (KafkaApis, before the group
    coordinator: STREAMS_INVALID_TOPOLOGY whatever the member epoch), with its message: an
    internal topic of Kafka's, then a name ``Topic.isValid`` refuses; None if none."""
    names = list(dict.fromkeys(name for s in sent.subtopologies for name in (
        *s.source_topics, *s.repartition_sink_topics,
        *(t.name for t in s.repartition_source_topics),
        *(t.name for t in s.state_changelog_topics))))
    internal = [name for name in names if name in INTERNAL_TOPICS]
    if internal:
        return (f"Use of Kafka internal topics {','.join(internal)} in a Kafka Streams "
                "topology is prohibited.")
    invalid = [name for name in names if invalid_topic_name(name) is not None]
    if invalid:
        return f"Topic names {','.join(invalid)} are not valid topic names."
    return None


def topology(sent: Any) -> Topology:
    def infos(entries: Any) -> tuple[TopicInfo, ...]:
        return tuple(TopicInfo(t.name, t.partitions, t.replication_factor,
                               tuple((c.key, c.value) for c in t.topic_configs))
                     for t in entries)

    return Topology(sent.epoch, tuple(Subtopology(
        s.subtopology_id, tuple(s.source_topics), tuple(s.repartition_sink_topics),
        infos(s.state_changelog_topics), infos(s.repartition_source_topics),
        tuple(s.source_topic_regex)) for s in sent.subtopologies))


def tasks(sent: Any) -> Tasks | None:
    """Tasks by subtopology id (entries of one subtopology add up); None when not sent."""
    if sent is None:
        return None
    out: Tasks = {}
    for t in sent:
        out.setdefault(t.subtopology_id, set()).update(t.partitions)
    return {s: ps for s, ps in out.items() if ps}


def task_ids(assigned: Tasks) -> list[dict[str, Any]]:
    return [{"subtopology_id": s, "partitions": sorted(ps)}
            for s, ps in sorted(assigned.items()) if ps]
