"""StreamsGroupDescribe (key 89): streams groups, their topology, epochs, members and tasks.

Versions: 0 (4.1), 1 (4.2+: topology description, its status, the assignor's name). Flexible.

Behavior: INVALID_GROUP_ID for an empty group id, before anything else (answered first);
GROUP_ID_NOT_FOUND with an empty state, as Kafka answers, for no group ("Group g not found.")
or a group of another type ("Group g is not a streams group.", as ConsumerGroupDescribe answers
for its own type), NOT_COORDINATOR on another broker; states Empty, NotReady, Assigning,
Reconciling, Stable. The topology is the group's (null before a member sent one), its internal
topics with their partition counts once it is ready (0, to be decided, before); each member
with its process, topology epoch, current and target tasks.
v1: the assignor ``sticky``, no topology description (status NOT_STORED when asked for it,
else 0, as Kafka without a description plugin). Asked for them, a described group's
authorized operations. streams.version finalized at 0 (UpdateFeatures): every group named
gets UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import groups, in_handler
from fakebroker.api.common import GROUP_OPERATIONS
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.api.streams_group_heartbeat import task_ids
from fakebroker.protocol.errors import error_code
from fakebroker.state.features import STREAMS_VERSION
from fakebroker.state.groups import invalid_group_id
from fakebroker.state.streams_groups import ASSIGNOR, StreamsGroup, Target, TopicInfo

API_KEY = 89
# TopologyDescriptionStatus, as Kafka 4.4 answers it without a description plugin (measured)
NOT_REQUESTED, NOT_STORED = 0, 1
# Beside a group's error: nothing described.
UNDESCRIBED = {"group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None,
               "members": ()}
ERROR_PLACEMENT = Placement(per_group("group_ids", "groups", error_fields=UNDESCRIBED))
AUTHORIZES = (groups("DESCRIBE"),
              in_handler("each group's authorized operations, asked for"))


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if not ctx.cluster.features.at_least(STREAMS_VERSION, 1):  # streams groups turned off
        return {"throttle_time_ms": 0, "groups": [
            dict(UNDESCRIBED, group_id=g, error_code=error_code("UNSUPPORTED_VERSION"))
            for g in request.group_ids]}
    include = ctx.version >= 1 and request.include_topology_description
    # the empty ids' answers first, as Kafka's coordinator service completes them at once
    described = sorted((describe(ctx, g, include) for g in request.group_ids),
                       key=lambda group: bool(group["group_id"]))
    if request.include_authorized_operations:
        for group in described:
            if not group["error_code"]:
                group["authorized_operations"] = ctx.authorized_operations(
                    "GROUP", group["group_id"], GROUP_OPERATIONS)
    return {"throttle_time_ms": 0, "groups": described}


def describe(ctx: RequestContext, group_id: str, include_description: bool = False
             ) -> dict[str, Any]:
    if invalid_group_id(group_id):
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("INVALID_GROUP_ID"))
    if not ctx.is_coordinator(group_id):
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("NOT_COORDINATOR"))
    group = ctx.cluster.groups.streams_group(group_id)
    if group is None:
        why = "not found" if ctx.cluster.groups.kind(group_id) is None \
            else "is not a streams group"
        return dict(UNDESCRIBED, group_id=group_id, error_code=error_code("GROUP_ID_NOT_FOUND"),
                    error_message=f"Group {group_id} {why}.")
    members = [{
        "member_id": m.member_id, "member_epoch": m.epoch, "instance_id": m.instance_id,
        "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
        "topology_epoch": m.topology_epoch, "process_id": m.process_id, "user_endpoint": None,
        "client_tags": [{"key": k, "value": v} for k, v in m.client_tags.items()],
        "task_offsets": [], "task_end_offsets": [],
        "assignment": assignment(m.active, m.standby, m.warmup),
        "target_assignment": assignment(*_target(group.target.get(m.member_id, Target()))),
        "is_classic": False,
    } for m in group.members.values()]
    answer = {"group_id": group_id, "error_code": 0, "group_state": group.state,
              "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
              "topology": topology(group), "members": members}
    if ctx.version >= 1:
        answer.update(assignor_name=ASSIGNOR, topology_description_status=NOT_STORED
                      if include_description else NOT_REQUESTED)
    return answer


def _target(target: Target) -> tuple[dict[str, set[int]], dict[str, set[int]],
                                       dict[str, set[int]]]:
    return target.active, target.standby, {}


def assignment(active: Any, standby: Any, warmup: Any) -> dict[str, Any]:
    return {"active_tasks": task_ids(active), "standby_tasks": task_ids(standby),
            "warmup_tasks": task_ids(warmup)}


def topology(group: StreamsGroup) -> dict[str, Any] | None:
    """The group's topology: once it is ready, the internal topics with their partition
    counts; before, as the member sent them (0: to be decided), as Kafka describes it."""
    if group.topology is None:
        return None
    ready = group.configured is not None and group.configured.ready
    counts = dict(group.metadata) if ready else {}

    def infos(entries: tuple[TopicInfo, ...]) -> list[dict[str, Any]]:
        return [{"name": t.name, "replication_factor": t.replication_factor,
                 "partitions": counts.get(t.name, t.partitions),
                 "topic_configs": [{"key": k, "value": v} for k, v in t.configs]}
                for t in entries]

    return {"epoch": group.topology.epoch, "subtopologies": [{
        "subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
        "repartition_sink_topics": list(s.repartition_sink_topics),
        "state_changelog_topics": infos(s.state_changelog_topics),
        "repartition_source_topics": infos(s.repartition_source_topics),
    } for s in group.topology.subtopologies]}
