"""Client quotas over the wire, for tests on both brokers: set and remove them
(AlterClientQuotas), find them (DescribeClientQuotas), and wait for the real broker, which
applies a change on its controller and answers Describe from each broker's copy of the
metadata a moment later (``described``). The real broker is shared by the session: a test
removes every quota (``quotas_removed``) before and after it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from fakebroker.protocol.errors import error_name as kafka_error_name
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient

Pairs = Sequence[tuple[str, str | None]]
INVALID = "INVALID_REQUEST"
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def a_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def entity(*pairs: tuple[str, str | None]) -> list[dict[str, Any]]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in pairs]


def op(key: str, value: float | None) -> dict[str, Any]:
    """Set ``key`` to ``value``; None removes it."""
    return {"key": key, "value": 0.0 if value is None else value, "remove": value is None}


def alter(client: WireClient, entries: Sequence[tuple[Pairs, dict[str, float | None]]],
          validate_only: bool = False, version: int = 1) -> list[tuple[Any, ...]]:
    """Send one AlterClientQuotas; each result as (entity pairs, error name, message)."""
    answer = client.request("AlterClientQuotas", version, {"entries": [
        {"entity": entity(*pairs), "ops": [op(k, v) for k, v in ops.items()]}
        for pairs, ops in entries], "validate_only": validate_only})
    return [(tuple((e.entity_type, e.entity_name) for e in r.entity),
             kafka_error_name(r.error_code) if r.error_code else "NONE", r.error_message)
            for r in answer.entries]


def describe(client: WireClient, components: Sequence[tuple[str, int, str | None]],
             strict: bool = False, version: int = 1) -> Any:
    return client.request("DescribeClientQuotas", version, {"components": [
        {"entity_type": kind, "match_type": match_type, "match": match}
        for kind, match_type, match in components], "strict": strict})


def found(answer: Any) -> dict[frozenset[tuple[str, str | None]], dict[str, float]]:
    """A Describe answer's entities (as sets of pairs) -> their quota values."""
    assert answer.error_code == 0, answer.error_message
    return {frozenset((e.entity_type, e.entity_name) for e in entry.entity):
            {v.key: v.value for v in entry.values} for entry in answer.entries}


def described(client: WireClient, components: Sequence[tuple[str, int, str | None]],
              expected: dict[frozenset[tuple[str, str | None]], dict[str, float]],
              strict: bool = False) -> None:
    """Wait until the filter finds exactly ``expected`` (the real broker applies a change a
    moment after answering it)."""
    wait_for(lambda: found(describe(client, components, strict)) == expected,
             f"quotas {expected}")


def quotas_removed(client: WireClient) -> None:
    """Remove every quota the broker has, and wait until Describe lists none."""
    answer = describe(client, [])
    client.request("AlterClientQuotas", 1, {"entries": [
        {"entity": [{"entity_type": e.entity_type, "entity_name": e.entity_name}
                    for e in entry.entity],
         "ops": [op(v.key, None) for v in entry.values]} for entry in answer.entries],
        "validate_only": False})
    wait_for(lambda: not describe(client, []).entries, "every quota removed")


def quota_free_client(kafka: Any) -> Iterator[WireClient]:
    """A wire client of ``kafka`` with no quota set (a real broker's are removed first: other
    tests may have left some), which removes every quota set when the test ends: a fixture's
    body (``yield from``)."""
    with WireClient(kafka.bootstrap_servers) as wire:
        quotas_removed(wire)
        try:
            yield wire
        finally:
            quotas_removed(wire)
