"""A Kafka cluster's client settings as a Java client's properties file names them (the pytest
plugin's ``--kafka-client-config FILE``): read from the file, turned into librdkafka's settings
for confluent-kafka, and into the TLS context and SASL login of fakebroker's own wire
connections (the inspection of a real cluster, ``fakebroker.real_cluster``).

What fakebroker's connections understand (any other property is kept for the tests' own
clients, and ignored here):

* ``security.protocol``: PLAINTEXT (the default), SSL, SASL_PLAINTEXT or SASL_SSL;
* ``sasl.mechanism``: PLAIN (the default), SCRAM-SHA-256 or SCRAM-SHA-512, the user and
  password from ``sasl.jaas.config`` (a PlainLoginModule or ScramLoginModule with
  ``username`` and ``password`` options) or from ``sasl.username`` and ``sasl.password``;
* TLS: the CA of ``ssl.truststore.location`` (``ssl.truststore.type=PEM``; a JKS or PKCS12
  truststore is refused: convert it to PEM) or ``ssl.ca.location``; a client certificate for
  mutual TLS from ``ssl.keystore.location`` (``ssl.keystore.type=PEM``: key and certificate
  chain in one file) or ``ssl.certificate.location`` and ``ssl.key.location``, with
  ``ssl.key.password``; ``ssl.endpoint.identification.algorithm`` ``https`` (the default)
  checks the broker's host name, an empty one does not.

A setting fakebroker cannot honour (another mechanism, a JKS store) raises ``ValueError``
naming it, before any connection is made.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import ssl
from collections.abc import Mapping
from pathlib import Path

from fakebroker.wire_client import WireClient

PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
MECHANISMS = frozenset({"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})
_JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;]+))""")


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java properties file as a dict (``key=value`` or ``key: value`` lines; ``#`` and
    ``!`` comments; a line ending in a backslash continues on the next)."""
    properties: dict[str, str] = {}
    pending = ""
    for raw in Path(path).read_text().splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        pair = re.match(r"(\S+?)\s*(?:[=:]\s*|\s+)(.*)$", line)
        key, value = pair.groups() if pair else (line, "")
        properties[key] = value
    return properties


def protocol(config: Mapping[str, str]) -> str:
    """The security protocol, checked."""
    name = config.get("security.protocol", "PLAINTEXT").upper()
    if name not in PROTOCOLS:
        raise ValueError(f"security.protocol={name}: fakebroker speaks {sorted(PROTOCOLS)}")
    return name


def login(config: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(mechanism, user, password) of a SASL protocol, else None."""
    if not protocol(config).startswith("SASL_"):
        return None
    mechanism = config.get("sasl.mechanism", "PLAIN").upper()
    if mechanism not in MECHANISMS:
        raise ValueError(f"sasl.mechanism={mechanism}: fakebroker's inspection logs in with "
                         f"{sorted(MECHANISMS)}")
    options = {m[1]: next(v for v in m.groups()[1:] if v is not None)
               for m in _JAAS_OPTION.finditer(config.get("sasl.jaas.config", ""))}
    user = config.get("sasl.username", options.get("username"))
    password = config.get("sasl.password", options.get("password"))
    if user is None or password is None:
        raise ValueError("SASL needs a user and password: sasl.jaas.config with username and "
                         "password options, or sasl.username and sasl.password")
    return mechanism, user, password


def _pem(config: Mapping[str, str], store: str) -> str | None:
    """The PEM file of ``ssl.<store>.location``; ValueError for another store type."""
    location = config.get(f"ssl.{store}.location")
    if location is None:
        return None
    kind = config.get(f"ssl.{store}.type", "JKS").upper()
    if kind != "PEM":
        raise ValueError(f"ssl.{store}.type={kind}: fakebroker reads PEM files only "
                         f"(convert ssl.{store}.location to PEM)")
    return location


def tls_files(config: Mapping[str, str]) -> dict[str, str]:
    """The TLS files of a TLS protocol, by librdkafka's names (``ssl.ca.location``,
    ``ssl.certificate.location``, ``ssl.key.location``, ``ssl.key.password``)."""
    if not protocol(config).endswith("SSL"):
        return {}
    files = {"ssl.ca.location": config.get("ssl.ca.location") or _pem(config, "truststore")}
    keystore = _pem(config, "keystore")
    files["ssl.certificate.location"] = config.get("ssl.certificate.location") or keystore
    files["ssl.key.location"] = config.get("ssl.key.location") or keystore
    files["ssl.key.password"] = config.get("ssl.key.password")
    return {k: v for k, v in files.items() if v}


def checks_host_name(config: Mapping[str, str]) -> bool:
    return config.get("ssl.endpoint.identification.algorithm", "https").lower() == "https"


def for_librdkafka(config: Mapping[str, str]) -> dict[str, str]:
    """confluent-kafka's (librdkafka's) settings for the cluster: ``bootstrap.servers`` if
    given, and the security settings above by librdkafka's names. Add a client's own."""
    settings = {"security.protocol": protocol(config)}
    if "bootstrap.servers" in config:
        settings["bootstrap.servers"] = config["bootstrap.servers"]
    sasl = login(config)
    if sasl is not None:
        settings["sasl.mechanism"], settings["sasl.username"], settings["sasl.password"] = sasl
    settings.update(tls_files(config))
    if protocol(config).endswith("SSL"):
        settings["ssl.endpoint.identification.algorithm"] = \
            "https" if checks_host_name(config) else "none"
    return settings


def ssl_context(config: Mapping[str, str]) -> ssl.SSLContext | None:
    """The TLS context of a TLS protocol (None for a plaintext one)."""
    if not protocol(config).endswith("SSL"):
        return None
    files = tls_files(config)
    context = ssl.create_default_context(cafile=files.get("ssl.ca.location"))
    context.check_hostname = checks_host_name(config)
    if "ssl.certificate.location" in files:
        context.load_cert_chain(files["ssl.certificate.location"],
                                files.get("ssl.key.location"), files.get("ssl.key.password"))
    return context


def connect(address: str, config: Mapping[str, str], client_id: str) -> WireClient:
    """A wire connection to ``address`` with the cluster's TLS, logged in by its SASL
    mechanism (SaslHandshake v1, then SaslAuthenticate v2); ``PermissionError`` with the
    broker's message when the login is refused."""
    client = WireClient(address, client_id=client_id, ssl_context=ssl_context(config))
    try:
        sasl = login(config)
        if sasl is not None:
            _authenticate(client, *sasl)
    except BaseException:
        client.close()
        raise
    return client


def _authenticate(client: WireClient, mechanism: str, user: str, password: str) -> None:
    def exchange(auth_bytes: bytes) -> bytes:
        answer = client.request("SaslAuthenticate", 2, {"auth_bytes": auth_bytes})
        if answer.error_code != 0:
            raise PermissionError(f"{mechanism} login as {user!r} refused: "
                                  f"{answer.error_message}")
        return bytes(answer.auth_bytes)

    handshake = client.request("SaslHandshake", 1, {"mechanism": mechanism})
    if handshake.error_code != 0:
        raise PermissionError(f"the broker does not enable {mechanism}: it offers "
                              f"{list(handshake.mechanisms)}")
    if mechanism == "PLAIN":
        exchange(f"\0{user}\0{password}".encode())
        return
    scram = _Scram(mechanism, user, password)
    if not scram.verify(exchange(scram.final(exchange(scram.first())))):
        raise PermissionError(f"{mechanism}: the broker's signature does not verify")


class _Scram:
    """The client's side of one SCRAM exchange (RFC 5802, RFC 7677)."""

    def __init__(self, mechanism: str, user: str, password: str) -> None:
        self.hash = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.password = password.encode()
        name = user.replace("=", "=3D").replace(",", "=2C")
        self.first_bare = f"n={name},r={secrets.token_urlsafe(18)}"
        self.auth_message = b""
        self.salted = b""

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        self.salted = hashlib.pbkdf2_hmac(self.hash, self.password,
                                          base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c=biws,r={fields['r']}"
        self.auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.digest(self.salted, b"Client Key", self.hash)
        signature = hmac.digest(hashlib.new(self.hash, client_key).digest(),
                                self.auth_message, self.hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        server_key = hmac.digest(self.salted, b"Server Key", self.hash)
        expected = b"v=" + base64.b64encode(hmac.digest(server_key, self.auth_message,
                                                        self.hash))
        return hmac.compare_digest(server_final, expected)
