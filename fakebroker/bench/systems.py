"""The systems under test, each run as its own process on loopback.

Every system is started the same way for every workload: ``launch(name)`` starts its process,
waits until a TCP client can connect to it and returns a ``Running`` with its bootstrap
servers and pid (for psutil's RSS and CPU figures). ``Running.stop()`` sends SIGTERM, waits
(SIGKILL after 5 s) and returns how long the process took to exit. No process outlives the
``with`` block or the suite.

Systems: ``fakebroker`` (``python -m fakebroker serve``), ``tansu`` (in-memory storage),
``librdkafka-mock`` (``python -m fakebroker.bench.mock``), ``nafka`` (its own venv), ``kfake``
(franz-go's fake cluster, one broker: ``fakebroker/bench/kfake/main.go``), ``kafka``
and ``kafka-nodelay`` (Apache Kafka 4.4.0, ``fakebroker.real.launch``) and ``trio-echo``
(``python -m fakebroker.bench.echo``, not a Kafka broker: the latency floor). ``add_baseline``
adds ``fakebroker@REV``: the same command run from another git revision of this checkout, so
a change is measured before and after in one run.

The two Kafka systems are one single-node KRaft broker started as the project's tests start it
(``fakebroker.real.launch.start_real_kafka``: a fresh log directory formatted, then the broker's
JVM), differing in one setting: ``kafka`` has ``group.initial.rebalance.delay.ms`` at Kafka's
default, 3000 ms, ``kafka-nodelay`` at 0, as a test suite would set it. Kafka accepts TCP
connections well before it serves them, so its ``start_s`` runs from the format's start until
the broker lists itself in a Metadata answer; its stop is Kafka's controlled shutdown.
"""

from __future__ import annotations

import atexit
import compileall
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fakebroker
from fakebroker.bench import peers
from fakebroker.real import launch as kafka

HOST = "127.0.0.1"
BROKERS = ("fakebroker", "tansu", "librdkafka-mock", "nafka", "kfake", "kafka")
START_TIMEOUT_S = 30.0
KAFKA_START_TIMEOUT_S = 120.0  # a JVM broker next to busy CPUs
# The Kafka systems: their server.properties beside the launcher's BASE_PROPERTIES.
KAFKA_SYSTEMS: dict[str, dict[str, str]] = {
    "kafka": {"group.initial.rebalance.delay.ms": "3000"},  # Kafka's default
    "kafka-nodelay": {"group.initial.rebalance.delay.ms": "0"},
    "kafka-3nodes": {"group.initial.rebalance.delay.ms": "0"},
}
# Kafka systems of more than one node (a KRaft cluster, replication factor N: launch.py).
KAFKA_NODES: dict[str, int] = {"kafka-3nodes": 3}


def free_port() -> int:
    """A port the OS considers free right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def can_connect(host: str, port: int) -> bool:
    """Whether a TCP connection to ``host:port`` succeeds now."""
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def _fakebroker(port: int) -> list[str]:
    return [sys.executable, "-m", "fakebroker", "serve", "--port", str(port)]


def _tansu(port: int) -> list[str]:
    url = f"tcp://{HOST}:{port}"
    return [str(peers.tansu_binary()), "broker", "--storage-engine=memory://tansu/",
            f"--kafka-listener-url={url}", f"--kafka-advertised-listener-url={url}"]


def _nafka(port: int) -> list[str]:
    # Isolated (-I): nothing but nafka's own venv on its sys.path (not the driver's folder,
    # fakebroker/bench, nor the working directory).
    driver = Path(__file__).with_name("nafka_driver.py")
    return [str(peers.nafka_python()), "-I", str(driver), "serve", "--port", str(port)]


def _kfake(port: int) -> list[str]:
    return [str(peers.kfake_binary()), "-port", str(port)]


def _mock(_port: int) -> list[str]:
    return [sys.executable, "-m", "fakebroker.bench.mock"]


def _echo(port: int) -> list[str]:
    return [sys.executable, "-m", "fakebroker.bench.echo", "--port", str(port)]


# name -> (argv for a port, whether the process prints its bootstrap instead of taking a port)
COMMANDS: dict[str, tuple[Callable[[int], list[str]], bool]] = {
    "fakebroker": (_fakebroker, False),
    "tansu": (_tansu, False),
    "librdkafka-mock": (_mock, True),
    "nafka": (_nafka, False),
    "kfake": (_kfake, False),
    "trio-echo": (_echo, False),
}


@dataclass
class Running:
    """A started system process."""

    name: str
    bootstrap: str
    process: subprocess.Popen[bytes]
    start_s: float  # launch until a TCP client could connect

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> float:
        """Terminate the process and wait for it; seconds until it exited. Idempotent."""
        begin = time.perf_counter()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return time.perf_counter() - begin

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def prepare(name: str) -> None:
    """Install what ``name`` needs (peers download on first use; fakebroker's sources are
    compiled, ``compile_checkout``); PeerUnavailable if it can't."""
    if name == "fakebroker":
        compile_checkout()
        return
    if name in KAFKA_SYSTEMS:
        try:
            kafka.check_installed()
        except kafka.RealKafkaMissing as exc:
            raise peers.PeerUnavailable(str(exc)) from None
        return
    COMMANDS[name][0](0)


def compile_checkout() -> None:
    """Compile the running fakebroker's sources to bytecode (``__pycache__``, ignored by git),
    as ``pip install`` does: a checkout run with PYTHONDONTWRITEBYTECODE (this project's CI
    environment sets it) has none, so each ``fakebroker serve`` would compile every module it
    imports again (~60 ms of its start), where trio, installed, starts from bytecode."""
    compileall.compile_dir(Path(fakebroker.__file__).parent, quiet=1)


# system name -> the folder holding the fakebroker it runs (default: the one measuring)
SOURCES: dict[str, Path] = {}


def add_baseline(revision: str, root: Path | None = None) -> str:
    """Add ``fakebroker@REVISION``: ``revision`` of the git checkout ``root`` (default: the
    one this fakebroker runs from), exported (``git archive``) into a temporary folder removed
    at exit, run as the ``fakebroker`` system is. Returns its name; ``ValueError`` (one line)
    when ``root`` is not a git checkout or git does not know ``revision``."""
    root = root or Path(fakebroker.__file__).resolve().parents[1]
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", revision],
                            capture_output=True, text=True)
    if commit.returncode != 0:
        raise ValueError(f"--baseline {revision}: not a revision of a git checkout at {root}")
    name = f"fakebroker@{commit.stdout.strip()}"
    folder = Path(tempfile.mkdtemp(prefix="fakebroker-bench-baseline-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", revision],
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    # Compiled ahead, as pip compiles an installed wheel: no run pays for compiling sources.
    compileall.compile_dir(folder / "fakebroker", quiet=1)
    SOURCES[name] = folder
    COMMANDS[name] = COMMANDS["fakebroker"]
    return name


def child_env(name: str) -> dict[str, str]:
    """This environment with the fakebroker that ``name`` runs first on the import path."""
    env = dict(os.environ)
    root = str(SOURCES.get(name, Path(fakebroker.__file__).resolve().parents[1]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


@dataclass
class RunningKafka(Running):
    """A started Kafka system: its broker and the folder holding its log directory."""

    broker: kafka.RealKafka | kafka.KafkaCluster
    folder: Path
    format_s: float  # of start_s: formatting the log directory (a JVM of its own)

    def stop(self) -> float:
        """Kafka's controlled shutdown (SIGTERM; SIGKILL after 20 s), then its folder is
        removed; seconds until the JVM exited. Idempotent."""
        begin = time.perf_counter()
        self.broker.stop()
        elapsed = time.perf_counter() - begin
        shutil.rmtree(self.folder, ignore_errors=True)
        return elapsed


def launch_kafka(name: str) -> RunningKafka:
    """Format and start the Kafka system ``name``; returns once Metadata lists its brokers."""
    folder = Path(tempfile.mkdtemp(prefix=f"fakebroker-bench-{name}-"))
    nodes = KAFKA_NODES.get(name, 1)
    try:
        if nodes == 1:
            broker: kafka.RealKafka | kafka.KafkaCluster = kafka.start_real_kafka(
                folder, timeout=KAFKA_START_TIMEOUT_S, overrides=KAFKA_SYSTEMS[name])
            first, started = broker, broker.format_seconds + broker.startup_seconds
        else:
            broker = kafka.start_kafka_cluster(folder, nodes=nodes, timeout=KAFKA_START_TIMEOUT_S,
                                               overrides=KAFKA_SYSTEMS[name])
            first = broker.nodes[0]
            started = first.format_seconds + broker.startup_seconds
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return RunningKafka(name, broker.bootstrap_servers, first.process, started, broker, folder,
                        first.format_seconds)


def launch(name: str) -> Running:
    """Start system ``name`` and return once a client can connect to it (Kafka: once it
    lists itself in a Metadata answer)."""
    if name in KAFKA_SYSTEMS:
        return launch_kafka(name)
    command, prints_bootstrap = COMMANDS[name]
    port = 0 if prints_bootstrap else free_port()
    argv = command(port)
    begin = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE if prints_bootstrap else
        subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(name),
    )
    running = Running(name, f"{HOST}:{port}", process, 0.0)
    try:
        if prints_bootstrap:
            assert process.stdout is not None
            running.bootstrap = process.stdout.readline().decode().strip()
            if not running.bootstrap:
                raise RuntimeError(f"{name} exited before printing its bootstrap servers")
        host, _, port_text = running.bootstrap.split(",")[0].rpartition(":")
        deadline = begin + START_TIMEOUT_S
        while not can_connect(host, int(port_text)):
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode} while starting")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{name} did not accept connections in {START_TIMEOUT_S} s")
            time.sleep(0.0005)
        running.start_s = time.perf_counter() - begin
    except BaseException:
        running.stop()
        raise
    return running
