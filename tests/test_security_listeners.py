"""Listeners per security protocol, TLS and mTLS (issue 19, items 1 and 2), with real clients
over real sockets: confluent-kafka, kafka-python, aiokafka and the Java client produce and
consume over SSL (the broker's certificate checked, host name included) and mTLS (the client's
certificate from ``kafka.ssl``); a client a listener refuses fails its TLS handshake while the
others go on; a client on one listener is sent to the same listener of every broker.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from fakebroker.api import HANDLERS
from fakebroker.api.describe_cluster import API_KEY as DESCRIBE_CLUSTER_KEY
from fakebroker.runtime import open_cluster
from fakebroker.security.certificates import generate
from fakebroker.server import TLS_HANDSHAKE_TIMEOUT
from fakebroker.sync import FakeKafka
from fakebroker.wire_client import WireClient
from tests.absent import needs
from tests.clients.java import java_available, run_harness
from tests.conftest import start_served, stop_served
from tests.processes import free_port_run

pytestmark = pytest.mark.timeout(120)

COUNT = 20
SSL_ONLY = {"listeners": ("SSL",)}
MTLS = {"listeners": ("SSL",), "ssl_client_auth": "required"}
HELLO = {"client_software_name": "wire", "client_software_version": "1"}  # ApiVersions v3


def values(tag: str) -> list[bytes]:
    return [f"{tag}-{i}".encode() for i in range(COUNT)]


def stored(kafka: FakeKafka, topic: str) -> list[bytes]:
    return sorted(r.value for p in range(kafka.topics()[topic]) for r in kafka.records(topic, p))


def tls_context(kafka: FakeKafka, client_certificate: bool) -> ssl.SSLContext:
    """A client context trusting the cluster's CA, with its client certificate if asked."""
    context = ssl.create_default_context(cafile=kafka.ssl["ca_file"])
    if client_certificate:
        context.load_cert_chain(kafka.ssl["client_cert_file"], kafka.ssl["client_key_file"])
    return context


# -- each client, produce then consume, over SSL and over mTLS ---------------------------------


def confluent_config(kafka: FakeKafka, mtls: bool) -> dict[str, str]:
    config = {"bootstrap.servers": kafka.listeners["SSL"], "security.protocol": "SSL",
              "ssl.ca.location": kafka.ssl["ca_file"]}
    if mtls:
        config |= {"ssl.certificate.location": kafka.ssl["client_cert_file"],
                   "ssl.key.location": kafka.ssl["client_key_file"]}
    return config


def confluent_round_trip(kafka: FakeKafka, mtls: bool, tag: str) -> list[bytes]:
    return confluent_produce_consume(confluent_config(kafka, mtls), tag)


def confluent_produce_consume(config: dict[str, str], tag: str) -> list[bytes]:
    """Produce ``values(tag)`` to "orders" (3 partitions), then read them back in group
    ``g-TAG``, committing them."""
    from confluent_kafka import Consumer, Producer

    producer = Producer(config)
    for i, value in enumerate(values(tag)):
        producer.produce("orders", value=value, partition=i % 3)
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": f"g-{tag}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe(["orders"])
    seen: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(seen) < COUNT:
        assert time.monotonic() < deadline, "confluent-kafka did not read every record"
        message = consumer.poll(0.5)
        if message is not None:
            assert message.error() is None, message.error()
            seen.append(message.value())
    consumer.commit(asynchronous=False)
    consumer.close()
    return sorted(seen)


def kafka_python_round_trip(kafka: FakeKafka, mtls: bool, tag: str) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    config = {"bootstrap_servers": kafka.listeners["SSL"], "security_protocol": "SSL",
              "ssl_cafile": kafka.ssl["ca_file"]}
    if mtls:
        config |= {"ssl_certfile": kafka.ssl["client_cert_file"],
                   "ssl_keyfile": kafka.ssl["client_key_file"]}
    producer = KafkaProducer(**config)
    acks = [producer.send("orders", value=value, partition=i % 3)
            for i, value in enumerate(values(tag))]
    producer.flush(timeout=30)
    for ack in acks:
        ack.get(timeout=1)
    producer.close()
    consumer = KafkaConsumer("orders", group_id=f"g-{tag}", auto_offset_reset="earliest",
                             consumer_timeout_ms=30_000, **config)
    consumer.partitions_for_topic("orders")  # see tests/clients/consumers.py
    seen = []
    for record in consumer:
        seen.append(record.value)
        if len(seen) == COUNT:
            break
    consumer.close()
    return sorted(seen)


def aiokafka_round_trip(kafka: FakeKafka, mtls: bool, tag: str) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> list[bytes]:
        config = {"bootstrap_servers": kafka.listeners["SSL"], "security_protocol": "SSL",
                  "ssl_context": tls_context(kafka, mtls)}
        producer = AIOKafkaProducer(**config)
        await producer.start()
        try:
            for i, value in enumerate(values(tag)):
                await producer.send_and_wait("orders", value=value, partition=i % 3)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("orders", group_id=f"g-{tag}",
                                    auto_offset_reset="earliest", **config)
        await consumer.start()
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        try:
            while len(seen) < COUNT:
                assert time.monotonic() < deadline, "aiokafka did not read every record"
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    seen += [record.value for record in records]
        finally:
            await consumer.stop()
        return sorted(seen)

    return asyncio.run(run())


ROUND_TRIPS = {"confluent-kafka": confluent_round_trip, "kafka-python": kafka_python_round_trip,
               "aiokafka": aiokafka_round_trip}


@pytest.mark.parametrize("client", ROUND_TRIPS)
@pytest.mark.parametrize("mtls", [False, True], ids=["ssl", "mtls"])
def test_python_clients_produce_and_consume_over_tls(client, mtls):
    settings = MTLS if mtls else SSL_ONLY
    with FakeKafka(brokers=2, topics={"orders": 3}, **settings) as kafka:
        tag = f"{client}-{'mtls' if mtls else 'ssl'}"
        assert ROUND_TRIPS[client](kafka, mtls, tag) == sorted(values(tag))
        assert stored(kafka, "orders") == sorted(values(tag))


@needs(java_available(), "the Java client (bash .ci/install-clients)")
def test_the_java_client_produces_and_consumes_over_mtls(tmp_path, java_client):
    with FakeKafka(brokers=2, topics={"orders": 3}, **MTLS) as kafka:
        keystore = tmp_path / "client-keystore.pem"  # Kafka's PEM keystore: key, then chain
        keystore.write_text(Path(kafka.ssl["client_key_file"]).read_text()
                            + Path(kafka.ssl["client_cert_file"]).read_text())
        properties = ("security.protocol=SSL", "ssl.truststore.type=PEM",
                      f"ssl.truststore.location={kafka.ssl['ca_file']}",
                      "ssl.keystore.type=PEM", f"ssl.keystore.location={keystore}")
        produced = run_harness("produce", "--bootstrap", kafka.listeners["SSL"],
                               "--topic", "orders", "--count", str(COUNT), *properties,
                               client_version=java_client)
        assert produced[-1] == {"done": COUNT}
        consumed = run_harness("consume", "--bootstrap", kafka.listeners["SSL"],
                               "--topic", "orders", *properties, client_version=java_client)
        assert consumed[-1] == {"done": COUNT}
        assert len(stored(kafka, "orders")) == COUNT


# -- who is refused, and only them --------------------------------------------------------------


def test_a_client_without_a_certificate_is_refused_in_the_handshake_and_others_go_on(caplog):
    with FakeKafka(brokers=1, topics={"orders": 1}, **MTLS) as kafka:
        address = kafka.listeners["SSL"]
        with WireClient(address, ssl_context=tls_context(kafka, True)) as trusted:
            assert trusted.request("ApiVersions", 3, HELLO).error_code == 0
            refused = WireClient(address, ssl_context=tls_context(kafka, False))
            # TLS 1.3: the client's side of the handshake ends before the broker checks its
            # certificate; the broker's alert comes with the first read.
            with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
                refused.request("ApiVersions", 3, HELLO)
            refused.close()
            assert trusted.request("ApiVersions", 3, HELLO).error_code == 0
        refusals = [r.getMessage() for r in caplog.records if "TLS handshake" in r.getMessage()]
        assert len(refusals) == 1
        assert "on its SSL listener: TLS handshake failed" in refusals[0]
        assert "PEER_DID_NOT_RETURN_A_CERTIFICATE" in refusals[0]


def first_error(producer: Any, errors: list[Any], code: int) -> Any:
    """The first error of ``code`` librdkafka reports to ``errors`` (its error_cb), within
    20 s."""
    deadline = time.monotonic() + 20
    while not any(e.code() == code for e in errors):
        assert time.monotonic() < deadline, f"no error {code} reported: {errors}"
        producer.poll(0.2)
    return next(e for e in errors if e.code() == code)


def test_librdkafka_without_a_certificate_on_a_required_listener_gets_an_ssl_error():
    from confluent_kafka import KafkaError, Producer

    with FakeKafka(brokers=1, topics={"orders": 1}, **MTLS) as kafka:
        errors: list[KafkaError] = []
        producer = Producer({**confluent_config(kafka, mtls=False), "error_cb": errors.append})
        # TLS 1.3: its handshake done, the client reads the broker's alert as it waits for
        # its first answer (ApiVersions)
        refused = first_error(producer, errors, KafkaError._TRANSPORT)
        assert "alert certificate required" in refused.str()


def test_a_client_that_does_not_trust_the_brokers_ca_fails_its_handshake(tmp_path):
    other_ca = generate(tmp_path).ca_file  # another cluster's CA
    with FakeKafka(brokers=1, **SSL_ONLY) as kafka:
        context = ssl.create_default_context(cafile=str(other_ca))
        with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
            WireClient(kafka.listeners["SSL"], ssl_context=context)
        with WireClient(kafka.listeners["SSL"], ssl_context=tls_context(kafka, False)) as ok:
            assert ok.request("ApiVersions", 3, HELLO).error_code == 0


def test_librdkafka_that_does_not_trust_the_brokers_ca_reports_the_verification(tmp_path):
    from confluent_kafka import KafkaError, Producer

    other_ca = generate(tmp_path).ca_file
    with FakeKafka(brokers=1, **SSL_ONLY) as kafka:
        errors: list[KafkaError] = []
        producer = Producer({**confluent_config(kafka, mtls=False),
                             "ssl.ca.location": str(other_ca), "error_cb": errors.append})
        assert "certificate verify failed" in first_error(producer, errors,
                                                          KafkaError._SSL).str()


# -- one listener, on every broker ----------------------------------------------------------------


def ports(servers: str) -> list[int]:
    """The ports of a bootstrap string, in order."""
    return sorted(int(server.rpartition(":")[2]) for server in servers.split(","))


def test_a_client_on_the_ssl_listener_is_sent_to_the_ssl_listener_of_every_broker():
    listeners = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
    with FakeKafka(brokers=3, topics={"orders": 3}, listeners=listeners) as kafka:
        assert list(kafka.listeners) == list(listeners)
        assert kafka.bootstrap_servers == kafka.listeners["PLAINTEXT"]
        first_ssl = kafka.listeners["SSL"].split(",")[0]
        with WireClient(first_ssl, ssl_context=tls_context(kafka, False)) as client:
            metadata = client.request("Metadata", 12, {"topics": None})
            assert sorted(b.port for b in metadata.brokers) == ports(kafka.listeners["SSL"])
            cluster = client.request("DescribeCluster", 1, {"endpoint_type": 1})
            assert sorted(b.port for b in cluster.brokers) == ports(kafka.listeners["SSL"])
            coordinator = client.request("FindCoordinator", 4, {"key_type": 0,
                                                                "coordinator_keys": ["g"]})
            assert coordinator.coordinators[0].port in ports(kafka.listeners["SSL"])
        with WireClient(kafka.bootstrap_servers.split(",")[0]) as plain:
            metadata = plain.request("Metadata", 12, {"topics": None})
            assert sorted(b.port for b in metadata.brokers) == ports(kafka.bootstrap_servers)


def test_a_group_on_the_ssl_listener_of_three_brokers_runs_there():
    """librdkafka follows Metadata and FindCoordinator to the other brokers: its TLS
    connections to them succeed only if it is sent to their SSL listeners."""
    from confluent_kafka.admin import AdminClient

    with FakeKafka(brokers=3, topics={"orders": 3}, listeners=("PLAINTEXT", "SSL")) as kafka:
        config = confluent_config(kafka, mtls=False) | {
            "bootstrap.servers": kafka.listeners["SSL"].split(",")[0]}
        assert confluent_produce_consume(config, "three") == sorted(values("three"))
        assert [kafka.committed("g-three", "orders", p) for p in range(3)] == [7, 7, 6]
        admin = AdminClient(config)
        described = admin.describe_cluster().result(timeout=20)
        assert sorted(node.port for node in described.nodes) == ports(kafka.listeners["SSL"])


def test_without_listeners_there_is_one_plaintext_listener_and_no_tls():
    with FakeKafka(brokers=2) as kafka:
        assert kafka.listeners == {"PLAINTEXT": kafka.bootstrap_servers}
        assert kafka.ssl is None
        with WireClient(kafka.bootstrap_servers.split(",")[0]) as client:
            metadata = client.request("Metadata", 12, {"topics": None})
            assert sorted(b.port for b in metadata.brokers) == ports(kafka.bootstrap_servers)


def test_with_a_port_each_listener_takes_the_next_ports_of_every_broker():
    async def main() -> None:
        first = free_port_run(4)
        async with open_cluster(2, port=first, listeners=("SSL", "PLAINTEXT")) as cluster:
            assert cluster.listeners == {"SSL": f"127.0.0.1:{first},127.0.0.1:{first + 1}",
                                         "PLAINTEXT": f"127.0.0.1:{first + 2},"
                                                      f"127.0.0.1:{first + 3}"}
            assert cluster.bootstrap_servers == cluster.listeners["PLAINTEXT"]

    trio.run(main)


def test_a_broker_down_stops_every_listener_and_up_brings_them_back():
    with FakeKafka(brokers=2, listeners=("PLAINTEXT", "SSL")) as kafka:
        plain, secure = (kafka.listeners[name].split(",")[1] for name in ("PLAINTEXT", "SSL"))
        kafka.broker_down(2)
        for address in (plain, secure):
            with pytest.raises(ConnectionRefusedError):
                WireClient(address)
        kafka.broker_up(2)
        with WireClient(plain) as client:
            assert client.request("ApiVersions", 3, HELLO).error_code == 0
        with WireClient(secure, ssl_context=tls_context(kafka, False)) as client:
            assert client.request("ApiVersions", 3, HELLO).error_code == 0


# -- principals ---------------------------------------------------------------------------------


@pytest.fixture
def seen_by_handlers(monkeypatch) -> list[tuple[str, str]]:
    """(listener, principal) of every DescribeCluster request, as its handler sees them."""
    seen: list[tuple[str, str]] = []
    handle = HANDLERS[DESCRIBE_CLUSTER_KEY]

    def recording(request, ctx):
        seen.append((ctx.listener, ctx.principal))
        return handle(request, ctx)

    monkeypatch.setitem(HANDLERS, DESCRIBE_CLUSTER_KEY, recording)
    return seen


@pytest.mark.parametrize("client_auth", ["required", "requested"])
def test_the_principal_of_an_mtls_connection_is_its_certificates_subject(seen_by_handlers,
                                                                         client_auth):
    with FakeKafka(listeners=("SSL", "PLAINTEXT"), ssl_client_auth=client_auth) as kafka:
        with WireClient(kafka.listeners["SSL"], ssl_context=tls_context(kafka, True)) as client:
            client.request("DescribeCluster", 1, {"endpoint_type": 1})
        if client_auth == "requested":
            with WireClient(kafka.listeners["SSL"],
                            ssl_context=tls_context(kafka, False)) as client:
                client.request("DescribeCluster", 1, {"endpoint_type": 1})
        with WireClient(kafka.listeners["PLAINTEXT"]) as client:
            client.request("DescribeCluster", 1, {"endpoint_type": 1})
        journaled = [(e.listener, e.principal) for e in kafka.journal(api="DescribeCluster")]
    expected = [("SSL", "User:CN=fakebroker-client")]
    if client_auth == "requested":
        expected.append(("SSL", "User:ANONYMOUS"))
    assert seen_by_handlers == [*expected, ("PLAINTEXT", "User:ANONYMOUS")]
    assert journaled == seen_by_handlers


def test_without_client_auth_a_certificate_is_not_asked_for(seen_by_handlers):
    with FakeKafka(listeners=("SSL",), ssl_client_auth="none") as kafka:
        with WireClient(kafka.listeners["SSL"], ssl_context=tls_context(kafka, True)) as client:
            client.request("DescribeCluster", 1, {"endpoint_type": 1})
    assert seen_by_handlers == [("SSL", "User:ANONYMOUS")]


def test_a_sasl_ssl_listener_never_asks_for_a_certificate():
    """Kafka applies ssl.client.auth to SSL listeners; on SASL_SSL the client authenticates
    by SASL, and a TLS client without a certificate gets through the handshake."""
    with FakeKafka(listeners=("SSL", "SASL_SSL"), ssl_client_auth="required") as kafka:
        with WireClient(kafka.listeners["SASL_SSL"],
                        ssl_context=tls_context(kafka, False)) as client:
            assert client.request("ApiVersions", 3, HELLO).error_code == 0


# -- the generated files, and the user's own -----------------------------------------------------


def test_generated_files_are_private_pkcs8_and_removed_when_the_cluster_stops():
    from cryptography import x509

    with FakeKafka(listeners=("SSL",), advertised_host="broker.example") as kafka:
        files = {name: Path(path) for name, path in kafka.ssl.items()}
        directory = files["ca_file"].parent
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert {f.parent for f in files.values()} == {directory}
        assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files.values())
        key = files["client_key_file"].read_text()
        assert key.startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8, unencrypted
        client = x509.load_pem_x509_certificate(files["client_cert_file"].read_bytes())
        assert client.subject.rfc4514_string() == "CN=fakebroker-client"
        broker_file = next(p for p in directory.iterdir() if p.name == "broker.pem")
        broker = x509.load_pem_x509_certificate(broker_file.read_bytes())
        names = broker.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
        assert names.get_values_for_type(x509.DNSName) == ["localhost", "broker.example"]
    assert not directory.exists()


def test_user_given_certificates_are_served_and_nothing_is_generated(tmp_path):
    own = generate(tmp_path)  # the user's own CA, broker and client certificates
    with FakeKafka(listeners=("SSL",), ssl_client_auth="required",
                   ssl_cert=str(own.broker_cert_file), ssl_key=str(own.broker_key_file),
                   ssl_ca=str(own.ca_file)) as kafka:
        assert kafka.ssl == {"ca_file": str(own.ca_file), "client_cert_file": None,
                             "client_key_file": None}
        context = ssl.create_default_context(cafile=str(own.ca_file))
        context.load_cert_chain(own.client_cert_file, own.client_key_file)
        with WireClient(kafka.listeners["SSL"], ssl_context=context) as client:
            assert client.request("ApiVersions", 3, HELLO).error_code == 0


def test_a_given_ca_checks_client_certificates_of_generated_brokers(tmp_path):
    own = generate(tmp_path)  # the user's CA and client certificate
    with FakeKafka(listeners=("SSL",), ssl_client_auth="required",
                   ssl_ca=str(own.ca_file)) as kafka:
        assert kafka.ssl["ca_file"] != str(own.ca_file)  # the brokers' certificate: generated
        assert kafka.ssl["client_cert_file"] is None  # it would not chain to the given CA
        context = ssl.create_default_context(cafile=kafka.ssl["ca_file"])
        context.load_cert_chain(own.client_cert_file, own.client_key_file)
        with WireClient(kafka.listeners["SSL"], ssl_context=context) as client:
            assert client.request("ApiVersions", 3, HELLO).error_code == 0


def test_client_auth_with_user_certificates_needs_their_ca(tmp_path):
    from fakebroker.options import OptionError

    own = generate(tmp_path)
    with pytest.raises(OptionError, match="ssl_client_auth: required with ssl_cert needs ssl_ca"):
        FakeKafka(listeners=("SSL",), ssl_client_auth="required",
                  ssl_cert=str(own.broker_cert_file), ssl_key=str(own.broker_key_file)).start()


# -- fakebroker serve ----------------------------------------------------------------------------


def test_serve_with_listeners_writes_them_and_the_tls_files_to_its_ready_file(tmp_path):
    from confluent_kafka.admin import AdminClient

    process, details = start_served(tmp_path, "--listener", "SSL", "--listener", "PLAINTEXT",
                                    "--brokers", "2", "--topic", "orders:2")
    try:
        assert list(details["listeners"]) == ["SSL", "PLAINTEXT"]
        assert details["bootstrap_servers"] == details["listeners"]["PLAINTEXT"]
        assert set(details["ssl"]) == {"ca_file", "client_cert_file", "client_key_file"}
        admin = AdminClient({"bootstrap.servers": details["listeners"]["SSL"],
                             "security.protocol": "SSL",
                             "ssl.ca.location": details["ssl"]["ca_file"]})
        topics = admin.list_topics(timeout=10)
        assert len(topics.topics["orders"].partitions) == 2
        assert sorted(b.port for b in topics.brokers.values()) == ports(
            details["listeners"]["SSL"])
    finally:
        assert stop_served(process) == 0
    stdout = process.stdout.read().splitlines()
    assert stdout[:3] == [f"bootstrap.servers={details['bootstrap_servers']}",
                          f"listeners.SSL={details['listeners']['SSL']}",
                          f"listeners.PLAINTEXT={details['listeners']['PLAINTEXT']}"]
    assert f"ssl.ca_file={details['ssl']['ca_file']}" in stdout
    assert not os.path.exists(details["ssl"]["ca_file"])


def test_serve_takes_listeners_from_the_environment(tmp_path):
    process, details = start_served(tmp_path, env={"FAKEBROKER_LISTENERS": "SASL_SSL,SSL"})
    try:
        assert list(details["listeners"]) == ["SASL_SSL", "SSL"]
        assert details["bootstrap_servers"] == details["listeners"]["SASL_SSL"]
    finally:
        assert stop_served(process) == 0


def test_a_scenario_file_asks_for_listeners_in_its_cluster_table(tmp_path):
    scenario = tmp_path / "secure.toml"
    scenario.write_text('[cluster]\nlisteners = ["SSL", "PLAINTEXT"]\n'
                        'ssl_client_auth = "required"\n')
    process, details = start_served(tmp_path, "--scenario", str(scenario))
    try:
        assert list(details["listeners"]) == ["SSL", "PLAINTEXT"]
        context = ssl.create_default_context(cafile=details["ssl"]["ca_file"])
        with WireClient(details["listeners"]["SSL"], ssl_context=context) as refused:
            with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
                refused.request("ApiVersions", 3, HELLO)
    finally:
        assert stop_served(process) == 0


@pytest.mark.fake_kafka(listeners=("SSL",))
def test_the_fake_kafka_marker_takes_listeners(fake_kafka):
    assert list(fake_kafka.listeners) == ["SSL"]
    assert fake_kafka.bootstrap_servers == fake_kafka.listeners["SSL"]
    with WireClient(fake_kafka.bootstrap_servers,
                    ssl_context=tls_context(fake_kafka, False)) as client:
        assert client.request("ApiVersions", 3, HELLO).error_code == 0


def test_a_connection_that_never_handshakes_is_closed_after_kafkas_idle_time():
    """On trio's MockClock: the broker waits ``TLS_HANDSHAKE_TIMEOUT`` (connections.max.idle.ms,
    10 minutes) for a TLS client that sends nothing, then closes its connection."""
    async def main() -> None:
        async with open_cluster(1, listeners=("SSL",)) as cluster:
            host, port = cluster.listeners["SSL"].rsplit(":", 1)
            silent = await trio.open_tcp_stream(host, int(port))
            started = trio.current_time()
            with trio.fail_after(TLS_HANDSHAKE_TIMEOUT + 60):
                try:
                    closed = await silent.receive_some() == b""
                except trio.BrokenResourceError:  # reset rather than closed
                    closed = True
            assert closed
            assert trio.current_time() - started >= TLS_HANDSHAKE_TIMEOUT
            await silent.aclose()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
