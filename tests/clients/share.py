"""Run a real Kafka 4.4 ``KafkaShareConsumer`` (KIP-932): tests/java/ShareConsume.java.

Compiled against the kafka-clients 4.4.0 jars ``.ci/install-kafka`` installs, as the harness
is (tests/clients/java.py ``compile_java``: once per hash of the source, the jars and the
JDK), into ``java-4.4.0/share/<key>/shareconsume.jar``.

    from tests.clients.share import start_share_consumer
    with start_share_consumer(addr, topic="t", group="g", mode="explicit",
                              release=["v1"]) as member:
        member.wait_for({"value": "v1", "deliveryCount": 2}, timeout=30)
        member.stop()  # close(), then {"done": records received}

See the top of tests/java/ShareConsume.java for its options and output lines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tests.clients.java import (
    JVM_FLAGS,
    JVM_LOG_FLAGS,
    _compile_lock,
    _jars,
    _java_tool,
    compile_java,
    java_available,
    java_dir,
)
from tests.clients.process import GroupMember

CLIENT_VERSION = "4.4.0"
SHARE_CONSUME_SOURCE = Path(__file__).resolve().parents[1] / "java" / "ShareConsume.java"


def share_consumer_available() -> bool:
    """True when the kafka-clients 4.4.0 jars and a JDK are there."""
    return java_available(CLIENT_VERSION)


def start_share_consumer(
    bootstrap: str, *, topic: str, group: str, mode: str = "implicit",
    release: Sequence[str] = (), reject: Sequence[str] = (), hold: Sequence[str] = (),
    props: Sequence[str] = (),
) -> GroupMember:
    """Start one share consumer (module docstring) in the background; returns its handle
    (tests/clients/process.py): wait_for(...), records(), stop(), kill()."""
    jars = _jars(CLIENT_VERSION)
    with _compile_lock:
        jar = compile_java(SHARE_CONSUME_SOURCE, jars, java_dir(CLIENT_VERSION) / "share")
    cmd = [_java_tool("java"), *JVM_FLAGS, *JVM_LOG_FLAGS,
           *os.environ.get("FAKEBROKER_JAVA_OPTS", "").split(),
           "-cp", os.pathsep.join([*map(str, jars), str(jar)]), "ShareConsume",
           "--bootstrap", bootstrap, "--topic", topic, "--group", group, "--mode", mode]
    for option, values in (("--release", release), ("--reject", reject), ("--hold", hold)):
        if values:
            cmd += [option, ",".join(values)]
    return GroupMember([*cmd, *props], name=f"KafkaShareConsumer {group}")
