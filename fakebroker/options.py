"""Every setting of a fake cluster and of ``fakebroker serve``, declared once.

A setting is declared here with its Python name, type, default, help text and (where Kafka has
one) the Kafka broker config it stands for. From that one declaration come:

* the keyword arguments ``open_cluster``, ``FakeKafka`` and the ``fake_kafka`` marker take
  (``ClusterSettings.from_kwargs``: an unknown name is a ``TypeError``, a bad value an
  ``OptionError``),
* the ``[cluster]`` table of a scenario file (same names, same checks),
* the ``fakebroker serve`` flags (``--advertised-host``) and their environment variables
  (``FAKEBROKER_ADVERTISED_HOST``): a flag given on the command line wins over its variable,
  and a variable over the default.

A ``repeatable`` setting holds a tuple: its flag may be given again (``--listener SSL
--listener SASL_SSL``), its variable is a comma-separated list (``FAKEBROKER_LISTENERS=SSL,
SASL_SSL``), its ``parse`` reads one item, and Python takes any sequence of items.

Guarantee: a value that reaches a running cluster has passed its setting's check, so a bad
value is refused with one line naming the setting, before anything starts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

ENV_PREFIX = "FAKEBROKER_"


class OptionError(ValueError):
    """A setting with a value it cannot take; the message names the setting and the value."""


def parse_bool(text: str) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``), any case."""
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def parse_int(text: str) -> int:
    """A whole number, in decimal."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None


def parse_topic(text: str) -> tuple[str, int]:
    """``name`` or ``name:partitions`` (partitions >= 1)."""
    name, colon, partitions = text.strip().partition(":")
    if not name:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}: no topic name")
    if colon and not partitions:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}: no partition count "
                         "after ':'")
    try:
        count = int(partitions) if colon else 1
    except ValueError:
        raise ValueError(f"expected NAME or NAME:PARTITIONS, got {text!r}") from None
    if count < 1:
        raise ValueError(f"expected NAME or NAME:PARTITIONS (partitions >= 1), got {text!r}")
    return name, count


def topic_counts(topics: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Topic name -> partitions from ``(name, partitions)`` pairs; a topic given twice with
    different counts is a ``ValueError`` (which one was meant?)."""
    counts: dict[str, int] = {}
    for name, count in topics:
        if counts.setdefault(name, count) != count:
            raise ValueError(f"topic {name!r} given twice, with {counts[name]} and {count} "
                             "partitions")
    return counts


def parse_topics(text: str) -> dict[str, int]:
    """A comma-separated list of ``name[:partitions]`` (the environment's form of --topic);
    an empty entry (``a:3,,b:1``) is a ``ValueError``, as in ``topic_counts``."""
    if not text.strip():
        return {}
    entries = text.split(",")
    if not all(entry.strip() for entry in entries):
        raise ValueError(f"expected NAME[:PARTITIONS],... got an empty entry in {text!r}")
    return topic_counts(parse_topic(entry) for entry in entries)


class Setting(NamedTuple):
    """One setting: its name, how text becomes its value, its check and its help (a named
    tuple: every command needs the class at start, and it is declared in a tenth of a frozen
    dataclass's time)."""

    name: str
    parse: Callable[[str], Any]
    help: str
    check: Callable[[Any], str | None] = lambda _value: None  # a complaint, or None
    kafka: str | None = None  # the Kafka broker config it stands for
    metavar: str | None = None
    repeatable: bool = False  # a tuple of items: the flag repeats, the variable lists them
    item: str | None = None  # a repeatable setting's flag names one item: --listener

    @property
    def flag(self) -> str:
        return "--" + (self.item or self.name).replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    def from_text(self, text: str) -> Any:
        """The value of ``text`` (from a flag or the environment), checked; for a repeatable
        setting, of a comma-separated list of items."""
        try:
            if self.repeatable:
                value: Any = tuple(self.parse(item.strip()) for item in text.split(",")
                                   if item.strip())
            else:
                value = self.parse(text)
        except ValueError as exc:
            raise OptionError(f"{self.name}: {exc}") from None
        return self.checked(value)

    def checked(self, value: Any) -> Any:
        """``value`` if the setting can take it (a repeatable setting's sequence as a tuple),
        else ``OptionError`` naming the setting."""
        if self.repeatable and isinstance(value, (list, tuple)):
            value = tuple(value)
        complaint = self.check(value)
        if complaint is not None:
            raise OptionError(f"{self.name}: {complaint}, got {value!r}")
        return value


def _at_least(low: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return None if whole and value >= low else f"expected a whole number >= {low}"
    return check


def _port(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 65535
    return None if ok else "expected a port from 0 to 65535"


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda v: None if v is None else check(v)


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "expected a non-empty string"


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "expected true or false"


def _each(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    """A tuple of distinct items, each one of ``allowed``."""
    def check(value: Any) -> str | None:
        ok = (isinstance(value, tuple) and all(item in allowed for item in value)
              and len(set(value)) == len(value))
        return None if ok else f"expected distinct items of {', '.join(allowed)}"
    return check


def _one_of(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda value: None if value in allowed else f"expected one of {', '.join(allowed)}"


def _pairs(what: str) -> Callable[[Any], str | None]:
    """A tuple of ``LEFT:RIGHT`` texts, both sides non-empty (``what`` names the form)."""
    def check(value: Any) -> str | None:
        ok = isinstance(value, tuple) and all(
            isinstance(item, str) and all(item.partition(":")[0::2]) for item in value)
        return None if ok else f"expected items of the form {what}"
    return check


SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
SSL_CLIENT_AUTH = ("required", "requested", "none")


def _advertisable(value: Any) -> str | None:
    if _text(value):
        return _text(value)
    try:
        if ipaddress.ip_address(value).is_unspecified:
            return "cannot advertise the non-routable meta-address (clients cannot reach it)"
    except ValueError:
        pass  # a host name
    return None


@dataclass(frozen=True)
class ClusterSettings:
    """The settings of one fake cluster, with Kafka's defaults where Kafka has one."""

    brokers: int = 1
    host: str = "127.0.0.1"
    advertised_host: str | None = None
    port: int = 0
    auto_create_topics: bool = True
    default_partitions: int = 1
    cluster_id: str | None = None  # None: a fresh random Kafka-style id per cluster
    max_request_bytes: int = 100 * 1024 * 1024
    group_initial_rebalance_delay_ms: int = 0
    group_min_session_timeout_ms: int = 6000
    transaction_max_timeout_ms: int = 900_000
    transaction_version: int = 2
    seed: int | None = None
    journal_capacity: int = 10_000
    listeners: tuple[str, ...] = ()
    ssl_client_auth: str = "none"
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_ca: str | None = None
    sasl_users: tuple[str, ...] = ()
    sasl_mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
    connections_max_reauth_ms: int = 0
    authorizer: bool = False
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False
    delegation_token_secret_key: str | None = field(default=None, repr=False)  # a secret
    delegation_token_max_lifetime_ms: int = 7 * 24 * 3600 * 1000
    delegation_token_expiry_time_ms: int = 24 * 3600 * 1000

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any]) -> ClusterSettings:
        """Settings from keyword arguments; every value checked (``OptionError``), an unknown
        name refused (``TypeError``, as a function's signature would)."""
        unknown = sorted(set(options) - set(CLUSTER_SETTINGS))
        if unknown:
            raise TypeError(f"unknown cluster option(s): {', '.join(unknown)} "
                            f"(known: {', '.join(CLUSTER_SETTINGS)})")
        settings = cls(**{name: CLUSTER_SETTINGS[name].checked(value)
                          for name, value in options.items()})
        if (settings.ssl_cert is None) != (settings.ssl_key is None):
            raise OptionError("ssl_cert and ssl_key: give both or neither")
        if not settings.sasl_mechanisms and {"SASL_PLAINTEXT", "SASL_SSL"} & set(
                settings.listeners):
            raise OptionError("sasl_mechanisms: a SASL listener needs at least one (Kafka will "
                              "not start: No SASL mechanisms are enabled)")
        check_advertised(settings.host, settings.advertised_host)
        return settings

    @property
    def advertised(self) -> str:
        """The host name or address the brokers give clients (Metadata, FindCoordinator)."""
        return self.advertised_host or self.host

    def kafka_configs(self) -> dict[str, str]:
        """The Kafka broker configs these settings stand for, as DescribeConfigs reports."""
        values = {name: getattr(self, name) for name in CLUSTER_SETTINGS}
        return {s.kafka: _kafka_text(values[s.name]) for s in CLUSTER_SETTINGS.values()
                if s.kafka is not None}


def check_advertised(host: str, advertised_host: str | None,
                     named: Callable[[str], str] = str) -> None:
    """``OptionError`` if brokers bound to ``host`` cannot give it to clients and no
    ``advertised_host`` is given; ``named`` spells a setting's name where it was given
    (``--advertised-host`` on a command line)."""
    if advertised_host is None and _advertisable(host) is not None:
        raise OptionError(f"{named('host')}: binding {host!r} needs "
                          f"{named('advertised_host')}, the name or address clients use to "
                          "reach the brokers")


def _kafka_text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


CLUSTER_SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("brokers", parse_int, "number of brokers", _at_least(1), metavar="N"),
    Setting("host", str, "address every broker listens on (0.0.0.0: all interfaces)", _text),
    Setting("advertised_host", str,
            "host name or address the brokers give clients (default: --host)",
            _optional(_advertisable)),
    Setting("port", parse_int, "first broker's port; brokers use consecutive ports, each "
            "listener's after the previous listener's (0 = any free)", _port),
    Setting("auto_create_topics", parse_bool,
            "create unknown topics a client asks for (false: refuse them)", _flag,
            kafka="auto.create.topics.enable", metavar="true|false"),
    Setting("default_partitions", parse_int, "partitions of auto-created topics", _at_least(1),
            kafka="num.partitions", metavar="N"),
    Setting("cluster_id", str, "the cluster id (default: a fresh random one in Kafka's "
            "form, 22 characters of URL-safe base64)", _optional(_text)),
    Setting("max_request_bytes", parse_int, "largest request frame accepted", _at_least(1),
            kafka="socket.request.max.bytes", metavar="BYTES"),
    Setting("group_initial_rebalance_delay_ms", parse_int,
            "how long a new classic group waits for more members", _at_least(0),
            kafka="group.initial.rebalance.delay.ms", metavar="MS"),
    Setting("group_min_session_timeout_ms", parse_int, "smallest session timeout a member may ask",
            _at_least(0), kafka="group.min.session.timeout.ms", metavar="MS"),
    Setting("transaction_max_timeout_ms", parse_int,
            "longest transaction timeout a producer may ask (longer: INVALID_TRANSACTION_TIMEOUT)",
            _at_least(1), kafka="transaction.max.timeout.ms", metavar="MS"),
    Setting("transaction_version", parse_int,
            "the transaction.version feature finalized at start (UpdateFeatures changes it): 2 "
            "(Kafka 4's default) lets clients run transactions v2 (KIP-890), 0 or 1 the older "
            "protocol",
            lambda v: None if v in (0, 1, 2) and not isinstance(v, bool)
            else "expected 0, 1 or 2", metavar="LEVEL"),
    Setting("seed", parse_int, "seed of probabilistic faults (reproducible chaos)",
            _optional(lambda v: None if isinstance(v, int) else "expected a whole number"),
            metavar="N"),
    Setting("journal_capacity", parse_int, "how many requests the journal keeps", _at_least(1),
            metavar="N"),
    Setting("listeners", str,
            "a listener of each broker for this security protocol (repeatable: PLAINTEXT, SSL, "
            "SASL_PLAINTEXT, SASL_SSL), each on its own port; none: one PLAINTEXT listener",
            _each(SECURITY_PROTOCOLS), metavar="PROTOCOL", repeatable=True,
            item="listener"),
    Setting("ssl_client_auth", str,
            "whether the SSL listener asks clients for a certificate (required, requested, none)",
            _one_of(SSL_CLIENT_AUTH), kafka="ssl.client.auth", metavar="MODE"),
    Setting("ssl_cert", str, "the brokers' certificate chain, PEM (default: generated at start)",
            _optional(_text), metavar="FILE"),
    Setting("ssl_key", str, "the private key of --ssl-cert, PEM (unencrypted)",
            _optional(_text), metavar="FILE"),
    Setting("ssl_ca", str, "CA certificates, PEM, that client certificates must chain to "
            "(default: the generated CA)", _optional(_text), metavar="FILE"),
    Setting("sasl_users", str,
            "a SASL user and password, valid for PLAIN and SCRAM (repeatable)",
            _pairs("NAME:PASSWORD"), metavar="NAME:PASSWORD", repeatable=True,
            item="sasl_user"),
    Setting("sasl_mechanisms", str,
            "a SASL mechanism the SASL listeners enable (repeatable: PLAIN, SCRAM-SHA-256, "
            "SCRAM-SHA-512, OAUTHBEARER; default the first three)",
            _each(SASL_MECHANISMS), kafka="sasl.enabled.mechanisms", metavar="MECHANISM",
            repeatable=True,
            item="sasl_mechanism"),
    Setting("connections_max_reauth_ms", parse_int,
            "longest SASL session before the client must re-authenticate (0: no limit)",
            _at_least(0), kafka="connections.max.reauth.ms", metavar="MS"),
    Setting("authorizer", parse_bool, "authorize every request by the ACLs (Kafka's "
            "StandardAuthorizer); off: the ACL APIs answer SECURITY_DISABLED", _flag,
            metavar="true|false"),
    Setting("super_users", str, "a principal every ACL allows (repeatable: User:admin)",
            _pairs("TYPE:NAME"), metavar="PRINCIPAL", repeatable=True,
            item="super_user"),
    Setting("allow_everyone_if_no_acl_found", parse_bool,
            "allow a request on a resource no ACL matches (Kafka's default: deny)", _flag,
            kafka="allow.everyone.if.no.acl.found", metavar="true|false"),
    Setting("delegation_token_secret_key", str,
            "the key delegation tokens are signed with (HMAC-SHA512); unset: no tokens "
            "(DELEGATION_TOKEN_AUTH_DISABLED)", _optional(_text),
            kafka="delegation.token.secret.key", metavar="SECRET"),
    Setting("delegation_token_max_lifetime_ms", parse_int,
            "longest a delegation token lives, renewals included", _at_least(1),
            kafka="delegation.token.max.lifetime.ms", metavar="MS"),
    Setting("delegation_token_expiry_time_ms", parse_int,
            "how long a delegation token lives unless renewed, and its longest renewal",
            _at_least(1), kafka="delegation.token.expiry.time.ms", metavar="MS"),
)}

assert list(CLUSTER_SETTINGS) == [f.name for f in fields(ClusterSettings)]
