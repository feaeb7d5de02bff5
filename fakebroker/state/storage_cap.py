"""The optional cap on the bytes a fake cluster stores (the ``max_stored_bytes`` setting).

Kafka has no such cap (a broker whose disk fills takes its log directory offline); a test
fixture has one so that a runaway producer fails clearly instead of filling the test
process's memory. Guarantees:

* What counts: the bytes of the record batches every partition log holds, as stored (after
  the broker's rewrites), one copy per partition whatever its replicas; what retention,
  compaction, DeleteRecords and a topic's deletion drop stops counting at once.
* ``Budget.admit``: a Produce whose batch would take the total past the cap is refused with
  ``REFUSAL`` (not retriable: clients report it at once instead of retrying until their
  delivery timeout) and a message naming the cap and the setting; nothing is appended. A
  batch that fits is appended, so the total never passes the cap by Produce. Transaction
  markers are written regardless (a few dozen bytes each): a transaction begun can end.
* The first refusal after a Produce fitted (or ever) logs one warning on the ``fakebroker``
  logger; refusals after it are not logged again until a Produce fits.
* No cap (``None``, the default) costs nothing; with one, each Produce request sums the logs'
  sizes once, at its first batch (one subtraction per partition of the cluster), and adds
  each batch it lets through to that total: exact, since nothing else runs while a Produce
  request is handled and nothing in it frees bytes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fakebroker.protocol.errors import ClusterError

if TYPE_CHECKING:
    from fakebroker.state.cluster import Cluster

log = logging.getLogger("fakebroker")

REFUSAL = "POLICY_VIOLATION"


def stored_bytes(cluster: Cluster) -> int:
    """The bytes of record batches the cluster's partition logs hold together."""
    return sum(partition.log.stored_bytes for topic in cluster.topics.values()
               for partition in topic.partitions)


class Budget:
    """One Produce request's view of the cap: the cluster's stored bytes, summed at the
    request's first batch, plus each batch let through since."""

    __slots__ = ("cluster", "stored")

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.stored: int | None = None  # not summed yet

    def admit(self, size: int, topic: str, index: int) -> None:
        """Refuse (``ClusterError``) a batch of ``size`` bytes for partition
        ``topic``-``index`` that would take the cluster past ``max_stored_bytes``; else let
        it through, counted: the caller appends it."""
        cap = self.cluster.settings.max_stored_bytes
        if cap is None:
            return
        if self.stored is None:
            self.stored = stored_bytes(self.cluster)
        if self.stored + size <= cap:
            self.stored += size
            self.cluster.at_storage_cap = False
            return
        message = (f"fakebroker stores {self.stored} bytes of records; this batch of {size} "
                   f"bytes would pass its cap, max_stored_bytes={cap} (retention, "
                   "DeleteRecords or deleting topics frees bytes)")
        if not self.cluster.at_storage_cap:
            self.cluster.at_storage_cap = True
            log.warning("refusing a Produce to %s-%d: %s", topic, index, message)
        raise ClusterError(REFUSAL, message)
