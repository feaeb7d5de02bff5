"""Run Apache Kafka's own command-line tools (kafka-tools 4.4.0) as a user types them.

The jars come from Maven Central through ``.ci/install-kafka`` into
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/tools-4.4.0/``. Each script of Kafka's
``bin/`` is a class of that jar (``TOOLS`` maps the script's name to it), run here in a JVM of
its own, bounded in time:

    from tests.clients.tools import run_tool
    result = run_tool("kafka-topics", "--bootstrap-server", addr, "--list")
    assert result.status == 0 and "t" in result.stdout.split()

Guarantees: ``run_tool`` returns once the JVM exited (its status, stdout and stderr as
text), raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the JVM killed), and
raises ``ToolsMissing`` when the jars or ``java`` are not there. Logging goes to stderr at
WARN, so stdout is what the user reads.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from tests.clients.java import JVM_FLAGS, JavaClientsMissing, _java_tool, clients_dir

TOOLS_VERSION = "4.4.0"

# The script a user types -> the class Kafka 4.4's bin/ script runs.
TOOLS: dict[str, str] = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
}


class ToolsMissing(JavaClientsMissing):
    """The kafka-tools jars (or a JDK) are not installed."""


@dataclass(frozen=True)
class ToolResult:
    """What the tool printed and how it exited."""

    status: int
    stdout: str
    stderr: str


def tools_classpath() -> str:
    """The kafka-tools jars and their dependencies as a class path; raises ToolsMissing."""
    folder = clients_dir() / f"tools-{TOOLS_VERSION}"
    jars = sorted(folder.glob("*.jar"))
    if not (folder / ".stamp").is_file() or not any(
            j.name == f"kafka-tools-{TOOLS_VERSION}.jar" for j in jars):
        raise ToolsMissing(f"kafka-tools {TOOLS_VERSION} jars missing in {folder}: run "
                           "`bash .ci/install-kafka`")
    return os.pathsep.join(str(j) for j in jars)


def tools_available() -> bool:
    """True when the jars and ``java`` are there (for pytest skip conditions)."""
    try:
        tools_classpath()
        _java_tool("java")
    except JavaClientsMissing:
        return False
    return True


def run_tool(tool: str, *args: str, stdin: str | None = None,
             timeout: float = 60.0) -> ToolResult:
    """Run ``tool`` (a key of TOOLS) with ``args``, feeding it ``stdin``; see the module doc."""
    command = [
        _java_tool("java"), *JVM_FLAGS, "-Xlog:disable", "-Xlog:all=warning:stderr",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", tools_classpath(),
        TOOLS[tool], *args,
    ]
    done = subprocess.run(command, input=stdin or "", capture_output=True, text=True,
                          timeout=timeout, check=False)
    return ToolResult(done.returncode, done.stdout, done.stderr)
