"""Six real clients behind one small interface, for the security tests: a round trip (produce
``count`` records, read them back in a consumer group), one record produced where the broker
may refuse, and ACLs granted with the client's own admin API (CreateAcls).

    driver = DRIVERS["kafka-python"]
    values = driver.round_trip(who, "orders", "billing", 5)   # who: tests.security.Login
    try:
        driver.produce(who.but(password="wrong"), "orders")
    except Refused as refused:
        refused.name, refused.text  # the client's own name of the error, and what it said

``Refused.name`` is what the client calls the error: the Java exception's simple class name,
librdkafka's error code name (``_AUTHENTICATION``, ``TOPIC_AUTHORIZATION_FAILED``),
kafka-python's and aiokafka's exception class, kafkajs's broker error type where it reports
one (``UNSUPPORTED_SASL_MECHANISM``), else its error class. ``Refused.text`` holds the message
and its causes.

Where a client hides a connection's failure behind a bootstrap timeout, the driver reads the
exception the client logged for that connection: kafka-python 3.0.12 retries a failed
bootstrap connection until ``bootstrap_timeout_ms`` and raises ``KafkaTimeoutError``, logging
each failure ("Bootstrap connection to ... failed: <exception>", or "Connection failed:
<exception>", logger ``kafka.net.manager``); aiokafka 0.14
raises ``KafkaConnectionError("Unable to bootstrap ...")`` after logging ``Unable connect to
...: <exception>`` (logger ``aiokafka``). aiokafka has no ACL API: its driver grants with
confluent-kafka's AdminClient.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from tests.clients.java import HarnessError, run_harness
from tests.clients.kafkajs import KafkajsError, run_kafkajs
from tests.security import (
    Login,
    aiokafka_config,
    confluent_config,
    java_props,
    kafka_python_config,
    kafkajs_config,
)

TIMEOUT = 30.0  # a round trip's bound
REFUSAL_TIMEOUT = 10.0  # how long a client may take to report a refusal


class Refused(Exception):
    """The client refused to go on: ``name`` its name of the error, ``text`` what it said."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}")
        self.name, self.text = name, text


@dataclass(frozen=True)
class Grant:
    """ALLOW ``principal`` (from any host) to write, read and describe ``topic`` and to read
    as ``group``: what a consumer group member needs (Kafka's own quickstart grants)."""

    principal: str
    topic: str
    group: str


def values(count: int) -> list[str]:
    """The values a round trip sends: v0..v<count-1>."""
    return [f"v{i}" for i in range(count)]


class Driver(Protocol):
    """One client (see the module doc); ``name`` as test ids show it."""

    name: str

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        """Produce ``values(count)`` to ``topic`` (every ack awaited), then consume in group
        ``group`` from the earliest offset until ``count`` records came; the values consumed,
        in order of arrival (a record seen twice is there twice)."""
        ...

    def produce(self, who: Login, topic: str) -> None:
        """Produce one record and wait for its ack; ``Refused`` if the client gives up."""
        ...

    def grant(self, who: Login, grant: Grant) -> None:
        """Create ``grant``'s four ACLs as ``who`` (CreateAcls)."""
        ...


# -- the Java client (tests/java/Harness.java) -------------------------------------------------


class JavaDriver:
    def __init__(self, version: str) -> None:
        self.version = version
        self.name = f"java-{version}"

    def _run(self, subcommand: str, who: Login, *args: str, timeout: float) -> list[dict]:
        try:
            return run_harness(subcommand, "--bootstrap", who.bootstrap, *args,
                               "--timeout-ms", str(int(timeout * 1000)), *java_props(who),
                               client_version=self.version, timeout=timeout + 30)
        except HarnessError as failure:
            if failure.error_obj is None or failure.error == "IllegalArgumentException":
                raise
            error = failure.error_obj
            raise Refused(error["error"], "\n".join(
                [str(error.get("message")), *error.get("causes", [])])) from None

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        lines = self._run("round-trip", who, "--topic", topic, "--group", group,
                          "--count", str(count), timeout=TIMEOUT)
        return [line["value"] for line in lines if "value" in line]

    def produce(self, who: Login, topic: str) -> None:
        self._run("produce", who, "--topic", topic, "--count", "1", timeout=REFUSAL_TIMEOUT)

    def grant(self, who: Login, grant: Grant) -> None:
        self._run("admin-create-acls", who, "--principal", grant.principal,
                  "--topic", grant.topic, "--group", grant.group, timeout=TIMEOUT)


# -- confluent-kafka (librdkafka) ---------------------------------------------------------------


class ConfluentDriver:
    name = "confluent-kafka"

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        from confluent_kafka import Consumer, Producer

        errors: list = []
        config = {**confluent_config(who), "error_cb": errors.append}
        producer = Producer(config)
        delivered: list = []
        for value in values(count):
            producer.produce(topic, value.encode(),
                             on_delivery=lambda err, msg: delivered.append(err))
        assert producer.flush(TIMEOUT) == 0, f"records left unacknowledged; errors {errors}"
        assert delivered == [None] * count, f"delivery errors: {delivered}"

        consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        try:
            consumer.subscribe([topic])
            seen: list[str] = []
            deadline = time.monotonic() + TIMEOUT
            while len(seen) < count and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    continue
                assert message.error() is None, message.error()
                seen.append(message.value().decode())
            consumer.commit(asynchronous=False)
        finally:
            consumer.close()
        return seen

    def produce(self, who: Login, topic: str) -> None:
        from confluent_kafka import Producer

        errors: list = []
        delivered: list = []
        producer = Producer({**confluent_config(who), "error_cb": errors.append,
                             "message.timeout.ms": int(REFUSAL_TIMEOUT * 1000)})
        producer.produce(topic, b"v0", on_delivery=lambda err, msg: delivered.append(err))
        deadline = time.monotonic() + REFUSAL_TIMEOUT + 5
        while not delivered and not errors and time.monotonic() < deadline:
            producer.poll(0.05)
        refusal = errors[0] if errors else delivered[0] if delivered else None
        producer.purge()
        producer.flush(1)
        if refusal is not None:
            raise Refused(refusal.name(), refusal.str())
        assert delivered, "neither an ack nor an error in time"

    def grant(self, who: Login, grant: Grant) -> None:
        from confluent_kafka.admin import (
            AclBinding,
            AclOperation,
            AclPermissionType,
            AdminClient,
            ResourcePatternType,
            ResourceType,
        )

        def binding(kind: ResourceType, name: str, operation: AclOperation) -> AclBinding:
            return AclBinding(kind, name, ResourcePatternType.LITERAL, grant.principal, "*",
                              operation, AclPermissionType.ALLOW)

        acls = [binding(ResourceType.TOPIC, grant.topic, op)
                for op in (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)]
        acls.append(binding(ResourceType.GROUP, grant.group, AclOperation.READ))
        admin = AdminClient(confluent_config(who))
        for future in admin.create_acls(acls, request_timeout=TIMEOUT).values():
            future.result(timeout=TIMEOUT)


# -- kafka-python ---------------------------------------------------------------------------


class _LoggedFailures(logging.Handler):
    """Collects the exceptions a client logs for its failed connections (see the module doc):
    the first argument of the log record that is an exception."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failures: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        self.failures += [a for a in args if isinstance(a, BaseException)]


# What a client says of a connection that failed for no reason of its own: it was closed
# before the broker's answer was read, or an answer was awaited past the bootstrap deadline.
_UNTOLD = ("socket disconnected", "timed out", "Timeout")


def _most_telling(failures: list[BaseException]) -> BaseException | None:
    """The first logged failure that names its reason (kafka-python sometimes logs a retried
    connection as merely disconnected before one logs the broker's refusal), else the
    first; None if nothing was logged."""
    told = [f for f in failures if not any(word in str(f) for word in _UNTOLD)]
    return (told or failures or [None])[0]


@contextlib.contextmanager
def _refused_as_logged(logger: str, hidden: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Turns the client's exception into ``Refused``; a ``hidden`` one (a bootstrap timeout)
    into the first connection failure the client logged on ``logger`` meanwhile."""
    handler = _LoggedFailures()
    log = logging.getLogger(logger)
    log.addHandler(handler)
    try:
        yield
    except hidden as exc:
        cause = _most_telling(handler.failures) or exc
        raise Refused(type(cause).__name__, str(cause)) from exc
    except Exception as exc:
        if isinstance(exc, AssertionError):
            raise
        raise Refused(type(exc).__name__, str(exc)) from exc
    finally:
        log.removeHandler(handler)


class KafkaPythonDriver:
    name = "kafka-python"

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        from kafka import KafkaConsumer, KafkaProducer

        producer = KafkaProducer(**kafka_python_config(who))
        acks = [producer.send(topic, value.encode()) for value in values(count)]
        producer.flush(timeout=TIMEOUT)
        for ack in acks:
            ack.get(timeout=1)
        producer.close()

        consumer = KafkaConsumer(**kafka_python_config(who), group_id=group,
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        try:
            # Subscribe, then load the topic's metadata: one join (explanation/behaviour.md).
            consumer.subscribe([topic])
            consumer.partitions_for_topic(topic)
            seen: list[str] = []
            deadline = time.monotonic() + TIMEOUT
            while len(seen) < count and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    seen += [r.value.decode() for r in records]
            consumer.commit()
        finally:
            consumer.close()
        return seen

    def produce(self, who: Login, topic: str) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaTimeoutError

        timeout_ms = int(REFUSAL_TIMEOUT * 1000)
        with _refused_as_logged("kafka.net.manager", (KafkaTimeoutError,)):
            producer = KafkaProducer(**kafka_python_config(who), bootstrap_timeout_ms=3000,
                                     max_block_ms=timeout_ms)
            try:
                producer.send(topic, b"v0").get(timeout=REFUSAL_TIMEOUT)
            finally:
                producer.close(timeout=1)

    def grant(self, who: Login, grant: Grant) -> None:
        from kafka.admin import (
            ACL,
            ACLOperation,
            ACLPermissionType,
            KafkaAdminClient,
            ResourcePattern,
            ResourceType,
        )

        def acl(kind: ResourceType, name: str, operation: ACLOperation) -> ACL:
            return ACL(grant.principal, "*", operation, ACLPermissionType.ALLOW,
                       ResourcePattern(kind, name))

        acls = [acl(ResourceType.TOPIC, grant.topic, op)
                for op in (ACLOperation.WRITE, ACLOperation.READ, ACLOperation.DESCRIBE)]
        acls.append(acl(ResourceType.GROUP, grant.group, ACLOperation.READ))
        admin = KafkaAdminClient(**kafka_python_config(who))
        try:
            result = admin.create_acls(acls)
        finally:
            admin.close()
        assert not result["failed"], result["failed"]


# -- aiokafka -------------------------------------------------------------------------------


class AiokafkaDriver:
    name = "aiokafka"

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        return asyncio.run(asyncio.wait_for(self._round_trip(who, topic, group, count),
                                            TIMEOUT))

    @staticmethod
    async def _round_trip(who: Login, topic: str, group: str, count: int) -> list[str]:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        producer = AIOKafkaProducer(**aiokafka_config(who))
        await producer.start()
        try:
            acks = [await producer.send(topic, value.encode()) for value in values(count)]
            await asyncio.gather(*acks)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, **aiokafka_config(who), group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            seen: list[str] = []
            while len(seen) < count:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    seen += [r.value.decode() for r in records]
            await consumer.commit()
        finally:
            await consumer.stop()
        return seen

    def produce(self, who: Login, topic: str) -> None:
        from aiokafka.errors import KafkaConnectionError

        async def produce() -> None:
            from aiokafka import AIOKafkaProducer

            producer = AIOKafkaProducer(**aiokafka_config(who),
                                        request_timeout_ms=int(REFUSAL_TIMEOUT * 1000))
            try:
                await producer.start()
                await producer.send_and_wait(topic, b"v0")
            finally:
                await producer.stop()

        with _refused_as_logged("aiokafka", (KafkaConnectionError,)):
            asyncio.run(asyncio.wait_for(produce(), REFUSAL_TIMEOUT + 5))

    def grant(self, who: Login, grant: Grant) -> None:
        ConfluentDriver().grant(who, grant)  # aiokafka's admin client has no ACL API


# -- kafkajs (tests/node/secure_client.js) ----------------------------------------------------


class KafkajsDriver:
    name = "kafkajs"

    @staticmethod
    def _run(who: Login, timeout: float, retries: int = 5, **spec: object) -> list[dict]:
        client = {**kafkajs_config(who), "retries": retries, "timeoutMs": int(timeout * 1000)}
        try:
            return run_kafkajs({"client": client, **spec}, timeout=timeout + 30)
        except KafkajsError as failure:
            error = failure.error_obj
            if "type" not in error:  # not the client's refusal: the script failed
                raise
            name = error["type"] or (error["causes"][-1].split(":")[0] if error["causes"]
                                     else error["error"])
            raise Refused(name, "\n".join([str(error["message"]), *error["causes"]])) from None

    def round_trip(self, who: Login, topic: str, group: str, count: int) -> list[str]:
        lines = self._run(who, TIMEOUT, action="round-trip", topic=topic, group=group,
                          count=count)
        return [line["value"] for line in lines if "value" in line]

    def produce(self, who: Login, topic: str) -> None:
        self._run(who, REFUSAL_TIMEOUT, retries=0, action="produce", topic=topic)

    def grant(self, who: Login, grant: Grant) -> None:
        self._run(who, TIMEOUT, action="grant", principal=grant.principal, topic=grant.topic,
                  group=grant.group)


DRIVERS: dict[str, Driver] = {d.name: d for d in (
    JavaDriver("3.9.1"), JavaDriver("4.4.0"), ConfluentDriver(), KafkaPythonDriver(),
    AiokafkaDriver(), KafkajsDriver())}
