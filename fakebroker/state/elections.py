"""Leader elections and partition reassignments as Kafka's controller makes them.

Kafka's ``ReplicationControlManager`` (``electLeader``, ``alterPartitionReassignment``) and
``PartitionChangeBuilder`` decide; these functions change the fake's partitions the same way
and return the error name (``"NONE"`` when it worked) with Kafka's message, never raising for
a partition's own error. Every leader change goes through ``failures.elect`` (the leader epoch
bumps, the log opens a new epoch); callers wake parked fetches.

Guarantees:

* A partition "has a leader" when its leader broker is up (the fake keeps an offline
  partition's last leader; Metadata answers it as leader -1).
* Preferred election (type 0): ELECTION_NOT_NEEDED when the first replica leads; else the
  first replica if it is a live in-sync replica; else, when the current leader is live, no
  change and PREFERRED_LEADER_NOT_AVAILABLE; else the next live in-sync replica.
* Unclean election (type 1): ELECTION_NOT_NEEDED when the partition has a leader; else a live
  in-sync replica, else the first live replica (its ISR becomes that replica alone), else
  ELIGIBLE_LEADERS_NOT_AVAILABLE.
* A reassignment completes at once: the fake's replicas share one log, so every live target
  replica is in sync the moment it is added (Kafka's steps 1-3 in one change). One naming a
  broker that is down, or of an offline partition (no leader to catch up from), stays in
  progress (adding/removing replicas, as ListPartitionReassignments lists them) until the
  broker is back (``complete_reassignments``).
* Completing one keeps the leader when it stays a live in-sync replica, else elects the first
  live in-sync target replica (Kafka's ONLINE election); the leader epoch also bumps when
  replicas are removed (``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``), by a
  completion or by a cancel dropping the replicas it was adding.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakebroker.state.cluster import Cluster, Partition
from fakebroker.state.failures import elect

PREFERRED = 0
UNCLEAN = 1
# Kafka's default messages (``Errors``), which its elections carry (``new ApiError(error)``);
# its reassignments' errors come from exceptions, and one with the default message carries
# none (``ApiError.fromThrowable``).
MESSAGES = {
    "ELECTION_NOT_NEEDED": "Leader election not needed for topic partition.",
    "PREFERRED_LEADER_NOT_AVAILABLE": "The preferred leader was not available.",
    "ELIGIBLE_LEADERS_NOT_AVAILABLE": "Eligible topic partition leaders are not available.",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one partition: Kafka's error name and message (None with NONE)."""

    error: str = "NONE"
    message: str | None = None


DONE = Outcome()


def _failed(error: str, message: str | None = None) -> Outcome:
    return Outcome(error, message if message is not None else MESSAGES[error])


def _live(cluster: Cluster, broker: int) -> bool:
    found = cluster.brokers.get(broker)
    return found is not None and found.up


def has_leader(cluster: Cluster, partition: Partition) -> bool:
    return _live(cluster, partition.leader)


def elect_leader(cluster: Cluster, topic: str, index: int, election_type: int) -> Outcome:
    """Elect a leader for one partition (``PREFERRED`` or ``UNCLEAN``), as Kafka's
    ``electLeader``."""
    if topic not in cluster.topics:
        return _failed("UNKNOWN_TOPIC_OR_PARTITION", f"No such topic as {topic}")
    partition = cluster.partition(topic, index)
    if partition is None:
        return _failed("UNKNOWN_TOPIC_OR_PARTITION", f"No such partition as {topic}-{index}")
    leads = has_leader(cluster, partition)
    if (election_type == PREFERRED and leads and partition.leader == partition.replicas[0]) \
            or (election_type == UNCLEAN and leads):
        return _failed("ELECTION_NOT_NEEDED")
    in_sync = [r for r in partition.replicas if r in partition.isr and _live(cluster, r)]
    if election_type == PREFERRED:
        if partition.replicas[0] in in_sync:
            chosen: int | None = partition.replicas[0]
        elif leads:
            chosen = None  # the current leader stays: nothing changes
        else:
            chosen = in_sync[0] if in_sync else None
        if chosen is None:
            return _failed("PREFERRED_LEADER_NOT_AVAILABLE")
    else:
        live = [r for r in partition.replicas if _live(cluster, r)]
        if in_sync:
            chosen = in_sync[0]
        elif live:
            chosen = live[0]
            partition.isr = [chosen]
        else:
            return _failed("ELIGIBLE_LEADERS_NOT_AVAILABLE")
    elect(partition, chosen)
    cluster.changed()
    return DONE


def check_assignment(cluster: Cluster, replicas: list[int]) -> Outcome:
    """INVALID_REPLICA_ASSIGNMENT, with Kafka's message, for an empty target, an unknown
    broker or a broker named twice (``validateManualPartitionAssignment``)."""
    if not replicas:
        return _failed("INVALID_REPLICA_ASSIGNMENT",
                       "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker in sorted(replicas):
        if broker not in cluster.brokers:
            return _failed("INVALID_REPLICA_ASSIGNMENT",
                           f"The manual partition assignment includes broker {broker}, but "
                           "no such broker is registered.")
        if broker == previous:
            return _failed("INVALID_REPLICA_ASSIGNMENT",
                           f"The manual partition assignment includes the broker {broker} "
                           "more than once.")
        previous = broker
    return DONE


def find_partition(cluster: Cluster, topic: str, index: int) -> tuple[Partition | None, Outcome]:
    """The partition a reassignment names, or UNKNOWN_TOPIC_OR_PARTITION with Kafka's
    message."""
    if topic not in cluster.topics:
        return None, _failed("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Unable to find a topic named {topic}.")
    partition = cluster.partition(topic, index)
    if partition is None:
        return None, _failed("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Unable to find partition {topic}:{index}.")
    return partition, DONE


def reassign(cluster: Cluster, partition: Partition, target: list[int]) -> None:
    """Start moving ``partition`` to the ``target`` replicas (already checked): the replicas
    become the target followed by those removed, as Kafka's ``PartitionReassignmentReplicas``,
    and the reassignment completes when it can (at once unless a target broker is down)."""
    removing = sorted(set(partition.replicas) - set(target))
    adding = sorted(set(target) - set(partition.replicas))
    partition.replicas = list(target) + removing
    partition.adding_replicas = adding
    partition.removing_replicas = removing
    cluster.changed()
    _complete(cluster, partition)


def cancel(cluster: Cluster, partition: Partition) -> Outcome:
    """Cancel the partition's reassignment in progress (its replicas go back to those before
    it); NO_REASSIGNMENT_IN_PROGRESS when there is none."""
    if not in_progress(partition):
        return Outcome("NO_REASSIGNMENT_IN_PROGRESS")
    adding = partition.adding_replicas
    partition.replicas = [r for r in partition.replicas if r not in adding]
    partition.isr = [r for r in partition.isr if r not in adding]
    partition.adding_replicas, partition.removing_replicas = [], []
    if partition.leader in adding:
        _elect_online(cluster, partition)
    elif adding:
        elect(partition, partition.leader)  # the dropped replicas are fenced by a new epoch
    cluster.changed()
    return DONE


def in_progress(partition: Partition) -> bool:
    return bool(partition.adding_replicas or partition.removing_replicas)


def complete_reassignments(cluster: Cluster) -> None:
    """Complete every reassignment in progress that now can (a target broker came back)."""
    for topic in cluster.topics.values():
        for partition in topic.partitions:
            if in_progress(partition):
                _complete(cluster, partition)


def _complete(cluster: Cluster, partition: Partition) -> None:
    # A new replica catches up by fetching from the leader: with the fake's one shared log, in
    # sync as soon as both are live.
    if has_leader(cluster, partition):
        for broker in partition.adding_replicas:
            if _live(cluster, broker) and broker not in partition.isr:
                partition.isr.append(broker)
    if not all(r in partition.isr for r in partition.adding_replicas):
        return
    removing = partition.removing_replicas
    target = [r for r in partition.replicas if r not in removing]
    isr = [r for r in partition.isr if r not in removing]
    if not isr:
        return
    partition.replicas, partition.isr = target, isr
    partition.adding_replicas, partition.removing_replicas = [], []
    if partition.leader in removing or not has_leader(cluster, partition):
        _elect_online(cluster, partition)
    elif removing:
        elect(partition, partition.leader)  # removed replicas are fenced by a new epoch
    cluster.changed()


def _elect_online(cluster: Cluster, partition: Partition) -> None:
    chosen = next((r for r in partition.replicas
                   if r in partition.isr and _live(cluster, r)), None)
    if chosen is not None:
        elect(partition, chosen)
