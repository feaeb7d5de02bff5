"""Replaying the corpus: every request goes to both brokers, in corpus order, and both answers
are decoded with fakebroker's codec for the request's API version.

Each broker is a ``Side``: its address, one connection per client id (a captured request
keeps the client id its client sent), and what its answers told so far — the ids it gave
topics, members and producers — which fills the placeholders of later requests and lets the
normalisers name those ids.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from construct import Container

from fakebroker.protocol.codec import ZERO_UUID, DecodeError
from fakebroker.protocol.framing import decode_response
from fakebroker.wire_client import WireClient, api_key
from tests.conformance.corpus import Request, Settle, Step, resolve

NO_ANSWER = "<no answer>"
DESCRIBE_TRANSACTIONS = 65
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
NOT_LOADED = frozenset((14, 15, 16))
CLOSED = "<connection closed>"
ANSWERED = "<answered>"  # a request Kafka leaves unanswered (acks=0) was answered
SETTLE_TIMEOUT = 60.0


def plain(value: Any) -> Any:
    """A decoded message as plain data: dicts, lists, ints, strings, bytes, UUIDs."""
    if isinstance(value, Container | dict):
        return {k: plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@dataclass
class Side:
    """One broker under replay and what its answers have told."""

    name: str
    address: str
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    member_ids: list[str] = field(default_factory=list)
    producer_ids: list[int] = field(default_factory=list)
    session_ids: list[int] = field(default_factory=list)
    generations: dict[str, int] = field(default_factory=dict)
    member_epochs: dict[str, int] = field(default_factory=dict)
    cluster_id: str | None = None
    answers: dict[str, Any] = field(default_factory=dict)  # the last answer per case
    # When the replay began (ms): a timestamp from then on can only be the broker's clock.
    started_ms: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    client_ids: set[str] = field(default_factory=set)
    _clients: dict[str, WireClient] = field(default_factory=dict)
    _served: dict[int, range] | None = None

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def topic_id(self, name: str) -> uuid.UUID:
        """The id of topic ``name``: from an earlier answer, else asked (Metadata v12);
        the zero id for a topic this broker does not have."""
        if name not in self.topic_ids:
            self.call(Request("Metadata", 12, {"topics": [{"name": name}],
                                               "allow_auto_topic_creation": False},
                              "topic id lookup", client_id="settle"))
        return self.topic_ids.get(name, ZERO_UUID)

    def served(self) -> dict[int, range]:
        """The versions this broker serves per API key (its ApiVersions answer)."""
        if self._served is None:
            answer = self.call(Request("ApiVersions", 3, {
                "client_software_name": "conformance", "client_software_version": "1.0"},
                "served versions", client_id="settle"))
            self._served = {k["api_key"]: range(k["min_version"], k["max_version"] + 1)
                            for k in answer["api_keys"]}
        return self._served

    def client(self, client_id: str) -> WireClient:
        if client_id not in self._clients:
            self._clients[client_id] = WireClient(self.address, timeout=30,
                                                  client_id=client_id)
        return self._clients[client_id]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def call(self, request: Request) -> Any:
        """Send ``request`` (placeholders filled in) and return its answer as plain data,
        or NO_ANSWER / ANSWERED / CLOSED / "<undecodable: ...>"."""
        body = resolve(request.body, self)
        self.client_ids.add(request.client_id)
        client = self.client(request.client_id)
        try:
            sent = client.send(request.api, request.version, body)
            if not request.answered:
                # An answer would come before the answer to this ApiVersions request.
                probe = client.send("ApiVersions", 0, {})
                correlation_id, _ = client.receive("ApiVersions", 0)
                if correlation_id == sent:
                    return ANSWERED
                assert correlation_id == probe
                return NO_ANSWER
            frame = client.receive_frame()
        except (ConnectionError, TimeoutError, OSError):
            self._clients.pop(request.client_id).close()
            return CLOSED
        try:
            correlation_id, answer = decode_response(api_key(request.api), request.version,
                                                     frame)
        except (DecodeError, ValueError) as exc:
            return f"<undecodable: {exc}>"
        assert correlation_id == sent
        found = plain(answer)
        self.learn(request, body, found)
        return found

    def learn(self, request: Request, body: Mapping[str, Any], answer: Mapping[str, Any]
              ) -> None:
        """Keep the ids this broker gave in ``answer``, and the answer by its case."""
        self.answers[request.case] = answer
        for name, topic_id in _named_ids(answer):
            self.topic_ids.setdefault(name, topic_id)
        member = answer.get("member_id")
        if request.api in ("JoinGroup", "ConsumerGroupHeartbeat") and member \
                and member != body.get("member_id") and member not in self.member_ids:
            self.member_ids.append(member)  # a member id the broker gave, not an echo
        if request.api == "JoinGroup" and not answer.get("error_code"):
            self.generations[body["group_id"]] = answer["generation_id"]
        if request.api in ("ConsumerGroupHeartbeat", "ShareGroupHeartbeat") \
                and not answer.get("error_code"):
            self.member_epochs[answer["member_id"] or body["member_id"]] = answer["member_epoch"]
        if answer.get("cluster_id"):
            self.cluster_id = answer["cluster_id"]
        if request.api == "InitProducerId" and answer.get("producer_id", -1) >= 0 \
                and answer["producer_id"] not in self.producer_ids:
            self.producer_ids.append(answer["producer_id"])
        if request.api == "Fetch" and answer.get("session_id") \
                and answer["session_id"] not in self.session_ids:
            self.session_ids.append(answer["session_id"])

    def settle(self, step: Settle, deadline: float) -> None:
        """Wait until this broker is ready for ``step``'s topics and coordinators."""
        if step.topics:
            self._until(deadline, f"topics {', '.join(step.topics)} with leaders",
                        lambda: self._topics_led(step.topics))
        for key_type, keys in ((0, step.groups), (1, step.transactional_ids)):
            for key in keys:  # FindCoordinator makes Kafka create the coordinators' topic
                self._until(deadline, f"a coordinator for {key}", lambda k=key, t=key_type:
                            self.call(Request("FindCoordinator", 3, {"key": k, "key_type": t},
                                              "settle", client_id="settle"))["error_code"] == 0)
        for group in step.groups:  # then loads each of its partitions
            self._until(deadline, f"the coordinator of group {group} loaded", lambda g=group:
                        self.call(Request("OffsetFetch", 8, {"groups": [
                            {"group_id": g, "topics": []}]}, "settle", client_id="settle")
                        )["groups"][0]["error_code"] == 0)
        if step.transactional_ids and DESCRIBE_TRANSACTIONS in self.served():
            self._until(deadline, "the transaction coordinators loaded", lambda: all(
                t["error_code"] not in NOT_LOADED for t in self.call(Request(
                    "DescribeTransactions", 0, {"transactional_ids": step.transactional_ids},
                    "settle", client_id="settle"))["transaction_states"]))
        for transactional_id in step.ended:
            self._until(deadline, f"the transaction of {transactional_id} ended",
                        lambda t=transactional_id: self.call(Request(
                            "DescribeTransactions", 0, {"transactional_ids": [t]}, "settle",
                            client_id="settle"))["transaction_states"][0][
                            "transaction_state"] not in ("PrepareCommit", "PrepareAbort"))
        if step.scram_users:
            self._until(deadline, "the SCRAM users described", lambda: all(
                r["error_code"] == 0 for r in self.call(Request(
                    "DescribeUserScramCredentials", 0,
                    {"users": [{"name": u} for u in step.scram_users]}, "settle",
                    client_id="settle"))["results"]))
        if step.quota_entities is not None:
            self._until(deadline, f"{step.quota_entities} client quota entities", lambda: len(
                self.call(Request("DescribeClientQuotas", 1, {"components": [], "strict": False},
                                  "settle", client_id="settle"))["entries"] or ()
            ) == step.quota_entities)
        if step.share_state is not None:
            self._until(deadline, "share state written",
                        lambda: self._share_state_written(step.share_state))
        if step.producer_ids:
            self._until(deadline, "a producer id", lambda: self.call(Request(
                "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                      "producer_id": -1, "producer_epoch": -1},
                "settle", client_id="settle"))["error_code"] == 0)

    def _share_state_written(self, topic: str) -> bool:
        """Whether a share group's start offset of ``topic``'s partition 0 is written and
        read back (see ``Settle``)."""
        from tests.conformance.corpus import SETTLE_SHARE_GROUP

        altered = self.call(Request("AlterShareGroupOffsets", 0, {
            "group_id": SETTLE_SHARE_GROUP, "topics": [{"topic_name": topic, "partitions": [
                {"partition_index": 0, "start_offset": 0}]}]}, "settle", client_id="settle"))
        if altered["error_code"] or any(p["error_code"] for t in altered["responses"]
                                        for p in t["partitions"]):
            return False
        described = self.call(Request("DescribeShareGroupOffsets", 0, {"groups": [
            {"group_id": SETTLE_SHARE_GROUP, "topics": None}]}, "settle", client_id="settle"))
        return [p["start_offset"] for g in described["groups"] for t in g["topics"]
                for p in t["partitions"]] == [0]

    def _topics_led(self, topics: Iterable[str]) -> bool:
        """Whether every partition of ``topics`` has a leader in the metadata, and that leader
        answers for it (Kafka's metadata may list a leader before its log is ready)."""
        answer = self.call(Request("Metadata", 12, {
            "topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False},
            "settle", client_id="settle"))
        if not all(t["error_code"] == 0 and t["partitions"]
                   and all(p["leader_id"] >= 0 for p in t["partitions"])
                   for t in answer["topics"]):
            return False
        offsets = self.call(Request("ListOffsets", 7, {"replica_id": -1, "topics": [
            {"name": t["name"], "partitions": [{"partition_index": p["partition_index"],
                                                "timestamp": -1} for p in t["partitions"]]}
            for t in answer["topics"]]}, "settle", client_id="settle"))
        return all(p["error_code"] == 0 for t in offsets["topics"] for p in t["partitions"])

    def _until(self, deadline: float, what: str, ready: Any) -> None:
        while not ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} did not get ready: {what}")
            time.sleep(0.05)


def _named_ids(answer: Any) -> Iterable[tuple[str, uuid.UUID]]:
    """(name, topic id) pairs anywhere in an answer (Metadata, CreateTopics...)."""
    if isinstance(answer, dict):
        name, topic_id = answer.get("name"), answer.get("topic_id")
        if isinstance(name, str) and name and isinstance(topic_id, uuid.UUID) \
                and topic_id != ZERO_UUID and not answer.get("error_code"):
            yield name, topic_id
        for value in answer.values():
            yield from _named_ids(value)
    elif isinstance(answer, list):
        for value in answer:
            yield from _named_ids(value)


@dataclass(frozen=True)
class Exchange:
    """One request of the corpus and each side's answer to it (plain data or a marker)."""

    request: Request
    answers: dict[str, Any]


def replay(steps: Iterable[Step], sides: list[Side]) -> list[Exchange]:
    """Send every request to every side, in order; settle steps wait and are not kept."""
    exchanges = []
    for step in steps:
        if isinstance(step, Settle):
            deadline = time.monotonic() + SETTLE_TIMEOUT
            for side in sides:
                side.settle(step, deadline)
            continue
        exchanges.append(Exchange(step, {side.name: side.call(step) for side in sides}))
    return exchanges
