"""Natural failures as cluster operations: what a real cluster does when things go wrong.

Each function changes the cluster the way Kafka's controller would and raises
``ClusterError`` (with a Kafka error name) when the operation makes no sense. Sockets are
the runtime's business (``FakeCluster.broker_down`` closes the listener); these only change
state.

Guarantees:

* Every leader change bumps the partition's leader epoch and opens a new epoch in its log, so
  OffsetForLeaderEpoch answers truthfully and clients holding the old epoch get
  FENCED_LEADER_EPOCH; the old leader answers NOT_LEADER_OR_FOLLOWER.
* A broker that goes down hands each partition it leads to the next live in-sync replica; a
  partition with none stays offline (Metadata: leader -1, LEADER_NOT_AVAILABLE) until the
  broker returns, which re-elects it with a new epoch. Groups it coordinated move to the next
  live broker.
* Deleting records advances the log start (consumers below it get OFFSET_OUT_OF_RANGE);
  truncating a log (unclean leader election) removes acknowledged records above the given
  offset and bumps the leader epoch.
"""

from __future__ import annotations

from fakebroker.protocol.errors import ClusterError
from fakebroker.state.cluster import Cluster, Partition
from fakebroker.state.loggers import Loggers

HIGH_WATERMARK = -1


def partition_of(cluster: Cluster, topic: str, index: int) -> Partition:
    found = cluster.partition(topic, index)
    if found is None:
        raise ClusterError("UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}/{index}")
    return found


def _live_broker(cluster: Cluster, broker_id: int) -> int:
    broker = cluster.brokers.get(broker_id)
    if broker is None:
        raise ClusterError("BROKER_NOT_AVAILABLE", f"no broker {broker_id}")
    if not broker.up:
        raise ClusterError("BROKER_NOT_AVAILABLE", f"broker {broker_id} is down")
    return broker_id


def elect(partition: Partition, leader: int) -> None:
    """Make ``leader`` (one of the replicas) the partition's leader in a new leader epoch."""
    if leader not in partition.isr:
        partition.isr.append(leader)
    partition.leader = leader
    partition.leader_epoch += 1
    partition.log.begin_epoch(partition.leader_epoch)


def move_leader(cluster: Cluster, topic: str, index: int, broker: int | None = None) -> int:
    """Move a partition's leadership to ``broker`` (default: the next live broker after the
    current leader, preferring its replicas); returns the new leader."""
    partition = partition_of(cluster, topic, index)
    if broker is None:
        broker = _next_live(cluster, partition.leader, partition.replicas)
    _live_broker(cluster, broker)
    if broker == partition.leader:
        raise ClusterError("INVALID_REQUEST", f"broker {broker} already leads {topic}/{index}")
    if broker not in partition.replicas:
        partition.replicas = [broker if r == partition.leader else r for r in partition.replicas]
        partition.isr = [broker if r == partition.leader else r for r in partition.isr]
    elect(partition, broker)
    cluster.changed()
    return broker


def _next_live(cluster: Cluster, current: int, preferred: list[int]) -> int:
    ids = sorted(cluster.brokers)
    order = ids[ids.index(current) + 1:] + ids[:ids.index(current) + 1] \
        if current in ids else ids
    live = [b for b in order if cluster.brokers[b].up and b != current]
    if not live:
        raise ClusterError("BROKER_NOT_AVAILABLE", "no other live broker to move to")
    return next((b for b in live if b in preferred), live[0])


def broker_down(cluster: Cluster, broker_id: int) -> list[Partition]:
    """Mark a broker down: leadership moves to live in-sync replicas, its fetch sessions
    are gone; returns the partitions left offline (led by it with no other live in-sync
    replica)."""
    _live_broker(cluster, broker_id)
    if sum(b.up for b in cluster.brokers.values()) == 1:
        raise ClusterError("INVALID_REQUEST", "the last live broker cannot go down")
    cluster.brokers[broker_id].up = False
    cluster.brokers[broker_id].fetch_sessions = None
    cluster.changed()
    offline = []
    for topic in cluster.topics.values():
        for partition in topic.partitions:
            if broker_id in partition.isr and partition.leader != broker_id:
                partition.isr.remove(broker_id)
            if partition.leader != broker_id:
                continue
            successor = next((r for r in partition.isr
                              if r != broker_id and cluster.brokers[r].up), None)
            if successor is None:  # leaderless in an epoch of its own, as Kafka's controller
                partition.leader_epoch += 1  # records it (its log begins no epoch: no leader)
                offline.append(partition)
                continue
            partition.isr.remove(broker_id)
            elect(partition, successor)
    for key, owner in list(cluster.coordinator_overrides.items()):
        if owner == broker_id:
            del cluster.coordinator_overrides[key]
    return offline


def broker_up(cluster: Cluster, broker_id: int) -> None:
    """Bring a broker back: it rejoins the ISR of its replicas and is re-elected leader (in a
    new epoch) of the partitions that went offline with it; its loggers have their first
    levels again (Kafka keeps none across a restart)."""
    broker = cluster.brokers.get(broker_id)
    if broker is None:
        raise ClusterError("BROKER_NOT_AVAILABLE", f"no broker {broker_id}")
    if broker.up:
        raise ClusterError("INVALID_REQUEST", f"broker {broker_id} is up")
    broker.up = True
    broker.loggers = Loggers()
    cluster.changed()
    for topic in cluster.topics.values():
        for partition in topic.partitions:
            if broker_id not in partition.replicas:
                continue
            if partition.leader == broker_id:
                elect(partition, broker_id)  # it was offline: re-elected in a new epoch
            elif broker_id not in partition.isr:
                partition.isr.append(broker_id)


def move_coordinator(cluster: Cluster, key: str, broker: int | None = None) -> int:
    """Move the coordinator of a group (or transactional) id; returns the new coordinator.
    Members learn it from NOT_COORDINATOR and find it again; the group's state moves with it,
    as Kafka's new coordinator loads it from the offsets topic."""
    current = cluster.coordinator_of(key)
    if broker is None:
        broker = _next_live(cluster, current, [])
    _live_broker(cluster, broker)
    cluster.coordinator_overrides[key] = broker
    return broker


def delete_records(cluster: Cluster, topic: str, index: int, before: int) -> int:
    """Advance the log start to ``before`` (-1: the high watermark); returns the new log
    start. Consumers positioned below it get OFFSET_OUT_OF_RANGE."""
    log = partition_of(cluster, topic, index).log
    offset = log.high_watermark if before == HIGH_WATERMARK else before
    if not 0 <= offset <= log.high_watermark:
        raise ClusterError("OFFSET_OUT_OF_RANGE",
                           f"{offset} is outside 0..{log.high_watermark} of {topic}/{index}")
    log.delete_before(offset)
    return log.log_start_offset


def truncate(cluster: Cluster, topic: str, index: int, offset: int) -> int:
    """Unclean leader election: the log loses every record at or after ``offset`` (whole
    batches) and the leader epoch bumps; returns the new log end offset."""
    partition = partition_of(cluster, topic, index)
    log = partition.log
    if not log.log_start_offset <= offset <= log.log_end_offset:
        raise ClusterError(
            "OFFSET_OUT_OF_RANGE",
            f"{offset} is outside {log.log_start_offset}..{log.log_end_offset} of "
            f"{topic}/{index}")
    log.truncate_to(offset)
    elect(partition, partition.leader)
    cluster.changed()
    return log.log_end_offset
