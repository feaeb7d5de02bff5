"""Small helpers shared by API handlers: resolving topics by name or id, broker listings,
waiting for an answer the state owes, the operations a client may do (answers that include
authorized operations)."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

import trio

from fakebroker.api.context import RequestContext
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.errors import error_code
from fakebroker.state.cluster import Topic
from fakebroker.state.pending import Pending

T = TypeVar("T")


def resolve_topic(
    ctx: RequestContext, name: str | None, topic_id: uuid.UUID | None
) -> Topic | None:
    """The topic a request names: by id when one is given (non-zero), else by name."""
    if topic_id is not None and topic_id != ZERO_UUID:
        return ctx.cluster.topic_by_id(topic_id)
    return ctx.cluster.topics.get(name) if name else None


def broker_entries(ctx: RequestContext) -> list[dict[str, Any]]:
    """The live brokers as Metadata/DescribeCluster broker entries, each at its listener of
    the request's connection (``ctx.listener``): a client stays on the listener it came on."""
    listener = ctx.listener
    return [
        {"node_id": b.id, "broker_id": b.id, "host": b.host, "port": b.endpoints[listener],
         "rack": b.rack}
        for b in ctx.cluster.live_brokers()
    ]


def node_endpoints(ctx: RequestContext, node_ids: set[int]) -> list[dict[str, Any]]:
    """Endpoints of the given brokers (Produce v10+/Fetch v16+ ``node_endpoints``)."""
    return [e for e in broker_entries(ctx) if e["node_id"] in node_ids]


async def answer_of(reply: T | Pending[T]) -> T:
    """``reply`` itself, or the answer of a ``Pending`` once the state settles it (raising
    what it failed with): the request parks on a trio event of its own meanwhile. A request
    cancelled while it waits leaves the ``Pending`` to be settled unheard."""
    if not isinstance(reply, Pending):
        return reply
    if not reply.settled:
        settled = trio.Event()
        reply.on_settled(settled.set)
        await settled.wait()
    return reply.result()


def fenced_error(error: str, version: int, since: int) -> str:
    """``error`` as a request version answers it: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
    before version ``since``, which older clients understand (KIP-588)."""
    return "INVALID_PRODUCER_EPOCH" if error == "PRODUCER_FENCED" and version < since else error


def offsets_in_zookeeper(ctx: RequestContext) -> bool:
    """Whether this is an OffsetCommit or OffsetFetch v0 (offsets kept in ZooKeeper) to a
    cluster answering as a KRaft release before 4.0 (3.3 on), which refuses it: every
    partition UNSUPPORTED_VERSION ("Unsupported when using a Raft-based metadata quorum",
    Kafka 3.9.1 measured; 4.x lists no v0)."""
    from fakebroker.protocol.releases import since

    release = ctx.cluster.settings.kafka_version
    return ctx.version == 0 and release is not None and since(release, KRAFT_FROM)


def group_operations(release: str | None) -> int:
    """Every operation on a group, as a cluster answering as ``release`` (None: today's Kafka)
    lists them."""
    from fakebroker.protocol.releases import since

    return GROUP_OPERATIONS if since(release, GROUP_CONFIGS_FROM) else operations(3, 6, 8)


def operations(*acl_operations: int) -> int:
    """The bit field of AclOperation codes an answer's ``*_authorized_operations`` carries."""
    return sum(1 << op for op in acl_operations)


# With no authorizer Kafka allows everything: asked for them, it answers every operation of
# the resource type. AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
# DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
TOPIC_OPERATIONS = operations(3, 4, 5, 6, 7, 8, 10, 11)
GROUP_OPERATIONS = operations(3, 6, 8, 10, 11)
# The first release whose brokers run without ZooKeeper (KRaft).
KRAFT_FROM = "3.3"
# The release that gave groups their configs (DESCRIBE_CONFIGS and ALTER_CONFIGS on a group,
# KAFKA-14510); a group's operations before it: READ, DELETE, DESCRIBE.
GROUP_CONFIGS_FROM = "4.0"
CLUSTER_OPERATIONS = operations(5, 7, 8, 9, 10, 11, 12)


def deadline_passed(timeout_ms: int) -> bool:
    """Whether a request to Kafka's controller is past its deadline on arrival: KRaft's
    ``ControllerApis`` makes the deadline now + ``timeout_ms``, and an operation run after it
    fails the whole request REQUEST_TIMED_OUT, so a timeout of 0 or less applies nothing
    (CreateTopics, DeleteTopics, CreatePartitions, AlterPartitionReassignments, ElectLeaders;
    measured on Kafka 4.4)."""
    return timeout_ms <= 0


def whole_request_error(api_key: int, request: Any, ctx: RequestContext, error: str
                        ) -> dict[str, Any]:
    """The answer putting ``error`` wherever the API puts an error for the whole request
    (``fakebroker.api.placement.whole_request_answer``)."""
    from fakebroker.api.placement import whole_request_answer

    def topic_name(topic_id: uuid.UUID) -> str | None:
        topic = ctx.cluster.topic_by_id(topic_id)
        return topic.name if topic is not None else None

    return whole_request_answer(api_key, ctx.version, request, error_code(error), topic_name)
