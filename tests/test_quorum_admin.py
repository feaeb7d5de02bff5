"""UnregisterBroker, UnregisterController, AddRaftVoter and RemoveRaftVoter as a combined-mode
Kafka 4.4 node answers them on its client listener, on both brokers (``--kafka=both``), over
the wire and through Kafka's own tools (``kafka-cluster unregister``,
``kafka-metadata-quorum remove-controller``).

No test here unregisters the real broker's own id: Kafka would then list no broker until it
restarts (the session's broker is shared by every test).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from fakebroker.wire_client import WireClient
from tests.absent import needs
from tests.clients.tools import run_tool, tools_available

CONTROLLER = [{"name": "CONTROLLER", "host": "localhost", "port": 9999}]
DIRECTORY = uuid.UUID(int=5)  # Kafka's text form: AAAAAAAAAAAAAAAAAAAABQ


def answer(kafka: Any, api: str, version: int, body: dict[str, Any]) -> tuple[int, str]:
    """(error code, message) of one request; the cluster id and a voter's own directory id
    in the message read CID and VOTER_DIR."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        response = client.request(api, version, body)
    message = (response.error_message or "").replace(cluster_id(kafka), "CID")
    return response.error_code, re.sub(r"directoryId=(?!AAAAAAAAAAAAAAAAAAAABQ)[\w-]{22}",
                                       "directoryId=VOTER_DIR", message)


def cluster_id(kafka: Any) -> str:
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        return client.request("Metadata", 12, {"topics": [], "allow_auto_topic_creation": False}
                              ).cluster_id


def voter_directory(kafka: Any) -> uuid.UUID:
    """Voter 1's directory id, as DescribeQuorum v2 gives it."""
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        quorum = client.request("DescribeQuorum", 2, {"topics": [{
            "topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]})
    return quorum.topics[0].partitions[0].current_voters[0].replica_directory_id


VOTERS = "[ReplicaKey(id=1, directoryId=VOTER_DIR)]"


def test_unregister_broker_of_an_id_not_registered_is_refused(kafka) -> None:
    for broker in (2, 0, -1):
        assert answer(kafka, "UnregisterBroker", 0, {"broker_id": broker}) == (
            102, f"Broker ID {broker} is not currently registered")  # BROKER_ID_NOT_REGISTERED


@pytest.mark.fake_only("Kafka would unregister the session's shared broker: it lists no "
                       "broker until it restarts")
def test_unregister_broker_of_a_registered_broker_succeeds(kafka) -> None:
    assert answer(kafka, "UnregisterBroker", 0, {"broker_id": 1}) == (0, "")


def test_unregister_controller_refuses_the_active_one_and_unknown_ids(kafka) -> None:
    assert answer(kafka, "UnregisterController", 0, {"controller_id": 1}) == (
        42, "Controller cannot unregister itself while it is active.")  # INVALID_REQUEST
    assert answer(kafka, "UnregisterController", 0, {"controller_id": 7}) == (
        136, "Controller ID 7 is not currently registered.")  # CONTROLLER_ID_NOT_REGISTERED


@pytest.mark.parametrize("version", [0, 1])
def test_add_raft_voter_answers_as_a_one_node_quorum(kafka, version: int) -> None:
    def add(**fields: Any) -> tuple[int, str]:
        body = {"cluster_id": cluster_id(kafka), "timeout_ms": 1000, "voter_id": 2,
                "voter_directory_id": DIRECTORY, "listeners": CONTROLLER,
                "ack_when_committed": True, **fields}
        return answer(kafka, "AddRaftVoter", version, body)

    assert add(cluster_id="other") == (
        104, 'The given id "other" doesn\'t match the cluster id "CID"')
    assert add(voter_directory_id=uuid.UUID(int=0)) == (
        42, "Add voter request didn't include a valid voter")
    assert add(listeners=[{"name": "A", "host": "127.0.0.1", "port": 1},
                          {"name": "B", "host": "h", "port": 2}]) == (
        42, "Add voter request didn't include the endpoint (Endpoints(endpoints={"
            "ListenerName(A)=127.0.0.1/<unresolved>:1, ListenerName(B)=h/<unresolved>:2})) "
            "for the default listener ListenerName(CONTROLLER)")
    assert add(voter_id=1, cluster_id=None) == (
        126, "The voter id for ReplicaKey(id=1, directoryId=AAAAAAAAAAAAAAAAAAAABQ) is already "
             f"part of the set of voters {VOTERS}.")  # DUPLICATE_VOTER
    # REQUEST_TIMED_OUT: nobody at localhost:9999. Kafka's message depends on how far its
    # connection got ("is not ready to receive requests" before it failed); the fake's is
    # the failed one's.
    code, message = add()
    assert (code, message) == (7, "Aborted add voter operation for since API_VERSIONS "
                                  "returned an error BROKER_NOT_AVAILABLE") or (
        code, message) == (7, "New voter ReplicaKey(id=2, directoryId=AAAAAAAAAAAAAAAAAAAABQ) "
                              "is not ready to receive requests")


def test_add_raft_voter_reads_listener_names_in_upper_case(kafka) -> None:
    """Kafka normalises a voter's listener names to upper case: "controller" names the
    CONTROLLER listener (the voter is then tried: REQUEST_TIMED_OUT, nobody there), and a
    name given twice is listed once, where it came first, with its last endpoint (seed 1's
    #503440, "CONTROLLEr")."""
    def add(*names: str) -> tuple[int, str]:
        return answer(kafka, "AddRaftVoter", 0, {
            "cluster_id": None, "timeout_ms": 1000, "voter_id": 2,
            "voter_directory_id": DIRECTORY, "listeners": [
                {"name": name, "host": "h", "port": port} for port, name in enumerate(names)]})

    assert add("a", "stra\u00dfe", "A") == (
        42, "Add voter request didn't include the endpoint (Endpoints(endpoints={"
            "ListenerName(A)=h/<unresolved>:2, ListenerName(STRASSE)=h/<unresolved>:1})) "
            "for the default listener ListenerName(CONTROLLER)")  # INVALID_REQUEST
    assert add("CONTROLLEr")[0] == 7  # REQUEST_TIMED_OUT


def test_remove_raft_voter_cannot_empty_a_one_node_quorum(kafka) -> None:
    def remove(voter: int, directory: uuid.UUID, cluster: str | None = None) -> tuple[int, str]:
        return answer(kafka, "RemoveRaftVoter", 0, {
            "cluster_id": cluster, "voter_id": voter, "voter_directory_id": directory})

    assert remove(1, DIRECTORY, "other") == (
        104, 'The given id "other" doesn\'t match the cluster id "CID"')
    assert remove(1, uuid.UUID(int=0)) == (42, "Remove voter request didn't include a valid voter")
    for voter, directory, shown in ((1, voter_directory(kafka), "VOTER_DIR"),
                                    (3, DIRECTORY, "AAAAAAAAAAAAAAAAAAAABQ")):
        assert remove(voter, directory) == (127, (  # VOTER_NOT_FOUND
            f"Cannot remove voter ReplicaKey(id={voter}, directoryId={shown}) "
            f"from the set of voters {VOTERS}"))


@needs(tools_available(), "kafka-tools 4.4.0 (bash .ci/install-kafka)")
@pytest.mark.parametrize("command,error", [
    (("kafka-cluster", "unregister", "-b", "BOOTSTRAP", "--id", "2"),
     "BrokerIdNotRegisteredException: Broker ID 2 is not currently registered"),
    (("kafka-cluster", "unregister-controller", "-b", "BOOTSTRAP", "--id", "1"),
     "InvalidRequestException: Controller cannot unregister itself while it is active."),
    (("kafka-cluster", "unregister-controller", "-b", "BOOTSTRAP", "--id", "7"),
     "ControllerIdNotRegisteredException: Controller ID 7 is not currently registered."),
    (("kafka-metadata-quorum", "--bootstrap-server", "BOOTSTRAP", "remove-controller",
      "--controller-id", "3", "--controller-directory-id", "AAAAAAAAAAAAAAAAAAAABQ"),
     "VoterNotFoundException: Cannot remove voter ReplicaKey(id=3, "
     "directoryId=AAAAAAAAAAAAAAAAAAAABQ) from the set of voters [ReplicaKey(id=1, "),
])
def test_kafkas_tools_report_the_refusals(kafka, command: tuple[str, ...], error: str) -> None:
    tool, *args = (kafka.bootstrap_servers if arg == "BOOTSTRAP" else arg for arg in command)
    result = run_tool(tool, *args)
    assert result.status == 1 and result.stdout == ""
    assert f"Caused by: org.apache.kafka.common.errors.{error}" in result.stderr


@pytest.mark.fake_only("a quorum of several voters (the real broker is one node)")
@pytest.mark.fake_kafka(brokers=3)
def test_removing_another_voter_of_several_succeeds_and_the_voter_set_stays(kafka) -> None:
    from fakebroker.api.describe_quorum import directory_id_of

    directory = directory_id_of(cluster_id(kafka), 2)
    assert answer(kafka, "RemoveRaftVoter", 0, {
        "cluster_id": None, "voter_id": 2, "voter_directory_id": directory}) == (0, "")
    with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
        quorum = client.request("DescribeQuorum", 2, {"topics": [{
            "topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]})
    assert [v.replica_id for v in quorum.topics[0].partitions[0].current_voters] == [1, 2, 3]
