"""Run a real Kafka Streams application (kafka-streams 4.4.0): tests/java/WordCount.java.

The jars come from Maven Central through ``.ci/install-kafka``: kafka-streams 4.4.0 with its
runtime dependencies (the kafka-clients 4.4.0 it pulls, RocksDB's JNI library...) in
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/streams-4.4.0/``. WordCount.java is
compiled there, as the Java harness is (tests/clients/java.py ``compile_java``: once per hash
of the source, the jars and the JDK, reused across sessions), into
``streams-4.4.0/wordcount/<key>/wordcount.jar``.

    from tests.clients.streams import start_word_count
    with start_word_count(addr, app_id="wc", input="lines", output="counts",
                          state_dir=tmp_path / "state") as app:
        app.wait_for({"state": "RUNNING"}, timeout=60)
        ...
        app.stop()  # close(), {"done": lines seen}; app.kill() is a SIGKILL

See the top of tests/java/WordCount.java for the topology, its defaults (exactly_once_v2,
commit.interval.ms=100, no record cache) and its output lines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tests.clients.java import (
    INSTALL_HINT,
    JVM_FLAGS,
    JVM_LOG_FLAGS,
    JavaClientsMissing,
    _compile_lock,
    _java_tool,
    clients_dir,
    compile_java,
)
from tests.clients.process import GroupMember

STREAMS_VERSION = "4.4.0"
WORD_COUNT_SOURCE = Path(__file__).resolve().parents[1] / "java" / "WordCount.java"
# File-name prefixes of the jars .ci/install-kafka puts in <clients dir>/streams-<version>/.
REQUIRED_JARS: tuple[str, ...] = (
    f"kafka-streams-{STREAMS_VERSION}.jar",
    "kafka-clients-",
    "rocksdbjni-",
    "slf4j-api-",
    "slf4j-simple-",
)


def streams_dir() -> Path:
    """Where .ci/install-kafka puts kafka-streams and its dependencies."""
    return clients_dir() / f"streams-{STREAMS_VERSION}"


def streams_jars() -> list[Path]:
    """The kafka-streams jars (and slf4j binding); raises JavaClientsMissing."""
    folder = streams_dir()
    jars = sorted(folder.glob("*.jar"))
    missing = [p for p in REQUIRED_JARS if not any(j.name.startswith(p) for j in jars)]
    if missing or not (folder / ".stamp").is_file():
        what = ", ".join(missing) or "incomplete install"
        raise JavaClientsMissing(
            f"kafka-streams {STREAMS_VERSION} jars missing in {folder} ({what}): {INSTALL_HINT}")
    return jars


def streams_available() -> bool:
    """True when the kafka-streams jars and a JDK are there."""
    try:
        streams_jars()
        _java_tool("java")
        _java_tool("javac")
    except JavaClientsMissing:
        return False
    return True


def compile_word_count() -> Path:
    """tests/java/WordCount.java compiled against kafka-streams (once per source/jars/JDK)."""
    with _compile_lock:
        return compile_java(WORD_COUNT_SOURCE, streams_jars(), streams_dir() / "wordcount")


def start_word_count(
    bootstrap: str,
    *,
    app_id: str,
    input: str,
    output: str,
    state_dir: str | os.PathLike,
    delay_ms: int = 0,
    props: Sequence[str] = (),
    jvm_args: Sequence[str] = (),
) -> GroupMember:
    """Start the word-count application (application.id ``app_id``, reading ``input``,
    writing ``output``, its RocksDB state under ``state_dir``) in the background; ``props``:
    extra Streams/client configs as ``key=value``. Returns its handle (tests/clients/process.py):
    wait_for(...), stop() (a clean close), kill() (SIGKILL: a crash), lines()."""
    jar = compile_word_count()
    classpath = os.pathsep.join([*map(str, streams_jars()), str(jar)])
    cmd = [_java_tool("java"), *JVM_FLAGS, *JVM_LOG_FLAGS, *jvm_args,
           *os.environ.get("FAKEBROKER_JAVA_OPTS", "").split(),
           "-cp", classpath, "WordCount", "--bootstrap", bootstrap, "--app-id", app_id,
           "--input", input, "--output", output, "--state-dir", str(state_dir),
           "--delay-ms", str(delay_ms), *props]
    return GroupMember(cmd, name=f"kafka-streams {STREAMS_VERSION} WordCount {app_id}")
