"""Certificates made at test time with ``cryptography`` (never a committed private key): a CA,
a broker certificate and a client certificate, as PEM files with unencrypted PKCS#8 keys, for
the secure Apache Kafka broker (tests/real_secure_kafka.py) and for the clients of both brokers.

    files = write_tls_files(tmp_dir)   # the same keys as FakeKafka.ssl, plus the broker's
    files["ca_file"], files["client_cert_file"], files["client_key_file"]
    files["broker_keystore_file"]      # the broker's key, then its certificate and the CA's
    untrusted = write_foreign_ca(tmp_dir)  # a CA that signed neither broker's certificate

The broker certificate names IP 127.0.0.1 and DNS localhost (clients verify the host name);
the client certificate's subject is exactly ``CN=fakebroker-client`` (Kafka's default principal
mapping makes it ``User:CN=fakebroker-client``). Keys are EC P-256: made in a millisecond.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_SUBJECT = "CN=fakebroker-client"
VALIDITY = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def cert_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        """The key as unencrypted PKCS#8 ("BEGIN PRIVATE KEY"), what Kafka's PEM stores take."""
        return self.key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
             ) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY))


def make_ca(common_name: str) -> Issued:
    """A self-signed certificate authority."""
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        _builder(_name(common_name), _name(common_name), key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256()))
    return Issued(certificate, key)


def issue(ca: Issued, common_name: str, *, server: bool) -> Issued:
    """A leaf certificate signed by ``ca``: a server's names 127.0.0.1 and localhost."""
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        _builder(_name(common_name), ca.certificate.subject, key)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            ca.key.public_key()), critical=False))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName([
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    path.chmod(0o600)
    return str(path)


def write_tls_files(directory: Path) -> dict[str, str]:
    """A new CA, broker and client certificate as PEM files in ``directory``: the keys of
    ``FakeKafka.ssl`` (ca_file, client_cert_file, client_key_file) and the broker's keystore
    (broker_keystore_file: its key, its certificate, then the CA's)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca("fakebroker-test-ca")
    broker = issue(ca, "localhost", server=True)
    client = issue(ca, CLIENT_SUBJECT.removeprefix("CN="), server=False)
    return {
        "ca_file": _write(directory / "ca.pem", ca.cert_pem()),
        "client_cert_file": _write(directory / "client.pem", client.cert_pem()),
        "client_key_file": _write(directory / "client.key", client.key_pem()),
        "broker_keystore_file": _write(directory / "broker.pem",
                                       broker.key_pem() + broker.cert_pem() + ca.cert_pem()),
    }


def write_foreign_ca(directory: Path) -> str:
    """The PEM file of a CA that signed neither broker's certificate: a client trusting only
    it fails its TLS handshake."""
    directory.mkdir(parents=True, exist_ok=True)
    return _write(directory / "foreign-ca.pem", make_ca("not-the-broker-ca").cert_pem())
