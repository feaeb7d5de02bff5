"""ACLs as Kafka's StandardAuthorizer: the three ACL APIs, and every API refusing what the
ACLs do not allow, with the error where Kafka puts it.

Those on both brokers (``kafka``, ``--kafka=both``) take the secure preset
(tests/security.py: on Kafka the session's secure broker, tests/real_secure_kafka.py): alice
logs in over SASL_PLAINTEXT and is no super user, so her requests meet the authorizer; her
ACLs and the groups and transactional ids she is to see are made over the PLAINTEXT listener,
where ANONYMOUS is a super user. The others run on a fake whose super user is someone else
(``super_users``, ``kafka.create_acl``): every PLAINTEXT client, ``User:ANONYMOUS``, meets
the authorizer there. The answers compared are those of Kafka 4.4's KafkaApis / AclApis /
StandardAuthorizerData (see each API module's docstring). More of what alice meets runs on
both brokers in tests/test_acls_secure.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakebroker.protocol.errors import ErrorCode
from fakebroker.wire_client import WireClient
from tests.bodies import batch, fetch_body, produce_body
from tests.security import SECURE, allow, logged_in
from tests.test_wire_transactions import coordinator, init

SECURED = pytest.mark.fake_kafka(authorizer=True, super_users=("User:admin",),
                                 topics={"orders": 2, "secret": 1})
# The secure preset on both brokers: alice (SASL) is no super user, ANONYMOUS (PLAINTEXT) is.
AS_ALICE = [pytest.mark.security,
            pytest.mark.fake_kafka(**SECURE, topics={"orders": 2, "secret": 1})]
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
ANY, LITERAL, PREFIXED = 1, 3, 4
READ, WRITE, DESCRIBE, ALL = 3, 4, 8, 2
DENY, ALLOW = 2, 3
ANONYMOUS = "User:ANONYMOUS"


def creation(resource_type: int = TOPIC, name: str = "orders", pattern: int = LITERAL,
             principal: str = ANONYMOUS, operation: int = READ,
             permission: int = ALLOW) -> dict:
    return {"resource_type": resource_type, "resource_name": name,
            "resource_pattern_type": pattern, "principal": principal, "host": "*",
            "operation": operation, "permission_type": permission}


def as_alice(test):
    for mark in AS_ALICE:
        test = mark(test)
    return test


@pytest.fixture
def alice(kafka) -> Iterator[WireClient]:
    with logged_in(kafka, "alice") as client:
        yield client


def match_any(**narrowing: object) -> dict:
    return {"resource_type_filter": ANY, "resource_name_filter": None,
            "pattern_type_filter": ANY, "principal_filter": None, "host_filter": None,
            "operation": ANY, "permission_type": ANY, **narrowing}


# -- without an authorizer ----------------------------------------------------------------------

def test_without_an_authorizer_the_acl_apis_answer_security_disabled(kafka):
    """As Kafka with no authorizer.class.name (the default broker on both sides)."""
    with WireClient(kafka.bootstrap_servers) as client:
        created = client.request("CreateAcls", 3, {"creations": [creation()]})
        described = client.request("DescribeAcls", 3, match_any())
        deleted = client.request("DeleteAcls", 3, {"filters": [match_any()]})
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")]
    assert (described.error_code, described.error_message) == (
        ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker")
    assert [(r.error_code, r.error_message) for r in deleted.filter_results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")]


# -- the ACL APIs ---------------------------------------------------------------------------------

@pytest.mark.fake_kafka(authorizer=True, super_users=("User:ANONYMOUS",))
@pytest.mark.parametrize("version", [1, 2, 3])
def test_acls_created_are_described_by_pattern_and_deleted_by_filter(fake_kafka, version):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        created = client.request("CreateAcls", version, {"creations": [
            creation(), creation(operation=WRITE), creation(name="ord", pattern=PREFIXED),
            creation(GROUP, "g", principal="User:*", permission=DENY), creation()]})
        assert [r.error_code for r in created.results] == [0] * 5
        described = client.request("DescribeAcls", version, match_any())
        prefixed = client.request("DescribeAcls", version, match_any(
            resource_type_filter=TOPIC, resource_name_filter="orders",
            pattern_type_filter=2))  # MATCH: every ACL that applies to "orders"
        deleted = client.request("DeleteAcls", version, {"filters": [
            match_any(operation=WRITE), match_any(resource_type_filter=TOPIC)]})
        after = client.request("DescribeAcls", version, match_any())
    assert [(r.resource_type, r.resource_name, r.pattern_type,
             [(a.principal, a.host, a.operation, a.permission_type) for a in r.acls])
            for r in described.resources] == [
        (TOPIC, "orders", LITERAL, [(ANONYMOUS, "*", READ, ALLOW),
                                    (ANONYMOUS, "*", WRITE, ALLOW)]),
        (TOPIC, "ord", PREFIXED, [(ANONYMOUS, "*", READ, ALLOW)]),
        (GROUP, "g", LITERAL, [("User:*", "*", READ, DENY)])]
    assert [(r.resource_name, r.pattern_type) for r in prefixed.resources] == [
        ("orders", LITERAL), ("ord", PREFIXED)]
    # Both filters match the WRITE ACL: each lists it (Kafka deletes atomically).
    assert [[(m.resource_name, m.operation) for m in r.matching_acls]
            for r in deleted.filter_results] == [
        [("orders", WRITE)], [("orders", READ), ("orders", WRITE), ("ord", READ)]]
    assert [r.resource_name for r in after.resources] == ["g"]
    assert [acl.resource_name for acl in fake_kafka.acls()] == ["g"]


@pytest.mark.fake_kafka(authorizer=True, super_users=("User:ANONYMOUS",))
def test_create_acls_refuses_as_kafka_does(fake_kafka):
    with WireClient(fake_kafka.bootstrap_servers) as client:
        checked = client.request("CreateAcls", 3, {"creations": [
            creation(CLUSTER, "my-cluster", operation=ALL), creation(name=""),
            creation(principal="alice"), creation()]})
        unbuildable = client.request("CreateAcls", 3, {"creations": [
            creation(), creation(pattern=ANY)]})
    assert [(r.error_code, r.error_message) for r in checked.results] == [
        (ErrorCode.INVALID_REQUEST,
         "The only valid name for the CLUSTER resource is kafka-cluster"),
        (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        (ErrorCode.INVALID_REQUEST, "Could not parse principal from `alice` (no colon is "
                                    "present separating the principal type from the principal "
                                    "name)"),
        (0, "")]
    # A pattern type ANY cannot make an AclBinding: the whole request fails, no message.
    assert [(r.error_code, r.error_message) for r in unbuildable.results] == [
        (ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
    assert len(fake_kafka.acls()) == 1


@pytest.mark.fake_kafka(authorizer=True, super_users=("User:ANONYMOUS",))
def test_an_unknown_code_in_an_acl_request_closes_the_connection(fake_kafka):
    """Kafka's request classes refuse UNKNOWN elements while parsing: no answer."""
    with WireClient(fake_kafka.bootstrap_servers) as client:
        client.send("CreateAcls", 3, {"creations": [creation(operation=0)]})
        assert client.is_closed_by_peer()


@as_alice
def test_acl_apis_need_the_cluster_permission(kafka, alice):
    created = alice.request("CreateAcls", 3, {"creations": [creation(), creation()]})
    described = alice.request("DescribeAcls", 3, match_any())
    deleted = alice.request("DeleteAcls", 3, {"filters": [match_any()]})
    assert [r.error_code for r in created.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED] * 2
    assert described.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert [r.error_code for r in deleted.filter_results] == [
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    with WireClient(kafka.bootstrap_servers) as anonymous:  # a super user
        assert anonymous.request("DescribeAcls", 3, match_any()).resources == []


# -- enforcement --------------------------------------------------------------------------------

def commit(client: WireClient, group: str, topics: list[str]) -> list[list[int]]:
    """An admin's OffsetCommit (generation -1) of offset 1 for partition 0 of each topic: the
    error codes per topic."""
    answer = client.request("OffsetCommit", 9, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "group_instance_id": None, "retention_time_ms": -1, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1}]}
            for topic in topics]})
    return [[p.error_code for p in t.partitions] for t in answer.topics]


@as_alice
def test_list_groups_lists_only_the_groups_the_principal_may_describe(kafka, alice):
    with WireClient(kafka.bootstrap_servers) as anonymous:  # a super user
        for group in ("visible", "hidden"):
            assert commit(anonymous, group, ["orders"]) == [[0]]
    allow(kafka, GROUP, "visible", DESCRIBE)
    listed = alice.request("ListGroups", 5, {"states_filter": [], "types_filter": []})
    assert [g.group_id for g in listed.groups] == ["visible"]
    # A commit of no partition to a group she may not read: nothing to refuse, no error.
    assert commit(alice, "hidden", []) == []


@pytest.mark.fake_kafka(authorizer=True, allow_everyone_if_no_acl_found=True,
                        topics={"orders": 1, "secret": 1})
def test_allow_everyone_if_no_acl_found_allows_only_resources_without_acls(fake_kafka):
    fake_kafka.create_acl("TOPIC", "secret", "User:alice", "READ")
    with WireClient(fake_kafka.bootstrap_servers) as client:
        orders = client.request("Fetch", 12, fetch_body("orders", 0, 0))
        secret = client.request("Fetch", 12, fetch_body("secret", 0, 0))
    assert orders.responses[0].partitions[0].error_code == 0
    assert secret.responses[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


@as_alice
def test_a_host_acl_matches_only_clients_from_that_address(kafka, alice):
    allow(kafka, TOPIC, "orders", READ, host="10.9.9.9")
    allow(kafka, TOPIC, "secret", READ, host="127.0.0.1")  # where alice connects from
    orders = alice.request("Fetch", 12, fetch_body("orders", 0, 0))
    secret = alice.request("Fetch", 12, fetch_body("secret", 0, 0))
    assert orders.responses[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert secret.responses[0].partitions[0].error_code == 0


@pytest.mark.fake_kafka(authorizer=True, super_users=("User:ANONYMOUS",), topics={"orders": 1})
def test_a_super_user_may_do_anything_and_a_fault_still_applies(fake_kafka):
    fake_kafka.create_acl("TOPIC", "orders", ANONYMOUS, "ALL", permission="DENY")
    fake_kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=1)
    with WireClient(fake_kafka.bootstrap_servers) as client:
        faulted = client.request("Produce", 11, produce_body("orders", 0, batch([b"x"])))
        produced = client.request("Produce", 11, produce_body("orders", 0, batch([b"y"])))
    assert faulted.responses[0].partition_responses[0].error_code == \
        ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert produced.responses[0].partition_responses[0].error_code == 0


def test_without_an_authorizer_the_security_package_is_never_imported(tmp_path):
    """The plain request path stays as it is: a cluster serving requests with
    ``authorizer`` off imports nothing of ``fakebroker.security``."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from fakebroker import FakeKafka\n"
        "from fakebroker.wire_client import WireClient\n"
        "from tests.bodies import batch, produce_body\n"
        "with FakeKafka(topics={'orders': 1}) as kafka:\n"
        "    with WireClient(kafka.bootstrap_servers) as client:\n"
        "        client.request('Produce', 11, produce_body('orders', 0, batch([b'x'])))\n"
        "        client.request('DescribeAcls', 3, {'resource_type_filter': 1,\n"
        "            'resource_name_filter': None, 'pattern_type_filter': 1,\n"
        "            'principal_filter': None, 'host_filter': None, 'operation': 1,\n"
        "            'permission_type': 1})\n"
        "print(sorted(m for m in sys.modules if m.startswith('fakebroker.security')))\n")
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@as_alice
def test_transactions_are_listed_and_described_only_where_allowed(kafka, alice):
    """Names of this test's own: the real broker keeps transactional ids across tests."""
    for txn in ("acl-tx-1", "acl-other"):  # by ANONYMOUS, a super user, as a producer does
        with coordinator(kafka, txn) as anonymous:
            assert init(anonymous, txn).error_code == 0
    allow(kafka, TRANSACTIONAL_ID, "acl-tx-", ALL, pattern=PREFIXED)
    allow(kafka, TRANSACTIONAL_ID, "acl-other", ALL, principal="User:admin")
    listed = alice.request("ListTransactions", 1, {
        "state_filters": [], "producer_id_filters": [], "duration_filter": -1})
    described = alice.request("DescribeTransactions", 0, {
        "transactional_ids": ["acl-tx-1", "acl-other"]})
    assert [t.transactional_id for t in listed.transaction_states] == ["acl-tx-1"]
    assert [(t.transactional_id, t.error_code) for t in described.transaction_states] == [
        ("acl-tx-1", 0), ("acl-other", ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)]
