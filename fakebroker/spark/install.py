"""Install Spark's Kafka connector from Maven Central: ``python -m fakebroker.spark.install``.

Resolves ``org.apache.spark:spark-sql-kafka-0-10_2.13`` at :data:`SPARK_VERSION` with Maven
(a generated pom; ``mvn -C dependency:list dependency:copy-dependencies``) and keeps the jars
of :data:`CONNECTOR` — the ones PySpark does not carry — in a folder (default
:func:`fakebroker.spark.jars_dir`). Guarantees, or it fails naming why:

* the versions the connector's pom names for ``kafka-clients`` and ``commons-pool2`` are the
  pinned ones (a new Spark release changes them: the pins change with it);
* every jar matches the SHA-1 Maven Central served for it (``-C`` at download, and again
  here against the ``.sha1`` Maven keeps beside the jar in its local repository);
* the folder holds exactly those jars, their ``SHA256SUMS`` and a ``.stamp`` written last
  (moved into place whole); a folder whose stamp matches is left as it is (milliseconds).

Needs Maven (``mvn``) and a JDK. ``--offline`` resolves from Maven's local repository only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fakebroker.spark import CONNECTOR, SPARK_VERSION, jars_dir

LAYOUT = 1
"""Bump when the folder's layout changes, to force a re-install."""

DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"


class InstallError(RuntimeError):
    """The connector could not be installed (the message says why)."""


def stamp() -> str:
    """What a complete install's ``.stamp`` holds."""
    return " ".join(str(a) for a in CONNECTOR) + f" layout={LAYOUT}"


def installed(directory: Path) -> bool:
    """Whether ``directory`` holds a complete install of the pinned connector."""
    marker = directory / ".stamp"
    return marker.is_file() and marker.read_text().strip() == stamp()


def install(directory: str | os.PathLike[str] | None = None, *, offline: bool = False,
            mvn: str = "mvn") -> Path:
    """Installs the connector's jars into ``directory`` (default
    :func:`fakebroker.spark.jars_dir`) unless they are there already; returns the folder."""
    target = Path(directory) if directory is not None else jars_dir()
    if installed(target):
        return target
    if shutil.which(mvn) is None:
        raise InstallError(f"{mvn!r} is not on PATH: install Maven (and a JDK), e.g. "
                           "`apt-get install maven default-jdk-headless`")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".spark-kafka-install.", dir=target.parent) as tmp:
        work = Path(tmp)
        jars = work / "jars"
        (work / "pom.xml").write_text(_pom())
        command = [
            mvn, "-q", "-B", "-C", *(["-o"] if offline else []), "-f", str(work / "pom.xml"),
            f"{DEPENDENCY_PLUGIN}:list", f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            "-DincludeScope=runtime", "-DoutputAbsoluteArtifactFilename=true",
            f"-DoutputFile={work / 'list.txt'}", f"-DoutputDirectory={jars}",
            "-DincludeArtifactIds=" + ",".join(a.artifact for a in CONNECTOR),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            raise InstallError(f"mvn could not resolve {CONNECTOR[0]}:\n{tail}")
        resolved = _resolved(work / "list.txt")
        for artifact in CONNECTOR:
            if str(artifact) not in resolved:
                named = sorted(c for c in resolved if f":{artifact.artifact}:" in c + ":")
                raise InstallError(f"{CONNECTOR[0]}'s pom does not name {artifact} "
                                   f"(it names {', '.join(named) or 'none'}): update the pins")
        sums = []
        for artifact in CONNECTOR:
            jar = jars / artifact.jar
            repository_copy = Path(resolved[str(artifact)])
            _check_sha1(jar, repository_copy.with_name(repository_copy.name + ".sha1"))
            sums.append(f"{hashlib.sha256(jar.read_bytes()).hexdigest()}  {artifact.jar}\n")
        extra = sorted({p.name for p in jars.iterdir()} - {a.jar for a in CONNECTOR})
        if extra:
            raise InstallError(f"mvn copied more than the connector's jars: {extra}")
        (jars / "SHA256SUMS").write_text("".join(sums))
        (jars / ".stamp").write_text(stamp() + "\n")
        if target.exists():
            shutil.rmtree(target)
        jars.rename(target)
    return target


def _pom() -> str:
    connector = CONNECTOR[0]
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>fakebroker.install</groupId>
  <artifactId>spark-kafka-{SPARK_VERSION}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>{connector.group}</groupId>
      <artifactId>{connector.artifact}</artifactId>
      <version>{connector.version}</version>
    </dependency>
  </dependencies>
</project>
"""


def _resolved(listing: Path) -> dict[str, str]:
    """``group:artifact:version`` -> the jar's path in Maven's local repository, from
    ``dependency:list`` output (``   g:a:jar:v:scope:/path/a-v.jar -- module ...``)."""
    found = {}
    for line in listing.read_text().splitlines():
        match = re.match(r"\s*([^:\s]+):([^:]+):jar:([^:]+):[a-z]+:(/\S+\.jar)", line)
        if match:
            group, artifact, version, path = match.groups()
            found[f"{group}:{artifact}:{version}"] = path
    return found


def _check_sha1(jar: Path, sha1_file: Path) -> None:
    if not sha1_file.is_file():
        raise InstallError(f"no {sha1_file} beside the resolved jar (Maven Central's SHA-1)")
    want = sha1_file.read_text().split()[0][:40]
    got = hashlib.sha1(jar.read_bytes()).hexdigest()
    if want != got:
        raise InstallError(f"{jar.name} has SHA-1 {got}, Maven Central says {want}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakebroker.spark.install",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None,
                        help=f"where the jars go (default: {jars_dir()})")
    parser.add_argument("--offline", action="store_true",
                        help="resolve from Maven's local repository only (mvn -o)")
    args = parser.parse_args(argv)
    target = args.dir if args.dir is not None else jars_dir()
    if installed(target):
        print(f"Spark's Kafka connector {SPARK_VERSION} already in {target}", file=sys.stderr)
        return 0
    started = time.monotonic()
    try:
        install(target, offline=args.offline)
    except InstallError as exc:
        print(f"fakebroker.spark.install: ERROR: {exc}", file=sys.stderr)
        return 1
    print(f"Spark's Kafka connector {SPARK_VERSION}: {len(CONNECTOR)} jars in {target} "
          f"({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
