"""Apache Kafka's broker, installed from Maven Central by a pinned lock list: what
``fakebroker kafka install [--version 4.4.0|3.9.1]`` runs. A user needs no Maven (and no JDK
to install; one to run it: ``fakebroker.real.launch``).

Each version's lock list (``locks/kafka-VERSION.lock`` beside this module, written by the
project's ``.ci/lock-kafka`` from Maven's own resolution) names every jar of the broker's
runtime closure — ``org.apache.kafka:kafka_2.13:VERSION``, its dependencies and the slf4j
binding of their slf4j-api line — with its sha256. ``install`` takes each jar from the first
of: the folder a previous install left, Maven's local repository (``~/.m2/repository``, where
a Maven user already has most of them), the repository URL (Maven Central, or a mirror:
``--repository URL`` or ``FAKEBROKER_MAVEN_REPOSITORY``); every jar, wherever it came from,
must have the lock's sha256, or nothing is installed.

The install goes to ``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/kafka-VERSION/``:
the jars, ``SHA256SUMS`` (of those jars) and a ``.stamp`` naming the lock list, written last;
a folder whose stamp names the current lock is left as it is, so a second install takes
milliseconds. The jars are gathered in a temporary folder beside it and renamed into place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from fakebroker.version import __version__

DEFAULT_VERSION = "4.4.0"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
REPOSITORY_ENV = "FAKEBROKER_MAVEN_REPOSITORY"
CLIENTS_DIR_ENV = "FAKEBROKER_CLIENTS_DIR"
INSTALL_HINT = "run `fakebroker kafka install` (the broker's jars, from Maven Central)"
_CHUNK = 1 << 16


class InstallError(RuntimeError):
    """An install that could not be completed (a download failed, a jar's checksum did not
    match): nothing was installed."""


@dataclass(frozen=True)
class LockedJar:
    """One jar of a lock list: its Maven coordinates and the sha256 it must have."""

    group: str
    artifact: str
    version: str
    classifier: str
    sha256: str

    @property
    def file_name(self) -> str:
        """As Maven's ``copy-dependencies`` names it: ``ARTIFACT-VERSION[-CLASSIFIER].jar``."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def path(self) -> str:
        """Its path in a Maven repository (remote or local)."""
        return "/".join([*self.group.split("."), self.artifact, self.version, self.file_name])


def versions() -> tuple[str, ...]:
    """The Kafka versions there is a lock list for, newest first."""
    names = [f.name for f in resources.files(__package__).joinpath("locks").iterdir()]
    found = [n.removeprefix("kafka-").removesuffix(".lock") for n in names
             if n.startswith("kafka-") and n.endswith(".lock")]
    return tuple(sorted(found, key=lambda v: tuple(map(int, v.split("."))), reverse=True))


def _lock_text(version: str) -> str:
    if version not in versions():
        raise InstallError(f"no lock list for Apache Kafka {version}: fakebroker "
                           f"{__version__} installs {', '.join(versions())}")
    return resources.files(__package__).joinpath("locks", f"kafka-{version}.lock").read_text()


def lock(version: str) -> list[LockedJar]:
    """The jars of ``version``'s lock list, in its order."""
    jars = []
    for line in _lock_text(version).splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        coordinates, sha256 = line.split()
        group, artifact, jar_version, *classifier = coordinates.split(":")
        jars.append(LockedJar(group, artifact, jar_version, "".join(classifier), sha256))
    return jars


def stamp(version: str) -> str:
    """What a complete install's ``.stamp`` holds: the lock list it came from."""
    digest = hashlib.sha256(_lock_text(version).encode()).hexdigest()
    return f"org.apache.kafka:kafka_2.13:{version} lock-sha256={digest}\n"


def clients_dir() -> Path:
    """The cache folder installs go to (``FAKEBROKER_CLIENTS_DIR``, else
    ``~/.cache/fakebroker-clients``)."""
    default = Path.home() / ".cache" / "fakebroker-clients"
    return Path(os.environ.get(CLIENTS_DIR_ENV) or default)


def kafka_dir(version: str = DEFAULT_VERSION) -> Path:
    """Where Apache Kafka ``version`` is installed."""
    return clients_dir() / f"kafka-{version}"


def installed(version: str = DEFAULT_VERSION) -> bool:
    """Whether ``kafka_dir(version)`` holds a complete install of the current lock list."""
    found = kafka_dir(version) / ".stamp"
    return found.is_file() and found.read_text() == stamp(version)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, to: Path) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": f"fakebroker/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer, to.open("wb") as out:
            shutil.copyfileobj(answer, out, _CHUNK)
    except (urllib.error.URLError, OSError) as exc:
        raise InstallError(f"cannot download {url}: {exc}") from None


def install(version: str = DEFAULT_VERSION, *, repository: str | None = None,
            log: Callable[[str], None] = print) -> Path:
    """Install Apache Kafka ``version``'s broker jars (see the module doc); returns the
    folder. ``repository``: the Maven repository's base URL (default
    ``FAKEBROKER_MAVEN_REPOSITORY``, else Maven Central). Raises ``InstallError``, with
    nothing installed, when a jar cannot be had or does not have its locked sha256."""
    dest = kafka_dir(version)
    jars = lock(version)
    if installed(version):
        log(f"Apache Kafka {version} is already installed in {dest}")
        return dest
    base = (repository or os.environ.get(REPOSITORY_ENV) or MAVEN_CENTRAL).rstrip("/")
    local_repository = Path.home() / ".m2" / "repository"
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".kafka-{version}-install.", dir=dest.parent))
    try:
        downloaded = 0
        for jar in jars:
            target = work / jar.file_name
            for found in (dest / jar.file_name, local_repository / jar.path):
                if found.is_file() and _sha256(found) == jar.sha256:
                    shutil.copyfile(found, target)
                    break
            else:
                url = f"{base}/{jar.path}"
                _download(url, target)
                got = _sha256(target)
                if got != jar.sha256:
                    raise InstallError(f"{url} has sha256 {got}, but the lock list of Apache "
                                       f"Kafka {version} says {jar.sha256}: not installed")
                downloaded += 1
        (work / "SHA256SUMS").write_text(
            "".join(f"{jar.sha256}  {jar.file_name}\n" for jar in jars))
        (work / ".stamp").write_text(stamp(version))
        shutil.rmtree(dest, ignore_errors=True)
        work.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"Apache Kafka {version}: {len(jars)} jars in {dest} ({downloaded} downloaded from "
        f"{base})")
    return dest
