"""The secure preset both brokers run (``SECURE``) and how each real client connects to it.

``SECURE`` holds the ``fake_kafka`` marker options of the preset (issue 19's settings, named
as in ``fakebroker.options``): the four listeners, mTLS required on the SSL listener, the
users admin and alice for PLAIN and both SCRAMs, and the StandardAuthorizer's rules (super
users admin and ANONYMOUS, so the PLAINTEXT listener stays the inspection path; nothing
allowed without an ACL), and the delegation tokens' signing key. A test takes ``kafka`` with
``@pytest.mark.fake_kafka(**SECURE, topics=...)``: a fresh FakeKafka so configured, or under
``--kafka=real`` the session's secure Apache Kafka 4.4 configured alike
(tests/real_secure_kafka.py).

``login(kafka, kind, ...)`` says how a client connects (listener address, mechanism,
credentials, the CA it trusts, its certificate), from ``kafka.listeners`` and ``kafka.ssl``;
``java_props``, ``confluent_config``, ``kafka_python_config``, ``aiokafka_config`` and
``kafkajs_config`` turn it into each client's own settings. ``logged_in(kafka, user)`` is a
``WireClient`` on the SASL_PLAINTEXT listener, logged in by SCRAM-SHA-512, for frame-level
tests; ``allow(kafka, ...)`` grants an ACL over the PLAINTEXT listener (ANONYMOUS is a super
user there) and returns once the broker applies it.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.sasl_tokens import ScramClient

SECURE: dict[str, Any] = {
    "listeners": ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
    "ssl_client_auth": "required",
    "sasl_users": ("admin:admin-secret", "alice:alice-secret"),
    "sasl_mechanisms": ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
    "authorizer": True,
    "super_users": ("User:admin", "User:ANONYMOUS"),
    "allow_everyone_if_no_acl_found": False,
    "delegation_token_secret_key": "fakebroker-token-signing-key",
}
PASSWORDS: dict[str, str] = dict(user.split(":", 1) for user in SECURE["sasl_users"])
# The principal Kafka's default mapping gives the client certificate of ``kafka.ssl``.
CERTIFICATE_PRINCIPAL = "User:CN=fakebroker-client"

# How a client connects: (listener, SASL mechanism or None, with the client certificate).
KINDS: dict[str, tuple[str, str | None, bool]] = {
    "sasl_ssl-scram-sha-512": ("SASL_SSL", "SCRAM-SHA-512", False),
    "sasl_plaintext-plain": ("SASL_PLAINTEXT", "PLAIN", False),
    "ssl-client-certificate": ("SSL", None, True),
}


@dataclass(frozen=True)
class Login:
    """Everything a client needs to connect: ``protocol`` is the listener's security protocol
    (``security.protocol``), ``bootstrap`` its address; ``mechanism``/``username``/
    ``password`` for SASL; ``ca_file`` (the CA it trusts), ``cert_file``/``key_file`` (its
    own certificate) for TLS."""

    protocol: str
    bootstrap: str
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def principal(self) -> str:
        """The principal the broker gives this login (Kafka's default mappings)."""
        if self.mechanism:
            return f"User:{self.username}"
        return CERTIFICATE_PRINCIPAL if self.cert_file else "User:ANONYMOUS"

    def but(self, **changes: Any) -> Login:
        """This login with some fields changed (a wrong password, another CA...)."""
        return replace(self, **changes)


def login(kafka: Any, kind: str, user: str = "admin") -> Login:
    """How to connect to ``kafka`` (a FakeKafka or RealCluster on the secure preset) as
    ``user`` (its password from ``SECURE``) in one of ``KINDS``."""
    protocol, mechanism, certificate = KINDS[kind]
    tls = kafka.ssl if protocol in ("SSL", "SASL_SSL") else None
    return Login(
        protocol, kafka.listeners[protocol], mechanism,
        user if mechanism else None, PASSWORDS[user] if mechanism else None,
        tls["ca_file"] if tls else None,
        tls["client_cert_file"] if tls and certificate else None,
        tls["client_key_file"] if tls and certificate else None)


def java_props(who: Login) -> list[str]:
    """The Java client's properties (key=value, as tests/java/Harness.java takes them)."""
    props = {"security.protocol": who.protocol}
    if who.mechanism:
        props["sasl.mechanism"] = who.mechanism
        props["sasl.jaas.config"] = _java_jaas(who)
    if who.mechanism == "OAUTHBEARER":  # the client's own unsecured tokens need jackson
        props["sasl.login.callback.handler.class"] = "Harness$UnsecuredToken"
    if who.ca_file:
        props["ssl.truststore.type"] = "PEM"
        props["ssl.truststore.location"] = who.ca_file
    if who.cert_file and who.key_file:
        props["ssl.keystore.type"] = "PEM"
        props["ssl.keystore.certificate.chain"] = Path(who.cert_file).read_text()
        props["ssl.keystore.key"] = Path(who.key_file).read_text()
    return [f"{k}={v}" for k, v in props.items()]


def _java_jaas(who: Login) -> str:
    if who.mechanism == "PLAIN":
        module = "org.apache.kafka.common.security.plain.PlainLoginModule"
    elif who.mechanism == "OAUTHBEARER":  # for a refused mechanism only
        return "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
    else:
        module = "org.apache.kafka.common.security.scram.ScramLoginModule"
    return f'{module} required username="{who.username}" password="{who.password}";'


def confluent_config(who: Login) -> dict[str, Any]:
    """confluent-kafka's (librdkafka's) configuration."""
    config: dict[str, Any] = {"bootstrap.servers": who.bootstrap,
                              "security.protocol": who.protocol}
    if who.mechanism:
        config["sasl.mechanisms"] = who.mechanism
        if who.mechanism == "OAUTHBEARER":
            config["enable.sasl.oauthbearer.unsecure.jwt"] = True
            config["sasl.oauthbearer.config"] = f"principal={who.username}"
        else:
            config["sasl.username"] = who.username
            config["sasl.password"] = who.password
    if who.ca_file:
        config["ssl.ca.location"] = who.ca_file
    if who.cert_file:
        config["ssl.certificate.location"] = who.cert_file
        config["ssl.key.location"] = who.key_file
    return config


def _python_ssl_context(who: Login) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=who.ca_file)
    if who.cert_file:
        context.load_cert_chain(who.cert_file, who.key_file)
    return context


class _UnsecuredToken:
    """An OAUTHBEARER token provider for kafka-python and aiokafka (unsecured JWT)."""

    def __init__(self, subject: str | None) -> None:
        import base64

        def part(obj: dict) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        self._token = f"{part({'alg': 'none'})}.{part({'sub': subject, 'iat': 0})}."

    def token(self) -> str:
        return self._token

    def extensions(self) -> dict[str, str]:
        return {}


def kafka_python_config(who: Login) -> dict[str, Any]:
    """kafka-python's keyword arguments (an ``ssl_context`` for TLS, as aiokafka's)."""
    config: dict[str, Any] = {"bootstrap_servers": who.bootstrap,
                              "security_protocol": who.protocol}
    if who.mechanism:
        config["sasl_mechanism"] = who.mechanism
        if who.mechanism == "OAUTHBEARER":
            config["sasl_oauth_token_provider"] = _UnsecuredToken(who.username)
        else:
            config["sasl_plain_username"] = who.username
            config["sasl_plain_password"] = who.password
    if who.tls:
        config["ssl_context"] = _python_ssl_context(who)
    return config


def aiokafka_config(who: Login) -> dict[str, Any]:
    """aiokafka's keyword arguments."""
    config = kafka_python_config(who)
    if who.mechanism == "OAUTHBEARER":
        from aiokafka.abc import AbstractTokenProvider

        class Token(AbstractTokenProvider):
            async def token(self) -> str:
                return _UnsecuredToken(who.username).token()

        config["sasl_oauth_token_provider"] = Token()
    return config


def kafkajs_config(who: Login) -> dict[str, Any]:
    """kafkajs's client options (``brokers``, ``ssl``, ``sasl``) as JSON-ready data: the
    node script reads PEM files named ``ca_file``/``cert_file``/``key_file``."""
    config: dict[str, Any] = {"brokers": who.bootstrap.split(",")}
    if who.tls:
        config["ssl"] = {k: v for k, v in (("ca_file", who.ca_file), ("cert_file", who.cert_file),
                                            ("key_file", who.key_file)) if v}
    if who.mechanism:
        config["sasl"] = {"mechanism": who.mechanism.lower(), "username": who.username,
                          "password": who.password}
    return config


def logged_in(kafka: Any, user: str) -> WireClient:
    """A connection to ``kafka``'s SASL_PLAINTEXT listener, logged in as ``user`` (its
    password from ``SECURE``) by SCRAM-SHA-512."""
    client = WireClient(kafka.listeners["SASL_PLAINTEXT"], client_id=user)
    scram = ScramClient("SCRAM-SHA-512", user, PASSWORDS[user])
    assert client.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
    first = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.first()})
    final = client.request("SaslAuthenticate", 2, {"auth_bytes": scram.final(first.auth_bytes)})
    assert final.error_code == 0, final
    return client


def allow(kafka: Any, resource_type: int, name: str, operation: int,
          principal: str = "User:alice", pattern: int = 3, permission: int = 3,
          host: str = "*") -> None:
    """Create an ACL (Kafka's codes: ``pattern`` 3 LITERAL, 4 PREFIXED; ``permission`` 3
    ALLOW, 2 DENY) for clients from ``host``; returns once the broker's authorizer holds
    it."""
    binding = {"resource_type": resource_type, "resource_name": name,
               "resource_pattern_type": pattern, "principal": principal, "host": host,
               "operation": operation, "permission_type": permission}
    describe = {"resource_type_filter": resource_type, "resource_name_filter": name,
                "pattern_type_filter": pattern, "principal_filter": principal,
                "host_filter": None, "operation": operation, "permission_type": permission}
    with WireClient(kafka.bootstrap_servers, client_id="acls") as client:
        created = client.request("CreateAcls", 3, {"creations": [binding]})
        assert created.results[0].error_code == 0, created
        wait_for(lambda: client.request("DescribeAcls", 3, describe).resources,
                 "the ACL applied")
