"""Apache Kafka 4.4.0 configured as the secure preset (``tests.security.SECURE``): the real half
of the security tests, started only when one runs (the ``secure_real_kafka`` fixture).

One KRaft node (tests/real_kafka.py's launcher) with the listeners PLAINTEXT (inter-broker
and inspection: ANONYMOUS is a super user), SSL (``ssl.client.auth=required`` on it alone),
SASL_PLAINTEXT and SASL_SSL on free ports, and a CONTROLLER listener in PLAINTEXT;
PEM keystore and truststore made at start (tests/certificates.py: never a committed key);
the preset's users for PLAIN in each SASL listener's JAAS config and for both SCRAMs at
storage format (``--add-scram``); the StandardAuthorizer with the preset's super users and
``allow.everyone.if.no.acl.found``. Every value is read from ``SECURE``, so the two brokers
cannot drift apart.

    with start_secure_real_kafka(tmp_dir) as kafka:
        kafka.listeners["SASL_SSL"], kafka.ssl["ca_file"]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.certificates import write_tls_files
from tests.real_kafka import RealKafka, start_real_kafka
from tests.security import SECURE

SASL_LISTENERS = ("SASL_PLAINTEXT", "SASL_SSL")
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@dataclass
class SecureRealKafka:
    """The running broker, its listeners (name -> address) and the client's PEM files
    (``ca_file``, ``client_cert_file``, ``client_key_file``: FakeKafka.ssl's keys)."""

    kafka: RealKafka
    listeners: dict[str, str]
    ssl: dict[str, str]

    @property
    def bootstrap_servers(self) -> str:
        return self.kafka.bootstrap_servers

    def stop(self) -> int | None:
        return self.kafka.stop()

    def __enter__(self) -> SecureRealKafka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def server_properties(settings: Mapping[str, Any], tls: Mapping[str, str]) -> dict[str, str]:
    """The server.properties entries of the preset ``settings`` (SECURE's keys), TLS from the
    PEM files ``tls`` (write_tls_files)."""
    users = dict(user.split(":", 1) for user in settings["sasl_users"])
    props = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": tls["broker_keystore_file"],
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": tls["ca_file"],
        "listener.name.ssl.ssl.client.auth": settings["ssl_client_auth"],
        "sasl.enabled.mechanisms": ",".join(settings["sasl_mechanisms"]),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": ";".join(settings["super_users"]),
        "allow.everyone.if.no.acl.found": str(settings["allow_everyone_if_no_acl_found"]).lower(),
    }
    plain_users = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    for listener in SASL_LISTENERS:
        for mechanism in settings["sasl_mechanisms"]:
            options = f" {plain_users}" if mechanism == "PLAIN" else ""
            props[f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"] = (
                f"{LOGIN_MODULES[mechanism]} required{options};")
    return props


def scram_format_args(settings: Mapping[str, Any]) -> list[str]:
    """``StorageTool format`` arguments storing every user's SCRAM credentials."""
    args = []
    for mechanism in settings["sasl_mechanisms"]:
        if mechanism.startswith("SCRAM-"):
            for user in settings["sasl_users"]:
                name, password = user.split(":", 1)
                args += ["--add-scram", f"{mechanism}=[name={name},password={password}]"]
    return args


def start_secure_real_kafka(tmp_dir: Path, settings: Mapping[str, Any] = SECURE
                            ) -> SecureRealKafka:
    """Start the broker of ``settings`` (see the module doc); RealKafkaMissing or
    RealKafkaError as tests.real_kafka.start_real_kafka."""
    tls = write_tls_files(tmp_dir / "tls")
    kafka = start_real_kafka(
        tmp_dir, overrides=server_properties(settings, tls),
        listeners=[name for name in settings["listeners"] if name != "PLAINTEXT"],
        format_args=scram_format_args(settings))
    client_files = {k: tls[k] for k in ("ca_file", "client_cert_file", "client_key_file")}
    return SecureRealKafka(kafka, dict(kafka.listeners), client_files)
