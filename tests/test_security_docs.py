"""The security how-to (docs/how-to/security.md) holds what it shows: its ``fakebroker serve``
line serves the listeners and PEM files of the ready file it shows, and each client
configuration it gives per listener kind —
librdkafka's through confluent-kafka and the Java client 4.4's — filled in from
``kafka.listeners`` and ``kafka.ssl`` and producing a record as alice (or as the client
certificate) on the secure preset, on the fake and with ``--kafka=both`` on Apache Kafka 4.4.
Its Python examples run in tests/test_docs.py, as every page's.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.clients.java import run_harness
from tests.conftest import ROOT, start_served, stop_served
from tests.security import CERTIFICATE_PRINCIPAL, SECURE, allow

TOPIC = "orders"
TOPIC_RESOURCE, WRITE = 2, 4  # Kafka's ResourceType and AclOperation codes
KINDS = ("SASL_SSL with SCRAM-SHA-512", "SASL_PLAINTEXT with PLAIN",
         "SSL with a client certificate (mTLS)")
OAUTHBEARER = "SASL_PLAINTEXT with OAUTHBEARER, unsecured (sasl_mechanisms must list OAUTHBEARER)"
KEYSTORE = "<ssl.client_key_file, then ssl.client_cert_file, in one file>"


PAGE = ROOT / "docs" / "how-to" / "security.md"


def page_blocks(language: str) -> list[str]:
    """The ``language`` code blocks of the security how-to, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)


def configurations(client: int) -> dict[str, dict[str, str]]:
    """The configuration block ``client`` (0: librdkafka, 1: Java) as kind -> properties:
    one paragraph per kind, named by its comment line."""
    shown = [b for b in page_blocks("text") if b.startswith(f"# {KINDS[0]}\n")]
    assert len(shown) == 2
    paragraphs = shown[client].strip().split("\n\n")
    configs = {}
    for paragraph in paragraphs:
        comment, *lines = paragraph.splitlines()
        configs[comment.removeprefix("# ")] = dict(line.split("=", 1) for line in lines)
    return configs


def filled(config: dict[str, str], listeners: dict[str, str], tls: dict[str, str] | None,
           tmp_path: Path) -> dict[str, str]:
    """``config`` with the page's placeholders replaced by the ``listeners`` and the PEM files
    ``tls`` (``kafka.listeners``/``kafka.ssl``, or the ready file's)."""
    def value(text: str) -> str:
        if text == KEYSTORE:
            keystore = tmp_path / "client-keystore.pem"
            keystore.write_text(Path(tls["client_key_file"]).read_text()
                                + Path(tls["client_cert_file"]).read_text())
            return str(keystore)
        text = re.sub(r"<listeners\.(\w+)>", lambda m: listeners[m[1]], text)
        return re.sub(r"<ssl\.(\w+)>", lambda m: tls[m[1]], text)
    return {key: value(text) for key, text in config.items()}


def produce_with_confluent(config: dict[str, str]) -> None:
    from confluent_kafka import Producer

    delivered: list = []
    producer = Producer({**config, "message.timeout.ms": 20000})
    producer.produce(TOPIC, b"paid", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None]


def test_the_configurations_name_each_listener_kind_for_both_clients():
    assert list(configurations(0)) == [*KINDS, OAUTHBEARER]
    assert list(configurations(1)) == list(KINDS)


def test_the_serve_line_serves_the_listeners_and_ssl_files_the_ready_file_shows(tmp_path):
    command = page_blocks("sh")[0]
    shown = json.loads(next(b for b in page_blocks("text") if b.startswith("{")))
    args = shlex.split(command.replace("\\\n", " "))
    assert args[:2] == ["fakebroker", "serve"]
    process, details = start_served(tmp_path, *args[2:])
    try:
        assert list(details["listeners"]) == list(shown["listeners"])
        assert {key: Path(path).name for key, path in details["ssl"].items()} == {
            key: Path(path).name for key, path in shown["ssl"].items()}
        config = filled(configurations(0)[KINDS[0]], details["listeners"], details["ssl"],
                        tmp_path)
        produce_with_confluent({**config, "sasl.username": "admin",
                                "sasl.password": "admin-secret"})
    finally:
        assert stop_served(process) == 0


@pytest.mark.fake_kafka(**SECURE, topics={TOPIC: 1})
@pytest.mark.parametrize("kind", KINDS)
def test_librdkafkas_configuration_produces_as_alice_or_the_certificate(kafka, kind, tmp_path):
    for principal in ("User:alice", CERTIFICATE_PRINCIPAL):
        allow(kafka, TOPIC_RESOURCE, TOPIC, WRITE, principal=principal)
    produce_with_confluent(filled(configurations(0)[kind], kafka.listeners, kafka.ssl, tmp_path))
    assert [record.value for record in kafka.records(TOPIC)] == [b"paid"]


@pytest.mark.java
@pytest.mark.fake_kafka(**SECURE, topics={TOPIC: 1})
@pytest.mark.parametrize("kind", KINDS)
def test_the_java_clients_configuration_produces_as_alice_or_the_certificate(
        kafka, kind, tmp_path):
    for principal in ("User:alice", CERTIFICATE_PRINCIPAL):
        allow(kafka, TOPIC_RESOURCE, TOPIC, WRITE, principal=principal)
    config = filled(configurations(1)[kind], kafka.listeners, kafka.ssl, tmp_path)
    bootstrap = config.pop("bootstrap.servers")
    run_harness("produce", "--bootstrap", bootstrap, "--topic", TOPIC, "--count", "1",
                "--timeout-ms", "20000", *[f"{k}={v}" for k, v in config.items()],
                client_version="4.4.0", timeout=60)
    assert len(kafka.records(TOPIC)) == 1


@pytest.mark.fake_kafka(listeners=("SASL_PLAINTEXT",), sasl_mechanisms=("OAUTHBEARER",),
                        topics={TOPIC: 1})
def test_librdkafkas_unsecured_oauthbearer_configuration_produces(fake_kafka, tmp_path):
    produce_with_confluent(filled(configurations(0)[OAUTHBEARER], fake_kafka.listeners, None,
                                  tmp_path))
    assert [record.value for record in fake_kafka.records(TOPIC)] == [b"paid"]
    assert {entry.principal for entry in fake_kafka.journal(api="Produce")} == {"User:alice"}
