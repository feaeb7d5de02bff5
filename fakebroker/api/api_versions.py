"""ApiVersions (key 18): the versions this broker serves.

Versions: 0-4 (3.9), 5 (4.x). Flexible from v3; the response header is always v0 (KIP-511).

Behavior:
* Lists every served API with its min and max version (the newest stable one); a cluster
  answering as a Kafka release (the ``kafka_version`` setting) lists exactly what that
  release's broker lists (``protocol_specs/releases.json``), in key order.
* A request out of the served range (above or below it) never reaches this handler: the
  server reads its header (v2 from v3 up, v1 below; one that does not parse closes the
  connection, as on Kafka) and answers it at v0 with UNSUPPORTED_VERSION and ApiVersions'
  own range.
* v3+: the client software name and version must be non-empty, of letters, digits, '-' and
  '.', starting and ending with a letter or digit, else INVALID_REQUEST (as Kafka checks).
* v5: a client names the cluster and node it means to reach (KIP-1242) or neither: one
  without the other (a cluster id with node -1, a node without a cluster id) is
  INVALID_REQUEST; both, and another was reached, REBOOTSTRAP_REQUIRED (measured on Kafka
  4.4).
* v3+ lists the features a combined-mode Kafka 4.4.0 node lists (a cluster answering as a
  release: those of that release, ``protocol_specs/releases.json``), measured: supported (from
  v4; v3 answers leave out supported features whose minimum is 0, which v3 clients cannot
  read: KAFKA-17011) group.version 0-1, kraft.version 0-1, metadata.version 7-33,
  share.version 0-2, streams.version 0-1, transaction.version 0-2,
  eligible.leader.replicas.version 0-1, in Kafka's order; finalized: the cluster's levels and
  epoch (``fakebroker.state.features``: a new cluster's are a freshly formatted node's,
  transaction.version at the ``transaction_version`` setting; UpdateFeatures changes them),
  a level of 0 not listed, in the order Kafka lists them. Java clients 4.x run transactions
  v2 (KIP-890) only when transaction.version is finalized at 2.
* An error answer lists no APIs, as Kafka's.
* The answer depends only on the request, the broker and the finalized features (a change
  of them is a metadata change), so a broker keeps it until the metadata changes
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
from fakebroker.state.features import SUPPORTED_FEATURES

API_KEY = 18
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = NOTHING
CACHEABLE = True
SUPPORTED_FROM_MIN_0 = 4  # the first version listing supported features of minimum 0
SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@functools.cache
def api_keys(release: str | None = None) -> FrozenArray:
    """The answer's ``api_keys``, by key (computed once, encoded once per version, never
    changed): every served API with its min and max version, or with a ``release`` (line),
    every API that release's broker lists, as it lists it."""
    from fakebroker.api import HANDLERS, served_versions

    if release is not None:
        from fakebroker.protocol.releases import listed_apis

        return FrozenArray([{"api_key": key, "min_version": low, "max_version": high}
                            for key, (low, high) in listed_apis(release).items()])
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
    elif (request.cluster_id is None) != (request.node_id == -1):
        error = error_code("INVALID_REQUEST")  # one named without the other
    elif request.cluster_id is not None and (request.cluster_id != ctx.cluster.cluster_id
                                             or request.node_id != ctx.broker.id):
        error = error_code("REBOOTSTRAP_REQUIRED")
    answer = {"error_code": error,
              "api_keys": [] if error else api_keys(ctx.cluster.settings.kafka_version),
              "throttle_time_ms": 0}
    if not error:
        answer.update(supported_features=supported_features(
                          ctx.version, ctx.cluster.settings.kafka_version),
                      finalized_features_epoch=ctx.cluster.features.epoch,
                      finalized_features=finalized_features(
                          tuple(ctx.cluster.features.finalized())))
    return answer


@functools.cache
def supported_features(version: int, release: str | None = None) -> FrozenArray:
    """The supported features an answer at ``version`` lists (v3: none of minimum 0): Kafka
    4.4.0's, or those of ``release`` (a release line)."""
    if release is None:
        features = SUPPORTED_FEATURES
    else:
        from fakebroker.protocol.releases import supported_features as of_release

        features = of_release(release)
    return FrozenArray([{"name": name, "min_version": low, "max_version": high}
            for name, low, high in features
            if low > 0 or version >= SUPPORTED_FROM_MIN_0])


@functools.cache
def finalized_features(levels: tuple[tuple[str, int], ...]) -> FrozenArray:
    """The finalized features' entries, (name, level) in the order listed."""
    return FrozenArray([{"name": name, "max_version_level": level, "min_version_level": level}
                        for name, level in levels])
