"""UpdateFeatures (key 57): change the cluster's finalized feature levels (KIP-584).

Versions: 0-2 (4.x; v1 adds upgrade types and ``validate_only``, v2 drops the per-feature
results). Flexible from v0.

Behavior, as a combined-mode Kafka 4.4.0 node answers it (``FeatureControlManager``),
measured; the levels are ``fakebroker.state.features``':
* Each update names a feature, a level and (v1+) an upgrade type: 1 upgrade, 2 safe
  downgrade, 3 unsafe downgrade. v0's ``allow_downgrade`` is read as an upgrade, as Kafka 4.4
  reads it. Level 0 takes the feature out (``kafka-features disable``).
* The updates are checked in Kafka's order (its hash map's, by feature name: not the
  request's); the first refused one refuses the whole request: INVALID_UPDATE_VERSION at the
  top level, "The update failed for all features since the following feature had an error: "
  and Kafka's reason ("Invalid update version L for feature F. " then: the controller does
  not support the given upgrade type; a version below 0; Local controller C does not support
  this feature / only supports versions LOW-HIGH; a downgrade without a downgrade type; a
  downgrade type to a newer version; metadata.version and kraft.version cannot be
  downgraded), and (v0-1) no results.
* Otherwise every update is applied (none with ``validate_only``), the finalized features'
  epoch moves on, and the answer is NONE with a null message; v0-1 list one result per
  update, in the request's order, NONE with the message "NONE", as Kafka writes them.
* What the levels gate: group.version 0 turns KIP-848 consumer groups off
  (ConsumerGroupHeartbeat and ConsumerGroupDescribe answer UNSUPPORTED_VERSION);
  transaction.version below 2 turns transactions v2 off (Produce v12+ and TxnOffsetCommit v5+
  no longer add to a transaction implicitly, and Java clients 4.x run v1); ApiVersions lists
  the new levels at once.
* A cluster answering as a release before 4.0 (the ``kafka_version`` setting) answers as
  Kafka 3.9.1 does (measured; 3.3-3.9's ``FeatureControlManager``): each update is checked
  against that release's supported features alone (one it lacks only at level 0, Kafka's
  DISABLED range; kraft.version may go down), the refused ones are left and the others
  applied, and the answer is NONE at the top level (message "") with one result per
  feature, in name order, each INVALID_UPDATE_VERSION with the reason or NONE (null message).
* ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.releases import since
from fakebroker.state.features import UPGRADE, FeatureUpdate

API_KEY = 57
ERROR_PLACEMENT = TOP_LEVEL
AUTHORIZES = (cluster("ALTER"),)
# The first release whose controller refuses the whole request for one refused update
# (KAFKA-16308); before, each update was answered alone.
ALL_OR_NONE_FROM = "4.0"
FAILED = "The update failed for all features since the following feature had an error: "


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    updates = [FeatureUpdate(u.feature, u.max_version_level,
                             u.upgrade_type if ctx.version >= 1 else UPGRADE)
               for u in request.feature_updates]
    validate_only = ctx.version >= 1 and request.validate_only
    if not since(ctx.cluster.settings.kafka_version, ALL_OR_NONE_FROM):
        return each_answered(ctx, updates, validate_only)
    refusal = ctx.cluster.features.update(updates, validate_only, ctx.cluster.controller_id)
    if refusal is not None:
        return {"throttle_time_ms": 0, "error_code": error_code("INVALID_UPDATE_VERSION"),
                "error_message": FAILED + refusal, "results": []}
    if updates and not validate_only:
        ctx.cluster.changed()  # ApiVersions answers kept for the old levels are dropped
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": [
        {"feature": u.name, "error_code": 0, "error_message": "NONE"} for u in updates]}


def each_answered(ctx: RequestContext, updates: list[FeatureUpdate], validate_only: bool
                  ) -> dict[str, Any]:
    """A release before 4.0's answer: every update checked and applied alone, a result each."""
    results = ctx.cluster.features.update_each(updates, validate_only, ctx.cluster.controller_id)
    if not validate_only and None in results.values():
        ctx.cluster.changed()
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "results": [
        {"feature": name, "error_code": error_code("INVALID_UPDATE_VERSION") if refusal else 0,
         "error_message": refusal} for name, refusal in results.items()]}
