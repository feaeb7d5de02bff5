"""Names and ids are checked in Kafka's order, before anything is looked up: an illegal topic
name is INVALID_TOPIC_EXCEPTION (not UNKNOWN_TOPIC_OR_PARTITION) wherever Kafka validates it; an
empty group id is INVALID_GROUP_ID (INVALID_REQUEST for the modern heartbeats) before the group
or its member is looked for, and a key like any where Kafka takes it; partitions that do not
exist before the group; a group before its member. Found by the differential fuzzer
(python -m tests.fuzz differential); they run on the fake and on Apache Kafka
(``--kafka=both``)."""

from __future__ import annotations

import uuid

import pytest

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import join_body
from tests.test_share_groups import share_fetch
from tests.test_wire_versions import topic_id

pytestmark = pytest.mark.fake_kafka(topics={"orders": 1})

# Each breaks one of Topic.validate's rules: a character outside [a-zA-Z0-9._-], empty,
# "." and "..", longer than 249 characters.
ILLEGAL_TOPIC_NAMES = ["bad/name", "é", "", ".", "..", "x" * 250]


def client_of(kafka) -> WireClient:
    return WireClient(kafka.bootstrap_servers.split(",")[0])


def metadata_errors(kafka, names: list[str | None], auto_create: bool, version: int = 12
                    ) -> list[int]:
    with client_of(kafka) as client:
        answer = client.request("Metadata", version, {
            "topics": [{"name": name, "topic_id": ZERO_UUID} for name in names],
            "allow_auto_topic_creation": auto_create})
    return [topic.error_code for topic in answer.topics]


# -- topic names ----------------------------------------------------------------------------


@pytest.mark.parametrize("auto_create", [False, True], ids=["no-auto-create", "auto-create"])
@pytest.mark.parametrize("name", ILLEGAL_TOPIC_NAMES, ids=lambda n: repr(n[:12]))
def test_metadata_answers_an_illegal_topic_name_invalid_topic(kafka, name, auto_create):
    assert metadata_errors(kafka, [name], auto_create) == [ErrorCode.INVALID_TOPIC_EXCEPTION]


def test_metadata_answers_a_legal_missing_topic_unknown_and_an_existing_one(kafka):
    assert metadata_errors(kafka, ["orders", "no-such-topic"], auto_create=False) == [
        0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


@pytest.mark.parametrize("version", [12, 13])
def test_metadata_fails_whole_when_a_topic_has_neither_name_nor_id(kafka, version):
    # Kafka's name check meets a null name (a NullPointerException): every topic gets
    # UNKNOWN_SERVER_ERROR, as MetadataRequest.getErrorResponse answers.
    errors = metadata_errors(kafka, ["orders", None], auto_create=False, version=version)
    assert errors == [ErrorCode.UNKNOWN_SERVER_ERROR] * 2


@pytest.mark.parametrize("version", [12, 13])
def test_metadata_asked_one_topic_by_id_reads_no_topic_by_name(kafka, version):
    # Kafka's handleTopicMetadataRequest: once one topic id is non-zero, the request is read
    # by its ids alone: names beside them (illegal, null, existing) are not looked at, and an
    # id named twice is answered once (found by the differential fuzzer).
    unknown = uuid.uuid4()
    with client_of(kafka) as client:
        answer = client.request("Metadata", version, {"topics": [
            {"name": "bad/name", "topic_id": ZERO_UUID}, {"name": None, "topic_id": ZERO_UUID},
            {"name": "orders", "topic_id": ZERO_UUID}, {"name": "timed", "topic_id": unknown},
            {"name": "bad/name", "topic_id": unknown},
            {"name": None, "topic_id": topic_id(kafka, "orders")}],
            "allow_auto_topic_creation": True})
    assert sorted((t.error_code, t.name, t.topic_id == unknown) for t in answer.topics) == [
        (0, "orders", False), (ErrorCode.UNKNOWN_TOPIC_ID, None, True)]


@pytest.mark.parametrize("name", ILLEGAL_TOPIC_NAMES, ids=lambda n: repr(n[:12]))
def test_describe_configs_answers_an_illegal_topic_name_invalid_topic(kafka, name):
    with client_of(kafka) as client:
        answer = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 2, "resource_name": name, "configuration_keys": None},
            {"resource_type": 2, "resource_name": "no-such-topic",
             "configuration_keys": None}]})
    illegal, missing = answer.results
    assert illegal.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert illegal.error_message.startswith("Topic name is invalid: ")
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("name", ILLEGAL_TOPIC_NAMES, ids=lambda n: repr(n[:12]))
def test_describe_producers_answers_an_illegal_topic_name_invalid_topic(kafka, name):
    with client_of(kafka) as client:
        answer = client.request("DescribeProducers", 0, {"topics": [
            {"name": name, "partition_indexes": [0, 1]},
            {"name": "no-such-topic", "partition_indexes": [0]}]})
    illegal, missing = answer.topics
    assert [p.error_code for p in illegal.partitions] == [ErrorCode.INVALID_TOPIC_EXCEPTION] * 2
    assert [p.error_code for p in missing.partitions] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


# -- group ids ------------------------------------------------------------------------------

# Kafka's group coordinator refuses an empty group id first (isGroupIdNotEmpty): each request
# names a member that does not exist, which would otherwise be UNKNOWN_MEMBER_ID.
EMPTY_GROUP_ID = {
    "JoinGroup": (9, join_body(member_id="m", group=""), lambda a: a.error_code),
    "SyncGroup": (5, {"group_id": "", "generation_id": 1, "member_id": "m",
                      "protocol_type": "consumer", "protocol_name": "range",
                      "assignments": []}, lambda a: a.error_code),
    "Heartbeat": (4, {"group_id": "", "generation_id": 1, "member_id": "m"},
                  lambda a: a.error_code),
    "LeaveGroup": (0, {"group_id": "", "member_id": "m"}, lambda a: a.error_code),
    "OffsetDelete": (0, {"group_id": "", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0}]}]}, lambda a: a.error_code),
    "ConsumerGroupDescribe": (1, {"group_ids": [""]}, lambda a: a.groups[0].error_code),
    "ShareGroupDescribe": (1, {"group_ids": [""]}, lambda a: a.groups[0].error_code),
}


@pytest.mark.parametrize("api", EMPTY_GROUP_ID)
def test_an_empty_group_id_is_invalid_before_the_member_is_looked_for(kafka, api):
    version, body, error_of = EMPTY_GROUP_ID[api]
    with client_of(kafka) as client:
        assert error_of(client.request(api, version, body)) == ErrorCode.INVALID_GROUP_ID


@pytest.mark.parametrize("version", [0, 1])
def test_consumer_group_heartbeat_answers_an_empty_group_id_invalid_request(kafka, version):
    with client_of(kafka) as client:
        answer = client.request("ConsumerGroupHeartbeat", version, {
            "group_id": "", "member_id": "m" * 22, "member_epoch": 5,
            "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
            "topic_partitions": None})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")


@pytest.mark.parametrize(("group", "blank"), [
    ("\x00\x00\x00\x00", True), (" \t\x1f", True), ("\u00a0", False), ("\u2003", False)],
    ids=["nul", "controls", "nbsp", "em-space"])
def test_modern_heartbeats_call_a_group_id_blank_as_java_trims_it(kafka, group, blank):
    # Kafka's throwIfEmptyString: value.trim().isEmpty(), and Java's trim() strips every
    # character up to U+0020, no other (found by the differential fuzzer: a group id of NULs).
    with client_of(kafka) as client:
        consumer = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": group, "member_id": "m" * 22, "member_epoch": 5,
            "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
            "topic_partitions": None})
        streams = client.request("StreamsGroupHeartbeat", 0, {
            "group_id": group, "member_id": "streams-member-2", "member_epoch": 1,
            "endpoint_information_epoch": 0, "rebalance_timeout_ms": -1})
    refused = (ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    assert [(a.error_code, a.error_message) == refused for a in (consumer, streams)] == [
        blank, blank]
    if not blank:
        assert (consumer.error_code, streams.error_code) == (
            ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.GROUP_ID_NOT_FOUND)


def test_txn_offset_commit_answers_an_empty_group_id_before_the_transaction(kafka):
    # No such producer or transaction either: the group id is refused first, on the
    # partitions that exist; the missing one is UNKNOWN_TOPIC_OR_PARTITION.
    with client_of(kafka) as client:
        answer = client.request("TxnOffsetCommit", 3, {
            "transactional_id": "no-such-txn", "group_id": "", "producer_id": 19,
            "producer_epoch": 0, "generation_id": -1, "member_id": "",
            "group_instance_id": None, "topics": [
                {"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 1}]},
                {"name": "no-such-topic", "partitions": [
                    {"partition_index": 0, "committed_offset": 1}]}]})
    assert errors_by_partition(answer) == {
        ("orders", 0): ErrorCode.INVALID_GROUP_ID,
        ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


# -- OffsetCommit: partitions before the group ---------------------------------------------


def errors_by_partition(answer) -> dict[tuple[str, int], int]:
    """(topic, partition) -> error: Kafka lists the partitions it refused before it asks the
    group (the fake in the request's order), so the order is not compared."""
    return {(t.name, p.partition_index): p.error_code for t in answer.topics
            for p in t.partitions}


def commit(kafka, version: int, group: str, generation: int, member: str,
           topics: list[dict]) -> dict[tuple[str, int], int]:
    with client_of(kafka) as client:
        answer = client.request("OffsetCommit", version, {
            "group_id": group, "generation_id_or_member_epoch": generation,
            "member_id": member, "group_instance_id": None, "retention_time_ms": -1,
            "topics": topics})
    return errors_by_partition(answer)


def partitions(*indexes: int) -> list[dict]:
    return [{"partition_index": i, "committed_offset": 1, "committed_leader_epoch": -1,
             "committed_metadata": ""} for i in indexes]


def test_a_commit_to_partitions_that_do_not_exist_never_reaches_the_group(kafka):
    # A member of no group (generation 5): GROUP_ID_NOT_FOUND, had Kafka asked the group.
    assert commit(kafka, 9, "no-such-group", 5, "ghost", [
        {"name": "no-such-topic", "partitions": partitions(0)},
        {"name": "orders", "partitions": partitions(1000)}]) == {
        ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("orders", 1000): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


def test_a_commit_by_an_unknown_topic_id_never_reaches_the_group(kafka):
    assert commit(kafka, 10, "no-such-group", 5, "ghost", [
        {"topic_id": uuid.uuid4(), "partitions": partitions(0)}]) == {
        ("", 0): ErrorCode.UNKNOWN_TOPIC_ID}


def test_a_commit_gets_the_group_error_only_on_the_partitions_that_exist(kafka):
    assert commit(kafka, 9, "no-such-group", 5, "ghost", [
        {"name": "orders", "partitions": partitions(0, 1000)}]) == {
        ("orders", 0): ErrorCode.GROUP_ID_NOT_FOUND,
        ("orders", 1000): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


@pytest.mark.parametrize("member", ["", "someone"])
def test_a_commit_from_outside_an_empty_group_is_stored_with_or_without_a_member_id(
        kafka, member):
    group = f"outside-{member or 'anonymous'}"
    assert commit(kafka, 8, group, -1, member, [
        {"name": "orders", "partitions": partitions(0)}]) == {("orders", 0): 0}


def test_the_empty_group_id_is_a_group_to_offset_commit(kafka):
    assert commit(kafka, 8, "", -1, "", [{"name": "orders", "partitions": partitions(0)}]) == {
        ("orders", 0): 0}


# -- config resources ----------------------------------------------------------------------


def alter_error(kafka, resource_type: int, name: str, key: str, value: str) -> tuple:
    with client_of(kafka) as client:
        answer = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": resource_type, "resource_name": name, "configs": [
                {"name": key, "config_operation": 0, "value": value}]}],
            "validate_only": True})
    return answer.responses[0].error_code, answer.responses[0].error_message


@pytest.mark.parametrize("key, value", [("share.auto.offset.reset", "earliest"),
                                        ("streams.session.timeout.ms", "1000"),
                                        ("no.such.config", "1")])
def test_incremental_alter_configs_refuses_the_default_group_resource_first(kafka, key, value):
    assert alter_error(kafka, 32, "", key, value) == (
        ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")


@pytest.mark.parametrize("name", ["bad/name", ".", "x" * 250], ids=lambda n: repr(n[:12]))
def test_incremental_alter_configs_refuses_an_illegal_topic_name_before_its_configs(kafka, name):
    error, message = alter_error(kafka, 2, name, "no.such.config", "1")
    assert error == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert message.startswith("Topic name is invalid: ")


def test_describe_configs_refuses_the_default_group_resource(kafka):
    with client_of(kafka) as client:
        answer = client.request("DescribeConfigs", 4, {"resources": [
            {"resource_type": 32, "resource_name": "", "configuration_keys": None}]})
    assert (answer.results[0].error_code, answer.results[0].error_message) == (
        ErrorCode.INVALID_REQUEST, "Group name must not be empty")


@pytest.mark.parametrize("resource_type, name", [(2, "bad/name"), (2, ""), (32, "")],
                         ids=["illegal-topic", "default-topic", "default-group"])
def test_incremental_alter_configs_checks_its_operations_before_the_resource_name(
        kafka, resource_type, name):
    with client_of(kafka) as client:
        answer = client.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": resource_type, "resource_name": name, "configs": [
                {"name": "retention.ms", "config_operation": 2, "value": "5"}]}],
            "validate_only": True})
    assert (answer.responses[0].error_code, answer.responses[0].error_message) == (
        ErrorCode.INVALID_CONFIG,
        "Can't APPEND to key retention.ms because its type is not LIST.")


# -- ShareGroupHeartbeat: the group before its member ---------------------------------------


def share_heartbeat(client: WireClient, group: str, member: str, epoch: int,
                    topics: list[str] | None = None) -> int:
    return client.request("ShareGroupHeartbeat", 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
        "subscribed_topic_names": topics}).error_code


def test_share_group_heartbeat_looks_for_the_group_before_the_member(kafka):
    member, stranger = "A" * 21 + "g", "B" * 21 + "g"
    with client_of(kafka) as client:
        assert share_heartbeat(client, "names-share", stranger, 1) == \
            ErrorCode.GROUP_ID_NOT_FOUND
        assert share_heartbeat(client, "names-share", stranger, -1) == \
            ErrorCode.GROUP_ID_NOT_FOUND
        assert share_heartbeat(client, "names-share", member, 0, ["orders"]) == 0
        assert share_heartbeat(client, "names-share", stranger, 1, ["orders"]) == \
            ErrorCode.UNKNOWN_MEMBER_ID
        assert share_heartbeat(client, "names-share", member, -1) == 0
        # Empty, the group stays: a stranger is an unknown member until it is deleted.
        assert share_heartbeat(client, "names-share", stranger, 1) == \
            ErrorCode.UNKNOWN_MEMBER_ID
        deleted = client.request("DeleteGroups", 2, {"groups_names": ["names-share"]})
        assert deleted.results[0].error_code == 0
        assert share_heartbeat(client, "names-share", stranger, 1) == \
            ErrorCode.GROUP_ID_NOT_FOUND


def test_share_group_heartbeat_answers_an_empty_group_id_invalid_request(kafka):
    with client_of(kafka) as client:
        answer = client.request("ShareGroupHeartbeat", 1, {
            "group_id": "", "member_id": "A" * 21 + "g", "member_epoch": 1, "rack_id": None,
            "subscribed_topic_names": None})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")


def test_a_share_fetch_before_any_member_joined_makes_no_group(kafka):
    # Kafka keeps the share-partitions it makes for the fetch outside its group coordinator.
    stranger = "B" * 21 + "g"
    with client_of(kafka) as client:
        fetched = share_fetch(client, "names-fetched", stranger, topic_id(kafka, "orders"), 0)
        assert fetched.error_code == 0
        assert share_heartbeat(client, "names-fetched", stranger, 1) == \
            ErrorCode.GROUP_ID_NOT_FOUND
        listed = client.request("ListGroups", 5, {"states_filter": [],
                                                  "types_filter": ["share"]})
        assert "names-fetched" not in [g.group_id for g in listed.groups]


# -- FindCoordinator: the empty group id is a key like any ----------------------------------


@pytest.mark.parametrize("version", range(4))
def test_find_coordinator_finds_the_empty_group_ids_coordinator(kafka, version):
    with client_of(kafka) as client:
        answer = client.request("FindCoordinator", version, {"key": "", "key_type": 0})
    assert answer.error_code == 0 and answer.node_id >= 0


@pytest.mark.parametrize("version", [4, 5, 6])
def test_find_coordinator_finds_the_empty_group_ids_coordinator_in_a_batch(kafka, version):
    with client_of(kafka) as client:
        answer = client.request("FindCoordinator", version, {
            "key_type": 0, "coordinator_keys": ["", "g"]})
    assert [(c.key, c.error_code) for c in answer.coordinators] == [("", 0), ("g", 0)]


# -- OffsetFetch v10: topics by id ----------------------------------------------------------


def test_offset_fetch_answers_an_unknown_topic_id_unknown_topic_id(kafka):
    orders, unknown = topic_id(kafka, "orders"), uuid.uuid4()
    with client_of(kafka) as client:
        answer = client.request("OffsetFetch", 10, {"groups": [{
            "group_id": "names-fetch", "member_id": None, "member_epoch": -1, "topics": [
                {"topic_id": orders, "partition_indexes": [0]},
                {"topic_id": unknown, "partition_indexes": [0, 1]},
                {"topic_id": ZERO_UUID, "partition_indexes": [3]}]}],
            "require_stable": False})
    (group,) = answer.groups
    assert group.error_code == 0
    assert {t.topic_id: [(p.partition_index, p.error_code, p.committed_offset)
                         for p in t.partitions] for t in group.topics} == {
        orders: [(0, 0, -1)],
        unknown: [(0, ErrorCode.UNKNOWN_TOPIC_ID, -1), (1, ErrorCode.UNKNOWN_TOPIC_ID, -1)],
        ZERO_UUID: [(3, ErrorCode.UNKNOWN_TOPIC_ID, -1)]}


# -- DeleteTopics: a name given twice -------------------------------------------------------


@pytest.mark.parametrize("version", [1, 3, 5, 6])
def test_delete_topics_refuses_a_topic_name_given_twice_at_every_version(kafka, version):
    names = ["ghost", "ghost", "no-such-topic"]
    body = ({"topics": [{"name": n, "topic_id": ZERO_UUID} for n in names]} if version >= 6
            else {"topic_names": names})
    with client_of(kafka) as client:
        answer = client.request("DeleteTopics", version, dict(body, timeout_ms=5000))
    assert {(r.name, r.error_code) for r in answer.responses} == {
        ("ghost", ErrorCode.INVALID_REQUEST),
        ("no-such-topic", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}


# -- ShareFetch and ShareAcknowledge: the member id before the session -----------------------


@pytest.mark.parametrize("member", ["", "m" * 37, "x" * 300], ids=["empty", "37", "300"])
@pytest.mark.parametrize("epoch", [0, 1, -1])
def test_a_share_session_request_refuses_an_empty_or_too_long_member_id(kafka, member, epoch):
    with client_of(kafka) as client:
        acknowledged = client.request("ShareAcknowledge", 1, {
            "group_id": "names-session", "member_id": member, "share_session_epoch": epoch,
            "topics": []})
        fetched = share_fetch(client, "names-session", member, topic_id(kafka, "orders"),
                              epoch)
    assert (acknowledged.error_code, fetched.error_code) == (ErrorCode.INVALID_REQUEST,) * 2


@pytest.mark.parametrize("member", [" ", "not-a-uuid", "m" * 36])
def test_a_share_session_request_looks_any_other_member_id_up(kafka, member):
    with client_of(kafka) as client:
        acknowledged = client.request("ShareAcknowledge", 1, {
            "group_id": "names-session", "member_id": member, "share_session_epoch": 1,
            "topics": []})
    assert acknowledged.error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


# -- AlterShareGroupOffsets, DeleteShareGroupOffsets: the empty group id --------------------


@pytest.mark.parametrize("api, body", [
    ("AlterShareGroupOffsets", {"group_id": "", "topics": [{"topic_name": "orders", "partitions": [
        {"partition_index": 0, "start_offset": 0}]}]}),
    ("DeleteShareGroupOffsets", {"group_id": "", "topics": [{"topic_name": "orders"}]})],
    ids=["alter", "delete"])
def test_share_group_offsets_refuse_an_empty_group_id(kafka, api, body):
    with client_of(kafka) as client:
        answer = client.request(api, 0, body)
    assert (answer.error_code, answer.error_message, list(answer.responses)) == (
        ErrorCode.INVALID_GROUP_ID, "The group id is invalid.", [])


# -- JoinGroup: a member id for a group that does not exist ---------------------------------


@pytest.mark.parametrize("version", [0, 5, 9])
@pytest.mark.parametrize("protocols", [[], None], ids=["no-protocols", "range"])
def test_join_group_answers_a_member_of_no_group_unknown_member_before_its_protocols(
        kafka, version, protocols):
    group = f"names-join-{version}-{'none' if protocols == [] else 'range'}"
    body = join_body(member_id="ghost", group=group)
    if protocols is not None:
        body["protocols"] = protocols
    with client_of(kafka) as client:
        joined = client.request("JoinGroup", version, body)
        described = client.request("DescribeGroups", 5, {"groups": [group]})
    assert (joined.error_code, joined.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "ghost")
    assert described.groups[0].group_state == "Dead"  # not made
