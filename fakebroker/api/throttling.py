"""Client quotas enforced on the request path: what a request costs its client, and the answer
a throttled request gets, as Kafka's ``KafkaApis`` charges its quota managers.

The pipeline calls ``throttle`` for every answered request while some user or client-id
quota is set (``Cluster.throttling``); the client is the connection's principal (its name
without ``User:``; ``ANONYMOUS`` unauthenticated) and the request header's client-id.

Guarantees, as Kafka 4.4:

* Produce charges ``producer_byte_rate`` with the request's size; Fetch charges
  ``consumer_byte_rate`` with its answer's size; every request charges
  ``request_percentage`` with the time its handler worked (100 is one handler thread
  busy): a handler that waits — a long-polling Fetch, a JoinGroup at the barrier, a
  SyncGroup waiting for the leader's assignment — with its time until it first parks, not
  its waiting, as Kafka charges a request its handler thread's time up to handing it to
  purgatory (``fakebroker.pipeline`` measures it).
* Exempt, as in ``KafkaApis``: the request time of an acks=0 Produce (its bytes still
  count), a follower's Fetch (``replica_id`` >= 0: neither quota) and WriteTxnMarkers (an
  inter-broker request), which are never throttled for it; and (the pipeline's check) a
  SASL connection's requests before it is authenticated, which Kafka's authenticator
  answers, not its request handlers.
* The throttle time is the largest any of them calls for (``fakebroker.state.quotas``):
  it is written in the answer's ``throttle_time_ms`` (beside a fault's, the larger wins)
  and the connection is muted that long after the answer (KIP-219), an acks=0 Produce's
  connection too.
* A throttled Fetch is answered with no partitions (its bytes are not charged), as Kafka's
  ``FetchContext.getThrottledResponse``: the client fetches the same offsets again later,
  and an incremental fetch's session keeps what it had told (``fakebroker.api.fetch``).
* A consumer's Fetch is capped beforehand at what its quota allows in 10 s
  (``fetch_window_bytes``: Kafka's ``getMaxValueInQuotaWindow``), so that one fetch alone
  is never throttled; ``fakebroker.api.fetch`` applies the cap.
* CreateTopics, CreatePartitions and DeleteTopics charge ``controller_mutation_rate``
  themselves (``mutation_quota``: strict from the version each names, as Kafka's controller,
  permissive below) and answer its throttle time; here it counts beside the others for the
  mute, as Kafka's broker takes the throttle time of a forwarded request's answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from fakebroker.protocol.framing import encode_response
from fakebroker.state.cluster import Cluster
from fakebroker.state.quotas import FETCH, PRODUCE, REQUEST, MutationQuota

if TYPE_CHECKING:
    from fakebroker.api.context import RequestContext

PRODUCE_KEY, FETCH_KEY, WRITE_TXN_MARKERS_KEY = 0, 1, 27
MUTATING_KEYS = frozenset({19, 20, 37})  # CreateTopics, DeleteTopics, CreatePartitions
PER_SECOND = 100 / 1e9  # Kafka's nanosToPercentage: a second of work is 100 percent-seconds


def throttle(cluster: Cluster, api_key: int, version: int, principal: str,
             client_id: str | None, request: Any, request_size: int, response: Any,
             busy_ns: int, now_ms: int) -> tuple[Any, int]:
    """Charge the request to its client's quotas: the answer to send (a throttled Fetch's is
    emptied) and the throttle time in ms (0: not throttled)."""
    if api_key == WRITE_TXN_MARKERS_KEY or (api_key == FETCH_KEY
                                            and from_follower(request, version)):
        return response, 0
    enforcer = cluster.quotas.enforcer
    user, client = _client(principal, client_id)
    byte_throttle = 0
    fetched = 0
    if api_key == PRODUCE_KEY:
        byte_throttle = enforcer.record(PRODUCE, user, client, request_size, now_ms)
    elif api_key == FETCH_KEY and response is not None:
        fetched = len(encode_response(api_key, version, 0, response)) - 4
        byte_throttle = enforcer.record(FETCH, user, client, fetched, now_ms)
    acks_0 = api_key == PRODUCE_KEY and response is None
    throttle_ms = max(byte_throttle, 0 if acks_0 else enforcer.record(
        REQUEST, user, client, busy_ns * PER_SECOND, now_ms))
    if api_key in MUTATING_KEYS and response is not None:
        throttle_ms = max(throttle_ms, response.get("throttle_time_ms", 0))
    if throttle_ms <= 0 or response is None:
        return response, max(throttle_ms, 0)
    if api_key == FETCH_KEY:
        from fakebroker.api.fetch import throttled  # fetch reads its quota window here

        enforcer.unrecord(FETCH, user, client, fetched, now_ms)
        response = throttled(request, response)
    response = dict(response)
    response["throttle_time_ms"] = max(response.get("throttle_time_ms", 0), throttle_ms)
    return response, throttle_ms


def from_follower(request: Any, version: int) -> bool:
    """Whether a Fetch comes from a follower replica (``replica_id`` >= 0; in
    ``replica_state`` from v15), not from a consumer."""
    replica = request.replica_state.replica_id if version >= 15 else request.replica_id
    return bool(replica >= 0)


def mutation_quota(ctx: RequestContext, strict_since: int) -> Mutations | None:
    """The ``controller_mutation_rate`` quota holding the request's client, strict from
    version ``strict_since`` on; None when none holds it (nothing to check)."""
    if not ctx.cluster.throttling:
        return None
    quota = ctx.cluster.quotas.enforcer.mutation_quota(
        *_client(ctx.principal, ctx.header.client_id), strict=ctx.version >= strict_since)
    return None if quota is None else Mutations(quota)


class Mutations:
    """A request's mutations charged to its client's quota on trio's clock (the one the
    connection's mute waits on)."""

    __slots__ = ("quota",)

    def __init__(self, quota: MutationQuota) -> None:
        self.quota = quota

    def admit(self, partitions: int) -> bool:
        """Charge a mutation of ``partitions`` partitions; False: refused, the topic's
        answer is THROTTLING_QUOTA_EXCEEDED (without a message, as Kafka's)."""
        return self.quota.admit(partitions, int(trio.current_time() * 1000))

    @property
    def throttle_ms(self) -> int:
        """The answer's throttle time."""
        return self.quota.throttle_ms


def fetch_window_bytes(cluster: Cluster, principal: str, client_id: str | None) -> int:
    """The bytes the client's ``consumer_byte_rate`` allows in one quota window (the quota
    times 10 s, Java's Int.MaxValue without one): the most a consumer's Fetch may return."""
    return cluster.quotas.enforcer.max_in_window(FETCH, *_client(principal, client_id))


def _client(principal: str, client_id: str | None) -> tuple[str, str]:
    """The (user, client-id) a request is charged to: the principal's name without its
    type (``User:``), and the header's client-id ("" when null)."""
    return principal.partition(":")[2] or principal, client_id or ""
