"""The admin-client table (docs/reference/admin-client.md) stays true: it is made from the
declarations of tests/admin_methods.py and the ``@calls`` of the tests, its method lists are
exactly the clients' public methods, and every method the fake serves has a test."""

from __future__ import annotations

import inspect
import re
import subprocess

from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from tests.absent import needs
from tests.admin_methods import (
    CLIENTS,
    CONFLUENT_ADMIN,
    JAVA_ADMIN,
    KAFKA_PYTHON_ADMIN,
    PAGE,
    calls_by_test,
    page,
)
from tests.clients.admin import ADMIN_VERSION, admin_available
from tests.clients.java import _java_tool, java_dir


def public_methods(cls: type) -> set[str]:
    return {name for name, member in inspect.getmembers(cls)
            if not name.startswith("_") and callable(member)}


def test_the_page_is_made_from_the_declarations() -> None:
    assert PAGE.read_text() == page(), "run `python -m tests.admin_methods`"


@needs(admin_available(), "kafka-clients 4.4.0 (bash .ci/install-clients)")
def test_every_method_of_the_java_admin_interface_is_declared() -> None:
    jar = java_dir(ADMIN_VERSION) / f"kafka-clients-{ADMIN_VERSION}.jar"
    listed = subprocess.run([_java_tool("javap"), "-cp", str(jar),
                             "org.apache.kafka.clients.admin.Admin"],
                            capture_output=True, text=True, check=True, timeout=60).stdout
    methods = set(re.findall(r"^\s+public .*? (\w+)\(", listed, re.M))
    assert methods == set(JAVA_ADMIN)


def test_every_method_of_the_python_admin_clients_is_declared() -> None:
    assert public_methods(AdminClient) == set(CONFLUENT_ADMIN)
    assert public_methods(KafkaAdminClient) == set(KAFKA_PYTHON_ADMIN)


def test_every_method_reaching_an_api_the_fake_serves_has_a_test_on_both_brokers() -> None:
    tested = calls_by_test()
    for client, (_, methods) in CLIENTS.items():
        for name, method in methods.items():
            if method.apis and not method.not_yet:
                assert ((client, name) in tested) != bool(method.untested), (client, name)
