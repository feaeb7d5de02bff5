"""Apache Kafka as KRaft nodes, each broker and controller in one JVM: one node (the tests'
oracle, the benchmark's ``kafka`` peers), or a cluster of N (``fakebroker kafka serve --nodes
N``, the pytest plugin's ``--kafka-nodes N``). Nothing here imports pytest or a Kafka client
library: readiness is checked on the wire (``fakebroker.wire_client``).

The jars are ``fakebroker kafka install``'s (``fakebroker.real.install``), in a cache folder
outside the repo: ``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/kafka-VERSION/``.

    from fakebroker.real.launch import start_kafka_cluster, start_real_kafka
    with start_real_kafka(tmp_dir) as kafka:             # one node
        ...  # kafka.bootstrap_servers, kafka.startup_seconds, kafka.tmp_dir
    with start_kafka_cluster(tmp_dir, nodes=3) as cluster:
        ...  # cluster.bootstrap_servers, cluster.nodes[i].stop()

Each start formats new log directories (``kafka.tools.StorageTool format``: ``--standalone``
for one node, else ``--initial-controllers`` naming every node, so the quorum is dynamic either
way) in ``tmp_dir/run-<attempt>/`` (a cluster's node N in ``node-N/`` below it) and runs
``kafka.Kafka server.properties`` there; ports are picked by the OS (bind port 0, close, hand
the number to Kafka: a start that loses that race is retried on new ports). A node's log
(WARN and up, plus its "started" line) is ``RealKafka.log_file``; a failed start's error ends
with its last 40 lines.

The JVM options are ``JVM_FLAGS`` (measured: see ``start_real_kafka``), plus a dynamic
class-data-sharing archive of the broker's classes, made by the first start after an
install (``FAKEBROKER_KAFKA_CDS=0``: none) and ``FAKEBROKER_KAFKA_JVM_OPTS`` (split on spaces).
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from fakebroker.real.install import (
    DEFAULT_VERSION,
    INSTALL_HINT,
    clients_dir,
    installed,
    kafka_dir,
)
from fakebroker.state.kafka_ids import kafka_uuid_text

__all__ = [
    "INSTALL_HINT", "JVM_FLAGS", "KAFKA_VERSION", "KafkaCluster", "RealKafka", "RealKafkaError",
    "RealKafkaMissing", "check_installed", "clients_dir", "kafka_available", "kafka_dir",
    "kafka_jars", "start_kafka_cluster", "start_real_kafka",
]

KAFKA_VERSION = DEFAULT_VERSION  # the oracle's: what the tests compare the fake with

# Measured on a 2-core machine (see the docstring of start_real_kafka): the serial collector and
# C1 only start the broker fastest, alone and next to busy CPUs; 1 GiB is Kafka's own default.
JVM_FLAGS: tuple[str, ...] = (
    "-Xms256m",
    "-Xmx1g",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xshare:auto",
    "-Djava.awt.headless=true",
)
# JVM warnings (e.g. about the CDS archive) to the log file's stream, never as errors.
JVM_LOG_FLAGS: tuple[str, ...] = ("-Xlog:disable", "-Xlog:all=warning:stderr")
# slf4j-simple: WARN and up, timestamps, plus the one INFO line that says the broker started.
LOG_FLAGS: tuple[str, ...] = (
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
    "-Dorg.slf4j.simpleLogger.log.kafka.server.KafkaRaftServer=info",
)

# Every setting the tests rely on; everything else is Kafka's default (and replication's:
# ``replication_properties``). The rebalance delay of 0 is the tests' choice (Kafka's default is
# 3000 ms): the benchmark's ``kafka`` peer puts Kafka's default back, its ``kafka-nodelay`` peer
# keeps 0.
BASE_PROPERTIES: dict[str, str] = {
    "process.roles": "broker,controller",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    # Time retention is never checked during a run: tests write records stamped 2023 (fixed
    # timestamps they assert), which Kafka's 7-day retention deletes at its checks (the first
    # 30 s after start, log.initial.task.delay.ms, then every 5 minutes), so a test running
    # then read its records and found the log empty afterwards (seen in CI; reproduced: five
    # such records gone 45 s after start). The fake deletes nothing by time; topic configs
    # (retention.ms) keep Kafka's defaults, so DescribeConfigs still answers them.
    "log.initial.task.delay.ms": str(24 * 3600 * 1000),
    "log.retention.check.interval.ms": str(24 * 3600 * 1000),
}


def replication_properties(nodes: int) -> dict[str, str]:
    """Replication for a cluster of ``nodes``: every internal topic on all of them, its
    minimum in-sync replicas 2 (1 on a single node), so a cluster of 3 keeps accepting
    ``acks=all`` with one node down; from 2 nodes, new topics get the same replication factor
    and minimum ISR by default (on one node Kafka's defaults stand: a config set in
    server.properties would be described as STATIC_BROKER_CONFIG)."""
    factor, isr = str(nodes), str(min(2, nodes))
    found = {
        "offsets.topic.replication.factor": factor,
        "transaction.state.log.replication.factor": factor,
        "transaction.state.log.min.isr": isr,
        "share.coordinator.state.topic.replication.factor": factor,
        "share.coordinator.state.topic.min.isr": isr,
    }
    if nodes > 1:
        found |= {"default.replication.factor": factor, "min.insync.replicas": isr}
    return found


class RealKafkaError(RuntimeError):
    """The broker did not start (or format); the message ends with its log's last lines."""


class _PortTaken(RealKafkaError):
    """Another server answers on a port picked for the broker."""


class RealKafkaMissing(RuntimeError):
    """The Kafka broker jars or the JDK are not installed."""


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise RealKafkaMissing("`java` not found: Apache Kafka needs a JDK (17 or newer)")
    return found


def kafka_jars(version: str = KAFKA_VERSION) -> list[Path]:
    """The broker's jars (sorted: a CDS archive needs the same class path every time)."""
    if not installed(version):
        raise RealKafkaMissing(f"Apache Kafka {version} is not installed in "
                               f"{kafka_dir(version)}: {INSTALL_HINT}")
    return sorted(kafka_dir(version).glob("*.jar"))


def check_installed(version: str = KAFKA_VERSION) -> None:
    """Raise RealKafkaMissing, saying what is missing, unless the broker's jars and a JDK are
    there."""
    kafka_jars(version)
    _java()


def kafka_available(version: str = KAFKA_VERSION) -> bool:
    try:
        check_installed(version)
    except RealKafkaMissing:
        return False
    return True


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Ports the OS picks (bound together, so all different), closed again for Kafka to take."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def api_versions_answered(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when ``host:port`` answers an ApiVersions v0 request without an error."""
    request = struct.pack(">hhih", 18, 0, 7, 6) + b"oracle"
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(struct.pack(">i", len(request)) + request)
            head = b""
            while len(head) < 10:  # size, correlation id, error code
                chunk = s.recv(10 - len(head))
                if not chunk:
                    return False
                head += chunk
    except OSError:
        return False
    _, correlation_id, error_code = struct.unpack(">iih", head)
    return correlation_id == 7 and error_code == 0


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log: {path})"
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class RealKafka:
    """One node (JVM) of a KRaft cluster: broker and controller."""

    bootstrap_servers: str  # this node's PLAINTEXT listener
    controller: str
    cluster_id: str
    tmp_dir: Path
    log_file: Path
    startup_seconds: float  # from the JVM's start to the cluster's answer to Metadata
    format_seconds: float  # the StorageTool run before that
    process: subprocess.Popen = field(repr=False)
    jvm_flags: tuple[str, ...] = ()
    # listener name -> "host:port", PLAINTEXT's (``bootstrap_servers``) and every extra one's
    listeners: dict[str, str] = field(default_factory=dict)
    node_id: int = 1
    command: tuple[str, ...] = field(default=(), repr=False)  # the JVM's, to start it again
    _cds: _Cds | None = field(default=None, repr=False)

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_file, lines)

    def signal_stop(self) -> None:
        """Ask the node to stop (SIGTERM: a controlled shutdown) without waiting."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 20) -> int | None:
        """SIGTERM (controlled shutdown), then SIGKILL after ``timeout`` seconds."""
        self.signal_stop()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._cds is not None:  # a JVM that shut down normally wrote its archive
            self._cds.finish(keep=self.process.returncode in (0, 143))
            self._cds = None
        return self.process.returncode

    def __enter__(self) -> RealKafka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class KafkaCluster:
    """The nodes of one KRaft cluster (node ids 1..N), each broker and controller."""

    nodes: list[RealKafka]
    cluster_id: str
    tmp_dir: Path
    version: str
    startup_seconds: float  # from the first JVM's start to Metadata listing every broker

    @property
    def bootstrap_servers(self) -> str:
        """Every node's PLAINTEXT listener."""
        return ",".join(node.bootstrap_servers for node in self.nodes)

    def start_again(self, node: RealKafka, timeout: float = 90) -> None:
        """Start a stopped node again, on its folder, config and ports as before (its log
        appended to); returns once it answers and its Metadata lists every broker."""
        if node.process.poll() is None:
            raise RuntimeError(f"Kafka node {node.node_id} is running")
        command = [f for f in node.command if not f.startswith("-XX:ArchiveClassesAtExit=")]
        with open(node.log_file, "ab") as out:
            node.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=node.tmp_dir,
                                            preexec_fn=_die_with_parent)
        _wait_ready(self, time.monotonic() + timeout, [node])

    def stop(self, timeout: float = 30) -> list[int | None]:
        """Stop every node (SIGTERM to all at once, each then waited for as
        ``RealKafka.stop``); their exit codes."""
        for node in self.nodes:
            node.signal_stop()
        return [node.stop(timeout) for node in self.nodes]

    def __enter__(self) -> KafkaCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Cds:
    """The broker's class-data-sharing archive (JDK 13+ dynamic archive of the classes a run
    loaded): later JVMs map those classes instead of loading them, which shortens start-up.
    If there is none, the first start writes one when its JVM exits (one writer at a time, a
    file lock held while it runs); a new install or JDK gets a new archive (the name holds a
    hash of the class path, the jars' sizes and times, and the java binary)."""

    def __init__(self, jars: Sequence[Path], java: str, version: str) -> None:
        self.flags: list[str] = []
        self.writing: Path | None = None
        self._lock: IO[str] | None = None
        if os.environ.get("FAKEBROKER_KAFKA_CDS", "1") == "0":
            return
        h = hashlib.sha256()
        for j in jars:
            st = j.stat()
            h.update(f"{j}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        real_java = Path(java).resolve()
        h.update(f"{real_java}:{real_java.stat().st_mtime_ns}".encode())
        base = kafka_dir(version) / "cds"
        self.archive = base / f"broker-{h.hexdigest()[:16]}.jsa"
        if self.archive.is_file():
            self.flags = [f"-XX:SharedArchiveFile={self.archive}"]
            return
        try:
            base.mkdir(exist_ok=True)
            lock = open(base / ".lock", "w")  # noqa: SIM115 - held while the broker runs
        except OSError:
            return
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another session's broker is writing it
            lock.close()
            return
        self._lock = lock
        self.writing = self.archive.with_name(f".{self.archive.name}.{os.getpid()}")
        self.flags = [f"-XX:ArchiveClassesAtExit={self.writing}"]

    def reading_flags(self) -> list[str]:
        """For the format run: the archive if there is one (never write one)."""
        return self.flags if self.writing is None else []

    def finish(self, keep: bool) -> None:
        """After the broker's JVM exited: put the written archive in place (if ``keep``)."""
        if self.writing is None:
            return
        try:
            if keep and self.writing.is_file() and self.writing.stat().st_size > 0:
                os.replace(self.writing, self.archive)
            self.writing.unlink(missing_ok=True)
        finally:
            self.writing = None
            if self._lock is not None:
                self._lock.close()
                self._lock = None


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (a killed
    pytest leaves no broker behind). Linux only; elsewhere a no-op."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _write_properties(path: Path, props: Mapping[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def _bind_race(log: str) -> bool:
    return "Address already in use" in log or "BindException" in log


def start_real_kafka(tmp_dir: Path, *, timeout: float = 90,
                     overrides: Mapping[str, str] | None = None,
                     jvm_flags: Sequence[str] = JVM_FLAGS, attempts: int = 3,
                     listeners: Sequence[str] = (), format_args: Sequence[str] = (),
                     version: str = KAFKA_VERSION) -> RealKafka:
    """Format and start a single-node KRaft broker in ``tmp_dir`` (``start_kafka_cluster``
    with one node: the node itself); returns once it answers an ApiVersions request and lists
    itself in a Metadata response.

    JVM_FLAGS won on the 2-core test machine (``python -m tests.real_kafka`` measures): the
    serial collector with C1 only used the least CPU to start (~1.5-2 s of CPU with the CDS
    archive) and started fastest next to busy CPUs; G1 and full tiered compilation cost more.
    """
    return start_kafka_cluster(tmp_dir, nodes=1, timeout=timeout, overrides=overrides,
                               jvm_flags=jvm_flags, attempts=attempts, listeners=listeners,
                               format_args=format_args, version=version).nodes[0]


@dataclass
class _Node:
    """A node's place before it starts: folder, config, ports."""

    node_id: int
    folder: Path
    port: int
    controller_port: int
    addresses: dict[str, str]
    directory_id: str = field(default_factory=kafka_uuid_text)


def start_kafka_cluster(
    tmp_dir: Path,
    *,
    nodes: int = 1,
    timeout: float = 90,
    overrides: Mapping[str, str] | None = None,
    jvm_flags: Sequence[str] = JVM_FLAGS,
    attempts: int = 3,
    listeners: Sequence[str] = (),
    format_args: Sequence[str] = (),
    version: str = KAFKA_VERSION,
) -> KafkaCluster:
    """Format and start a KRaft cluster of ``nodes`` nodes (ids 1..N, each broker and
    controller, all voters of the quorum, replication as ``replication_properties``) in
    ``tmp_dir``; returns once every node answers an ApiVersions request and Metadata lists
    every broker. Raises RealKafkaMissing (not installed) or RealKafkaError (with the failing
    node's last 40 log lines). ``overrides``: extra/other server.properties entries, on every
    node.

    ``listeners``: listeners besides PLAINTEXT (which stays the inspection path and the
    inter-broker listener), each named as its security protocol (SSL, SASL_PLAINTEXT,
    SASL_SSL), on its own free port, advertised; ``RealKafka.listeners`` maps every listener
    to its address (their TLS and SASL settings come in ``overrides``). ``format_args``: extra
    ``StorageTool format`` arguments, e.g. ``--add-scram`` for SCRAM users."""
    if nodes < 1:
        raise ValueError(f"a cluster has at least one node, not {nodes}")
    jars = kafka_jars(version)
    java = _java()
    classpath = os.pathsep.join(map(str, jars))
    extra = os.environ.get("FAKEBROKER_KAFKA_JVM_OPTS", "").split()
    host = "127.0.0.1"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    last_error = ""
    for attempt in range(1, attempts + 1):
        run_dir = tmp_dir / f"run-{attempt}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir()
        ports = iter(free_ports(nodes * (2 + len(listeners))))
        places = []
        for node_id in range(1, nodes + 1):
            port, controller_port = next(ports), next(ports)
            addresses = {"PLAINTEXT": f"{host}:{port}",
                         **{name: f"{host}:{next(ports)}" for name in listeners}}
            folder = run_dir if nodes == 1 else run_dir / f"node-{node_id}"
            folder.mkdir(exist_ok=True)
            places.append(_Node(node_id, folder, port, controller_port, addresses))
        quorum = ",".join(f"{host}:{n.controller_port}" for n in places)
        cluster_id = kafka_uuid_text()
        if nodes == 1:
            quorum_args = ["--standalone"]
        else:
            quorum_args = ["--initial-controllers", ",".join(
                f"{n.node_id}@{host}:{n.controller_port}:{n.directory_id}" for n in places)]
        for n in places:
            advertised = ",".join(f"{name}://{address}" for name, address in n.addresses.items())
            props = {
                **BASE_PROPERTIES,
                **replication_properties(nodes),
                "node.id": str(n.node_id),
                "listeners": f"{advertised},CONTROLLER://{host}:{n.controller_port}",
                "advertised.listeners": advertised,
                "controller.quorum.bootstrap.servers": quorum,
                "log.dirs": str(n.folder / "data"),
                **(overrides or {}),
            }
            if listeners:
                props["listener.security.protocol.map"] = ",".join(
                    ["CONTROLLER:PLAINTEXT", *(f"{name}:{name}" for name in n.addresses)])
            _write_properties(n.folder / "server.properties", props)

        cdses = [_Cds(jars, java, version) for _ in places]  # one writes, if any
        started = time.monotonic()
        formats = []  # every node's at once
        for n, cds in zip(places, cdses, strict=True):
            with open(n.folder / "format.log", "wb") as out:
                formats.append(subprocess.Popen(
                    [java, *jvm_flags, *JVM_LOG_FLAGS, *LOG_FLAGS, *cds.reading_flags(),
                     *extra, "-cp", classpath, "kafka.tools.StorageTool", "format",
                     *quorum_args, "-t", cluster_id, "-c", str(n.folder / "server.properties"),
                     *format_args],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent))
        try:
            codes = [f.wait(timeout=timeout) for f in formats]
        finally:
            for f in formats:
                if f.poll() is None:
                    f.kill()
                    f.wait()
        format_seconds = time.monotonic() - started
        failed = next((n for n, code in zip(places, codes, strict=True) if code != 0), None)
        if failed is not None:
            for cds in cdses:
                cds.finish(keep=False)
            raise RealKafkaError(
                f"kafka.tools.StorageTool format failed in {failed.folder}:\n"
                + tail(failed.folder / "format.log"))

        started = time.monotonic()
        running: list[RealKafka] = []
        for n, cds in zip(places, cdses, strict=True):
            cmd = [java, *jvm_flags, *JVM_LOG_FLAGS, *LOG_FLAGS, *cds.flags, *extra,
                   "-cp", classpath, "kafka.Kafka", str(n.folder / "server.properties")]
            log_file = n.folder / "kafka.log"
            with open(log_file, "wb") as out:
                process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=n.folder,
                                           preexec_fn=_die_with_parent)
            running.append(RealKafka(
                bootstrap_servers=n.addresses["PLAINTEXT"],
                controller=f"{host}:{n.controller_port}",
                cluster_id=cluster_id, tmp_dir=n.folder, log_file=log_file,
                startup_seconds=0.0, format_seconds=format_seconds, process=process,
                jvm_flags=tuple(cmd[1:cmd.index("-cp")]), listeners=n.addresses,
                node_id=n.node_id, command=tuple(cmd), _cds=cds))
        cluster = KafkaCluster(running, cluster_id, run_dir, version, 0.0)
        try:
            _wait_ready(cluster, started + timeout)
        except BaseException as exc:  # a failed start, or an interrupt: no node left running
            for node in running:  # no archive from a failed start
                node.process.kill()
                node.process.wait()
            for cds in cdses:
                cds.finish(keep=False)
            if not isinstance(exc, RealKafkaError):
                raise
            last_error = str(exc)
            lost_port = isinstance(exc, _PortTaken) or any(
                _bind_race(node.log_tail(200)) for node in running)
            if lost_port and attempt < attempts:
                continue  # someone took a port between free_ports() and Kafka's bind
            raise
        cluster.startup_seconds = time.monotonic() - started
        for node in running:
            node.startup_seconds = cluster.startup_seconds
        return cluster
    raise RealKafkaError(last_error)  # pragma: no cover - the loop returns or raises


def _exited(node: RealKafka) -> RealKafkaError:
    return RealKafkaError(f"Kafka node {node.node_id} exited with {node.process.returncode}; "
                          f"last lines of {node.log_file}:\n{node.log_tail()}")


def _metadata_brokers(node: RealKafka) -> tuple[str, int] | None:
    """The cluster id and broker count a node's Metadata answer names (None: no answer)."""
    from fakebroker.wire_client import WireClient

    try:
        with WireClient(node.bootstrap_servers, timeout=5, client_id="ready") as client:
            answer = client.request("Metadata", 12, {"topics": [],
                                                     "allow_auto_topic_creation": False})
    except (OSError, ConnectionError):
        return None
    return answer.cluster_id, len(answer.brokers)


def _wait_ready(cluster: KafkaCluster, deadline: float,
                nodes: Sequence[RealKafka] | None = None) -> None:
    """Until each of ``nodes`` (default: all) answers ApiVersions, then lists every broker of
    the cluster in its Metadata answer."""
    nodes = cluster.nodes if nodes is None else nodes
    for node in nodes:
        host, port = node.bootstrap_servers.rsplit(":", 1)
        _until(node, deadline, lambda h=host, p=int(port): api_versions_answered(h, p),
               f"Kafka node {node.node_id} did not answer ApiVersions on "
               f"{node.bootstrap_servers} in time")
    # Answering ApiVersions is not yet being in the cluster's metadata (unfenced).
    for node in nodes:
        _until(node, deadline, lambda n=node: _lists_every_broker(cluster, n),
               f"Kafka node {node.node_id} answered ApiVersions but its Metadata did not "
               f"list {len(cluster.nodes)} broker(s) in time")


def _lists_every_broker(cluster: KafkaCluster, node: RealKafka) -> bool:
    """Whether ``node``'s Metadata lists every broker of ``cluster``; ``_PortTaken`` when
    another cluster's server answers on its port."""
    found = _metadata_brokers(node)
    if found is not None and found[0] != cluster.cluster_id:  # it lost its port
        raise _PortTaken(
            f"{node.bootstrap_servers} answers with cluster id {found[0]}, not "
            f"{cluster.cluster_id}: another server has the port; last lines of "
            f"{node.log_file}:\n{node.log_tail()}")
    return found is not None and found[1] == len(cluster.nodes)


def _until(node: RealKafka, deadline: float, done: Callable[[], bool], late: str) -> None:
    """Poll ``done`` every 50 ms until it is true; ``RealKafkaError`` (``late`` and the node's
    last log lines) past ``deadline``, or the node's own exit error if its JVM ended."""
    while not done():
        if node.process.poll() is not None:
            raise _exited(node)
        if time.monotonic() > deadline:
            raise RealKafkaError(f"{late}; last lines of {node.log_file}:\n{node.log_tail()}")
        time.sleep(0.05)
