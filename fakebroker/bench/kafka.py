"""Apache Kafka 4.4.0 as a single-node KRaft broker (broker and controller in one JVM): the
benchmark's ``kafka`` peers and the tests' oracle (tests/real_kafka.py reuses this launcher).

It lives in the package, not in ``tests/``, because ``python -m fakebroker.bench`` runs from an
installed wheel too, which holds ``fakebroker`` only. Nothing here imports pytest.

The jars come from ``.ci/install-kafka`` (called by ``.ci/install-clients``), in a cache
folder outside the repo: ``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/kafka-4.4.0/``.

    from fakebroker.bench.kafka import start_real_kafka
    with start_real_kafka(tmp_dir) as kafka:
        ...  # kafka.bootstrap_servers, kafka.startup_seconds, kafka.tmp_dir

Each start formats a new log directory (``kafka.tools.StorageTool format --standalone``) in
``tmp_dir/run-<attempt>/`` (``RealKafka.tmp_dir``) and runs ``kafka.Kafka server.properties``
there; ports are picked by the OS (bind port 0, close, hand the number to Kafka: a start that
loses that race is retried on new ports). The broker's log (WARN and up, plus its "started"
line) is ``RealKafka.log_file``; a failed start's error ends with its last 40 lines.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from fakebroker.state.kafka_ids import kafka_uuid_text

KAFKA_VERSION = "4.4.0"
INSTALL_HINT = (
    "run `bash .ci/install-clients` (or just `bash .ci/install-kafka`: Apache Kafka "
    f"{KAFKA_VERSION} from Maven Central, in a cache folder outside the repo)"
)

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

# Every setting the tests rely on; everything else is Kafka's default. The rebalance delay of
# 0 is the tests' choice (Kafka's default is 3000 ms): the benchmark's ``kafka`` peer puts
# Kafka's default back, its ``kafka-nodelay`` peer keeps 0.
BASE_PROPERTIES: dict[str, str] = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
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


class RealKafkaError(RuntimeError):
    """The broker did not start (or format); the message ends with its log's last lines."""


class _PortTaken(RealKafkaError):
    """Another server answers on the port picked for the broker."""


class RealKafkaMissing(RuntimeError):
    """The Kafka broker jars or the JDK are not installed."""


def clients_dir() -> Path:
    default = Path.home() / ".cache" / "fakebroker-clients"
    return Path(os.environ.get("FAKEBROKER_CLIENTS_DIR") or default)


def kafka_dir(version: str = KAFKA_VERSION) -> Path:
    """Where ``.ci/install-kafka`` puts the broker of ``version`` (4.4.0, or 3.9.1)."""
    return clients_dir() / f"kafka-{version}"


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise RealKafkaMissing(f"`java` not found (no JDK): {INSTALL_HINT}")
    return found


def kafka_jars(version: str = KAFKA_VERSION) -> list[Path]:
    """The broker's jars (sorted: a CDS archive needs the same class path every time)."""
    d = kafka_dir(version)
    jars = sorted(d.glob("*.jar"))
    if not (d / ".stamp").is_file() or not any(
        j.name == f"kafka_2.13-{version}.jar" for j in jars
    ):
        raise RealKafkaMissing(f"Apache Kafka {version} is not installed in {d}: "
                               f"{INSTALL_HINT}")
    return jars


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
    bootstrap_servers: str
    controller: str
    cluster_id: str
    tmp_dir: Path
    log_file: Path
    startup_seconds: float  # from the broker's JVM start to its answer to a Metadata request
    format_seconds: float  # the StorageTool run before that
    process: subprocess.Popen = field(repr=False)
    jvm_flags: tuple[str, ...] = ()
    # listener name -> "host:port", PLAINTEXT's (``bootstrap_servers``) and every extra one's
    listeners: dict[str, str] = field(default_factory=dict)
    _cds: _Cds | None = field(default=None, repr=False)

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_file, lines)

    def stop(self, timeout: float = 20) -> int | None:
        """SIGTERM (controlled shutdown), then SIGKILL after ``timeout`` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
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


class _Cds:
    """The broker's class-data-sharing archive (JDK 13+ dynamic archive of the classes a run
    loaded): later JVMs map those classes instead of loading them, which shortens start-up.
    If there is none, the first start writes one when its JVM exits (one writer at a time, a
    file lock held while it runs); a new install or JDK gets a new archive (the name holds a
    hash of the class path, the jars' sizes and times, and the java binary)."""

    def __init__(self, jars: Sequence[Path], java: str) -> None:
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
        base = jars[0].parent / "cds"  # beside the jars: one archive folder per release
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


def start_real_kafka(
    tmp_dir: Path,
    *,
    timeout: float = 90,
    overrides: Mapping[str, str] | None = None,
    jvm_flags: Sequence[str] = JVM_FLAGS,
    attempts: int = 3,
    listeners: Sequence[str] = (),
    format_args: Sequence[str] = (),
    version: str = KAFKA_VERSION,
) -> RealKafka:
    """Format and start a single-node KRaft broker in ``tmp_dir``; returns once it answers
    an ApiVersions request and lists itself in a Metadata response (confluent-kafka's
    AdminClient). Raises RealKafkaMissing (not installed) or RealKafkaError (with the log's
    last 40 lines). ``overrides``: extra/other server.properties entries.

    ``listeners``: listeners besides PLAINTEXT (which stays the inspection path and the
    inter-broker listener), each named as its security protocol (SSL, SASL_PLAINTEXT,
    SASL_SSL), on its own free port, advertised; ``RealKafka.listeners`` maps every listener
    to its address (their TLS and SASL settings come in ``overrides``). ``format_args``: extra
    ``StorageTool format`` arguments, e.g. ``--add-scram`` for SCRAM users. ``version``: the
    release to run, 4.4.0 or 3.9.1 (``.ci/install-kafka`` installs both).

    JVM_FLAGS won on the 2-core test machine (``python -m tests.real_kafka`` measures): the
    serial collector with C1 only used the least CPU to start (~1.5-2 s of CPU with the CDS
    archive) and started fastest next to busy CPUs; G1 and full tiered compilation cost more.
    """
    jars = kafka_jars(version)
    java = _java()
    classpath = os.pathsep.join(map(str, jars))
    extra = os.environ.get("FAKEBROKER_KAFKA_JVM_OPTS", "").split()
    tmp_dir.mkdir(parents=True, exist_ok=True)
    last_error = ""
    for attempt in range(1, attempts + 1):
        run_dir = tmp_dir / f"run-{attempt}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir()
        port, controller_port, *extra_ports = free_ports(2 + len(listeners))
        host = "127.0.0.1"
        addresses = {"PLAINTEXT": f"{host}:{port}",
                     **{name: f"{host}:{p}"
                        for name, p in zip(listeners, extra_ports, strict=True)}}
        advertised = ",".join(f"{name}://{address}" for name, address in addresses.items())
        props = {
            **BASE_PROPERTIES,
            "listeners": f"{advertised},CONTROLLER://{host}:{controller_port}",
            "advertised.listeners": advertised,
            "controller.quorum.bootstrap.servers": f"{host}:{controller_port}",
            "log.dirs": str(run_dir / "data"),
            **(overrides or {}),
        }
        if listeners:
            props["listener.security.protocol.map"] = ",".join(
                ["CONTROLLER:PLAINTEXT", *(f"{name}:{name}" for name in addresses)])
        config = run_dir / "server.properties"
        _write_properties(config, props)
        log_file = run_dir / "kafka.log"
        cluster_id = kafka_uuid_text()

        cds = _Cds(jars, java)
        started = time.monotonic()
        fmt = subprocess.run(
            [java, *jvm_flags, *JVM_LOG_FLAGS, *LOG_FLAGS, *cds.reading_flags(), *extra,
             "-cp", classpath, "kafka.tools.StorageTool", "format", "--standalone",
             "-t", cluster_id, "-c", str(config), *format_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
        format_seconds = time.monotonic() - started
        (run_dir / "format.log").write_bytes(fmt.stdout)
        if fmt.returncode != 0:
            cds.finish(keep=False)
            raise RealKafkaError(
                f"kafka.tools.StorageTool format failed (exit {fmt.returncode}) in {run_dir}:\n"
                + tail(run_dir / "format.log"))

        cmd = [java, *jvm_flags, *JVM_LOG_FLAGS, *LOG_FLAGS, *cds.flags, *extra,
               "-cp", classpath, "kafka.Kafka", str(config)]
        with open(log_file, "wb") as out:
            started = time.monotonic()
            process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, cwd=run_dir,
                                       preexec_fn=_die_with_parent)
        kafka = RealKafka(
            bootstrap_servers=f"{host}:{port}",
            controller=f"{host}:{controller_port}",
            cluster_id=cluster_id,
            tmp_dir=run_dir,
            log_file=log_file,
            startup_seconds=0.0,
            format_seconds=format_seconds,
            process=process,
            jvm_flags=tuple(cmd[1:cmd.index("-cp")]),
            listeners=addresses,
            _cds=cds,
        )
        try:
            _wait_ready(kafka, host, port, started + timeout)
        except RealKafkaError as exc:
            kafka.process.kill()  # no archive from a failed start
            kafka.process.wait()
            cds.finish(keep=False)
            last_error = str(exc)
            lost_port = isinstance(exc, _PortTaken) or _bind_race(kafka.log_tail(200))
            if lost_port and attempt < attempts:
                continue  # someone took a port between free_ports() and Kafka's bind
            raise
        kafka.startup_seconds = time.monotonic() - started
        return kafka
    raise RealKafkaError(last_error)  # pragma: no cover - the loop returns or raises


def _wait_ready(kafka: RealKafka, host: str, port: int, deadline: float) -> None:
    while not api_versions_answered(host, port):
        if kafka.process.poll() is not None:
            raise RealKafkaError(
                f"Kafka exited with {kafka.process.returncode} before answering on "
                f"{host}:{port}; last lines of {kafka.log_file}:\n{kafka.log_tail()}")
        if time.monotonic() > deadline:
            raise RealKafkaError(
                f"Kafka did not answer ApiVersions on {host}:{port} in time; last lines of "
                f"{kafka.log_file}:\n{kafka.log_tail()}")
        time.sleep(0.05)
    # Answering ApiVersions is not yet being in the cluster's metadata (unfenced).
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers, "log_level": 3})
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RealKafkaError(
                f"Kafka answered ApiVersions but listed no broker in Metadata in time; last "
                f"lines of {kafka.log_file}:\n{kafka.log_tail()}")
        try:
            metadata = admin.list_topics(timeout=min(remaining, 5))
            if metadata.cluster_id != kafka.cluster_id:  # not our broker: it lost its port
                raise _PortTaken(
                    f"{kafka.bootstrap_servers} answers with cluster id {metadata.cluster_id}, "
                    f"not {kafka.cluster_id}: another server has the port; last lines of "
                    f"{kafka.log_file}:\n{kafka.log_tail()}")
            if metadata.brokers:
                return
        except RealKafkaError:
            raise
        except Exception:  # KafkaException: transport errors while it finishes starting
            if kafka.process.poll() is not None:
                raise RealKafkaError(
                    f"Kafka exited with {kafka.process.returncode}; last lines of "
                    f"{kafka.log_file}:\n{kafka.log_tail()}") from None
        time.sleep(0.05)
