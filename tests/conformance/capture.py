"""Capture the requests real clients send, for the conformance corpus.

``python -m tests.conformance.capture [--output FILE]`` starts a real Kafka 4.4 whose
advertised listener is a recording proxy (every client connection, bootstrap or not, goes
through it), runs confluent-kafka, kafka-python and the Java client (tests/java/Harness.java)
against it, one after another, and writes what they sent to ``captured.jsonl``
(tests/conformance/corpus.py reads it): one JSON line per request, in the order the broker
read them, with the client and client id that sent it.

* Values the broker chose are written as placeholders, learnt from the broker's answers as
  they went by: topic ids (``$topic_id``), member and producer ids it gave, named by the
  request whose answer gave them (``$given_by``; also inside produced batches:
  ``$batches``), member epochs and
  generations (``$epoch_of``, ``$generation_of``), its cluster id (``$cluster_id``). A
  replay fills them in from each broker's own answers.
* A request the same client already sent with the same body (heartbeats, repeated metadata
  and fetch polls) is written once, unless its answer gives an id (InitProducerId, JoinGroup,
  ConsumerGroupHeartbeat); what is left replays in a few seconds.
* After a CreateTopics and before a group's first FindCoordinator a settle line makes the
  replay wait for the topic and the coordinator, as the clients' retries did here.
* The capturing broker creates no fetch sessions (max.incremental.fetch.session.cache.slots
  =0), so every captured Fetch is a full one that means the same thing on a replay.
* Every captured request is decoded with fakebroker's codec and encoded again; a request that
  does not come back byte for byte is reported (a codec difference) and written anyway. Bytes
  a client sends after the message (librdkafka's Metadata v13 for all topics has three) are
  reported and left out: brokers read the message's fields and ignore the rest.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.framing import decode_request, decode_response, encode_request
from fakebroker.protocol.specs import api_spec
from tests.conformance.corpus import (
    CAPTURED,
    ClusterId,
    Generation,
    GivenBy,
    MemberEpoch,
    ProducedBatches,
    TopicId,
    to_json,
)
from tests.conformance.replay import plain
from tests.real_kafka import RealKafka, start_real_kafka

TOPIC = "captured"
PARTITIONS = 3
# Requests whose answers give ids later requests use: never left out as repeats.
GIVES_IDS = frozenset(("InitProducerId", "JoinGroup", "ConsumerGroupHeartbeat"))


@dataclass
class Exchange:
    """One request a client sent through the proxy and the answer it got (None: none)."""

    seq: int
    client: str
    request: bytes
    answer: bytes | None = None


@dataclass
class Proxy:
    """A TCP proxy that forwards every connection to ``upstream`` (closes it while there is
    none) and keeps each request frame with its answer frame (while ``client`` names who is
    talking)."""

    listener: socket.socket = field(default_factory=lambda: socket.create_server(
        ("127.0.0.1", 0)))
    upstream: tuple[str, int] | None = None
    client: str | None = None  # None: forward without keeping
    exchanges: list[Exchange] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def address(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"{host}:{port}"

    def start(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()

    def forward_to(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.upstream = (host, int(port))

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        if self.upstream is None:  # the broker is still starting: its readiness check
            conn.close()           # falls back to the bootstrap connection
            return
        try:
            up = socket.create_connection(self.upstream)
        except OSError:
            conn.close()
            return
        pending: dict[int, Exchange] = {}
        threading.Thread(target=self._answers, args=(up, conn, pending), daemon=True).start()
        try:
            for frame in _frames(conn):
                if self.client is not None:
                    with self._lock:
                        exchange = Exchange(len(self.exchanges), self.client, frame)
                        self.exchanges.append(exchange)
                    pending[struct.unpack_from(">i", frame, 4)[0]] = exchange
                up.sendall(struct.pack(">i", len(frame)) + frame)
        except OSError:
            pass
        finally:
            for s in (conn, up):
                s.close()

    def _answers(self, up: socket.socket, conn: socket.socket,
                 pending: dict[int, Exchange]) -> None:
        try:
            for frame in _frames(up):
                exchange = pending.pop(struct.unpack_from(">i", frame)[0], None)
                if exchange is not None:
                    exchange.answer = frame
                conn.sendall(struct.pack(">i", len(frame)) + frame)
        except OSError:
            pass
        finally:
            for s in (conn, up):
                s.close()


def _frames(sock: socket.socket) -> Iterator[bytes]:
    """Size-prefixed frames read from ``sock`` until it closes."""
    buffer = b""
    while True:
        while len(buffer) < 4 or len(buffer) < 4 + struct.unpack_from(">i", buffer)[0]:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
        size = struct.unpack_from(">i", buffer)[0]
        yield buffer[4:4 + size]
        buffer = buffer[4 + size:]


# -- the clients ------------------------------------------------------------------------------


def confluent_admin(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(timeout=30)
    _until(lambda: TOPIC in admin.list_topics(timeout=10).topics)
    resource = ConfigResource(ResourceType.TOPIC, TOPIC)
    admin.describe_configs([resource])[resource].result(timeout=30)
    admin.list_consumer_groups().result(timeout=30)


def confluent_produce(bootstrap: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                         "linger.ms": 5})
    for i in range(10):
        producer.produce(TOPIC, f"confluent-{i}".encode(), key=f"k{i}".encode())
    assert producer.flush(30) == 0


def confluent_consume(bootstrap: str, protocol: str) -> None:
    from confluent_kafka import Consumer

    config = {"bootstrap.servers": bootstrap, "group.id": f"captured-confluent-{protocol}",
              "auto.offset.reset": "earliest", "enable.auto.commit": False,
              "group.protocol": protocol}
    if protocol == "classic":
        config["session.timeout.ms"] = 10000
    consumer = Consumer(config)
    consumer.subscribe([TOPIC])
    seen = 0
    deadline = time.monotonic() + 60
    while seen < 10 and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and message.error() is None:
            seen += 1
    assert seen >= 10, f"confluent-kafka ({protocol}) read {seen} records"
    consumer.commit(asynchronous=False)
    consumer.close()


def kafka_python(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send(TOPIC, f"kafka-python-{i}".encode(), partition=i % PARTITIONS)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap,
                             group_id="captured-kafka-python", auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=20000)
    seen = 0
    for _ in consumer:
        seen += 1
        if seen >= 15:
            break
    assert seen >= 15, f"kafka-python read {seen} records"
    consumer.commit()
    consumer.close()


def java(bootstrap: str) -> None:
    from tests.clients.java import run_harness, start_harness

    for version in ("3.9.1", "4.4.0"):
        lines = run_harness("produce", "--bootstrap", bootstrap, "--topic", TOPIC,
                            "--count", "5", "--value-prefix", f"java-{version}-",
                            client_version=version)
        assert lines[-1] == {"done": 5}, lines[-1]
    member = start_harness("group-consume", "--bootstrap", bootstrap, "--topic", TOPIC,
                           "--group", "captured-java", "--max-records", "25",
                           client_version="4.4.0")
    lines = member.wait(timeout=90)  # it commits, leaves and exits after 25 records
    assert lines[-1].get("done", 0) >= 25, lines[-1]


CLIENTS: tuple[tuple[str, Callable[[str], None]], ...] = (
    ("confluent-kafka admin", confluent_admin),
    ("confluent-kafka producer", confluent_produce),
    ("confluent-kafka consumer", lambda b: confluent_consume(b, "classic")),
    ("confluent-kafka consumer (KIP-848)", lambda b: confluent_consume(b, "consumer")),
    ("kafka-python", kafka_python),
    ("Java client", java),
)


def _until(ready: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError("not ready in time")
        time.sleep(0.1)


# -- from frames to corpus lines --------------------------------------------------------------


@dataclass
class Ids:
    """The ids, epochs and generations the broker chose, learnt from its answers in order."""

    topics: dict[uuid.UUID, str] = field(default_factory=dict)
    members: dict[str, str] = field(default_factory=dict)  # member id -> the case giving it
    producers: dict[int, str] = field(default_factory=dict)  # producer id -> the case
    generations: dict[str, int] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)
    cluster_id: str | None = None

    def learn(self, case: str, api: str, body: dict[str, Any], answer: dict[str, Any]
              ) -> None:
        """Keep what ``answer`` (to the request of ``case``) tells."""
        _topic_ids(answer, self.topics)
        member = answer.get("member_id")
        if api in GIVES_IDS and member and member != body.get("member_id"):
            self.members.setdefault(member, case)
        if api == "InitProducerId" and answer.get("producer_id", -1) >= 0:
            self.producers.setdefault(answer["producer_id"], case)
        if api == "JoinGroup" and not answer.get("error_code"):
            self.generations[body["group_id"]] = answer["generation_id"]
        if api == "ConsumerGroupHeartbeat" and not answer.get("error_code"):
            self.epochs[answer["member_id"] or body["member_id"]] = answer["member_epoch"]
        self.cluster_id = answer.get("cluster_id") or self.cluster_id

    def _epoch(self, group: str, member: str, value: int) -> Any:
        """``value`` (a generation or member epoch a request carries) as a placeholder when
        it is the one the broker last gave ``member`` or ``group``."""
        if value > 0 and self.epochs.get(member) == value:
            return MemberEpoch(self.placeholders(member), value)
        if value > 0 and self.generations.get(group) == value:
            return Generation(group)
        return value

    def epochs_and_generations(self, api: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with the cluster id, member epochs and generations the broker gave as
        placeholders."""
        body = dict(body)
        if api == "ApiVersions" and self.cluster_id and body.get("cluster_id") == self.cluster_id:
            body["cluster_id"] = ClusterId()
        for key in ("member_epoch", "generation_id", "generation_id_or_member_epoch"):
            if isinstance(body.get(key), int) and "group_id" in body:
                body[key] = self._epoch(body["group_id"], body.get("member_id") or "",
                                        body[key])
        if api == "OffsetFetch" and body.get("groups"):
            body["groups"] = [dict(g, member_epoch=self._epoch(
                g["group_id"], g.get("member_id") or "", g["member_epoch"]))
                for g in body["groups"]]
        return body

    def placeholders(self, value: Any, key: str | None = None) -> Any:
        """``value`` with the ids the broker chose as placeholders."""
        if isinstance(value, dict):
            return {k: self.placeholders(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.placeholders(v, key) for v in value]
        if isinstance(value, uuid.UUID) and value in self.topics:
            return TopicId(self.topics[value])
        if isinstance(value, str) and value in self.members:
            return GivenBy(self.members[value], "member_id", value)
        if key == "producer_id" and isinstance(value, int) and value in self.producers:
            return GivenBy(self.producers[value], "producer_id", value)
        if key == "records" and isinstance(value, bytes) and len(value) >= 61 \
                and value[16] == 2:
            producer = struct.unpack_from(">q", value, 43)[0]
            if producer in self.producers:
                return ProducedBatches(value, GivenBy(self.producers[producer], "producer_id",
                                                      producer))
        return value


def _topic_ids(answer: Any, found: dict[uuid.UUID, str]) -> None:
    if isinstance(answer, dict):
        name, topic_id = answer.get("name"), answer.get("topic_id")
        if isinstance(name, str) and name and isinstance(topic_id, uuid.UUID) \
                and topic_id != ZERO_UUID:
            found.setdefault(topic_id, name)
        for value in answer.values():
            _topic_ids(value, found)
    elif isinstance(answer, list):
        for value in answer:
            _topic_ids(value, found)


def corpus_lines(exchanges: Sequence[Exchange], report: Callable[[str], None]
                 ) -> list[dict[str, Any]]:
    """The corpus lines of captured exchanges (deduplicated per client, settle lines added)."""
    ids = Ids()
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    settled: set[str] = set()
    counts: dict[tuple[str, str], int] = {}
    for exchange in exchanges:
        try:
            header, body = decode_request(exchange.request)
        except (KeyError, ValueError) as exc:
            report(f"{exchange.client}: request not decoded, left out ({exc})")
            continue
        api = api_spec(header.api_key).name
        again = encode_request(header.api_key, header.api_version, header.correlation_id,
                               header.client_id, body)[4:]
        if exchange.request.startswith(again) and again != exchange.request:
            report(f"{exchange.client}: {api} v{header.api_version} carries "
                   f"{len(exchange.request) - len(again)} bytes after the message (a broker "
                   "ignores them; the corpus leaves them out)")
        elif again != exchange.request:
            at = next((i for i, (a, b) in enumerate(zip(again, exchange.request, strict=False))
                       if a != b), min(len(again), len(exchange.request)))
            report(f"{exchange.client}: {api} v{header.api_version} does not encode back to "
                   f"the bytes the client sent (a codec difference): from byte {at}, "
                   f"{exchange.request[at:at + 16].hex()} became {again[at:at + 16].hex()}")
        data = plain(body)
        if api == "FindCoordinator":
            keys = [k for k in (data["coordinator_keys"] or [data["key"]])
                    if data["key_type"] == 0 and k not in settled]
            if keys:
                settled.update(keys)
                lines.append({"settle": {"groups": keys}})
        entry = {"client": exchange.client, "client_id": header.client_id, "api": api,
                 "version": header.api_version,
                 "body": to_json(ids.placeholders(ids.epochs_and_generations(api, data)))}
        key = json.dumps(entry, sort_keys=True)
        case = ""
        if key not in seen or api in GIVES_IDS:
            seen.add(key)
            n = counts[(exchange.client, api)] = counts.get((exchange.client, api), 0) + 1
            lines.append({**entry, "what": f"{api} #{n}"})
            case = f"{exchange.client}: {api} #{n}"  # as corpus.captured_corpus names it
            if api == "CreateTopics":
                lines.append({"settle": {"topics": [t["name"] for t in data["topics"]]}})
        if exchange.answer is not None:
            _, answer = decode_response(header.api_key, header.api_version, exchange.answer)
            ids.learn(case, api, data, plain(answer))
    return lines


def capture(tmp_dir: Path, report: Callable[[str], None]) -> list[dict[str, Any]]:
    """Run every client through a recording proxy in front of a real Kafka."""
    proxy = Proxy()
    proxy.start()
    kafka: RealKafka = start_real_kafka(tmp_dir, overrides={
        "advertised.listeners": f"PLAINTEXT://{proxy.address}",
        "max.incremental.fetch.session.cache.slots": "0"})
    try:
        proxy.forward_to(kafka.bootstrap_servers)
        for client, run in CLIENTS:
            report(f"capturing {client}")
            proxy.client = client
            run(proxy.address)
            proxy.client = None
            time.sleep(0.5)  # answers still on their way
    finally:
        kafka.stop()
        proxy.listener.close()
    return corpus_lines(sorted(proxy.exchanges, key=lambda e: e.seq), report)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.capture",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=CAPTURED)
    args = parser.parse_args(argv)

    def report(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="capture-") as tmp:
        lines = capture(Path(tmp), report)
    args.output.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report(f"{args.output}: {sum('api' in line for line in lines)} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
