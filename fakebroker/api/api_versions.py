"""ApiVersions (key 18): the versions this broker serves.

Versions: 0-4 (3.9), 5 (4.x). Flexible from v3; the response header is always v0 (KIP-511).

Behavior:
* Lists every served API with its min and max version (the newest stable one).
* A request above the served range never reaches this handler: the server answers it at v0
  with UNSUPPORTED_VERSION and ApiVersions' own range.
* v3+: the client software name and version must be non-empty, of letters, digits, '-' and
  '.', starting and ending with a letter or digit, else INVALID_REQUEST (as Kafka checks).
* v5: a client that names the cluster or node it means to reach (KIP-1242) and reached
  another gets REBOOTSTRAP_REQUIRED, as Kafka answers.
* v3+ lists the features a combined-mode Kafka 4.4.0 node lists, in its order, measured:
  supported (from v4; v3 answers leave out supported features whose minimum is 0, which v3
  clients cannot read: KAFKA-17011) group.version 0-1, kraft.version 0-1, metadata.version
  7-33, share.version 0-2, streams.version 0-1, transaction.version 0-2,
  eligible.leader.replicas.version 0-1; finalized at epoch 17 (a freshly formatted node's;
  Kafka's is its metadata log's offset, which grows with every metadata change):
  group.version 1, kraft.version 1, share.version 2, metadata.version 33 (4.4-IV2),
  streams.version 1, transaction.version at the cluster's ``transaction_version`` (Kafka 4's
  default 2; a level of 0 is not listed, as Kafka lists no finalized feature at 0),
  eligible.leader.replicas.version 1. Java clients 4.x run transactions v2 (KIP-890) only when
  it is finalized at 2; the other levels are Kafka's, fixed (no UpdateFeatures yet).
* An error answer lists no APIs, as Kafka's.
* The answer depends only on the request and the broker, so a broker keeps it
  (``CACHEABLE``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from fakebroker.api.access import NOTHING
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.codec import FrozenArray
from fakebroker.protocol.errors import error_code

API_KEY = 18
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = NOTHING
CACHEABLE = True
TRANSACTION_VERSION = "transaction.version"
# (name, min, max) as Kafka 4.4.0 lists its supported features, in its order.
SUPPORTED_FEATURES = (
    ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 33),
    ("share.version", 0, 2), ("streams.version", 0, 1), (TRANSACTION_VERSION, 0, 2),
    ("eligible.leader.replicas.version", 0, 1),
)
# (name, level) as Kafka 4.4.0 finalizes them, in its order; transaction.version's level is
# the cluster's setting.
FINALIZED_FEATURES = (
    ("group.version", 1), ("kraft.version", 1), ("share.version", 2),
    ("metadata.version", 33), ("streams.version", 1), (TRANSACTION_VERSION, None),
    ("eligible.leader.replicas.version", 1),
)
SUPPORTED_FROM_MIN_0 = 4  # the first version listing supported features of minimum 0
FEATURES_EPOCH = 17  # a freshly formatted Kafka 4.4.0 node's; the levels never change here
SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@functools.cache
def api_keys() -> FrozenArray:
    """Every served API with its min and max version, by key: the answer's ``api_keys``
    (computed once, encoded once per version, never changed)."""
    from fakebroker.api import HANDLERS, served_versions

    entries = []
    for key in sorted(HANDLERS):
        versions = served_versions(key)
        assert versions is not None
        entries.append({"api_key": key, "min_version": versions.start,
                        "max_version": versions.stop - 1})
    return FrozenArray(entries)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    error = 0
    if ctx.version >= 3 and not (
        SOFTWARE.fullmatch(request.client_software_name or "")
        and SOFTWARE.fullmatch(request.client_software_version or "")
    ):
        error = error_code("INVALID_REQUEST")
    elif request.cluster_id not in (None, ctx.cluster.cluster_id) \
            or request.node_id not in (-1, ctx.broker.id):
        error = error_code("REBOOTSTRAP_REQUIRED")
    answer = {"error_code": error, "api_keys": [] if error else api_keys(),
              "throttle_time_ms": 0}
    if not error:
        answer.update(supported_features=supported_features(ctx.version),
                      finalized_features_epoch=FEATURES_EPOCH,
                      finalized_features=finalized_features(
                          ctx.cluster.settings.transaction_version))
    return answer


@functools.cache
def supported_features(version: int) -> FrozenArray:
    """The supported features an answer at ``version`` lists (v3: none of minimum 0)."""
    return FrozenArray([{"name": name, "min_version": low, "max_version": high}
            for name, low, high in SUPPORTED_FEATURES
            if low > 0 or version >= SUPPORTED_FROM_MIN_0])


@functools.cache
def finalized_features(transaction_version: int) -> FrozenArray:
    """The finalized features, transaction.version at the cluster's level (none at 0)."""
    levels = [(name, transaction_version if level is None else level)
              for name, level in FINALIZED_FEATURES]
    return FrozenArray([{"name": name, "max_version_level": level, "min_version_level": level}
                        for name, level in levels if level])
