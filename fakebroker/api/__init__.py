"""One module per Kafka API key; ``HANDLERS`` maps each served key to its handler.

A handler takes the decoded request and a ``RequestContext`` and returns the response body as a
mapping (fields left out take their defaults), ``None`` for no answer, or an awaitable of
either. Every API is served at every version from Kafka 3.9's minimum to the newest stable one.

Each module holds everything about its API: a docstring naming it, its key, its ``Versions:``
and its behaviour; ``API_KEY``; ``handle``; ``ERROR_PLACEMENT``, where Kafka puts its errors
(``fakebroker.api.shapes``, read by ``fakebroker.api.targets`` and ``fakebroker.api.placement``);
``AUTHORIZES``, what it authorizes (``fakebroker.api.access``, read by the authorization
seam); ``CACHEABLE = True`` when a broker may keep its answers.

Modules are imported when first needed, one API at a time: a broker imports the module of an
API the first time a request of it comes (or its handler, placement or answer keeping is looked
up), never the modules of APIs nobody calls. Which keys are served, and at which versions,
comes from ``MODULE_NAMES`` and ``protocol_specs`` alone (a module is named as its API in
snake case, as ``snake(spec.name)``), so ApiVersions answers without importing any handler.
``MODULES`` (every module, imported) is there for tests and tools.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, MutableMapping, Set
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fakebroker.protocol.specs import api_keys_by_name, api_spec

if TYPE_CHECKING:
    from fakebroker.api.shapes import Placement

T = TypeVar("T")

# The served APIs: each a module of this package, named as its API in snake case.
MODULE_NAMES = (
    "produce",
    "fetch",
    "list_offsets",
    "metadata",
    "api_versions",
    "create_topics",
    "delete_topics",
    "delete_records",
    "init_producer_id",
    "offset_for_leader_epoch",
    "describe_configs",
    "alter_configs",
    "incremental_alter_configs",
    "elect_leaders",
    "alter_partition_reassignments",
    "list_partition_reassignments",
    "create_partitions",
    "describe_cluster",
    "find_coordinator",
    "join_group",
    "sync_group",
    "heartbeat",
    "leave_group",
    "offset_commit",
    "offset_fetch",
    "describe_groups",
    "list_groups",
    "delete_groups",
    "offset_delete",
    "consumer_group_heartbeat",
    "consumer_group_describe",
    "share_group_heartbeat",
    "share_group_describe",
    "share_fetch",
    "share_acknowledge",
    "describe_share_group_offsets",
    "alter_share_group_offsets",
    "delete_share_group_offsets",
    "streams_group_heartbeat",
    "streams_group_describe",
    "streams_group_topology_description_update",
    "add_partitions_to_txn",
    "add_offsets_to_txn",
    "end_txn",
    "write_txn_markers",
    "txn_offset_commit",
    "describe_producers",
    "describe_transactions",
    "list_transactions",
    "describe_acls",
    "create_acls",
    "delete_acls",
    "describe_user_scram_credentials",
    "alter_user_scram_credentials",
    "describe_client_quotas",
    "alter_client_quotas",
    "create_delegation_token",
    "renew_delegation_token",
    "expire_delegation_token",
    "describe_delegation_token",
    "sasl_handshake",
    "sasl_authenticate",
    "describe_log_dirs",
    "alter_replica_log_dirs",
    "describe_topic_partitions",
    "list_config_resources",
    "describe_quorum",
    "unregister_broker",
    "unregister_controller",
    "add_raft_voter",
    "remove_raft_voter",
    "update_features",
)


@functools.cache
def served_keys() -> dict[int, str]:
    """Every served API key -> the name of its module, from the names and ``protocol_specs``
    (no module imported)."""
    keys = api_keys_by_name()
    return {keys["".join(word.capitalize() for word in name.split("_"))]: name
            for name in MODULE_NAMES}


@functools.cache
def api_module(api_key: int) -> ModuleType:
    """The module of a served API, imported on first use; ``KeyError`` if not served."""
    name = served_keys()[api_key]
    module = importlib.import_module(f"{__name__}.{name}")
    if module.API_KEY != api_key:
        raise RuntimeError(f"fakebroker.api.{name} declares API_KEY {module.API_KEY}, but "
                           f"protocol_specs gives {api_key}")
    return module


@functools.cache
def served_versions(api_key: int) -> range | None:
    """The versions of ``api_key`` this broker serves, or None if it serves none."""
    if api_key not in served_keys():
        return None
    spec = api_spec(api_key)
    return range(spec.min_version, spec.max_stable_version + 1)


@functools.cache
def versions_as(api_key: int, release: str | None) -> range | None:
    """The versions of ``api_key`` a cluster answering as Kafka ``release`` (a release line,
    ``None``: no release) serves: those the release lists that this broker serves; None when
    the release lists none of them or this broker serves none. Versions a release lists but
    refuses (4.x: Produce v0-2) are refused too: they start at the listed minimum (the
    importer's ``refused`` rows)."""
    versions = served_versions(api_key)
    if release is None or versions is None:
        return versions
    from fakebroker.protocol.releases import listed_apis, refused_versions

    listed = listed_apis(release).get(api_key)
    if listed is None:
        return None
    refused = refused_versions(release).get(api_key)
    low = listed[0] if refused is None else refused[1] + 1
    low, high = max(low, versions.start), min(listed[1], versions.stop - 1)
    return range(low, high + 1) if low <= high else None


class ByApiKey(MutableMapping[int, T], Generic[T]):
    """Every served API key -> a value read from its module (``read(module)``), the module
    imported the first time its key is looked up. Keys, ``in`` and ``len`` import nothing;
    a value set here (a test's ``monkeypatch.setitem``) replaces the module's until deleted."""

    def __init__(self, read: Callable[[ModuleType], T]) -> None:
        self._read = read
        self._values: dict[int, T] = {}

    def __getitem__(self, api_key: int) -> T:
        try:
            return self._values[api_key]
        except KeyError:
            value = self._values[api_key] = self._read(api_module(api_key))
            return value

    def __setitem__(self, api_key: int, value: T) -> None:
        if api_key not in served_keys():
            raise KeyError(api_key)
        self._values[api_key] = value

    def __delitem__(self, api_key: int) -> None:
        self._values.pop(api_key, None)

    def get(self, api_key: int, default: Any = None) -> Any:  # type: ignore[override]
        """``self[api_key]``, or ``default`` for a key not served (a dict lookup once the
        key's module was read)."""
        try:
            return self._values[api_key]
        except KeyError:
            return self[api_key] if api_key in served_keys() else default

    def __contains__(self, api_key: object) -> bool:
        return api_key in served_keys()

    def __iter__(self) -> Iterator[int]:
        return iter(served_keys())

    def __len__(self) -> int:
        return len(served_keys())


class _Cacheable(Set[int]):
    """The served keys whose module sets ``CACHEABLE``; ``in`` imports only the module of
    the key asked about, iterating imports them all."""

    def __init__(self) -> None:
        self._known: dict[int, bool] = {}

    def __contains__(self, api_key: object) -> bool:
        known = self._known.get(api_key)  # type: ignore[call-overload]
        if known is None:
            known = api_key in served_keys() and bool(
                getattr(api_module(api_key), "CACHEABLE", False))  # type: ignore[arg-type]
            self._known[api_key] = known  # type: ignore[index]
        return known

    def __iter__(self) -> Iterator[int]:
        return (key for key in served_keys() if key in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


HANDLERS: ByApiKey[Callable[..., Any]] = ByApiKey(lambda module: module.handle)
# APIs whose answer depends only on the request's bytes and the cluster's metadata
# (``Cluster.generation``): a broker may keep an answer and give it again (module CACHEABLE).
CACHEABLE: Set[int] = _Cacheable()
# What each API authorizes (module AUTHORIZES; every module declares it) is read by the
# authorization seam, ``fakebroker.security.enforcement``, with the authorizer on.
# Where each API's errors go (module ERROR_PLACEMENT; every module declares one).
ERROR_PLACEMENTS: ByApiKey[Placement] = ByApiKey(lambda module: module.ERROR_PLACEMENT)
# An API whose answer to a request the authorizer refuses as a whole Kafka builds otherwise
# than its other error answers (its ``getErrorResponse``) declares ``refused_answer(request,
# version, error) -> dict``; the others' refusals are placed by ERROR_PLACEMENT (None here).
REFUSED_ANSWERS: ByApiKey[Callable[[Any, int, str], dict[str, Any]] | None] = ByApiKey(
    lambda module: getattr(module, "refused_answer", None))
# An API whose request Kafka reads in a context made on its arrival (Fetch: its fetch
# session) declares ``prepare(request, context) -> request``: the request as read then, which
# the authorizer, the fault rules and the handler see (None here for the others). Read on
# the path of requests that may wait: an API declaring it has a handler that awaits.
PREPARERS: ByApiKey[Callable[[Any, Any], Any] | None] = ByApiKey(
    lambda module: getattr(module, "prepare", None))


def __getattr__(name: str) -> Any:
    if name == "MODULES":  # every module, imported: for tests and tools
        return tuple(api_module(key) for key in served_keys())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
