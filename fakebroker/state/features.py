"""The cluster's finalized feature levels (KIP-584), as a combined-mode Kafka 4.4.0 node keeps
them: what ApiVersions v3+ lists, what UpdateFeatures changes, and what the behaviour they
gate asks (``Features.at_least``).

Guarantees:

* A new cluster finalizes Kafka 4.4.0's levels of a freshly formatted node (group.version 1,
  kraft.version 1, share.version 2, metadata.version 33, streams.version 1,
  eligible.leader.replicas.version 1), transaction.version at the ``transaction_version``
  setting (Kafka's default 2), at epoch 17; a feature at level 0 is not finalized (not
  listed), as Kafka's.
* ``update`` checks every update as Kafka's ``FeatureControlManager.updateFeatures`` does, in
  its order (by the names' Java hashes), against the features the cluster's release supports
  (Kafka 4.4.0's, or an emulated release's: a feature it lacks "does not support this
  feature", as Kafka 3.9.1 answers group.version), and applies all of them or none: it returns
  Kafka's message for the first refused one. Each applied request bumps the epoch by one (Kafka's
  epoch is its metadata log's offset, which other metadata changes move too).
* ``at_least(name, level)`` is the one question the behaviour a feature gates asks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

GROUP_VERSION = "group.version"
KRAFT_VERSION = "kraft.version"
METADATA_VERSION = "metadata.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"
TRANSACTION_VERSION = "transaction.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"

# (name, min, max) as Kafka 4.4.0 lists its supported features, in its order.
SUPPORTED_FEATURES = (
    (GROUP_VERSION, 0, 1), (KRAFT_VERSION, 0, 1), (METADATA_VERSION, 7, 33),
    (SHARE_VERSION, 0, 2), (STREAMS_VERSION, 0, 1), (TRANSACTION_VERSION, 0, 2),
    (ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 1),
)
SUPPORTED = {name: (low, high) for name, low, high in SUPPORTED_FEATURES}
# A freshly formatted Kafka 4.4.0 node's levels (transaction.version: the setting's), in the
# order its features were finalized (measured: the order of features sharing a bucket).
NEW_CLUSTER_LEVELS = {GROUP_VERSION: 1, KRAFT_VERSION: 1, SHARE_VERSION: 2,
                      METADATA_VERSION: 33, STREAMS_VERSION: 1, TRANSACTION_VERSION: 2,
                      ELIGIBLE_LEADER_REPLICAS_VERSION: 1}
NEW_CLUSTER_EPOCH = 17

# UpdateFeatures' upgrade types (v1+; v0 always upgrades, as Kafka 4.4 reads v0).
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


class FeatureUpdate(NamedTuple):
    """One update of an UpdateFeatures request (a named tuple: declared at start, in a
    fraction of a frozen dataclass's time)."""

    name: str
    level: int
    upgrade_type: int = UPGRADE


@dataclass(eq=False)
class Features:
    """The finalized levels, by name (a feature at 0 is absent), their epoch, and the (min,
    max) level of every feature the release supports, by name."""

    levels: dict[str, int] = field(default_factory=dict)
    epoch: int = NEW_CLUSTER_EPOCH
    supported: dict[str, tuple[int, int]] = field(default_factory=lambda: dict(SUPPORTED))

    @classmethod
    def new_cluster(cls, transaction_version: int, release: str | None = None) -> Features:
        """A freshly formatted node's levels: Kafka 4.4.0's, or those of ``release`` (a
        release line: ``protocol_specs/releases.json``); transaction.version at
        ``transaction_version`` where the release has that feature."""
        levels, supported = NEW_CLUSTER_LEVELS, SUPPORTED
        if release is not None:
            from fakebroker.protocol.releases import new_cluster_levels, supported_features

            levels = new_cluster_levels(release)
            supported = {name: (low, high) for name, low, high in supported_features(release)}
        if TRANSACTION_VERSION in levels or release is None:
            levels = dict(levels, **{TRANSACTION_VERSION: transaction_version})
        return cls({name: level for name, level in levels.items() if level},
                   supported=dict(supported))

    def level(self, name: str) -> int:
        """The finalized level of feature ``name`` (0: not finalized)."""
        return self.levels.get(name, 0)

    def at_least(self, name: str, level: int) -> bool:
        """Whether feature ``name`` is finalized at ``level`` or above: the question the
        behaviour a feature gates asks (KIP-848 groups: group.version >= 1, transactions v2:
        transaction.version >= 2, share groups: share.version >= 1, streams groups:
        streams.version >= 1)."""
        return self.level(name) >= level

    def finalized(self) -> list[tuple[str, int]]:
        """(name, level) of every finalized feature, in the order Kafka 4.4 lists them (its
        ``HashMap`` sized for them: by bucket of the name's Java hash, then in the order they
        were finalized, a feature taken out and finalized again last)."""
        names = list(self.levels)
        buckets = table_size(math.ceil(len(names) / 0.75))
        return [(name, self.levels[name])
                for name in sorted(names, key=lambda n: java_bucket(n, buckets))]

    def update(self, updates: Iterable[FeatureUpdate], validate_only: bool,
               controller_id: int) -> str | None:
        """Apply ``updates`` (all or none; none with ``validate_only``); None when done, else
        Kafka's message for the first refused one (INVALID_UPDATE_VERSION), in the order
        Kafka checks them (``checked_order``)."""
        wanted = list(updates)
        for update in checked_order(wanted):
            refusal = self._refusal(update, controller_id)
            if refusal is not None:
                return refusal
        if validate_only or not wanted:
            return None
        for update in wanted:
            if update.level:
                self.levels[update.name] = update.level
            else:
                self.levels.pop(update.name, None)
        self.epoch += 1
        return None

    def update_each(self, updates: Iterable[FeatureUpdate], validate_only: bool,
                    controller_id: int) -> dict[str, str | None]:
        """Kafka 3.3-3.9's UpdateFeatures (4.0 made it all or none, KAFKA-16308): each update
        checked alone (a name given twice: its last update) and applied unless refused (none
        with ``validate_only``); feature name -> None or Kafka's message for its refusal, in
        name order (its ``TreeMap``)."""
        by_name = {update.name: update for update in updates}
        results = {name: self._refusal(by_name[name], controller_id, kafka_3=True)
                   for name in sorted(by_name)}
        applied = [by_name[name] for name, refusal in results.items() if refusal is None]
        if applied and not validate_only:
            for update in applied:
                if update.level:
                    self.levels[update.name] = update.level
                else:
                    self.levels.pop(update.name, None)
            self.epoch += 1
        return results

    def _refusal(self, update: FeatureUpdate, controller_id: int, kafka_3: bool = False
                 ) -> str | None:
        """Kafka's message refusing ``update``, or None. ``kafka_3``: as Kafka 3.3-3.9 check
        (measured on 3.9.1): a feature the release does not support is supported at level 0
        only (Kafka's DISABLED range, 0-0), and kraft.version may go down."""
        name, level, kind = update.name, update.level, update.upgrade_type
        invalid = f"Invalid update version {level} for feature {name}. "
        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return invalid + "The controller does not support the given upgrade type."
        if level < 0:
            return invalid + "A feature version cannot be less than 0."
        supported = self.supported.get(name, (0, 0) if kafka_3 else None)
        if supported is None or supported[1] == 0 != level:
            return invalid + f"Local controller {controller_id} does not support this feature."
        if not supported[0] <= level <= supported[1]:
            return invalid + (f"Local controller {controller_id} only supports versions "
                              f"{supported[0]}-{supported[1]}")
        current = self.level(name)
        if level < current and kind == UPGRADE:
            return invalid + ("Can't downgrade the version of this feature without setting the "
                              "upgrade type to either safe or unsafe downgrade.")
        if level > current and kind != UPGRADE:
            return invalid + "Can't downgrade to a newer version."
        if level < current and name == METADATA_VERSION:
            return (f"Unsupported metadata.version downgrade from {current} to {level}. " + (
                "Refusing to perform the requested downgrade because it might delete metadata "
                "information." if kind == SAFE_DOWNGRADE
                else "Unsafe metadata downgrade is not supported in this version."))
        if level < current and name == KRAFT_VERSION and not kafka_3:
            return invalid + "Can't downgrade the version of this feature."
        return None


def checked_order(updates: list[FeatureUpdate]) -> list[FeatureUpdate]:
    """The updates in the order Kafka's controller checks them: the iteration order of the
    ``HashMap`` it puts them in by name (a name given twice: its last update, at its first
    place), so not the request's order."""
    by_name: dict[str, FeatureUpdate] = {}
    for update in updates:
        by_name[update.name] = update
    buckets = 16
    while len(by_name) > buckets * 3 // 4:
        buckets *= 2
    return sorted(by_name.values(), key=lambda u: java_bucket(u.name, buckets))


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (as an unsigned 32-bit value), over the string's UTF-16 code
    units as Java's is (a character beyond U+FFFF counts as its two surrogates)."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def java_bucket(text: str, buckets: int) -> int:
    """The bucket of a Java ``HashMap`` of ``buckets`` buckets holding key ``text``."""
    h = java_hash(text)
    return (h ^ (h >> 16)) & (buckets - 1)


def table_size(capacity: int) -> int:
    """Java ``HashMap.tableSizeFor``: the power of two at or above ``capacity``."""
    return 1 << max(capacity - 1, 0).bit_length()
