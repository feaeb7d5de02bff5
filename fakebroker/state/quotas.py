"""Client quotas: the values set per entity (AlterClientQuotas), the filters that find them
(DescribeClientQuotas), and the rates a client is held to, as Apache Kafka 4.4 keeps them.

An entity is a set of (entity type, name) pairs: ``user``, ``client-id`` (alone or together)
or ``ip`` (alone); a name of None is the type's default (``<default>`` in Kafka's tools).

Guarantees:

* Changes are checked as Kafka's controller checks them (``ClientQuotaControlManager``): the
  same INVALID_REQUEST / UNSUPPORTED_VERSION messages, for the same requests; a refused
  entity changes nothing, the others of the request are applied.
* Enforcement (``Enforcer``) computes what Kafka's ``ClientQuotaManager`` computes: the quota
  of a (user, client-id) is the first set of the eight entities in Kafka's order
  (``/config/users/<user>/clients/<client-id>`` first, ``/config/clients/<default>`` last);
  the observed rate is a ``Rate`` over ``quota.window.num`` = 11 samples of
  ``quota.window.size.seconds`` = 1; a value recorded above the quota gives a throttle time
  of ``(rate - quota) / quota * window`` ms (KIP-219), the request quota's bounded by one
  window. Clients sharing a quota entity share its rate, as in Kafka.
* ``controller_mutation_rate`` (KIP-599) is a ``TokenBucket``, as Kafka's
  ``ControllerMutationQuotaManager`` keeps it: it refills at the quota per second up to a burst
  of ``controller.quota.window.num`` (11) x ``controller.quota.window.size.seconds`` (1) x the
  quota, full at first; a mutation of n partitions takes n tokens. A strict quota
  (``MutationQuota``, the newer request versions) refuses a mutation while the bucket is below
  zero, else takes the tokens (so the mutation that empties it passes, and may take it below
  zero); a permissive one (older versions) takes them all the same. Either throttles by the
  time the bucket needs to refill to zero (``-tokens / quota`` s).
* ``connection_creation_rate`` per IP (KIP-612; the ``ip`` entity, the default entity for the
  others) is a ``Rate`` per broker and IP, as Kafka's ``ConnectionQuotas``: a connection that
  takes it above the quota is not counted and gets a throttle time of at most one window
  (``Enforcer.connection``).
* The clock is passed in (milliseconds); nothing here is I/O, nothing waits.
"""

from __future__ import annotations

import ipaddress
import math
import socket
from dataclasses import dataclass, field

USER, CLIENT_ID, IP = "user", "client-id", "ip"
# The order Kafka's answers list an entity's types in (its entity map is a small HashMap).
ENTITY_ORDER = (CLIENT_ID, USER, IP)
PRODUCE, FETCH, REQUEST = "producer_byte_rate", "consumer_byte_rate", "request_percentage"
MUTATION, CONNECTIONS = "controller_mutation_rate", "connection_creation_rate"
# Quota key -> its config type, as Kafka's QuotaConfig defines it.
CLIENT_KEYS = {PRODUCE: "LONG", FETCH: "LONG", REQUEST: "DOUBLE", MUTATION: "DOUBLE"}
IP_KEYS = {CONNECTIONS: "INT"}
INT_MAX = 2**31 - 1  # Java's Integer.MAX_VALUE
_LIMITS = {"INT": (INT_MAX, "an INT"), "LONG": (2**63 - 1, "a LONG")}
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
SAMPLES = 11  # quota.window.num
WINDOW_MS = 1000  # quota.window.size.seconds, in ms

Entity = tuple[tuple[str, str | None], ...]  # (type, name) pairs in ``ENTITY_ORDER``
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class QuotaError(Exception):
    """A request Kafka refuses: ``error`` (its name) and Kafka's message."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def entity_of(pairs: list[tuple[str, str | None]]) -> Entity:
    """The entity of a request's (type, name) pairs: a type named twice keeps its last name,
    as Kafka's entity map does."""
    named = dict(pairs)
    known = [(kind, named[kind]) for kind in ENTITY_ORDER if kind in named]
    return tuple(known) + tuple((k, v) for k, v in named.items() if k not in ENTITY_ORDER)


def entity_text(entity: Entity) -> str:
    """Kafka's ``ClientQuotaEntity.toString``."""
    entries = ", ".join(f"{kind}={'null' if name is None else name}" for kind, name in entity)
    return f"ClientQuotaEntity(entries={{{entries}}})"


@dataclass(slots=True)
class ClientQuotas:
    """Every entity's quota values, and the rates enforced from them."""

    values: dict[Entity, dict[str, float]] = field(default_factory=dict)
    # connection_creation_rate by IP address (None: the default entity's), as Kafka's
    # ConnectionQuotas keeps it: an entity named by a host name holds its address.
    connection_rates: dict[Address | None, float] = field(default_factory=dict)
    enforcer: Enforcer = field(init=False)

    def __post_init__(self) -> None:
        self.enforcer = Enforcer(self)

    def alter(self, entries: list[tuple[Entity, list[tuple[str, float | None]]]],
              validate_only: bool = False) -> list[tuple[Entity, QuotaError | None]]:
        """Apply each entity's ops (a value of None removes the key) as Kafka's controller
        does; one result per distinct entity, in the order first named. An entity named
        twice is refused ("Ignoring duplicate entity"), its first ops applied all the same;
        a key named twice refuses its entity."""
        results: dict[Entity, QuotaError | None] = {}
        changes: list[tuple[Entity, dict[str, float | None]]] = []
        for entity, ops in entries:
            alterations: dict[str, float | None] = {}
            twice = False
            for key, value in ops:
                twice = twice or key in alterations
                alterations.setdefault(key, value)
            if twice or entity in results:
                results[entity] = QuotaError(
                    "INVALID_REQUEST", f"Ignoring duplicate entity {entity_text(entity)}")
                continue
            try:
                changes.append((entity, self._checked(entity, alterations)))
                results[entity] = None
            except QuotaError as refusal:
                results[entity] = refusal
        if not validate_only:
            for entity, alterations in changes:
                self._apply(entity, alterations)
        return list(results.items())

    def describe(self, components: list[tuple[str, int, str | None]], strict: bool
                 ) -> list[tuple[Entity, dict[str, float]]]:
        """The entities matching Kafka's ``ClientQuotaFilter`` of (type, match type, match)
        components: exact name, the default, any name; ``strict``: no other types.
        ``QuotaError`` for a filter Kafka refuses."""
        exact: dict[str, str | None] = {}
        specified: set[str] = set()
        for kind, match_type, match in components:
            if not kind:
                raise QuotaError("INVALID_REQUEST", "Invalid empty entity type.")
            if kind in exact or kind in specified:
                raise QuotaError("INVALID_REQUEST",
                                 f"Entity type {kind} cannot appear more than once in the "
                                 "filter.")
            if kind not in ENTITY_ORDER:
                raise QuotaError("UNSUPPORTED_VERSION", f"Unsupported entity type {kind}")
            if match_type == MATCH_EXACT:
                if match is None:
                    raise QuotaError("INVALID_REQUEST", "Request specified MATCH_TYPE_EXACT, "
                                                        "but set match string to null.")
                exact[kind] = match
            elif match_type in (MATCH_DEFAULT, MATCH_SPECIFIED):
                if match is not None:
                    name = "DEFAULT" if match_type == MATCH_DEFAULT else "SPECIFIED"
                    raise QuotaError("INVALID_REQUEST", f"Request specified MATCH_TYPE_{name}, "
                                                        "but also specified a match string.")
                if match_type == MATCH_DEFAULT:
                    exact[kind] = None
                else:
                    specified.add(kind)
            else:
                raise QuotaError("INVALID_REQUEST", f"Unknown match type {match_type}")
        asked = set(exact) | specified
        if IP in asked and asked & {USER, CLIENT_ID}:
            raise QuotaError("INVALID_REQUEST",
                             "Invalid entity filter component combination. IP filter "
                             "component should not be used with user or clientId filter "
                             "component.")
        found = []
        for entity, values in self.values.items():
            names = dict(entity)
            if strict and len(names) != len(asked):
                continue
            if all(kind in names and names[kind] == name for kind, name in exact.items()) \
                    and specified <= names.keys():
                found.append((entity, dict(values)))
        return found

    def quota(self, key: str, user: str, client_id: str) -> tuple[Entity, float] | None:
        """The entity whose ``key`` quota holds (``user``, ``client_id``), and the quota, in
        Kafka's order of precedence; None when no entity sets one."""
        for entity in _precedence(user, client_id):
            value = self.values.get(entity, {}).get(key)
            if value is not None:
                return entity, value
        return None

    def _checked(self, entity: Entity, alterations: dict[str, float | None]
                 ) -> dict[str, float | None]:
        if not entity:
            raise QuotaError("INVALID_REQUEST", "Invalid empty client quota entity")
        for kind, name in entity:
            if kind not in ENTITY_ORDER:
                raise QuotaError("INVALID_REQUEST", f"Unhandled client quota entity type: {kind}")
            if name == "":
                raise QuotaError("INVALID_REQUEST", f"Empty {kind} not supported")
        names = dict(entity)
        if IP in names:
            if len(names) > 1:
                raise QuotaError("INVALID_REQUEST",
                                 "Invalid quota entity combination, IP entity shouldnot be "
                                 "combined with User or ClientId")
            if not _resolvable(names[IP]):
                raise QuotaError("INVALID_REQUEST",
                                 f"{names[IP]} is not a valid IP or resolvable host.")
        keys = IP_KEYS if IP in names else CLIENT_KEYS
        for key, value in alterations.items():
            if value is not None:
                _check_value(keys, key, value)
        return alterations

    def _apply(self, entity: Entity, alterations: dict[str, float | None]) -> None:
        values = self.values.setdefault(entity, {})
        for key, value in alterations.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        if not values:
            del self.values[entity]
        if entity[0][0] == IP:
            address = _address(entity[0][1])
            rate = values.get(CONNECTIONS)
            if rate is None:
                self.connection_rates.pop(address, None)
            else:
                self.connection_rates[address] = rate
        self.enforcer.changed()

    def connection_rate(self, host: str) -> float | None:
        """The ``connection_creation_rate`` connections from ``host`` (an IP address) are
        held to: its own, else the default IP entity's; None without one (or at Java's
        Int.MaxValue, which Kafka takes for none)."""
        try:
            address: Address | None = ipaddress.ip_address(host)
        except ValueError:
            address = None
        rate = self.connection_rates.get(address, self.connection_rates.get(None))
        return None if rate is None or rate >= INT_MAX else rate


def _check_value(keys: dict[str, str], key: str, value: float) -> None:
    """Kafka's ``validateQuotaKeyValue``."""
    kind = keys.get(key)
    if kind is None:
        raise QuotaError("INVALID_REQUEST", f"Invalid configuration key {key}")
    if value <= 0.0:
        raise QuotaError("INVALID_REQUEST", f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    limit, article = _LIMITS[kind]
    if value > limit:
        raise QuotaError("INVALID_REQUEST",
                         f"Proposed value for {key} is too large for {article}.")
    if abs(value % 1.0) > 1e-6:
        raise QuotaError("INVALID_REQUEST", f"{key} cannot be a fractional value.")


def _resolvable(name: str | None) -> bool:
    """Kafka's ``isValidIpEntity``: the default, an IP address, or a name that resolves."""
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(name, None)
        return True
    except (OSError, UnicodeError):
        return False


def _address(name: str | None) -> Address | None:
    """The address of an ip entity's name (Java's ``InetAddress.getByName``: a host name's
    first address); None for the default entity."""
    if name is None:
        return None
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return ipaddress.ip_address(socket.getaddrinfo(name, None)[0][4][0])


def _precedence(user: str, client_id: str) -> tuple[Entity, ...]:
    """The entities a (user, client-id) is held to, first found first, as Kafka's
    ``DefaultQuotaCallback.quotaLimit`` and ``quotaMetricTags`` look them up."""
    return (
        ((CLIENT_ID, client_id), (USER, user)),
        ((CLIENT_ID, None), (USER, user)),
        ((USER, user),),
        ((CLIENT_ID, client_id), (USER, None)),
        ((CLIENT_ID, None), (USER, None)),
        ((USER, None),),
        ((CLIENT_ID, client_id),),
        ((CLIENT_ID, None),),
    )


@dataclass(slots=True)
class _Sample:
    start_ms: int
    last_ms: int
    value: float = 0.0


@dataclass(slots=True)
class Rate:
    """Kafka's ``Rate`` over a ``SampledStat`` (``quota.window.num`` samples of
    ``quota.window.size.seconds``): per second."""

    samples: list[_Sample] = field(default_factory=list)
    current: int = 0

    def record(self, value: float, now_ms: int) -> None:
        if not self.samples:
            self.samples.append(_Sample(now_ms, now_ms))
        sample = self.samples[self.current]
        if now_ms - sample.start_ms >= WINDOW_MS:
            self.current = (self.current + 1) % (SAMPLES + 1)
            if self.current >= len(self.samples):
                self.samples.append(_Sample(now_ms, now_ms))
            else:
                self.samples[self.current] = _Sample(now_ms, now_ms)
            sample = self.samples[self.current]
        sample.value += value
        sample.last_ms = now_ms

    def measure(self, now_ms: int) -> float:
        """The rate per second: the samples' sum over ``window_ms``."""
        self._purge(now_ms)
        return sum(s.value for s in self.samples) / (self.window_ms(now_ms) / 1000)

    def window_ms(self, now_ms: int) -> int:
        """Kafka's ``Rate.windowSize``: the time since the oldest sample, at least
        ``SAMPLES - 1`` full windows, at least 1 ms."""
        self._purge(now_ms)
        if not self.samples:
            self.samples.append(_Sample(now_ms, now_ms))
        elapsed = now_ms - min(s.start_ms for s in self.samples)
        full = elapsed // WINDOW_MS
        if full < SAMPLES - 1:
            elapsed += (SAMPLES - 1 - full) * WINDOW_MS
        return max(elapsed, 1)

    def _purge(self, now_ms: int) -> None:
        for index, sample in enumerate(self.samples):
            if now_ms - sample.last_ms >= SAMPLES * WINDOW_MS:
                self.samples[index] = _Sample(now_ms, now_ms)


class Enforcer:
    """The rates of the clients held to quotas: what a request's bytes or time cost, and the
    throttle time that follows (Kafka's ``ClientQuotaManager.recordAndGetThrottleTimeMs``)."""

    def __init__(self, quotas: ClientQuotas) -> None:
        self._quotas = quotas
        self._rates: dict[tuple[str, Entity], Rate] = {}
        self._buckets: dict[Entity, TokenBucket] = {}  # controller_mutation_rate's
        self._connections: dict[tuple[int, str], Rate] = {}  # by broker id and IP
        self.enforcing = False  # whether any user or client-id quota is set

    def changed(self) -> None:
        self.enforcing = any(IP not in dict(entity) for entity in self._quotas.values)

    def record(self, key: str, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record ``value`` (bytes; percent-seconds for ``request_percentage``) for the
        client; the throttle time in ms its quota calls for (0 within it, or without one).
        The rate is kept per quota entity, named as Kafka's metric tags name it."""
        found = self._quotas.quota(key, user, client_id)
        if found is None:
            return 0
        entity, bound = found
        rate = self._rates.setdefault((key, _tags(entity, user, client_id)), Rate())
        rate.record(value, now_ms)
        observed = rate.measure(now_ms)
        if observed <= bound:
            return 0
        throttle = round((observed - bound) / bound * rate.window_ms(now_ms))
        return min(throttle, WINDOW_MS) if key == REQUEST else throttle

    def max_in_window(self, key: str, user: str, client_id: str) -> int:
        """The most the client may record at once without a certain throttle (Kafka's
        ``getMaxValueInQuotaWindow``, as ``KafkaApis`` takes it ``toInt``): its quota times
        ``quota.window.num - 1`` windows, truncated; Java's Int.MaxValue without a quota."""
        found = self._quotas.quota(key, user, client_id) if self.enforcing else None
        if found is None:
            return INT_MAX
        return min(int(found[1] * (SAMPLES - 1) * WINDOW_MS / 1000), INT_MAX)

    def unrecord(self, key: str, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back ``value`` (Kafka's ``unrecordQuotaSensor``: a throttled Fetch sends no
        records, so its bytes do not count)."""
        found = self._quotas.quota(key, user, client_id)
        if found is not None:
            rate = self._rates.setdefault((key, _tags(found[0], user, client_id)), Rate())
            rate.record(-value, now_ms)


    def mutation_quota(self, user: str, client_id: str, strict: bool) -> MutationQuota | None:
        """The ``controller_mutation_rate`` quota holding the client for one request (Kafka's
        ``newQuotaFor``: ``strict`` from the request versions that may refuse a mutation);
        None when no such quota holds it. Clients of one quota entity share its bucket."""
        found = self._quotas.quota(MUTATION, user, client_id) if self.enforcing else None
        if found is None:
            return None
        entity, bound = found
        bucket = self._buckets.setdefault(_tags(entity, user, client_id), TokenBucket())
        return MutationQuota(bucket, bound, strict)

    def connection(self, broker_id: int, host: str, now_ms: int) -> int:
        """Record a connection from ``host`` (an IP address) to broker ``broker_id``: the ms
        to hold it before closing it unserved, 0 to accept it (Kafka's
        ``recordIpConnectionMaybeThrottle``: a connection over its IP's
        ``connection_creation_rate`` is not counted, and is throttled at most one window)."""
        bound = self._quotas.connection_rate(host)
        if bound is None:
            return 0
        rate = self._connections.setdefault((broker_id, host), Rate())
        rate.record(1, now_ms)
        observed = rate.measure(now_ms)
        if observed <= bound:
            return 0
        rate.record(-1, now_ms)
        return min(_java_round((observed - bound) / bound * rate.window_ms(now_ms)), WINDOW_MS)


@dataclass(slots=True)
class TokenBucket:
    """Kafka's ``TokenBucket`` stat: ``tokens`` refilled at the quota per second up to the
    burst (``SAMPLES`` windows of ``WINDOW_MS`` at the quota); full before its first use
    (Kafka's starts empty, last refilled at the epoch)."""

    tokens: float = 0.0
    last_ms: int | None = None

    def measure(self, quota: float, now_ms: int) -> float:
        """The tokens left at ``now_ms``, refilled."""
        burst = SAMPLES * WINDOW_MS / 1000 * quota
        if self.last_ms is None:
            self.tokens = burst
        else:
            self.tokens = min(burst, self.tokens + quota * (now_ms - self.last_ms) / 1000)
        self.last_ms = now_ms
        return self.tokens

    def record(self, quota: float, value: float, now_ms: int) -> None:
        """Take ``value`` tokens (refilled first)."""
        self.tokens = min(SAMPLES * WINDOW_MS / 1000 * quota,
                          self.measure(quota, now_ms) - value)


@dataclass(slots=True)
class MutationQuota:
    """A client's ``controller_mutation_rate`` during one request (Kafka's
    ``StrictControllerMutationQuota`` / ``PermissiveControllerMutationQuota``)."""

    bucket: TokenBucket
    quota: float  # mutations (partitions) per second
    strict: bool
    throttle_ms: int = 0  # the last refusal's (strict) or overdraft's (permissive)

    def admit(self, partitions: int, now_ms: int) -> bool:
        """Record a mutation of ``partitions`` partitions; False when a strict quota refuses
        it (the bucket was below zero: THROTTLING_QUOTA_EXCEEDED), True when it may go on."""
        if self.strict:
            tokens = self.bucket.measure(self.quota, now_ms)
            if tokens < 0:
                self.throttle_ms = _java_round(-tokens / self.quota * 1000)
                return False
            self.bucket.record(self.quota, partitions, now_ms)
            return True
        self.bucket.record(self.quota, partitions, now_ms)
        if self.bucket.tokens < 0:
            self.throttle_ms = _java_round(-self.bucket.tokens / self.quota * 1000)
        return True


def _java_round(value: float) -> int:
    """Java's ``Math.round``: halves up."""
    return math.floor(value + 0.5)


def _tags(entity: Entity, user: str, client_id: str) -> Entity:
    """The metric tags of the rate a client's quota entity is measured by: the user and the
    client-id the entity names or defaults (a default entity is one rate per client)."""
    kinds = dict(entity)
    return tuple((kind, name) for kind, name in ((CLIENT_ID, client_id), (USER, user))
                 if kind in kinds)
