"""One module per Kafka API key; ``HANDLERS`` maps each served key to its handler.

A handler takes the decoded request and a ``RequestContext`` and returns the response body as a
mapping (fields left out take their defaults), ``None`` for no answer, or an awaitable of
either. Every API is served at every version from Kafka 3.9's minimum to the newest stable one.

Each module holds everything about its API: a docstring naming it, its key, its ``Versions:``
and its behaviour; ``API_KEY``; ``handle``; ``ERROR_PLACEMENT``, where Kafka puts its errors
(``fakebroker.faults.shapes``, read by the fault machinery); ``CACHEABLE = True`` when a
broker may keep its answers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from fakebroker.api import (
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
)
from fakebroker.faults.shapes import Placement
from fakebroker.protocol.specs import api_spec

MODULES = (
    produce,
    fetch,
    list_offsets,
    metadata,
    api_versions,
    create_topics,
    delete_topics,
    delete_records,
    init_producer_id,
    offset_for_leader_epoch,
    describe_configs,
    create_partitions,
    describe_cluster,
    find_coordinator,
    join_group,
    sync_group,
    heartbeat,
    leave_group,
    offset_commit,
    offset_fetch,
    describe_groups,
    list_groups,
    delete_groups,
    offset_delete,
    consumer_group_heartbeat,
    consumer_group_describe,
)

HANDLERS: dict[int, Callable[..., Any]] = {m.API_KEY: m.handle for m in MODULES}
# APIs whose answer depends only on the request's bytes and the cluster's metadata
# (``Cluster.generation``): a broker may keep an answer and give it again (module CACHEABLE).
CACHEABLE: frozenset[int] = frozenset(
    m.API_KEY for m in MODULES if getattr(m, "CACHEABLE", False))
# Where each API's errors go (module ERROR_PLACEMENT; every module declares one).
ERROR_PLACEMENTS: dict[int, Placement] = {m.API_KEY: m.ERROR_PLACEMENT for m in MODULES}


@functools.cache
def served_versions(api_key: int) -> range | None:
    """The versions of ``api_key`` this broker serves, or None if it serves none."""
    if api_key not in HANDLERS:
        return None
    spec = api_spec(api_key)
    return range(spec.min_version, spec.max_stable_version + 1)
