"""Fault rules: what a rule matches and what it does to the requests it matches.

A rule is added with ``kafka.faults.add(...)`` (Python), ``POST /faults`` (HTTP) or a
``[[faults]]`` table of a scenario file; all three take the same fields (``FaultRule.from_dict``
checks the ones that come as data and names the bad one).

Every field is declared once, in ``FIELDS`` (its check, how it is shown, its help); the
dataclass ``FaultRule`` holds their values.

Matching (every given criterion must hold):
  ``api`` (name or key), ``versions`` (``(low, high)`` inclusive), ``broker`` (id),
  ``client_id``, ``listener`` (the listener's name: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT``,
  ``SASL_SSL``), ``principal`` (who sent the request, as authenticated on its connection:
  ``User:alice``, ``User:ANONYMOUS``), ``topic`` (name or topic id), ``partition``, ``group``,
  ``transactional_id``, and, in Python only, ``when``: a predicate over the ``RequestView``.
Counting: ``after`` lets the first K matching requests through untouched; then the rule is
  applied to the next ``count`` matching requests (``None``: until removed), each with
  ``probability`` drawn from the registry's seeded generator (the cluster's ``seed``).
Actions:
  ``error`` (a Kafka error name or code) placed where Kafka puts it — per partition for
  partition-scoped APIs, per entry (topic, group) for entry-scoped ones, else at top level;
  ``delay_ms`` (the request waits before it is handled, so the answer is late; answers on a
  connection stay in order); ``drop`` (close the connection without answering); ``hang``
  (never answer); ``hold`` (park the request until the test releases it with
  ``rule.release()``, then go on with the rule's other actions: a test lines up a race);
  ``respond`` (the whole answer body: a mapping of the answer's fields at the request's
  version, fields left out taking their defaults, or from Python a callable taking the
  ``RequestView`` and returning one; for shapes ``error`` cannot express); ``throttle_ms``
  (``throttle_time_ms`` in the answer, and the connection's next answers wait that long, as a
  Kafka broker mutes a throttled channel); ``apply_then`` (with ``error``, ``respond`` or
  ``drop``: the request is applied first — records appended, offsets stored — and then
  answered with the error or the given answer, or dropped: the lost acknowledgement);
  ``ignore`` (request arrays, by field name, the handler sees empty: in the entries the rule
  covers, or anywhere in the request when it names no topic, partition or group; the rest of
  the request is handled and answered as usual: ShareFetch's ``acknowledgement_batches``, the
  acknowledgements a fetch carries lost while the fetch goes on).
  Without ``apply_then`` a faulted request changes nothing: a faulted Produce appends
  nothing, a faulted OffsetCommit stores nothing.

Guarantees: a rule's ``hits`` counts the requests it was applied to; rules apply in the order
they were added; when several rules match one request their delays add up, the first
``drop``/``hang`` wins over ``respond`` and errors, the first ``respond`` wins over errors, and
for each partition or entry the first rule that names an error for it decides it. A request
a ``hold`` rule matched is held from the moment its hit is counted (so ``await rule.wait(n)``
returning means the n-th one is held) until ``release`` lets it go, the rule is removed, or
its connection closes (then it ends unanswered and unapplied, as a hung request does).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, NamedTuple

import trio

from fakebroker.api.targets import Target
from fakebroker.options import SECURITY_PROTOCOLS
from fakebroker.protocol.errors import error_code, error_name
from fakebroker.protocol.specs import api_keys_by_name, api_spec


class FaultError(ValueError):
    """A fault rule that cannot be built; the message names the field and what is wrong."""


@dataclass(slots=True)
class RequestView:
    """What a rule (and a ``when`` predicate) sees of one request."""

    api_key: int
    api_name: str
    version: int
    broker: int
    client_id: str | None
    listener: str
    principal: str
    request: Any
    targets: list[Target]
    groups: set[str]
    transactional_ids: set[str]

    @property
    def topics(self) -> set[str]:
        return {t.topic for t in self.targets if t.topic}


def api_key_of(api: int | str) -> int:
    """An API given by name (``"Fetch"``, any case) or key, as its key."""
    keys = api_keys_by_name()
    if isinstance(api, bool):
        raise FaultError(f"api: {api!r} is not an API name or key")
    if isinstance(api, int):
        if api not in keys.values():
            raise FaultError(f"api: no Kafka API has key {api}")
        return api
    by_lower = {name.lower(): key for name, key in keys.items()}
    if not isinstance(api, str) or api.lower() not in by_lower:
        raise FaultError(f"api: unknown Kafka API {api!r}")
    return by_lower[api.lower()]


@dataclass(eq=False)
class FaultRule:
    """One rule: its criteria, counters and action. Build with ``FaultRule.build``."""

    id: int
    api: int | None = None
    versions: tuple[int, int] | None = None
    broker: int | None = None
    client_id: str | None = None
    listener: str | None = None
    principal: str | None = None
    topic: str | None = None
    partition: int | None = None
    group: str | None = None
    transactional_id: str | None = None
    when: Callable[[RequestView], bool] | None = None
    count: int | None = 1
    after: int = 0
    probability: float = 1.0
    error: int | None = None
    delay_ms: int = 0
    drop: bool = False
    hang: bool = False
    hold: bool = False
    respond: Mapping[str, Any] | Callable[[RequestView], Mapping[str, Any]] | None = None
    throttle_ms: int = 0
    apply_then: bool = False
    ignore: tuple[str, ...] = ()
    hits: int = 0
    seen: int = 0
    removed: bool = False
    _hit: trio.Event = field(default_factory=trio.Event, repr=False)
    _held: list[Hold] = field(default_factory=list, repr=False)  # oldest first

    # -- building -------------------------------------------------------------------------

    @classmethod
    def build(cls, rule_id: int, **fields: Any) -> FaultRule:
        """A rule from keyword fields (``FIELDS``, and ``when``); ``FaultError`` names the
        first bad one. A field given as None keeps its default (``count=None``: until
        removed)."""
        unknown = set(fields) - set(FIELDS) - {"when"}
        if unknown:
            raise FaultError(f"unknown fault field(s): {', '.join(sorted(unknown))}")
        rule = cls(rule_id)
        for spec in FIELDS.values():  # in order: respond is checked against api and versions
            if spec.name in fields and (fields[spec.name] is not None or spec.name == "count"):
                setattr(rule, spec.name, spec.check(rule, spec.name, fields[spec.name]))
        if fields.get("when") is not None:
            if not callable(fields["when"]):
                raise FaultError("when: must be a callable taking a RequestView")
            rule.when = fields["when"]
        rule._check_actions()
        return rule

    @classmethod
    def from_dict(cls, rule_id: int, data: Mapping[str, Any]) -> FaultRule:
        """A rule from data (HTTP JSON, TOML): the same fields as ``build`` without ``when``."""
        if not isinstance(data, Mapping):
            raise FaultError("a fault must be an object of fields")
        if "when" in data:
            raise FaultError("when: predicates can only be given from Python")
        return cls.build(rule_id, **dict(data))

    def _checked_answer(self, respond: Any) -> Any:
        """``respond`` if it can be an answer: a callable, or a mapping that encodes as the
        rule's API's answer at every version the rule matches."""
        if callable(respond):
            return respond
        if not isinstance(respond, Mapping):
            raise FaultError(f"respond: {respond!r} is not a mapping of answer fields (or, "
                             "from Python, a callable taking a RequestView)")
        if self.api is None:
            raise FaultError("respond: needs api (an answer is of one API)")
        # Checked by encoding it: the codec is imported for a rule with an answer, not at start.
        from fakebroker.protocol.framing import encode_response

        spec = api_spec(self.api)
        low, high = self.versions or (spec.min_version, spec.max_stable_version)
        for version in range(max(low, spec.min_version), min(high, spec.max_stable_version) + 1):
            try:
                encode_response(self.api, version, 0, respond)
            except Exception as exc:  # what the codec refuses, named with the version
                raise FaultError(f"respond: not a {spec.name} v{version} answer: "
                                 f"{type(exc).__name__}: {exc}") from None
        return respond

    def _check_actions(self) -> None:
        exclusive = [name for name in ("drop", "hang") if getattr(self, name)]
        if self.respond is not None:
            exclusive.append("respond")
        if self.error is not None:
            exclusive.append("error")
        if len(exclusive) > 1:
            raise FaultError(f"{' and '.join(exclusive)} cannot be combined in one rule")
        if self.hang and self.hold:
            raise FaultError("hold and hang cannot be combined in one rule")
        if self.hang and self.apply_then:
            raise FaultError("apply_then needs error, respond or drop, not hang")
        if self.apply_then and not exclusive:
            raise FaultError("apply_then needs error, respond or drop")
        if self.ignore and (self.hang or self.respond is not None
                            or (self.drop and not self.apply_then)):
            raise FaultError("ignore needs a request that is handled: not with hang, respond "
                             "or drop without apply_then")
        if not exclusive and not self.delay_ms and not self.throttle_ms and not self.hold \
                and not self.ignore:
            raise FaultError("a fault needs an action: error, respond, delay_ms, drop, hang, "
                             "hold, throttle_ms or ignore")

    # -- what it is -----------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return not self.removed and (self.count is None or self.hits < self.count)

    def describe(self) -> dict[str, Any]:
        """The rule as data (the shape ``from_dict`` takes, plus id, hits and state): the
        counting fields always, the others when they differ from their defaults."""
        data: dict[str, Any] = {"id": self.id}
        for spec in FIELDS.values():
            value = getattr(self, spec.name)
            if spec.kind == "count" or value != _DEFAULTS[spec.name]:
                data[spec.name] = spec.show(value)
        if self.when is not None:
            data["when"] = getattr(self.when, "__name__", "predicate")
        data.update(hits=self.hits, active=self.active)
        if self.hold:
            data["held"] = self.held
        return data

    def action_name(self) -> str:
        parts = []
        if self.hold:
            parts.append("hold")
        if self.apply_then:
            parts.append("apply_then")
        if self.error is not None:
            parts.append(error_name(self.error))
        if self.respond is not None:
            parts.append("respond")
        parts += [name for name in ("drop", "hang") if getattr(self, name)]
        if self.delay_ms:
            parts.append(f"delay_ms={self.delay_ms}")
        if self.throttle_ms:
            parts.append(f"throttle_ms={self.throttle_ms}")
        if self.ignore:
            parts.append(f"ignore={','.join(self.ignore)}")
        return "+".join(parts)

    # -- matching -------------------------------------------------------------------------

    def matched_targets(self, view: RequestView) -> list[Target] | None:
        """None if the request does not match; else the targets the rule covers ([] when the
        rule names no topic, partition or group: then it covers the whole request)."""
        if self.api is not None and view.api_key != self.api:
            return None
        if self.versions is not None and not self.versions[0] <= view.version \
                <= self.versions[1]:
            return None
        if self.broker is not None and view.broker != self.broker:
            return None
        if self.client_id is not None and view.client_id != self.client_id:
            return None
        if self.listener is not None and view.listener != self.listener:
            return None
        if self.principal is not None and view.principal != self.principal:
            return None
        if self.transactional_id is not None and \
                self.transactional_id not in view.transactional_ids:
            return None
        if self.group is not None and self.group not in view.groups:
            return None
        covered: list[Target] = []
        if self.topic is not None or self.partition is not None:
            covered = [t for t in view.targets if self._covers(t)]
            if not covered:
                return None
        elif self.group is not None:
            covered = [t for t in view.targets if t.group == self.group]
        if self.when is not None and not self.when(view):
            return None
        return covered

    def _covers(self, target: Target) -> bool:
        if self.topic is not None and self.topic not in (
                target.topic, str(target.topic_id) if target.topic_id else None):
            return False
        if self.partition is not None and target.partition != self.partition:
            return False
        return True

    def remove(self) -> None:
        """Stop applying the rule (its registry forgets it on the next request) and release
        what it holds."""
        self.removed = True
        self.release()

    # -- holding --------------------------------------------------------------------------

    @property
    def held(self) -> int:
        """How many requests the rule holds now."""
        return len(self._held)

    def release(self, count: int | None = None) -> int:
        """Let the ``count`` oldest held requests go on (all of them when None); returns how
        many were let go (fewer than ``count`` when fewer are held)."""
        n = len(self._held) if count is None else _int("count", count, minimum=0)
        released, self._held = self._held[:n], self._held[n:]
        for hold in released:
            hold.release()
        return len(released)

    def _hold(self) -> Hold:
        hold = Hold(self)
        self._held.append(hold)
        return hold

    # -- waiting --------------------------------------------------------------------------

    def record_hit(self) -> None:
        self.hits += 1
        self._hit.set()
        self._hit = trio.Event()

    async def wait(self, hits: int = 1, timeout: float = 10.0) -> int:
        """Wait until the rule was applied ``hits`` times in all; ``TimeoutError`` after
        ``timeout`` seconds. Returns the hit count."""
        with trio.move_on_after(timeout):
            while self.hits < hits:
                await self._hit.wait()
            return self.hits
        raise TimeoutError(f"fault {self.id} was hit {self.hits} time(s), not {hits}, "
                           f"within {timeout} s")


class Hold:
    """One request a ``hold`` rule holds, from the hit that counted it until the rule
    releases it (``FaultRule.release``) or the request stops waiting (``forget``)."""

    __slots__ = ("rule", "_released")

    def __init__(self, rule: FaultRule) -> None:
        self.rule = rule
        self._released = trio.CancelScope()  # cancelled by ``release``: ends the wait

    def release(self) -> None:
        self._released.cancel()

    async def wait(self, peer_gone: trio.Event) -> bool:
        """Wait until released (True; at once if it already was) or until ``peer_gone`` is
        set (False)."""
        with self._released:
            await peer_gone.wait()
        return self._released.cancel_called

    def forget(self) -> None:
        """The request no longer waits (released, its peer gone, or cancelled): the rule
        stops counting it as held."""
        if self in self.rule._held:
            self.rule._held.remove(self)


@dataclass(slots=True)
class FaultPlan:
    """What the matching rules do to one request."""

    rules: list[FaultRule] = field(default_factory=list)
    delay_ms: int = 0
    throttle_ms: int = 0
    drop: bool = False
    hang: bool = False
    holds: list[Hold] = field(default_factory=list)  # one per matching hold rule
    respond: Mapping[str, Any] | Callable[[RequestView], Mapping[str, Any]] | None = None
    apply_then: bool = False
    # Errors: for the whole request (``None`` key) or per target.
    whole_error: int | None = None
    target_errors: dict[Target, int] = field(default_factory=dict)
    # Request arrays the handler sees empty: (field names, the targets they are emptied in;
    # [] for the whole request), one per rule with ``ignore``.
    ignored: list[tuple[tuple[str, ...], list[Target]]] = field(default_factory=list)

    @property
    def errors(self) -> bool:
        return self.whole_error is not None or bool(self.target_errors)

    def describe(self) -> str:
        return ", ".join(f"#{r.id} {r.action_name()}" for r in self.rules)


class FaultRegistry:
    """The cluster's fault rules, in the order they were added, with a seeded generator.

    Rules are numbered 1, 2, 3 ... in the order they were added; a rule refused
    (``FaultError``) takes no number."""

    def __init__(self, seed: int | None = None):
        self.rules: dict[int, FaultRule] = {}
        self.random = random.Random(seed)
        self._next_id = 1

    def add(self, **fields: Any) -> FaultRule:
        """Add a rule (see the module docstring for its fields); returns it."""
        return self._added(FaultRule.build(self._next_id, **fields))

    def add_data(self, data: Mapping[str, Any]) -> FaultRule:
        return self._added(FaultRule.from_dict(self._next_id, data))

    def _added(self, rule: FaultRule) -> FaultRule:
        self.rules[rule.id] = rule
        self._next_id += 1
        return rule

    def get(self, rule_id: int) -> FaultRule:
        rule = self.rules.get(rule_id)
        if rule is None or rule.removed:
            raise KeyError(f"no fault {rule_id}")
        return rule

    def remove(self, rule_id: int) -> FaultRule:
        rule = self.get(rule_id)
        rule.remove()
        del self.rules[rule_id]
        return rule

    def clear(self) -> None:
        for rule in self.rules.values():
            rule.remove()
        self.rules.clear()

    def __iter__(self) -> Iterator[FaultRule]:
        return iter([rule for rule in self.rules.values() if not rule.removed])

    def plan(self, view: RequestView) -> FaultPlan | None:
        """The faults to apply to one request (and count their hits), or None."""
        if not self.rules:
            return None
        plan = FaultPlan()
        for rule in list(self.rules.values()):
            if rule.removed:
                del self.rules[rule.id]
                continue
            if not rule.active:
                continue
            covered = rule.matched_targets(view)
            if covered is None:
                continue
            rule.seen += 1
            if rule.seen <= rule.after:
                continue
            if rule.probability < 1.0 and self.random.random() >= rule.probability:
                continue
            rule.record_hit()
            plan.rules.append(rule)
            plan.delay_ms += rule.delay_ms
            plan.throttle_ms = max(plan.throttle_ms, rule.throttle_ms)
            plan.apply_then = plan.apply_then or rule.apply_then
            plan.drop = plan.drop or rule.drop
            plan.hang = plan.hang or rule.hang
            if rule.hold:
                plan.holds.append(rule._hold())
            if plan.respond is None:
                plan.respond = rule.respond
            if rule.ignore:
                plan.ignored.append((rule.ignore, covered))
            if rule.error is not None:
                if covered:
                    for target in covered:
                        plan.target_errors.setdefault(target, rule.error)
                elif plan.whole_error is None:
                    plan.whole_error = rule.error
        return plan if plan.rules else None


def _versions(value: Any) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, list | tuple) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value) \
            and 0 <= value[0] <= value[1]:
        return value[0], value[1]
    raise FaultError(f"versions: {value!r} is not a version or a [low, high] pair")


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FaultError(f"{name}: {value!r} is not an integer >= {minimum}")
    return value


def _str(name: str, value: Any) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str) or not value:
        raise FaultError(f"{name}: {value!r} is not a non-empty string")
    return value


# -- the fields -------------------------------------------------------------------------------

Check = Callable[[FaultRule, str, Any], Any]  # (rule so far, field name, given) -> its value


def _whole(minimum: int) -> Check:
    return lambda _rule, name, value: _int(name, value, minimum)


def _text(_rule: FaultRule, name: str, value: Any) -> str:
    return _str(name, value)


def _flag(_rule: FaultRule, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise FaultError(f"{name}: {value!r} is not true or false")
    return value


def _listener(_rule: FaultRule, name: str, value: Any) -> str:
    if value not in SECURITY_PROTOCOLS:
        raise FaultError(f"{name}: {value!r} is not a listener name "
                         f"({', '.join(SECURITY_PROTOCOLS)})")
    return value


def _principal(_rule: FaultRule, name: str, value: Any) -> str:
    kind, _, who = _str(name, value).partition(":")
    if not kind or not who:
        raise FaultError(f"{name}: {value!r} is not a principal (TYPE:NAME, as User:alice)")
    return value


def _count(_rule: FaultRule, name: str, value: Any) -> int | None:
    return None if value is None else _int(name, value, minimum=1)


def _probability(_rule: FaultRule, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise FaultError(f"{name}: {value!r} is not a number in (0, 1]")
    return float(value)


def _error(_rule: FaultRule, name: str, value: Any) -> int:
    try:
        code = error_code(value)
    except (ValueError, AttributeError):
        raise FaultError(f"{name}: unknown Kafka error {value!r}") from None
    if code == 0:
        raise FaultError(f"{name}: NONE (0) is not an error")
    return code


def _ignored(rule: FaultRule, name: str, value: Any) -> tuple[str, ...]:
    """Field names (one, or a list) of arrays in the rule's API's request."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names \
            or not all(isinstance(n, str) for n in names):
        raise FaultError(f"{name}: {value!r} is not a request field name or a list of them")
    if rule.api is None:
        raise FaultError(f"{name}: needs api (the fields are of one API's requests)")
    arrays = request_arrays(rule.api)
    for field_name in names:
        if field_name not in arrays:
            raise FaultError(f"{name}: {api_spec(rule.api).name} requests have no array "
                             f"{field_name!r}; they have {', '.join(sorted(arrays))}")
    return tuple(names)


def request_arrays(api_key: int) -> set[str]:
    """The names (as decoded requests have them: snake case) of every array field of the
    API's request, at any depth and version."""
    from fakebroker.protocol.codec import snake

    found: set[str] = set()

    def walk(fields: list[Any]) -> None:
        for field_name, kind, _versions, *extra in fields:
            if kind.startswith("[]"):
                found.add(snake(field_name))
            if extra and "fields" in extra[0]:
                walk(extra[0]["fields"])

    walk(api_spec(api_key).request["fields"])
    return found


def _shown_respond(respond: Any) -> Any:
    return getattr(respond, "__name__", "answer") if callable(respond) else respond


class FaultField(NamedTuple):
    """One field of a fault rule, as every way of giving one takes it (Python keywords, HTTP
    JSON, scenario TOML, ``fakebroker ctl fault add``)."""

    name: str
    kind: str  # "match", "count" or "action"
    check: Check  # the given value -> the rule's; FaultError names the field
    help: str
    show: Callable[[Any], Any] = lambda value: value  # the rule's value -> data (describe)
    option: type | None = str  # ctl's option: its type (bool: a flag); None: ctl's own


FIELDS: dict[str, FaultField] = {f.name: f for f in (
    FaultField("api", "match", lambda _rule, _name, value: api_key_of(value),
               "the API, by name (Fetch) or key", lambda key: api_spec(key).name),
    FaultField("versions", "match", lambda _rule, _name, value: _versions(value),
               "API versions, a version or [low, high]", list, option=None),
    FaultField("broker", "match", _whole(0), "the broker's id", option=int),
    FaultField("client_id", "match", _text, "the client id of the request header"),
    FaultField("listener", "match", _listener,
               f"the listener it came on ({', '.join(SECURITY_PROTOCOLS)})"),
    FaultField("principal", "match", _principal,
               "who sent it (User:alice; User:ANONYMOUS before authentication)"),
    FaultField("topic", "match", _text, "a topic it names (name or topic id)"),
    FaultField("partition", "match", _whole(0), "a partition it names", option=int),
    FaultField("group", "match", _text, "a group it names"),
    FaultField("transactional_id", "match", _text, "a transactional id it names"),
    FaultField("count", "count", _count,
               "apply to this many matching requests (default 1; None: until removed)",
               option=int),
    FaultField("after", "count", _whole(0), "let this many matching requests through first",
               option=int),
    FaultField("probability", "count", _probability, "apply with this probability",
               option=float),
    FaultField("error", "action", _error, "a Kafka error (name or code), placed where Kafka "
               "puts it", error_name),
    FaultField("delay_ms", "action", _whole(0), "answer this much later", option=int),
    FaultField("drop", "action", _flag, "close the connection unanswered", option=bool),
    FaultField("hang", "action", _flag, "never answer", option=bool),
    FaultField("hold", "action", _flag, "park the request until released", option=bool),
    FaultField("respond", "action", lambda rule, _name, value: rule._checked_answer(value),
               "the whole answer", _shown_respond, option=None),
    FaultField("throttle_ms", "action", _whole(0), "throttle_time_ms, and mute the "
               "connection that long", option=int),
    FaultField("apply_then", "action", _flag, "apply the request, then error, respond or drop",
               option=bool),
    FaultField("ignore", "action", _ignored, "request arrays (field names) the broker handles "
               "as sent empty", list),
)}
_DEFAULTS = {f.name: f.default for f in dataclass_fields(FaultRule) if f.name in FIELDS}
assert list(_DEFAULTS) == list(FIELDS), "FaultRule declares the fields in FIELDS' order"
