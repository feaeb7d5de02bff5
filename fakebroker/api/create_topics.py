"""CreateTopics (key 19): create topics with partitions, replication and configs.

Versions: 0-7 (3.9; 4.x keeps 2-7). Flexible from v5; topic ids in the answer from v7.

Behavior:
* num_partitions / replication_factor -1 take the cluster defaults (num.partitions,
  default.replication.factor); explicit assignments fix both.
* Errors per topic, as Kafka names them, with its controller's messages and in its order:
  INVALID_TOPIC_EXCEPTION (illegal name), TOPIC_ALREADY_EXISTS, INVALID_CONFIG (unknown name
  or bad value), INVALID_REQUEST (assignments with a partition count or replication factor
  other than -1), INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR (< 1 or more than the
  brokers), INVALID_PARTITIONS (< 1). A name given twice in one request gets one answer,
  INVALID_REQUEST, after the others, as Kafka's controller adds it.
* validate_only checks everything and creates nothing.
* Bounded as Kafka's controller bounds one operation, the whole request refused with
  POLICY_VIOLATION for every topic it names (validate_only too, nothing created): more than
  10,000 partitions asked in all (``-1``: num.partitions; assignments: theirs) is "Excessively
  large number of partitions per request.", checked first; more than 10,000 metadata records
  for the topics that would be created (one a topic, one a partition, one a config name set:
  a name given twice is one) is "Unable to perform excessively large batch operation.": the
  topics refused on a check, the mutation quota's included, write none (Kafka's controller
  charges the quota as it goes, topic by topic, before the bound fails the operation).
* v5+ answers with the partitions, replication factor and every topic config with its source
  (a refused topic: an empty config list); a created topic's error message is null.
* The client's ``controller_mutation_rate`` (KIP-599; ``fakebroker.api.throttling``) is
  charged each topic's partitions once it passed every other check, validate_only too: from
  v6 a topic asked while the quota's bucket is below zero gets THROTTLING_QUOTA_EXCEEDED
  (no message) and the answer the time until the bucket is back at zero; below v6 every
  topic is created and the answer throttled by the overdraft. The connection is muted that
  long.
* With an authorizer, as Kafka's controller: a topic needs CREATE on the cluster or on itself,
  else TOPIC_AUTHORIZATION_FAILED "Authorization failed.", answered after the rest; a created
  topic the principal may not DESCRIBE_CONFIGS is answered without its partitions,
  replication factor and configs, with topic_config_error_code TOPIC_AUTHORIZATION_FAILED.
* A timeout of 0 or less is past the controller's deadline: the whole request
  REQUEST_TIMED_OUT, nothing applied (``fakebroker.api.common.deadline_passed``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from fakebroker.api.access import in_handler
from fakebroker.api.common import deadline_passed, whole_request_error
from fakebroker.api.context import RequestContext
from fakebroker.api.describe_configs import topic_config_entries
from fakebroker.api.shapes import Placement, per_topic
from fakebroker.api.throttling import mutation_quota
from fakebroker.protocol.errors import ClusterError, error_code
from fakebroker.state.acls import CLUSTER_NAME
from fakebroker.state.cluster import MAX_PARTITIONS_PER_BATCH, Topic

API_KEY = 19
# A topic's answer before it is created (and beside an error): no configs, as Kafka answers.
NOT_CREATED = {"num_partitions": -1, "replication_factor": -1, "configs": ()}
ERROR_PLACEMENT = Placement(per_topic("topics", "topics", error_fields=NOT_CREATED))
AUTHORIZES = (in_handler(
    "CREATE on the cluster or each topic, refused topics answered after the rest with Kafka's "
    "message; DESCRIBE_CONFIGS on each created topic, else its configs are left out"),)
REFUSED = "Authorization failed."  # Kafka's message
# Kafka's controller: the bound of the records one operation writes
# (QuorumController.MAX_RECORDS_PER_USER_OP); of partitions, MAX_PARTITIONS_PER_BATCH.
MAX_RECORDS_PER_USER_OP = 10_000
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    if deadline_passed(request.timeout_ms):
        return whole_request_error(API_KEY, request, ctx, "REQUEST_TIMED_OUT")
    counts = Counter(t.name for t in request.topics)
    results, refused = [], []
    creator = ctx.allowed("CREATE", "CLUSTER", CLUSTER_NAME)
    asked = [t for t in request.topics if counts[t.name] == 1
             and (creator or ctx.allowed("CREATE", "TOPIC", t.name))]
    if sum(asked_partitions(t, ctx) for t in asked) > MAX_PARTITIONS_PER_BATCH:
        return refuse_all(request, TOO_MANY_PARTITIONS)
    quota = mutation_quota(ctx, strict_since=6)
    checked = check(asked, ctx, None if quota is None else quota.admit)
    if sum(records(t, ctx) for t in asked if checked[t.name] is None) > MAX_RECORDS_PER_USER_OP:
        return refuse_all(request, TOO_MANY_RECORDS)
    for wanted in request.topics:
        if counts[wanted.name] > 1:
            continue
        if not (creator or ctx.allowed("CREATE", "TOPIC", wanted.name)):
            refused.append(dict(NOT_CREATED, name=wanted.name, error_message=REFUSED,
                                error_code=error_code("TOPIC_AUTHORIZATION_FAILED")))
            continue
        result: dict[str, Any] = dict(NOT_CREATED, name=wanted.name)
        try:
            error = checked[wanted.name]
            if error is not None:
                raise error
            topic = create(ctx, wanted, request.validate_only)
        except ClusterError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
            results.append(result)
            continue
        count = len(topic.partitions) if topic.partitions else (
            wanted.num_partitions if wanted.num_partitions > 0
            else len(wanted.assignments) or ctx.cluster.settings.default_partitions)
        factor = (len(topic.partitions[0].replicas) if topic.partitions
                  else wanted.replication_factor if wanted.replication_factor > 0
                  else ctx.cluster.default_replication_factor)
        result.update(error_code=0, error_message=None, topic_id=topic.id,
                      num_partitions=count, replication_factor=factor, configs=[
                          {"name": e["name"], "value": e["value"], "read_only": False,
                           "config_source": e["config_source"], "is_sensitive": False}
                          for e in topic_config_entries(
                              topic, None, release=ctx.cluster.settings.kafka_version)])
        if not ctx.allowed("DESCRIBE_CONFIGS", "TOPIC", topic.name):
            result.update(NOT_CREATED, topic_config_error_code=error_code(
                "TOPIC_AUTHORIZATION_FAILED"))
        results.append(result)
    for name in [n for n, c in counts.items() if c > 1]:
        results.append(dict(NOT_CREATED, name=name, error_code=error_code("INVALID_REQUEST"),
                            error_message="Duplicate topic name."))
    return {"throttle_time_ms": quota.throttle_ms if quota else 0,
            "topics": results + refused}


def asked_partitions(wanted: Any, ctx: RequestContext) -> int:
    """The partitions a topic entry asks for, as Kafka's controller counts them."""
    if wanted.assignments:
        return len(wanted.assignments)
    if wanted.num_partitions == -1:
        return ctx.cluster.settings.default_partitions
    return max(wanted.num_partitions, 0)


def records(wanted: Any, ctx: RequestContext) -> int:
    """The metadata records Kafka's controller writes for a topic entry: the topic, each
    partition, each config it sets (a name given twice is one record: the last value)."""
    return 1 + asked_partitions(wanted, ctx) + len({c.name for c in wanted.configs})


def create(ctx: RequestContext, wanted: Any, validate_only: bool,
           admit: Callable[[int], bool] | None = None) -> Topic:
    """Create (or only validate) the topic entry ``wanted``; ``ClusterError`` when refused."""
    return ctx.cluster.create_topic(
        wanted.name, partitions=wanted.num_partitions,
        replication_factor=wanted.replication_factor,
        configs={c.name: c.value for c in wanted.configs},
        assignments={a.partition_index: list(a.broker_ids) for a in wanted.assignments},
        validate_only=validate_only, admit=admit)


def check(asked: list[Any], ctx: RequestContext, admit: Callable[[int], bool] | None
          ) -> dict[str, ClusterError | None]:
    """Each topic entry of ``asked`` (each named once, each allowed) validated in order, the
    client's mutation quota charged for those that pass (``admit``), as Kafka's controller
    goes through them before it knows whether the operation fits its bound: each name's
    error, or None."""
    checked: dict[str, ClusterError | None] = {}
    for wanted in asked:
        try:
            create(ctx, wanted, validate_only=True, admit=admit)
            checked[wanted.name] = None
        except ClusterError as exc:
            checked[wanted.name] = exc
    return checked


def refuse_all(request: Any, message: str) -> dict[str, Any]:
    """The whole operation refused: every topic the request names gets POLICY_VIOLATION."""
    return {"throttle_time_ms": 0, "topics": [
        dict(NOT_CREATED, name=t.name, error_code=error_code("POLICY_VIOLATION"),
             error_message=message) for t in request.topics]}
