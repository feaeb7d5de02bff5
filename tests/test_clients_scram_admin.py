"""Real admin clients add, describe and delete SCRAM users at run time, on both brokers
(``--kafka=both``): confluent-kafka's and kafka-python's ``alter_user_scram_credentials`` /
``describe_user_scram_credentials``. The client salts the password; the broker keeps the
keys (tests/test_scram_credentials.py shows the wire answers).

Apache Kafka answers Describe from the broker's copy of the metadata, a moment after a change:
the tests wait until it shows the change. Each test names its own users and deletes them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from fakebroker.real_cluster import wait_for

TIMEOUT = 20


def a_user() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def confluent_admin(kafka: Any) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka.bootstrap_servers, "log_level": 3})


def confluent_described(admin: AdminClient, user: str) -> set[tuple[str, int]] | str:
    """``user``'s (mechanism, iterations), or the name of the error describing it."""
    try:
        found = admin.describe_user_scram_credentials([user])[user].result(timeout=TIMEOUT)
    except KafkaException as exc:
        return exc.args[0].name()
    return {(info.mechanism.name, info.iterations) for info in found.scram_credential_infos}


def test_confluent_kafka_adds_describes_and_deletes_a_scram_user(kafka, confluent_admin):
    user = a_user()
    upserts = [UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, iterations),
                                            b"alice-secret")
               for mechanism, iterations in ((ScramMechanism.SCRAM_SHA_256, 8192),
                                             (ScramMechanism.SCRAM_SHA_512, 4096))]
    try:
        for upsert in upserts:  # one user twice in one request is refused: one each
            confluent_admin.alter_user_scram_credentials([upsert])[user].result(TIMEOUT)
        expected = {("SCRAM_SHA_256", 8192), ("SCRAM_SHA_512", 4096)}
        wait_for(lambda: confluent_described(confluent_admin, user) == expected,
                 "the new user described", TIMEOUT)
        every = confluent_admin.describe_user_scram_credentials().result(timeout=TIMEOUT)
        assert {(i.mechanism.name, i.iterations)
                for i in every[user].scram_credential_infos} == expected
    finally:
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
            deleted = confluent_admin.alter_user_scram_credentials(
                [UserScramCredentialDeletion(user, mechanism)])[user]
            deleted.exception(TIMEOUT)
    wait_for(lambda: confluent_described(confluent_admin, user) == "RESOURCE_NOT_FOUND",
             "the deleted user gone", TIMEOUT)


def test_confluent_kafka_gets_kafkas_refusals(kafka, confluent_admin):
    user = a_user()
    few = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1024), b"pw")
    with pytest.raises(KafkaException) as raised:
        confluent_admin.alter_user_scram_credentials([few])[user].result(TIMEOUT)
    assert (raised.value.args[0].name(), raised.value.args[0].str()) == (
        "UNACCEPTABLE_CREDENTIAL", "Too few iterations")
    missing = UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)
    with pytest.raises(KafkaException) as raised:
        confluent_admin.alter_user_scram_credentials([missing])[user].result(TIMEOUT)
    assert raised.value.args[0].name() == "RESOURCE_NOT_FOUND"
    assert confluent_described(confluent_admin, user) == "RESOURCE_NOT_FOUND"


def test_kafka_python_adds_describes_and_deletes_a_scram_user(kafka):
    from kafka.admin import (
        KafkaAdminClient,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    user = a_user()
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers,
                             request_timeout_ms=TIMEOUT * 1000)
    try:
        assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            user, ScramMechanism.SCRAM_SHA_512, "bob-secret", iterations=8192)]) == {user: None}

        def described() -> Any:
            return admin.describe_user_scram_credentials([user])[user]

        wait_for(lambda: described()["error"] is None, "the new user described", TIMEOUT)
        assert [(i["mechanism"].name, i["iterations"])
                for i in described()["credential_infos"]] == [("SCRAM_SHA_512", 8192)]
        assert admin.alter_user_scram_credentials([UserScramCredentialDeletion(
            user, ScramMechanism.SCRAM_SHA_512)]) == {user: None}
        wait_for(lambda: described()["error"] is not None, "the deleted user gone", TIMEOUT)
        assert "does not exist" in described()["error"]
    finally:
        admin.close()
