"""The certificates a fake cluster makes for itself at start, with ``cryptography``.

``generate(directory, hosts)`` writes, in ``directory``:

* ``ca.pem``: a new certificate authority (its key is kept in memory only, never written);
* ``broker.pem`` and ``broker-key.pem``: the brokers' certificate, signed by that CA, with
  subjectAltName IP 127.0.0.1, DNS localhost and every name or address of ``hosts`` (the
  advertised host): clients that verify the broker's host name (Kafka's default,
  ``ssl.endpoint.identification.algorithm=https``) accept it;
* ``client.pem`` and ``client-key.pem``: a client certificate with subject exactly
  ``CN=fakebroker-client``, signed by the CA, whose principal on an mTLS listener is
  ``User:CN=fakebroker-client``.

Guarantees: keys are new for each call (P-256 elliptic curve: made in microseconds, served
by every Kafka client), written unencrypted as PKCS#8 PEM, readable by the owner alone;
certificates are valid from a day before the call (clocks that differ a little) to a year
after. Nothing here is ever committed: a cluster makes them in a private temporary directory
and removes it when it stops (``fakebroker.security.tls``).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_SUBJECT = "CN=fakebroker-client"
_VALID_BEFORE = datetime.timedelta(days=1)
_VALID_AFTER = datetime.timedelta(days=365)


@dataclass(frozen=True)
class Certificates:
    """The PEM files ``generate`` wrote."""

    ca_file: Path
    broker_cert_file: Path
    broker_key_file: Path
    client_cert_file: Path
    client_key_file: Path


def generate(directory: Path, hosts: Iterable[str] = ()) -> Certificates:
    """Make a CA, a broker certificate (for 127.0.0.1, localhost and ``hosts``) and a client
    certificate (``CN=fakebroker-client``) in ``directory``."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("fakebroker CA")
    ca = (_builder(ca_name, ca_name, ca_key.public_key(), now)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(_key_usage(cert_sign=True), critical=True)
          .sign(ca_key, hashes.SHA256()))
    issuer = ca_key, ca
    broker_key = ec.generate_private_key(ec.SECP256R1())
    broker = _leaf(issuer, _name("fakebroker broker"), broker_key, now,
                   ExtendedKeyUsageOID.SERVER_AUTH,
                   x509.SubjectAlternativeName(_alt_names(hosts)))
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _leaf(issuer, _name("fakebroker-client"), client_key, now,
                   ExtendedKeyUsageOID.CLIENT_AUTH, None)
    files = Certificates(directory / "ca.pem", directory / "broker.pem",
                         directory / "broker-key.pem", directory / "client.pem",
                         directory / "client-key.pem")
    _write(files.ca_file, _pem(ca))
    _write(files.broker_cert_file, _pem(broker))
    _write(files.broker_key_file, _key_pem(broker_key))
    _write(files.client_cert_file, _pem(client))
    _write(files.client_key_file, _key_pem(client_key))
    return files


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             now: datetime.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _VALID_BEFORE).not_valid_after(now + _VALID_AFTER)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key),
                           critical=False))


def _leaf(issuer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate], subject: x509.Name,
          key: ec.EllipticCurvePrivateKey, now: datetime.datetime,
          usage: x509.ObjectIdentifier, alt_names: x509.SubjectAlternativeName | None
          ) -> x509.Certificate:
    """A certificate for ``key`` signed by ``issuer`` (CA key, CA certificate)."""
    ca_key, ca = issuer
    builder = (_builder(subject, ca.subject, key.public_key(), now)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(_key_usage(cert_sign=False), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca_key.public_key()), critical=False))
    if alt_names is not None:
        builder = builder.add_extension(alt_names, critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=not cert_sign, content_commitment=False,
                         key_encipherment=False, data_encipherment=False,
                         key_agreement=not cert_sign, key_cert_sign=cert_sign,
                         crl_sign=cert_sign, encipher_only=False, decipher_only=False)


def _alt_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    """IP 127.0.0.1, DNS localhost, then each of ``hosts`` as an address or a name, once."""
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                     x509.DNSName("localhost")]
    for host in hosts:
        try:
            name: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            name = x509.DNSName(host)
        if name not in names:
            names.append(name)
    return names


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file only its owner may read."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
