"""The normaliser: what a comparison of two brokers' answers must not see.

Each answer (plain data, tests/conformance/replay.py) goes through ``NORMALISERS`` in order,
each with the broker that gave it (``Side``) and the request. Every normaliser hides one thing
that Kafka leaves free — a value the broker picks (ids, ports, its clock) or an order the
protocol does not fix — and says so in its docstring; nothing else is hidden. Hidden values
are replaced by a description (``<id of orders>``), not dropped, so an answer that puts the
wrong topic's id, or a member id where none belongs, still differs.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from fakebroker.protocol.records import decode_records, read_batch_headers
from tests.conformance.corpus import Request
from tests.conformance.replay import Side

Answer = Any
Normaliser = Callable[[Answer, Side, Request], Answer]


class Keyed(dict):
    """A list whose order Kafka leaves free, as a mapping from each entry's key to the entry
    (compared key by key; paths show ``list[key]``)."""


def _map_leaves(value: Any, fn: Callable[[str | None, Any], Any], key: str | None = None
                ) -> Any:
    """``value`` with every leaf replaced by ``fn(field name, leaf)`` (list items carry
    the list's field name)."""
    if isinstance(value, dict):
        return type(value)((k, _map_leaves(v, fn, k)) for k, v in value.items())
    if isinstance(value, list):
        return [_map_leaves(v, fn, key) for v in value]
    return fn(key, value)


def records_as_batches(answer: Answer, side: Side, request: Request) -> Answer:
    """Decodes stored records, hiding nothing: a ``records`` field (bytes) becomes its
    batches (header fields and records), so a difference names the batch field or the record
    that differs, and the normalisers after this one can reach producer ids and broker
    timestamps in them. Bytes that do not decode stay bytes."""
    def decoded(key: str | None, value: Any) -> Any:
        if key != "records" or not isinstance(value, bytes | bytearray) or not value:
            return value
        try:
            headers = read_batch_headers(bytes(value))
            records = decode_records(bytes(value))
        except ValueError:
            return value
        batches = []
        for header in headers:
            last = header.base_offset + header.last_offset_delta
            batches.append({**asdict(header), "leader_epoch": next(
                (r.leader_epoch for r in records if r.offset == header.base_offset), None),
                "records": [asdict(r) for r in records
                            if header.base_offset <= r.offset <= last]})
        return batches
    return _map_leaves(answer, decoded)


def throttle_times(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides ``throttle_time_ms``: how long the client must hold back for quotas, which
    each broker measures from the traffic and the request times it saw (the corpus sets
    quotas only while it describes them)."""
    return _map_leaves(answer, lambda k, v: "<throttle>" if k == "throttle_time_ms" else v)


def disk_space(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides a log directory's ``total_bytes`` and ``usable_bytes`` when known (not -1): the
    size and free space of the host's file system at the moment it was asked, which changes
    between the two brokers' answers as any process on the host writes."""
    return _map_leaves(answer, lambda k, v: "<file system bytes>"
                       if k in ("total_bytes", "usable_bytes") and v != -1 else v)


def broker_ports(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides the answering broker's port (Metadata and DescribeCluster brokers,
    FindCoordinator, node endpoints): each broker listens on a port the OS picked."""
    return _map_leaves(answer, lambda k, v: "<broker port>"
                       if k == "port" and v == side.port else v)


def _kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's text form of a Uuid (URL-safe base64, no padding), as in its messages."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def topic_ids(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides the ids the broker gave topics (Kafka makes a random Uuid per topic): each
    becomes ``<id of NAME>``, in UUID fields and inside texts (both text forms)."""
    names = {topic_id: name for name, topic_id in side.topic_ids.items()}
    texts = {text: f"<id of {name}>" for topic_id, name in names.items()
             for text in (_kafka_uuid(topic_id), str(topic_id))}

    def hide(key: str | None, value: Any) -> Any:
        if isinstance(value, uuid.UUID) and value in names:
            return f"<id of {names[value]}>"
        if isinstance(value, str):
            for text, shown in texts.items():
                value = value.replace(text, shown)
        return value
    return _map_leaves(answer, hide)


def member_ids(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides the random part of the member ids the broker gave: Kafka makes
    ``<client id>-<random Uuid>`` for classic members and a random Uuid for KIP-848 members
    that sent none. Each becomes ``<member N>`` (N: the order the broker gave them), after
    its ``<client id>-`` prefix when it has one, in any text."""
    shown = {}
    for n, member in enumerate(side.member_ids, 1):
        prefix = next((f"{c}-" for c in sorted(side.client_ids, key=len, reverse=True)
                       if member.startswith(f"{c}-")), "")
        shown[member] = f"{prefix}<member {n}>"

    def hide(key: str | None, value: Any) -> Any:
        if isinstance(value, str):
            for member in sorted(shown, key=len, reverse=True):
                value = value.replace(member, shown[member])
        return value
    return _map_leaves(answer, hide) if shown else answer


def producer_ids(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides producer ids the broker gave (InitProducerId, and in stored batches): Kafka
    hands them out from blocks its controller allocates. Each becomes ``<producer N>``
    (N: the order the broker gave them)."""
    shown = {pid: f"<producer {n}>" for n, pid in enumerate(side.producer_ids, 1)}
    return _map_leaves(answer, lambda k, v: shown.get(v, v)
                       if k == "producer_id" and isinstance(v, int) else v)


def session_ids(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides the fetch session ids the broker gave (KIP-227): Kafka draws each at random
    from the range of one shard of its session cache. Each becomes ``<session N>`` (N: the
    order the broker gave them)."""
    session = answer.get("session_id") if request.api == "Fetch" else None
    if not session or session not in side.session_ids:
        return answer
    return {**answer, "session_id": f"<session {side.session_ids.index(session) + 1}>"}


def broker_clock(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides times read from the broker's clock: a ``log_append_time_ms``, a transaction's
    start time and the batch and record timestamps of stored records that are not before the
    replay began (every timestamp a request of the corpus carries is older: those are
    compared)."""
    def hide(key: str | None, value: Any) -> Any:
        stamped = key in ("log_append_time_ms", "timestamp", "first_timestamp",
                          "max_timestamp", "transaction_start_time_ms") \
            and isinstance(value, int)
        return "<broker clock>" if stamped and value >= side.started_ms else value
    return _map_leaves(answer, hide)


# (API, path of the list, key fields in order of preference; None: a list of scalars)
UNORDERED: dict[str, list[tuple[str, tuple[str, ...] | None]]] = {
    "ApiVersions": [("api_keys", ("api_key",)), ("supported_features", ("name",)),
                    ("finalized_features", ("name",))],
    "ListOffsets": [("topics", ("name",)), ("topics[].partitions", ("partition_index",))],
    "Metadata": [("topics", ("name", "topic_id"))],
    "Produce": [("responses", ("name", "topic_id")),
                ("responses[].partition_responses", ("index",))],
    "DescribeConfigs": [("results[].configs", ("name",))],
    "CreateTopics": [("topics[].configs", ("name",))],
    "ListGroups": [("groups", ("group_id",))],
    "OffsetFetch": [("topics", ("name",)), ("topics[].partitions", ("partition_index",)),
                    ("groups", ("group_id",)), ("groups[].topics", ("name", "topic_id")),
                    ("groups[].topics[].partitions", ("partition_index",))],
    "JoinGroup": [("members", ("member_id",))],
    "DescribeGroups": [("groups", ("group_id",)), ("groups[].members", ("member_id",))],
    "DeleteGroups": [("results", ("group_id",))],
    "DeleteTopics": [("responses", ("name", "topic_id"))],
    "OffsetDelete": [("topics", ("name",)), ("topics[].partitions", ("partition_index",))],
    "DescribeUserScramCredentials": [("results", ("user",)),
                                     ("results[].credential_infos", ("mechanism",))],
    "AlterUserScramCredentials": [("results", ("user",))],
    "DescribeClientQuotas": [("entries[].values", ("key",)), ("entries", ("entity",))],
    "AlterClientQuotas": [("entries", ("entity",))],
    "ConsumerGroupHeartbeat": [("assignment.topic_partitions", ("topic_id",)),
                               ("assignment.topic_partitions[].partitions", None)],
    "ConsumerGroupDescribe": [
        ("groups", ("group_id",)),
        ("groups[].members", ("member_id",)),
        ("groups[].members[].assignment.topic_partitions", ("topic_id",)),
        ("groups[].members[].assignment.topic_partitions[].partitions", None),
        ("groups[].members[].target_assignment.topic_partitions", ("topic_id",)),
        ("groups[].members[].target_assignment.topic_partitions[].partitions", None)],
    "ShareGroupHeartbeat": [("assignment.topic_partitions", ("topic_id",)),
                            ("assignment.topic_partitions[].partitions", None)],
    "ShareGroupDescribe": [
        ("groups", ("group_id",)),
        ("groups[].members", ("member_id",)),
        ("groups[].members[].assignment.topic_partitions", ("topic_id",)),
        ("groups[].members[].assignment.topic_partitions[].partitions", None)],
    "ShareFetch": [("responses", ("topic_id",)),
                   ("responses[].partitions", ("partition_index",))],
    "ShareAcknowledge": [("responses", ("topic_id",)),
                         ("responses[].partitions", ("partition_index",))],
    "DescribeShareGroupOffsets": [("groups", ("group_id",)),
                                  ("groups[].topics", ("topic_name",)),
                                  ("groups[].topics[].partitions", ("partition_index",))],
    "AlterShareGroupOffsets": [("responses", ("topic_name",)),
                               ("responses[].partitions", ("partition_index",))],
    "DeleteShareGroupOffsets": [("responses", ("topic_name",))],
    "StreamsGroupHeartbeat": [("active_tasks", ("subtopology_id",)),
                              ("active_tasks[].partitions", None)],
    "StreamsGroupDescribe": [("groups", ("group_id",)), ("groups[].members", ("member_id",))],
}


def unordered(answer: Answer, side: Side, request: Request) -> Answer:
    """Hides the order of the lists in ``UNORDERED``: the protocol gives them as sets keyed
    by a field (topics by name, configs by name, groups by id, members by member id, APIs
    by key), Kafka fills them from hash maps, answers groups per coordinator shard (a
    partition of __consumer_offsets) or shuffles them on purpose (DeleteTopics), and clients
    index them by that key. Each becomes a
    ``Keyed`` mapping from key to entry; a list of numbers is sorted."""
    for path, key in UNORDERED.get(request.api, ()):
        answer = _at(answer, path.replace("[]", ".[]").split("."), lambda v, k=key: _keyed(v, k))
    return answer


def _at(value: Any, parts: list[str], fn: Callable[[Any], Any]) -> Any:
    if not parts:
        return fn(value)
    head, rest = parts[0], parts[1:]
    if head == "[]":  # every entry (of a list, or of one already made Keyed)
        if isinstance(value, Keyed):
            return Keyed((k, _at(v, rest, fn)) for k, v in value.items())
        return [_at(v, rest, fn) for v in value] if isinstance(value, list) else value
    if isinstance(value, Mapping) and value.get(head) is not None:
        return type(value)({**value, head: _at(value[head], rest, fn)})
    return value


def _keyed(entries: Any, key: tuple[str, ...] | None) -> Any:
    if not isinstance(entries, list):
        return entries
    if key is None:
        return sorted(entries)
    keyed = Keyed()
    for entry in entries:
        name = next((str(entry[k]) for k in key if entry.get(k) not in (None, "")), "?")
        while name in keyed:  # the same key twice: keep both
            name += "'"
        keyed[name] = entry
    return keyed


NORMALISERS: tuple[Normaliser, ...] = (
    records_as_batches,
    throttle_times,
    disk_space,
    broker_ports,
    topic_ids,
    member_ids,
    producer_ids,
    session_ids,
    broker_clock,
    unordered,
)


def normalise(answer: Answer, side: Side, request: Request) -> Answer:
    """``answer`` through every normaliser (markers such as NO_ANSWER pass unchanged)."""
    if not isinstance(answer, dict):
        return answer
    for normaliser in NORMALISERS:
        answer = normaliser(answer, side, request)
    return answer
