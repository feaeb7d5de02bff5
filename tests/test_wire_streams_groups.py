"""Streams groups (KIP-1071) on the wire: StreamsGroupHeartbeat and StreamsGroupDescribe as
a Kafka Streams member sees them, on the fake and on Apache Kafka 4.4 (``--kafka=both``): the
topology initialised and its internal topics created by the broker, the tasks assigned and
moved between members, request checks and their messages, and streams groups in the other
group APIs. The rules as the coordinator applies them are in
tests/test_streams_group_protocol.py.

Kafka numbers epochs and computes assignments in the background, so a member heartbeats until
its tasks arrive (``Member.until``), as Kafka Streams does; each test's group sets
``streams.initial.rebalance.delay.ms=0`` (IncrementalAlterConfigs on the GROUP resource) so
the first assignment does not wait its 3 s.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.test_wire_groups import coordinator

pytestmark = [pytest.mark.fake_kafka(topics={"lines": 3}), pytest.mark.timeout(120)]
GROUP_RESOURCE = 32
_apps = itertools.count()
Tasks = dict[str, set[int]]


def word_count(app: str, source: str = "lines") -> dict:
    """The word count's topology, as Kafka Streams sends it: subtopology 0 reads the source
    and writes the repartition topic, subtopology 1 reads it and keeps a changelogged store."""
    no_topics: dict = {"source_topic_regex": [], "copartition_groups": []}
    return {"epoch": 0, "subtopologies": [
        dict(no_topics, subtopology_id="0", source_topics=[source], state_changelog_topics=[],
             repartition_sink_topics=[f"{app}-words-repartition"],
             repartition_source_topics=[]),
        dict(no_topics, subtopology_id="1", source_topics=[], repartition_sink_topics=[],
             state_changelog_topics=[{"name": f"{app}-counts-changelog", "partitions": 0,
                                      "replication_factor": 1, "topic_configs": []}],
             repartition_source_topics=[{"name": f"{app}-words-repartition", "partitions": 0,
                                         "replication_factor": 1, "topic_configs": [
                                             {"key": "cleanup.policy", "value": "delete"}]}])]}


def new_app(kafka, **configs: str) -> str:
    """A fresh application id whose group assigns at once, with ``configs`` set on it."""
    app = f"app-{next(_apps)}"
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": app, "configs": [
                {"name": k, "config_operation": 0, "value": v} for k, v in {
                    "streams.initial.rebalance.delay.ms": "0", **configs}.items()]}],
            "validate_only": False})
    assert [(r.error_code, r.error_message) for r in response.responses] == [(0, None)]
    return app


def tasks_of(entries) -> Tasks:
    return {t.subtopology_id: set(t.partitions) for t in entries if t.partitions}


class Member:
    """One Kafka Streams instance's side of StreamsGroupHeartbeat v1: a client-made member id
    (its process id too), the epoch and active tasks it was last given."""

    def __init__(self, client: WireClient, app: str, source: str = "lines"):
        self.client, self.app, self.source = client, app, source
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.active: Tasks = {}
        self.standby: Tasks = {}
        self.statuses: list[tuple[int, str]] = []

    def send(self, epoch: int | None = None, **fields):
        body = {"group_id": self.app, "member_id": self.member_id,
                "member_epoch": self.epoch if epoch is None else epoch,
                "endpoint_information_epoch": 0, "process_id": self.member_id, **fields}
        return self.client.request("StreamsGroupHeartbeat", 1, body)

    def heartbeat(self, epoch: int | None = None, **fields):
        """A heartbeat that must succeed; takes the epoch and tasks it brings."""
        answer = self.send(epoch, **fields)
        assert answer.error_code == 0, answer
        self.epoch = answer.member_epoch
        self.statuses = [(s.status_code, s.status_detail) for s in answer.status]
        if answer.active_tasks is not None:
            self.active = tasks_of(answer.active_tasks)
            self.standby = tasks_of(answer.standby_tasks)
        return answer

    def joining(self) -> dict:
        """The fields of a join (epoch 0), as Kafka Streams sends them."""
        return {"member_epoch": 0, "rebalance_timeout_ms": 300_000,
                "topology": word_count(self.app, self.source), "active_tasks": [],
                "standby_tasks": [], "warmup_tasks": [], "client_tags": []}

    def join(self):
        return self.heartbeat(**self.joining())

    def acknowledge(self):
        """Report owning exactly the active tasks last given (revoked ones given up)."""
        return self.heartbeat(
            active_tasks=[{"subtopology_id": s, "partitions": sorted(ps)}
                          for s, ps in sorted(self.active.items())],
            standby_tasks=[], warmup_tasks=[])

    def until(self, condition: Callable[[Member], bool], what: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while not condition(self):
            assert time.monotonic() < deadline, f"{what}: {self.active}, epoch {self.epoch}"
            time.sleep(0.1)
            self.acknowledge()


EVERY_TASK = {"0": {0, 1, 2}, "1": {0, 1, 2}}


def owns(expected: Tasks) -> Callable[[Member], bool]:
    return lambda member: member.active == expected


def described(client: WireClient, app: str):
    (group,) = client.request("StreamsGroupDescribe", 0, {"group_ids": [app]}).groups
    assert group.error_code == 0, group
    return group


def test_the_broker_creates_the_internal_topics_and_assigns_every_task(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        joined = member.join()
        assert joined.member_epoch == 2 and joined.heartbeat_interval_ms == 5000
        assert (joined.task_offset_interval_ms, joined.acceptable_recovery_lag) == (
            60_000, 10_000)
        ((code, detail),) = member.statuses
        assert code == 3 and detail.startswith("Internal topics are missing: ")
        assert sorted(detail.split(": ")[1].split(", ")) == [  # in Java's HashMap order
            f"{app}-counts-changelog", f"{app}-words-repartition"]
        assert tasks_of(joined.active_tasks) == {} and joined.standby_tasks == []
        member.until(owns(EVERY_TASK), "a lone member gets every task")
        assert member.statuses == []
        group = described(client, app)
    topics = kafka.topics()
    assert topics[f"{app}-words-repartition"] == topics[f"{app}-counts-changelog"] == 3
    assert (group.group_state, group.assignment_epoch) == ("Stable", member.epoch)
    sub = {s.subtopology_id: s for s in group.topology.subtopologies}
    assert [(t.name, t.partitions) for t in sub["1"].repartition_source_topics] == [
        (f"{app}-words-repartition", 3)]
    assert [(t.name, t.partitions) for t in sub["1"].state_changelog_topics] == [
        (f"{app}-counts-changelog", 3)]
    (described_member,) = group.members
    assert (described_member.member_id, described_member.process_id) == (
        member.member_id, member.member_id)
    assert tasks_of(described_member.assignment.active_tasks) == EVERY_TASK
    view = kafka.group(app)
    assert (view.state, view.protocol_type) == ("Stable", "streams")
    assert {s: set(ps) for s, ps in view.members[0].assignment.items()} == EVERY_TASK


def listed(tasks: Tasks) -> dict[str, list[int]]:
    """Tasks as a group view lists them."""
    return {s: sorted(ps) for s, ps in sorted(tasks.items())}


def settled_pair(client: WireClient, app: str) -> tuple[Member, Member]:
    """Two members of ``app`` that joined and heartbeat until the group is Stable with tasks
    for both."""
    a, b = Member(client, app), Member(client, app)
    a.join()
    b.join()
    deadline = time.monotonic() + 30
    while described(client, app).group_state != "Stable" or not (a.active and b.active):
        assert time.monotonic() < deadline, (a.active, b.active)
        time.sleep(0.1)
        a.acknowledge()
        b.acknowledge()
    return a, b


def test_the_group_view_shows_each_members_tasks_standbys_and_epoch(kafka):
    app = new_app(kafka, **{"streams.num.standby.replicas": "1"})
    with WireClient(coordinator(kafka, app)) as client:
        a, b = settled_pair(client, app)
        view = kafka.group(app)
    assert (view.state, view.generation_id) == ("Stable", a.epoch)
    members = {m.member_id: m for m in view.members}
    for member, other in ((a, b), (b, a)):
        seen = members[member.member_id]
        assert (seen.member_epoch, seen.process_id) == (member.epoch, member.member_id)
        assert (seen.assignment, seen.standby, seen.warmup) == (
            listed(member.active), listed(member.standby), {})
        # one standby of every stateful task (subtopology 1 counts into a store; 0 keeps
        # none), on the other process: the other member's active tasks of subtopology 1
        assert seen.standby == listed({"1": other.active["1"]})


def test_a_missing_source_topic_is_a_status_and_no_task(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app, source="absent")
        member.join()
        assert member.statuses == [(1, "Source topics absent are missing.")]
        time.sleep(1.2)  # past the assignment interval
        answer = member.acknowledge()
        assert member.active == {} and (1, "Source topics absent are missing.") in [
            (s.status_code, s.status_detail) for s in answer.status]
        assert described(client, app).group_state == "NotReady"


def test_tasks_move_only_after_their_old_owner_gave_them_up(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        a, b = Member(client, app), Member(client, app)
        a.join()
        a.until(owns(EVERY_TASK), "a lone member gets every task")
        b.join()
        assert b.active == {}
        b.until(lambda m: m.epoch > a.epoch, "b reaches the new group epoch")
        assert b.active == {}  # a still owns them all
        a_epoch = a.epoch
        a.until(lambda m: m.active != EVERY_TASK, "a is told to give tasks up")
        assert a.epoch == a_epoch  # revoking keeps the old epoch
        a.until(lambda m: m.epoch > a_epoch, "a reaches the new epoch once it gave them up")
        b.until(lambda m: m.active != {}, "b gets the tasks a gave up")
        assert sorted(map(len, a.active.values())) + sorted(map(len, b.active.values()))
        for sub in ("0", "1"):
            assert a.active.get(sub, set()) | b.active[sub] == {0, 1, 2}
            assert not a.active.get(sub, set()) & b.active[sub]
        assert sum(map(len, a.active.values())) == sum(map(len, b.active.values())) == 3
        assert described(client, app).group_state == "Stable"
        b.heartbeat(-1)
        a.until(owns(EVERY_TASK), "a takes every task back when b leaves")


def test_heartbeats_are_checked_with_kafkas_errors_and_messages(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        fenced = member.send(member.epoch + 5)
        assert (fenced.error_code, fenced.error_message) == (
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a greater member epoch ({member.epoch + 5}) than "
            f"the one known by the group coordinator ({member.epoch}). The member must "
            "abandon all its partitions and rejoin.")
        assert (fenced.member_id, fenced.member_epoch, fenced.acceptable_recovery_lag,
                list(fenced.status), fenced.active_tasks) == ("", 0, -1, [], None)
        unknown = member.send(member_id="nobody")
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.UNKNOWN_MEMBER_ID, f"Member nobody is not a member of group {app}.")
        for fields, message in (
                ({"topology": word_count(app)},
                 "Topology can only be provided when (re-)joining."),
                ({"member_epoch": 0, "rebalance_timeout_ms": 1000},
                 "ActiveTasks must be empty when (re-)joining."),  # null is not empty
                ({"member_epoch": 0, "rebalance_timeout_ms": 1000, "active_tasks": [],
                  "standby_tasks": [], "warmup_tasks": []},
                 "Topology must be non-null when (re-)joining."),
                ({"member_epoch": 0}, "RebalanceTimeoutMs must be provided in first request."),
                ({"member_epoch": -3}, "MemberEpoch is -3, but must be greater than or equal "
                                       "to -2."),
                ({"active_tasks": []}, "If one task-type is non-null, all must be non-null."),
                ({"member_id": " "}, "MemberId can't be empty.")):
            refused = member.send(**fields)
            assert (refused.error_code, refused.error_message) == (
                ErrorCode.INVALID_REQUEST, message), fields
        missing = client.request("StreamsGroupHeartbeat", 1, {
            "group_id": f"{app}-none", "member_id": "m", "member_epoch": 3,
            "endpoint_information_epoch": 0})
        assert (missing.error_code, missing.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {app}-none not found.")


def test_streams_groups_in_the_other_group_apis(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        listed = client.request("ListGroups", 5, {"states_filter": [],
                                                   "types_filter": ["streams"]}).groups
        assert [(g.group_id, g.protocol_type, g.group_type) for g in listed] == [
            (app, "streams", "streams")]
        (classic,) = client.request("DescribeGroups", 6, {"groups": [app]}).groups
        assert (classic.error_code, classic.error_message, classic.group_state) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Group {app} is not a classic group.", "Dead")
        (consumer,) = client.request("ConsumerGroupDescribe", 1,
                                     {"group_ids": [app]}).groups
        assert consumer.error_message == f"Group {app} is not a consumer group."
        (other,) = client.request("StreamsGroupDescribe", 1,
                                  {"group_ids": [f"{app}-none"]}).groups
        assert (other.error_code, other.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Group {app}-none not found.")
        (v1,) = client.request("StreamsGroupDescribe", 1, {"group_ids": [app]}).groups
        assert (v1.assignor_name, v1.topology_description) == ("sticky", None)
        (busy,) = client.request("DeleteGroups", 2, {"groups_names": [app]}).results
        assert busy.error_code == ErrorCode.NON_EMPTY_GROUP
        assert member.heartbeat(-1).member_epoch == -1
        (deleted,) = client.request("DeleteGroups", 2, {"groups_names": [app]}).results
        assert deleted.error_code == 0


def test_a_member_commits_offsets_at_its_own_epoch(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        member.until(owns(EVERY_TASK), "every task")

        def commit(epoch: int) -> int:
            answer = client.request("OffsetCommit", 9, {
                "group_id": app, "generation_id_or_member_epoch": epoch,
                "member_id": member.member_id, "group_instance_id": None,
                "topics": [{"name": "lines", "partitions": [{
                    "partition_index": 0, "committed_offset": 0,
                    "committed_metadata": ""}]}]})
            return answer.topics[0].partitions[0].error_code

        assert commit(member.epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
        assert commit(member.epoch) == 0
    assert kafka.committed(app, "lines", 0) == 0


def test_group_configs_set_the_heartbeat_interval_within_the_broker_limits(kafka):
    app = new_app(kafka, **{"streams.heartbeat.interval.ms": "6000"})
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        refused = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": app, "configs": [
                {"name": "streams.session.timeout.ms", "config_operation": 0,
                 "value": "1000"}]}], "validate_only": False}).responses
    assert [(r.error_code, r.error_message) for r in refused] == [(
        ErrorCode.INVALID_CONFIG,
        "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.")]
    with WireClient(coordinator(kafka, app)) as client:
        assert Member(client, app).join().heartbeat_interval_ms == 6000


def test_a_topology_description_is_refused_without_a_description_plugin(kafka):
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        answer = client.request("StreamsGroupTopologyDescriptionUpdate", 0, {
            "group_id": "any", "member_id": "m", "topology_epoch": 0,
            "topology_description": {"subtopologies": [], "global_stores": []}})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.UNSUPPORTED_VERSION,
        "The broker has no streams group topology description plugin configured.")


# Streams groups of two members at most, whose members' sessions last 3 s (Kafka's defaults:
# no bound, 45 s at least): on the real side a broker of its own, started with these
SMALL_GROUPS = {"group.streams.max.size": "2", "group.streams.min.session.timeout.ms": "3000",
                "group.streams.session.timeout.ms": "3000",
                "group.streams.min.heartbeat.interval.ms": "1000",
                "group.streams.heartbeat.interval.ms": "1000"}
small_groups = pytest.mark.fake_kafka(topics={"lines": 3}, overrides=SMALL_GROUPS)
FULL = "The streams group has reached its maximum capacity of 2 members."


@small_groups
def test_a_full_streams_group_refuses_a_join_with_kafkas_message(kafka):
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        a, b = settled_pair(client, app)
        newcomer = Member(client, app)
        refused = newcomer.send(**newcomer.joining())
        assert (refused.error_code, refused.error_message, refused.member_id,
                refused.member_epoch) == (ErrorCode.GROUP_MAX_SIZE_REACHED, FULL, "", 0)
        assert a.send(**a.joining()).error_code == 0  # one of its members, joining again
        assert b.acknowledge().error_code == 0  # the members go on
        b.heartbeat(-1)
        newcomer.join()  # b's place is free
        assert {m.member_id for m in kafka.group(app).members} == {a.member_id,
                                                                   newcomer.member_id}


def fenced_member(kafka, fence: Callable[[Member, Member], None]) -> None:
    """Two members share the tasks; ``fence(a, b)`` fences a while b heartbeats. Then a is
    unknown to the group (its heartbeat is UNKNOWN_MEMBER_ID with Kafka's text), b takes
    every task over, and a may join again as a new member."""
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        a, b = settled_pair(client, app)
        fence(a, b)
        b.until(owns(EVERY_TASK), "b takes a's tasks over")
        unknown = a.send(active_tasks=[{"subtopology_id": s, "partitions": sorted(ps)}
                                       for s, ps in sorted(a.active.items())],
                         standby_tasks=[], warmup_tasks=[])
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.UNKNOWN_MEMBER_ID, f"Member {a.member_id} is not a member of group {app}.")
        a.join()
        assert a.epoch > 0 and len(kafka.group(app).members) == 2


@small_groups
def test_a_member_silent_past_its_session_is_fenced_and_its_tasks_reassigned(kafka):
    def silent(a: Member, b: Member) -> None:
        deadline = time.monotonic() + 3.5  # a's session: 3 s; b heartbeats meanwhile
        while time.monotonic() < deadline:
            b.acknowledge()
            time.sleep(0.5)

    fenced_member(kafka, silent)


@small_groups
@pytest.mark.fake_only("kick_member is the fake's")
def test_a_kicked_member_is_fenced_as_one_whose_session_ran_out(kafka):
    fenced_member(kafka, lambda a, b: kafka.kick_member(a.app, a.member_id))


def test_a_member_joining_the_emptied_group_waits_for_the_initial_delay_again(kafka):
    """The last member gone, the group's target is empty at the new group epoch: a member
    joining it then gets that epoch and no task until ``streams.initial.rebalance.delay.ms``
    has passed again (not the assignment interval), then every task at the next epoch."""
    app = new_app(kafka, **{"streams.initial.rebalance.delay.ms": "1000"})
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        member.until(owns(EVERY_TASK), "the first assignment")
        owning = member.epoch
        assert member.send(-1).error_code == 0
        member.epoch, member.active = 0, {}
        member.join()
        assert (member.epoch, member.active, member.statuses) == (owning + 1, {}, [
            (5, "Assignment delayed due to the configured initial rebalance delay.")])
        assert member.acknowledge().member_epoch == owning + 1
        time.sleep(1.1)
        member.until(owns(EVERY_TASK), "the assignment after the delay")
        assert member.epoch == owning + 2


def test_a_heartbeat_at_the_previous_epoch_must_own_only_tasks_it_is_assigned(kafka):
    """A member whose epoch moved may still heartbeat at its previous epoch (an answer lost)
    if the active, standby and warm-up tasks it reports owning are all among those it is
    assigned: a standby or warm-up task it was not given is FENCED_MEMBER_EPOCH, as Kafka's
    throwIfStreamsGroupMemberEpochIsInvalid checks all three."""
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        member.until(owns(EVERY_TASK), "the first assignment")
        previous = member.epoch
        time.sleep(1.1)  # past the assignment interval: a new process id moves the epoch
        member.heartbeat(process_id="moved")
        member.until(lambda m: m.epoch > previous, "the next epoch")
        owned = [{"subtopology_id": s, "partitions": sorted(ps)}
                 for s, ps in sorted(member.active.items())]
        task = [{"subtopology_id": "1", "partitions": [0]}]
        for standby, warmup, error in (([], [], 0), (task, [], ErrorCode.FENCED_MEMBER_EPOCH),
                                       ([], task, ErrorCode.FENCED_MEMBER_EPOCH)):
            answer = member.send(previous, active_tasks=owned, standby_tasks=standby,
                                 warmup_tasks=warmup)
            assert answer.error_code == error, (standby, warmup)


def test_a_topology_whose_partition_counts_cannot_be_decided_is_refused(kafka):
    """A repartition source topic no subtopology writes, sinks that only feed each other, or
    a subtopology reading no topic (its task count undecidable): STREAMS_INVALID_TOPOLOGY
    with Kafka's texts, and no group is made."""
    app = new_app(kafka)
    unwritten = word_count(app)
    unwritten["subtopologies"][0]["repartition_sink_topics"] = [f"{app}-other-repartition"]
    looped = word_count(app)
    looped["subtopologies"][1]["source_topics"] = []
    looped["subtopologies"][1]["repartition_sink_topics"] = [f"{app}-words-repartition"]
    looped["subtopologies"][0]["source_topics"] = []
    looped["subtopologies"][0]["repartition_source_topics"] = [
        dict(looped["subtopologies"][1]["repartition_source_topics"][0],
             name=f"{app}-back-repartition")]
    looped["subtopologies"][1]["repartition_sink_topics"] = [f"{app}-back-repartition"]
    sourceless = word_count(app)
    sourceless["subtopologies"][1]["repartition_source_topics"] = []
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        for topology, message in (
                (unwritten, "Failed to compute number of partitions for all repartition "
                            "topics, because a repartition source topic is never used as a "
                            "sink topic."),
                (looped, "Failed to compute number of partitions for all repartition topics. "
                         "There may be loops in the topology that cannot be resolved."),
                (sourceless, "No source topics found for subtopology 1")):
            refused = member.send(**dict(member.joining(), topology=topology))
            assert (refused.error_code, refused.error_message) == (
                ErrorCode.STREAMS_INVALID_TOPOLOGY, message)
        unknown = member.send(1, rebalance_timeout_ms=1000)
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {app} not found.")


def test_a_topology_refused_once_its_source_topic_appears_fails_heartbeats_changing_nothing(
        kafka):
    """A topology taken while its source topic was missing (a status, no check of its
    counts) but with a subtopology reading nothing: once the topic is there, Kafka configures
    it again on the next heartbeat, which is STREAMS_INVALID_TOPOLOGY, and so is another
    member's join, which leaves the group as it was (one member)."""
    app = new_app(kafka)
    source = f"{app}-later"
    sourceless = word_count(app, source)
    sourceless["subtopologies"][1]["repartition_source_topics"] = []
    refused = (ErrorCode.STREAMS_INVALID_TOPOLOGY, "No source topics found for subtopology 1")
    with WireClient(coordinator(kafka, app)) as client:
        member, other = Member(client, app, source), Member(client, app, source)
        member.heartbeat(**dict(member.joining(), topology=sourceless))
        assert member.statuses == [(1, f"Source topics {source} are missing.")]
        kafka.create_topic(source, partitions=2)
        answer = member.send(active_tasks=[], standby_tasks=[], warmup_tasks=[])
        assert (answer.error_code, answer.error_message) == refused
        answer = other.send(**dict(other.joining(), topology=sourceless))
        assert (answer.error_code, answer.error_message) == refused
        group = described(client, app)
        assert [m.member_id for m in group.members] == [member.member_id]


def test_a_negative_repartition_topic_count_fails_the_join_as_kafkas_uncaught_exception(kafka):
    """A repartition source topic given a partition count below 1: Kafka 4.4's
    ConfiguredInternalTopic throws IllegalArgumentException ("Number of partitions must be
    at least 1.") out of its coordinator, answered UNKNOWN_SERVER_ERROR, and no group is
    made; the fake answers the same (a client never sends it: Kafka Streams sends 0, "the
    broker decides", or the count the application set)."""
    app = new_app(kafka)
    negative = word_count(app)
    negative["subtopologies"][1]["repartition_source_topics"][0]["partitions"] = -1
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        refused = member.send(**dict(member.joining(), topology=negative))
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, None)
        unknown = member.send(1, rebalance_timeout_ms=1000)
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {app} not found.")


@pytest.mark.parametrize("twice", ["0", "1"])
def test_a_topology_naming_a_subtopology_twice_fails_the_join_as_kafkas_uncaught_exception(
        kafka, twice):
    """A join whose topology lists one subtopology id twice: Kafka 4.4 answers
    UNKNOWN_SERVER_ERROR (its map of subtopologies refuses the duplicate key), no message,
    and makes no group. Found by the differential fuzzer (seed 1's #718062)."""
    app = new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        topology = word_count(app)
        topology["subtopologies"].append(dict(topology["subtopologies"][int(twice)]))
        refused = member.send(**dict(member.joining(), topology=topology))
        assert (refused.error_code, refused.error_message, refused.member_epoch) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, None, 0)
        unknown = member.send(1, rebalance_timeout_ms=1000)
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {app} not found.")


@pytest.mark.parametrize("epoch", [-1, -2])
def test_a_topology_of_a_negative_epoch_fails_the_join_as_kafkas_uncaught_exception(kafka, epoch):
    """A join whose topology has a negative epoch, to a new group or to one that has its
    topology: Kafka 4.4 answers UNKNOWN_SERVER_ERROR (an exception its coordinator does not
    catch), no message, and makes no group (Kafka Streams numbers topologies from 0). Found
    by the differential fuzzer (seed 3's #61075)."""
    app, settled = new_app(kafka), new_app(kafka)
    with WireClient(coordinator(kafka, app)) as client, \
            WireClient(coordinator(kafka, settled)) as other:
        member = Member(client, app)
        negative = dict(word_count(app), epoch=epoch)
        refused = member.send(**dict(member.joining(), topology=negative))
        assert (refused.error_code, refused.error_message, refused.member_epoch) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, None, 0)
        unknown = member.send(1, rebalance_timeout_ms=1000)
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {app} not found.")
        first = Member(other, settled)
        first.join()
        second = Member(other, settled)
        refused = second.send(**dict(second.joining(), topology=dict(word_count(settled),
                                                                     epoch=epoch)))
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.UNKNOWN_SERVER_ERROR, None)
        assert [m.member_id for m in described(other, settled).members] == [first.member_id]


def test_a_join_may_not_change_the_groups_topology(kafka):
    """Kafka 4.4 has no topology updates: a join with other subtopologies, or at a later
    topology epoch, is INVALID_REQUEST; the group's own topology (its subtopologies in any
    order) is let in."""
    app = new_app(kafka)
    renamed = word_count(app)
    renamed["subtopologies"][0]["subtopology_id"] = ""
    later = dict(word_count(app), epoch=1)
    reordered = word_count(app)
    reordered["subtopologies"].reverse()
    with WireClient(coordinator(kafka, app)) as client:
        first, other = Member(client, app), Member(client, app)
        first.join()
        for topology in (renamed, later):
            refused = other.send(**dict(other.joining(), topology=topology))
            assert (refused.error_code, refused.error_message) == (
                ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
        assert other.send(**dict(other.joining(), topology=reordered)).error_code == 0


@pytest.mark.parametrize("change", [{"rebalance_timeout_ms": 60_000},
                                    {"user_endpoint": {"host": "h", "port": 9}},
                                    {"client_tags": [{"key": "zone", "value": "a"}]}])
def test_any_change_to_a_dynamic_members_metadata_moves_the_group_epoch(kafka, change):
    """Kafka 4.4 computes a new target assignment, at a new group epoch, when a member without
    an instance id changes anything the group keeps of it (hasStreamsMemberMetadataChanged: its
    rebalance timeout, user endpoint, client id and host as well as its process id, rack,
    client tags and topology epoch); seed 1's #174102 of the differential fuzzer, whose member
    came back with another rebalance timeout, found the fake bumping for the last four only."""
    app = new_app(kafka, **{"streams.assignment.interval.ms": "0"})
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.join()
        member.until(owns(EVERY_TASK), "the first assignment")
        settled = described(client, app).group_epoch
        member.heartbeat(**change)
        member.until(lambda m: described(client, app).group_epoch > settled,
                     "a new group epoch")
        member.until(lambda m: m.epoch == described(client, app).group_epoch,
                     "the member at the new epoch")


def test_a_static_members_rebalance_timeout_leaves_the_group_epoch(kafka):
    """For a member with an instance id only its topology epoch, rack, client tags and
    process id move the group epoch (hasEpochRelevantMemberConfigChanged)."""
    app = new_app(kafka, **{"streams.assignment.interval.ms": "0"})
    with WireClient(coordinator(kafka, app)) as client:
        member = Member(client, app)
        member.heartbeat(**member.joining(), instance_id="instance-1")
        member.until(owns(EVERY_TASK), "the first assignment")
        settled = described(client, app).group_epoch
        member.heartbeat(rebalance_timeout_ms=60_000, instance_id="instance-1")
        time.sleep(0.5)
        member.acknowledge()
        assert (described(client, app).group_epoch, member.epoch) == (settled, settled)
