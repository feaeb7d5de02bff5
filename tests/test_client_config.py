"""A cluster's Java client properties (``--kafka-client-config``): read as Java reads the
file, turned into confluent-kafka's settings, and refused, by name, where fakebroker's own
connections cannot honour them. Logging in with them is tests/test_user_suite.py's."""

from __future__ import annotations

import pytest

from fakebroker.client_config import for_librdkafka, read_properties

MANAGED = """\
# a managed cluster's client.properties
bootstrap.servers=broker-1.example.com:9093
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username='API-KEY' password="se=cret;";
client.dns.lookup : use_all_dns_ips
! another comment
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
"""


def test_a_properties_file_is_read_as_java_reads_it(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text(MANAGED)
    assert read_properties(path) == {
        "bootstrap.servers": "broker-1.example.com:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
                            "username='API-KEY' password=\"se=cret;\";",
        "client.dns.lookup": "use_all_dns_ips",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/etc/kafka/ca.pem",
    }


def test_confluent_kafka_gets_the_same_cluster_by_its_own_names(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text(MANAGED)
    assert for_librdkafka(read_properties(path)) == {
        "bootstrap.servers": "broker-1.example.com:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN", "sasl.username": "API-KEY", "sasl.password": "se=cret;",
        "ssl.ca.location": "/etc/kafka/ca.pem",
        "ssl.endpoint.identification.algorithm": "https",
    }


def test_librdkafkas_own_names_and_a_pem_keystore_for_mutual_tls():
    assert for_librdkafka({
        "security.protocol": "SSL", "ssl.ca.location": "ca.pem",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": "me.pem",
        "ssl.endpoint.identification.algorithm": ""}) == {
        "security.protocol": "SSL", "ssl.ca.location": "ca.pem",
        "ssl.certificate.location": "me.pem", "ssl.key.location": "me.pem",
        "ssl.endpoint.identification.algorithm": "none"}
    assert for_librdkafka({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism":
                           "SCRAM-SHA-256", "sasl.username": "u", "sasl.password": "p"}) == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "u", "sasl.password": "p"}
    assert for_librdkafka({}) == {"security.protocol": "PLAINTEXT"}


@pytest.mark.parametrize("config,refusal", [
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "sasl.mechanism=GSSAPI"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "SASL needs a user"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "ca.jks"},
     "ssl.truststore.type=JKS: fakebroker reads PEM files only"),
    ({"security.protocol": "TLS"}, "security.protocol=TLS"),
])
def test_what_fakebroker_cannot_honour_is_refused_by_name(config, refusal):
    with pytest.raises(ValueError, match=refusal):
        for_librdkafka(config)
