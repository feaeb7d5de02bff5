"""What a handler gets besides its request: the cluster, the broker it runs on, the header."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakebroker.outcomes import ANONYMOUS
from fakebroker.protocol.errors import error_code
from fakebroker.protocol.framing import RequestHeader
from fakebroker.state.cluster import Broker, Cluster, Partition

if TYPE_CHECKING:
    from fakebroker.security.authorizer import Authorizer
    from fakebroker.security.sasl.connection import SaslConnection


class ConnectionClosed(Exception):
    """The connection must be closed without an answer; the message says why (it is logged)."""


@dataclass(slots=True)
class RequestContext:
    cluster: Cluster
    broker: Broker
    header: RequestHeader
    # Waits until the next append anywhere in the cluster, or ``timeout`` seconds.
    wait_for_append: Callable[[float], Awaitable[None]]
    client_host: str = ""  # the peer address, as Kafka reports it for group members
    listener: str = "PLAINTEXT"  # the name of the listener the request came on
    principal: str = ANONYMOUS  # who sent it ("User:alice"), as authenticated on its connection
    sasl: SaslConnection | None = None  # the connection's SASL exchange (SASL listeners)
    authorizer: Authorizer | None = None  # None: no authorizer, everything is allowed
    connection_id: int = 0  # the number of the connection it came on, on its broker

    def allowed(self, operation: str, resource_type: str, name: str) -> bool:
        """Whether the principal may do ``operation`` (``"DESCRIBE"``) on the resource
        ``resource_type:name`` (``"TOPIC"``, ``"orders"``): a handler's own check, where its
        API declares ``in_handler`` (``fakebroker.api.access``). Always, with no authorizer."""
        return self.authorizer is None or self.authorizer.allowed(
            self.principal, self.client_host, operation, resource_type, name)

    def authorized_operations(self, resource_type: str, name: str, every: int) -> int:
        """The operations the principal may do on the resource, as answers carry them;
        ``every`` (all the resource type supports) with no authorizer, as Kafka answers."""
        if self.authorizer is None:
            return every
        return self.authorizer.operations(self.principal, self.client_host, resource_type,
                                          name)

    @property
    def version(self) -> int:
        return self.header.api_version

    @staticmethod
    def now_ms() -> int:
        """Wall-clock milliseconds (record timestamps; LogAppendTime)."""
        return time.time_ns() // 1_000_000

    def leader_check(self, partition: Partition | None) -> int:
        """0 when this broker leads ``partition``; else UNKNOWN_TOPIC_OR_PARTITION or
        NOT_LEADER_OR_FOLLOWER, as Kafka answers a leader-only partition request."""
        if partition is None:
            return error_code("UNKNOWN_TOPIC_OR_PARTITION")
        if partition.leader != self.broker.id:
            return error_code("NOT_LEADER_OR_FOLLOWER")
        return 0

    def is_coordinator(self, key: str) -> bool:
        """Whether this broker coordinates group (or transactional) id ``key``."""
        return self.cluster.coordinator_of(key) == self.broker.id

    def epoch_check(self, partition: Partition, current_leader_epoch: int) -> int:
        """FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when the client's epoch is off; -1 alone
        skips (any other negative epoch is older than every leader's: fenced, as Kafka's
        Partition.checkCurrentLeaderEpoch compares it)."""
        if current_leader_epoch == -1 or current_leader_epoch == partition.leader_epoch:
            return 0
        if current_leader_epoch < partition.leader_epoch:
            return error_code("FENCED_LEADER_EPOCH")
        return error_code("UNKNOWN_LEADER_EPOCH")
