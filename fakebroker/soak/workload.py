"""The soak's workload: a three-broker fake cluster, real clients (confluent-kafka, that is
librdkafka) on threads, and the seeded schedule applied to the cluster while they run.

* Idempotent producers send numbered records, ~50 a second each; transactional producers send
  transactions of 1 to 20 records and commit most, abort some (the choice drawn from a
  generator seeded by the run's seed and the producer's name). A producer fenced or failed
  fatally is made again under the same name (and transactional id) and goes on numbering.
* Two consumer groups read the topic with ``isolation.level=read_committed``: one of the
  classic protocol, one of KIP-848's (``group.protocol=consumer``); members join, leave and
  are expired by the schedule; each member commits what it read, synchronously, every
  half-second and when a partition is revoked.
* At the end the cluster is made quiet (rules cleared, every broker up), producers flush
  and end their transactions, members leave, a last read_committed consumer reads every
  partition to its last stable offset, and the log is read back from the broker.

Everything the clients are told is recorded into a ``checker.History``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from fakebroker.protocol.errors import ClusterError
from fakebroker.soak.checker import Ack, Commit, History, Read, Stored, value_of
from fakebroker.soak.schedule import Event, Shape
from fakebroker.sync import FakeKafka

TOPIC = "soak"
MAX_MEMBERS = 4
COMMIT_EVERY = 0.5  # seconds between a member's commits
LEAVE_SECONDS = 10  # a leaving member's wait for its revocation
PAUSE = 0.1  # an idempotent producer sends 5 records, then pauses: ~50 records/s

# librdkafka's log lines (connection refused while a broker is down ...) go nowhere: the
# errors it reports to error_cb are counted in the report instead.
_client_log = logging.getLogger("fakebroker.soak.clients")
_client_log.addHandler(logging.NullHandler())
_client_log.propagate = False


class Stats:
    """What happened, beside the history: counts by name, taken without a lock.

    Client callbacks add to it, and confluent-kafka has called a callback with an exception
    already set (a fatal error met while flushing): the callback's first call into C then
    raises SystemError, and a lock taken by ``with`` there was never released (every thread
    stopped at it). So each count is one ``list.append``, atomic and lock-free, summed on
    reading."""

    def __init__(self) -> None:
        self._added: list[tuple[str, str, int]] = []

    def add(self, counter: str, name: str, n: int = 1) -> None:
        self._added.append((counter, name, n))

    def _sum(self, counter: str) -> Counter[str]:
        found: Counter[str] = Counter()
        for kind, name, n in list(self._added):
            if kind == counter:
                found[name] += n
        return found

    @property
    def counts(self) -> Counter[str]:
        return self._sum("counts")

    @property
    def faults(self) -> Counter[str]:
        return self._sum("faults")

    @property
    def skipped(self) -> Counter[str]:
        return self._sum("skipped")

    @property
    def client_errors(self) -> Counter[str]:
        return self._sum("client_errors")


class Run:
    """One soak run's cluster, clients and records."""

    def __init__(self, kafka: FakeKafka, seed: int, shape: Shape):
        self.kafka = kafka
        self.seed = seed
        self.shape = shape
        self.history = History()
        self.stats = Stats()
        self.stop_producing = threading.Event()
        self.threads: list[threading.Thread] = []
        self.members: dict[str, list[Member]] = {g: [] for g in shape.groups}
        self.joined: Counter[str] = Counter()
        # Producers that failed fatally (fenced ...) are kept, never destroyed: destroying
        # one has crashed the process in librdkafka's threads ("unaligned tcache chunk
        # detected", seen once in a soak of confluent-kafka 2.16.1); the process ends
        # without destroying them (``__main__`` exits with os._exit).
        self.retired: list[Any] = []

    # -- clients ----------------------------------------------------------------------------

    def config(self, name: str, **settings: Any) -> dict[str, Any]:
        def on_error(error: Any) -> None:
            self.stats.add("client_errors", error.name())

        return {"bootstrap.servers": self.kafka.bootstrap_servers, "client.id": name,
                "logger": _client_log, "error_cb": on_error, **settings}

    def start_producers(self, idempotent: int, transactional_ids: tuple[str, ...]) -> None:
        for i in range(idempotent):
            self._thread(f"idem{i}", self._idempotent, f"idem{i}")
        for tid in transactional_ids:
            self._thread(tid, self._transactional, tid)

    def _thread(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=f"soak-{name}", daemon=True)
        self.threads.append(thread)
        thread.start()

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is None:
            self.history.acks.append(Ack(msg.value().decode(), msg.partition(), msg.offset()))
            self.stats.add("counts", "acked")
        else:
            self.stats.add("counts", "delivery_failed")

    def _produce(self, producer: Any, name: str, sequence: int, txn: str | None) -> None:
        value = value_of(name, sequence, txn)
        while True:
            try:
                producer.produce(TOPIC, value.encode(), key=name.encode(),
                                 partition=sequence % self.shape.partitions,
                                 on_delivery=self._delivered)
                break
            except BufferError:  # the client's queue is full: let it drain
                producer.poll(0.1)
        self.stats.add("counts", "produced")

    def _idempotent(self, name: str) -> None:
        from confluent_kafka import KafkaException, Producer

        sequence = 0
        while not self.stop_producing.is_set():
            producer = Producer(self.config(name, **{"enable.idempotence": True,
                                                     "linger.ms": 5}))
            try:
                while not self.stop_producing.is_set():
                    for _ in range(5):
                        self._produce(producer, name, sequence, None)
                        sequence += 1
                    producer.poll(0)
                    time.sleep(PAUSE)
            except KafkaException as exc:  # fatal: a new producer goes on
                self.stats.add("counts", f"producer_fatal:{exc.args[0].name()}")
                self.retired.append(producer)
                continue
            except SystemError:  # confluent-kafka's callback with an error set (see Stats)
                self.stats.add("counts", "producer_fatal:SystemError")
                self.retired.append(producer)
                continue
            try:
                self.stats.add("counts", "undelivered", producer.flush(60))
            except KafkaException as exc:  # failed fatally while flushing
                self.stats.add("counts", f"producer_fatal:{exc.args[0].name()}")

    def _transactional(self, tid: str) -> None:
        from confluent_kafka import KafkaException, Producer

        rng = random.Random(f"{self.seed}/{tid}")
        sequence = number = 0
        while not self.stop_producing.is_set():
            producer = Producer(self.config(tid, **{"transactional.id": tid, "linger.ms": 5}))
            try:
                producer.init_transactions(60)
            except KafkaException as exc:
                self.stats.add("counts", f"init_failed:{exc.args[0].name()}")
                continue
            while not self.stop_producing.is_set():
                txn = f"{tid}.{number}"
                number += 1
                try:
                    producer.begin_transaction()
                    for _ in range(rng.randint(1, 20)):
                        self._produce(producer, tid, sequence, txn)
                        sequence += 1
                        producer.poll(0)
                        time.sleep(PAUSE / 5)
                    if rng.random() < 0.2:
                        # A flush first: librdkafka 2.16 loses a record when
                        # abort_transaction purges one in flight whose answer was lost
                        # (appended): the next transaction reuses its epoch and sequence
                        # number, and the broker answers that batch as a retry, with the
                        # purged record's offset (Kafka's ProducerStateEntry
                        # findDuplicateBatch: same epoch, same sequence range).
                        producer.flush(30)
                        _retrying(producer.abort_transaction)
                        self.history.outcomes[txn] = "aborted"
                    else:
                        _retrying(producer.commit_transaction)
                        self.history.outcomes[txn] = "committed"
                except SystemError as exc:  # confluent-kafka's callback with an error set
                    self.stats.add("counts", f"txn_error:{type(exc).__name__}")
                    break
                except KafkaException as exc:
                    error = exc.args[0]
                    self.stats.add("counts", f"txn_error:{error.name()}")
                    if error.txn_requires_abort():
                        try:
                            _retrying(producer.abort_transaction)
                            self.history.outcomes[txn] = "aborted"
                            continue
                        except KafkaException:
                            pass
                    break  # fatal (fenced ...): its outcome is the log's; a new producer
            self.retired.append(producer)

    def join(self, group: str) -> None:
        self.joined[group] += 1
        member = Member(self, group, f"{group}-m{self.joined[group]}")
        self.members[group].append(member)
        member.thread.start()

    # -- the schedule ---------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Apply one event; one whose target is absent or refuses is counted as skipped."""
        p = event.params
        try:
            applied = self._apply(event.kind, p)
        except ClusterError as exc:
            self.stats.add("skipped", f"{event.kind}:{exc.error}")
            return
        self.stats.add("faults" if applied else "skipped", event.kind)

    def _apply(self, kind: str, p: dict[str, Any]) -> bool:
        kafka = self.kafka
        if kind == "move_leader":
            kafka.move_leader(TOPIC, p["partition"])
        elif kind == "broker_down":
            kafka.broker_down(p["broker"])
        elif kind == "broker_up":
            kafka.broker_up(p["broker"])
        elif kind == "move_coordinator":
            kafka.move_coordinator(p["key"])
        elif kind == "lost_ack":
            kafka.faults.add(api=p["api"], apply_then=True, drop=True)
        elif kind in ("delay", "throttle", "error"):
            kafka.faults.add(**p)
        elif kind == "abort_transaction":
            kafka.abort_transaction(p["transactional_id"])
        else:
            return self._apply_to_member(kind, p["group"], p["index"])
        return True

    def _apply_to_member(self, kind: str, group: str, index: int) -> bool:
        alive = [m for m in self.members[group] if not m.leaving.is_set()]
        if kind == "member_join":
            if len(alive) >= MAX_MEMBERS:
                return False
            self.join(group)
            return True
        if kind == "member_leave":
            if len(alive) <= 1:
                return False
            alive[index % len(alive)].leaving.set()
            return True
        member = alive[index % len(alive)] if alive else None
        if member is None or member.member_id is None:
            return False
        self.kafka.kick_member(group, member.member_id)
        return True

    # -- the end --------------------------------------------------------------------------

    def quiesce(self, down: set[int]) -> None:
        """Clear every rule and bring every broker back up."""
        self.kafka.faults.clear()
        for broker in sorted(down):
            self.kafka.broker_up(broker)

    def finish(self, timeout: float) -> None:
        """Producers flush and end their transactions, members leave, the last reader reads
        every partition to its last stable offset, the log is read back."""
        deadline = time.monotonic() + timeout
        self.stop_producing.set()
        for members in self.members.values():
            for member in members:
                member.leaving.set()
        threads = self.threads + [m.thread for ms in self.members.values() for m in ms]
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                self.stats.add("counts", f"still_running:{thread.name}")
        self._read_all(timeout)
        for partition in range(self.shape.partitions):
            for r in self.kafka.records(TOPIC, partition):
                self.history.stored.append(Stored(partition, r.offset, r.value.decode(),
                                                  r.transaction))

    def _read_all(self, timeout: float) -> None:
        from confluent_kafka import Consumer, TopicPartition

        ends = {p: self.kafka.offsets(TOPIC, p).last_stable_offset
                for p in range(self.shape.partitions)}
        consumer = Consumer(self.config("final-reader", **{
            "group.id": "soak-final-reader", "isolation.level": "read_committed",
            "enable.auto.commit": False}))
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in ends])
        position = dict.fromkeys(ends, 0)
        deadline = time.monotonic() + timeout
        while any(position[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                for tp in consumer.position([TopicPartition(TOPIC, p) for p in ends]):
                    position[tp.partition] = max(position[tp.partition], tp.offset)
            elif msg.error() is None:
                self.history.reads.append(Read("final-reader", msg.partition(), msg.offset(),
                                               msg.value().decode()))
                position[msg.partition()] = msg.offset() + 1
                self.stats.add("counts", "final_read")
        consumer.close()
        if any(position[p] < ends[p] for p in ends):
            self.stats.add("counts", "final_read_incomplete")


class Member:
    """One consumer group member on its own thread, until ``leaving`` is set."""

    def __init__(self, run: Run, group: str, name: str):
        self.run, self.group, self.name = run, group, name
        self.protocol = "consumer" if group.endswith("848") else "classic"
        self.leaving = threading.Event()
        self.member_id: str | None = None
        self.owned: dict[int, int] = {}  # partition -> number of this ownership of it
        self.ownerships = 0
        self.position: dict[int, int] = {}  # partition -> the offset after the last read
        self.thread = threading.Thread(target=self._run, name=f"soak-{name}", daemon=True)

    def _run(self) -> None:
        from confluent_kafka import Consumer

        settings: dict[str, Any] = {"group.id": self.group, "group.protocol": self.protocol,
                                    "isolation.level": "read_committed",
                                    "enable.auto.commit": False,
                                    "auto.offset.reset": "earliest"}
        if self.protocol == "classic":
            settings |= {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
        consumer = Consumer(self.run.config(self.name, **settings))
        consumer.subscribe([TOPIC], on_assign=self._assigned, on_revoke=self._revoked,
                           on_lost=self._lost)
        last_commit = time.monotonic()
        while not self.leaving.is_set():
            self._poll(consumer)
            self.member_id = consumer.memberid() or None
            if time.monotonic() - last_commit > COMMIT_EVERY:
                self._commit(consumer, list(self.owned))
                last_commit = time.monotonic()
        # Leave by unsubscribing and serving the revocation from poll(), not from close():
        # librdkafka's rd_kafka_rebalance_protocol(), which confluent-kafka's rebalance
        # callback calls holding the GIL, can hang when called from a rebalance callback
        # during close (librdkafka issue #4041), and the whole process with it.
        consumer.unsubscribe()
        deadline = time.monotonic() + LEAVE_SECONDS
        while self.owned and time.monotonic() < deadline:
            self._poll(consumer)
        consumer.close()

    def _poll(self, consumer: Any) -> None:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None and msg.partition() in self.owned:
            self.run.history.reads.append(Read(self.name, msg.partition(), msg.offset(),
                                               msg.value().decode()))
            self.position[msg.partition()] = msg.offset() + 1
            self.run.stats.add("counts", "consumed")

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        for tp in partitions:
            self.ownerships += 1
            self.owned[tp.partition] = self.ownerships
            self.position.pop(tp.partition, None)

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        self._commit(consumer, [tp.partition for tp in partitions])
        self._lost(consumer, partitions)

    def _lost(self, consumer: Any, partitions: list[Any]) -> None:
        for tp in partitions:
            self.owned.pop(tp.partition, None)
            self.position.pop(tp.partition, None)

    def _commit(self, consumer: Any, partitions: list[int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        offsets = [TopicPartition(TOPIC, p, self.position[p]) for p in partitions
                   if p in self.owned and p in self.position]
        if not offsets:
            return
        stats = self.run.stats
        try:
            answered = consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            stats.add("counts", f"commit_failed:{exc.args[0].name()}")
            return
        for tp in answered or []:
            if tp.error is None and tp.partition in self.owned:
                self.run.history.commits.append(Commit(self.group, self.name,
                                                       self.owned[tp.partition],
                                                       tp.partition, tp.offset))
                stats.add("counts", "commits")


def _retrying(end: Callable[[float], None]) -> None:
    """``commit_transaction`` or ``abort_transaction``, again while its error is retriable
    (librdkafka: the call may be repeated until it succeeds)."""
    from confluent_kafka import KafkaException

    while True:
        try:
            end(30)
            return
        except KafkaException as exc:
            if not exc.args[0].retriable():
                raise
