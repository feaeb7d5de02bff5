"""Drive the real Apache Kafka Java client (3.9.1 or 4.4.0) through tests/java/Harness.java.

The jars come from Maven Central through ``.ci/install-clients`` (``.ci/install-kafka``), one
cache folder per client version, outside the repo:
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/java-<version>/``. The harness (one
source for both versions) is compiled once per version into
``<that folder>/harness/<key>/harness.jar`` (key: hash of the source, the jars and the JDK),
together with a class-data-sharing archive that halves JVM start-up; later sessions reuse both.

    from tests.clients.java import run_harness, HarnessError
    lines = run_harness("produce", "--bootstrap", addr, "--topic", "t", "--count", "10")
    assert lines[-1] == {"done": 10}
    run_harness("consume", ..., client_version="4.4.0")  # the newer client

    member = start_harness("group-consume", "--bootstrap", addr, "--topic", "t", "--group", "g")
    member.wait_for({"event": "assigned"}, timeout=30)  # a JVM in the background
    lines = member.stop()

Every function takes ``client_version`` (one of CLIENT_VERSIONS); None means
DEFAULT_CLIENT_VERSION: 3.9.1, the line Spark's Kafka connector uses and the one the tests
were written against, or ``FAKEBROKER_JAVA_CLIENT`` when set (to run every Java test on 4.4.0).
The ``java_client`` fixture (tests/conftest.py) runs a test once per version.

See the top of tests/java/Harness.java for the subcommands and their output lines.
Environment: ``FAKEBROKER_JAVA_OPTS`` (extra JVM options, split on spaces),
``FAKEBROKER_JAVA_CDS=0`` (no class-data-sharing archive) and ``FAKEBROKER_JAVA_CLIENT``
(the default client version).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.clients.process import GroupMember

REPO_ROOT = Path(__file__).resolve().parents[2]
HARNESS_SOURCE = REPO_ROOT / "tests" / "java" / "Harness.java"
INSTALL_HINT = "run `bash .ci/install-clients` (installs the real Kafka clients in a cache folder)"

# The Java client versions .ci/install-kafka installs (each in <clients dir>/java-<version>/).
CLIENT_VERSIONS: tuple[str, ...] = ("3.9.1", "4.4.0")
OLD_CLIENT = "0.11.0.3"  # the oldest client generation the tests run (its own programs)
DEFAULT_CLIENT_VERSION = os.environ.get("FAKEBROKER_JAVA_CLIENT") or "3.9.1"

# Fast JVM start for short-lived client runs.
JVM_FLAGS: tuple[str, ...] = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
# JVM warnings (e.g. about the CDS archive) go to stdout by default: keep stdout pure JSON.
JVM_LOG_FLAGS: tuple[str, ...] = ("-Xlog:disable", "-Xlog:all=warning:stderr")
# Pass as jvm_args= to see the negotiated API versions and every request/response on stderr.
NETWORK_DEBUG: tuple[str, ...] = (
    "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient=debug",
)

# File-name prefixes of the jars .ci/install-kafka puts in <clients dir>/java-<version>/.
REQUIRED_JARS: tuple[str, ...] = (
    "kafka-clients-",
    "slf4j-api-",
    "slf4j-simple-",
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
)

_compile_lock = threading.Lock()


class JavaClientsMissing(RuntimeError):
    """The Java client jars or the JDK are not installed."""


class HarnessError(Exception):
    """The harness failed: non-zero exit, timeout, or output that is not JSON lines.

    returncode: the exit code (2 when the harness caught an exception), None on timeout.
    stderr_tail: the end of stderr (client logs, JVM errors).
    error_obj: the harness's {"error", "message", "class", "causes"} line, or a synthetic one
        ({"error": "HarnessTimeout"...} / {"error": "BadOutput"...}), or None.
    lines: the JSON lines printed before the failure.
    """

    def __init__(
        self,
        returncode: int | None,
        stderr_tail: str,
        error_obj: dict | None,
        *,
        subcommand: str = "",
        lines: Sequence[dict] = (),
    ) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.error_obj = error_obj
        self.subcommand = subcommand
        self.lines = list(lines)
        what = "no error line"
        if error_obj:
            what = f"{error_obj.get('error')}: {error_obj.get('message')}"
        super().__init__(
            f"Harness {subcommand} failed (exit {returncode}): {what}\n"
            f"--- stderr tail ---\n{stderr_tail}"
        )

    @property
    def error(self) -> str | None:
        """The exception's simple class name, e.g. "TimeoutException"."""
        return self.error_obj.get("error") if self.error_obj else None


def clients_dir() -> Path:
    default = Path.home() / ".cache" / "fakebroker-clients"
    return Path(os.environ.get("FAKEBROKER_CLIENTS_DIR") or default)


def _java_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise JavaClientsMissing(f"`{name}` not found (no JDK): {INSTALL_HINT}")
    return found


def _version(client_version: str | None) -> str:
    version = client_version or DEFAULT_CLIENT_VERSION
    if version not in CLIENT_VERSIONS:
        raise ValueError(f"no Java client {version!r}: one of {', '.join(CLIENT_VERSIONS)}")
    return version


def java_dir(client_version: str | None = None) -> Path:
    """Where .ci/install-kafka puts that client version's jars."""
    return clients_dir() / f"java-{_version(client_version)}"


def _jars(client_version: str | None = None) -> list[Path]:
    version = _version(client_version)
    folder = java_dir(version)
    jars = sorted(folder.glob("*.jar"))
    missing = [p for p in REQUIRED_JARS if not any(j.name.startswith(p) for j in jars)]
    if not any(j.name == f"kafka-clients-{version}.jar" for j in jars):
        missing.insert(0, f"kafka-clients-{version}.jar")
    if missing or not (folder / ".stamp").is_file():
        what = ", ".join(missing) or "incomplete install"
        raise JavaClientsMissing(
            f"Kafka Java client {version} jars missing in {folder} ({what}): {INSTALL_HINT}"
        )
    return jars


def java_classpath(client_version: str | None = None) -> str:
    """The Kafka client jars (and slf4j binding) as a class path; raises JavaClientsMissing."""
    return os.pathsep.join(str(j) for j in _jars(client_version))


def java_available(client_version: str | None = None) -> bool:
    """True when the jars and a JDK are there (for pytest skip conditions)."""
    try:
        _jars(client_version)
        _java_tool("java")
        _java_tool("javac")
    except JavaClientsMissing:
        return False
    return True


def _cache_key(jars: Sequence[Path], source: Path = HARNESS_SOURCE) -> str:
    h = hashlib.sha256(source.read_bytes())
    for j in jars:  # a re-install changes mtimes: the CDS archive checks them too
        st = j.stat()
        h.update(f"\0{j.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    java = Path(_java_tool("java")).resolve()
    h.update(f"\0{java}:{java.stat().st_mtime_ns}".encode())
    return h.hexdigest()[:16]


@functools.cache
def _compiled(version: str) -> tuple[Path, Path | None]:
    """(harness.jar, CDS archive or None) for that client version, built at most once per key,
    reused across sessions; each version's builds live beside its jars (a re-install of that
    version drops them)."""
    jars = _jars(version)
    base = java_dir(version) / "harness"
    base.mkdir(parents=True, exist_ok=True)
    final = base / _cache_key(jars)
    jar = final / "harness.jar"
    cds = os.environ.get("FAKEBROKER_JAVA_CDS", "1") != "0"
    jsa = final / "harness.jsa"
    if jar.is_file() and (jsa.is_file() or not cds or (final / ".no-cds").exists()):
        return jar, jsa if cds else None
    # One builder at a time across processes (pytest-xdist workers, parallel sessions).
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not jar.is_file():
            _build(jars, base, final)
            _prune_old_builds(base, keep=final)
        no_cds = final / ".no-cds"  # a failed attempt is not retried by every process
        if cds and not jsa.is_file() and not no_cds.exists():
            _make_cds_archive(jars, jar, jsa)
            if not jsa.is_file():
                no_cds.touch()
    return jar, jsa if cds and jsa.is_file() else None


def compile_java(source: Path, jars: Sequence[Path], base: Path) -> Path:
    """Compile one Java source file against ``jars`` into ``base/<key>/<source stem>.jar``
    (key: hash of the source, the jars and the JDK), once per key across processes and
    sessions; returns that jar. The harness and tests/java/WordCount.java are built this way."""
    base.mkdir(parents=True, exist_ok=True)
    final = base / _cache_key(jars, source)
    jar = final / f"{source.stem.lower()}.jar"
    if jar.is_file():
        return jar
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not jar.is_file():
            _build(jars, base, final, source)
            _prune_old_builds(base, keep=final)
    return jar


def _build(jars: Sequence[Path], base: Path, final: Path, source: Path = HARNESS_SOURCE) -> None:
    """javac ``source`` against ``jars`` into ``final/<source stem>.jar``."""
    # Build in a temporary folder and rename: no one ever sees half a build.
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=base))
    try:
        classes = tmp / "classes"
        classes.mkdir()
        res = subprocess.run(
            [
                _java_tool("javac"),
                "-nowarn",
                "-encoding",
                "UTF-8",
                "-d",
                str(classes),
                "-cp",
                os.pathsep.join(map(str, jars)),
                str(source),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if res.returncode != 0:
            raise RuntimeError(f"javac failed on {source}:\n{res.stdout}{res.stderr}")
        jar = tmp / f"{source.stem.lower()}.jar"
        with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for cls in sorted(classes.glob("*.class")):
                zf.write(cls, cls.name)
        shutil.rmtree(classes)
        tmp.chmod(0o755)  # mkdtemp made it 0700
        os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _prune_old_builds(base: Path, keep: Path, min_age_s: float = 24 * 3600) -> None:
    """Drop builds of older sources (~20 MB each with the CDS archive) unused for a day."""
    for d in base.iterdir():
        try:
            if d != keep and d.is_dir() and time.time() - d.stat().st_mtime > min_age_s:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass


def _make_cds_archive(jars: Sequence[Path], jar: Path, jsa: Path) -> None:
    """A dynamic class-data-sharing archive of the client classes (JDK 13+), made by running
    the harness's warmup; later JVMs start about twice as fast. Left out if it fails."""
    tmp = jsa.with_name(f".{jsa.name}.{os.getpid()}")
    try:
        subprocess.run(
            [
                _java_tool("java"),
                *JVM_FLAGS,
                *JVM_LOG_FLAGS,
                f"-XX:ArchiveClassesAtExit={tmp}",
                "-cp",
                os.pathsep.join([*map(str, jars), str(jar)]),  # must equal the run's class path
                "Harness",
                "warmup",
            ],
            capture_output=True,
            timeout=120,
        )
        if tmp.is_file() and tmp.stat().st_size > 0:
            os.replace(tmp, jsa)
    except (OSError, subprocess.SubprocessError):
        pass
    finally:
        tmp.unlink(missing_ok=True)


def compile_harness(client_version: str | None = None) -> Path:
    """Compile tests/java/Harness.java against a client version (once per source/jars/JDK);
    returns the harness jar."""
    version = _version(client_version)
    with _compile_lock:
        return _compiled(version)[0]


def _tail(data: bytes | str | None, max_lines: int = 60, max_chars: int = 8000) -> str:
    if not data:
        return ""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return "\n".join(text.splitlines()[-max_lines:])[-max_chars:]


def _parse_lines(stdout: bytes | None) -> tuple[list[dict], str | None]:
    """JSON lines of stdout; the second item is the first line that is not a JSON object."""
    out: list[dict] = []
    for raw in (stdout or b"").decode("utf-8", "replace").splitlines():
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            return out, raw
        if not isinstance(obj, dict):
            return out, raw
        out.append(obj)
    return out, None


@dataclass
class HarnessResult:
    lines: list[dict]
    stderr: str  # client logs: empty at the default WARN level unless something went wrong
    seconds: float  # wall time of the JVM, start-up included


def _harness_command(
    subcommand: str, args: Sequence[str], jvm_args: Sequence[str], client_version: str | None
) -> list[str]:
    version = _version(client_version)
    with _compile_lock:
        jar, jsa = _compiled(version)
    cmd = [_java_tool("java"), *JVM_FLAGS, *JVM_LOG_FLAGS]
    if jsa is not None:
        cmd.append(f"-XX:SharedArchiveFile={jsa}")
    cmd += [*jvm_args, *os.environ.get("FAKEBROKER_JAVA_OPTS", "").split()]
    cmd += ["-cp", os.pathsep.join([java_classpath(version), str(jar)]), "Harness", subcommand,
            *args]
    return cmd


def start_harness(
    subcommand: str,
    *args: str,
    jvm_args: Sequence[str] = (),
    client_version: str | None = None,
) -> GroupMember:
    """Start ``Harness <subcommand> <args>`` in the background, e.g. a ``group-consume`` member;
    returns its handle (tests/clients/process.py): wait_for(...), stop(), kill(), lines()...
    The harness stops on "stop" or end of file on stdin (GroupMember.stop())."""
    cmd = _harness_command(subcommand, args, jvm_args, client_version)
    name = f"java {_version(client_version)} {subcommand}"
    if "--instance-id" in args:
        name += f" {args[args.index('--instance-id') + 1]}"
    return GroupMember(cmd, name=name)


def run_harness(
    subcommand: str,
    *args: str,
    timeout: float = 60,
    jvm_args: Sequence[str] = (),
    client_version: str | None = None,
) -> list[dict]:
    """Run ``java ... Harness <subcommand> <args>`` and return its JSON lines.

    Raises HarnessError on a non-zero exit (the harness's {"error": ...} line is error_obj),
    when the JVM is still running after ``timeout`` seconds (it is killed), or on output that is
    not JSON lines. jvm_args: extra JVM options, e.g. NETWORK_DEBUG. client_version: one of
    CLIENT_VERSIONS (None: DEFAULT_CLIENT_VERSION).
    """
    return run_harness_full(subcommand, *args, timeout=timeout, jvm_args=jvm_args,
                            client_version=client_version).lines


def run_harness_full(
    subcommand: str,
    *args: str,
    timeout: float = 60,
    jvm_args: Sequence[str] = (),
    client_version: str | None = None,
) -> HarnessResult:
    """As run_harness, but also returns stderr (e.g. the NETWORK_DEBUG logs) and the time taken."""
    cmd = _harness_command(subcommand, args, jvm_args, client_version)
    started = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:  # run() has killed the JVM and collected its output
        lines, _ = _parse_lines(e.stdout)
        raise HarnessError(
            None,
            _tail(e.stderr),
            {"error": "HarnessTimeout", "message": f"no exit within {timeout} s"},
            subcommand=subcommand,
            lines=lines,
        ) from None
    lines, bad = _parse_lines(res.stdout)
    if bad is not None:
        raise HarnessError(
            res.returncode,
            _tail(res.stderr),
            {"error": "BadOutput", "message": f"not a JSON object line: {bad[:500]!r}"},
            subcommand=subcommand,
            lines=lines,
        )
    if res.returncode != 0:
        error_obj = next((line for line in reversed(lines) if "error" in line), None)
        stderr_tail = _tail(res.stderr)
        raise HarnessError(
            res.returncode, stderr_tail, error_obj, subcommand=subcommand, lines=lines
        )
    return HarnessResult(lines, res.stderr.decode("utf-8", "replace"), time.monotonic() - started)
