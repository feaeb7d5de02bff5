"""Import ``protocol_specs/releases.json``: per Kafka release, the APIs its broker lists to
clients in ApiVersions, each with its minimum and maximum version, read from that release's
own ``kafka-clients`` jar.

Usage (from a checkout; needs a JDK and Maven, which fetches the jars from Maven Central into
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/kafka-clients-releases/``)::

    python -m fakebroker.protocol.releases_importer protocol_specs/releases.json

Each release line (``RELEASES``: 0.10.0 to 4.4) is read from its newest patch release on Maven
Central. Where the listed range comes from, era by era, as Kafka's broker builds its answer:

* **0.10.0 to 2.7**: the broker answers with the clients jar's own default ApiVersions answer
  (every ``ApiKeys`` value with its oldest and latest version; 2.7 leaves out the keys whose
  ``isEnabled`` is false, the Raft APIs). ``ReleaseApiVersions.java``, beside this module,
  builds that answer from the jar and prints it. From 2.2 on the jar also holds the message
  schemas, and every listed range must equal its request schema's ``validVersions`` (the
  import fails otherwise).
* **2.8 on**: the request schemas (``common/message/*Request.json``). An API is listed when
  its ``listeners`` hold the broker's: ``zkBroker`` up to 3.2, ``broker`` (KRaft) from 3.3 on,
  the release line KRaft was declared ready for production in (KIP-833) and the only mode of
  4.x. A schema's ``latestVersionUnstable`` latest version is not listed (Kafka lists it only
  with ``unstable.api.versions.enable``), nor an API left with no stable version; from 3.7
  on, GetTelemetrySubscriptions and PushTelemetry are listed only when a client telemetry
  receiver plugin is configured, which a broker has not by default: not listed. From 4.0 on
  a broker lists Produce from version 0 although its schema starts at 3 and the broker
  refuses v0-2 (``ApiKeys.toApiVersionForApiResponse``, KAFKA-18659: librdkafka would not
  produce compressed batches to a broker listing no v0-2): the table's ``refused`` rows name
  such versions, listed and yet refused (the connection closed).

Features (ApiVersions v3+, from 2.7): a ZooKeeper broker (2.7 to 3.2) supports none
(``BrokerFeatures.createDefault``) and a new cluster finalizes none; a KRaft broker (3.3 on)
lists what ``ReleaseFeatures.java``, beside this module, reads from the release's
``kafka-server-common`` jar (the rules: that program's comment), in the broker's order.

Guarantee: ``releases.json`` holds, per release line, the artifact version read, every
listed API as ``[key, name, min, max]`` in key order, the versions listed but refused as
``[key, name, min, max]`` rows (``refused``), and the features: ``supported`` as
``[name, min, max]`` and ``finalized`` (a freshly formatted node's) as ``[name, level]``, each
in the order the broker lists them; nothing else. The table test
(tests/test_releases.py) re-imports it and compares.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from fakebroker.protocol.importer import parse_schema, parse_versions, render

# Each release line 0.10.0 to 4.4 -> its newest patch release on Maven Central.
RELEASES: dict[str, str] = {
    "0.10.0": "0.10.0.1", "0.10.1": "0.10.1.1", "0.10.2": "0.10.2.2", "0.11.0": "0.11.0.3",
    "1.0": "1.0.2", "1.1": "1.1.1",
    "2.0": "2.0.1", "2.1": "2.1.1", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1",
    "2.5": "2.5.1", "2.6": "2.6.3", "2.7": "2.7.2", "2.8": "2.8.2",
    "3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3", "3.3": "3.3.2", "3.4": "3.4.1",
    "3.5": "3.5.2", "3.6": "3.6.2", "3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.2",
    "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.2", "4.3": "4.3.1", "4.4": "4.4.0",
}
SLF4J_API = "org.slf4j:slf4j-api:1.7.36"  # what the old clients' static initializers log with
JAVA_PROGRAM = Path(__file__).with_name("ReleaseApiVersions.java")
FEATURES_PROGRAM = Path(__file__).with_name("ReleaseFeatures.java")
SCHEMAS_FROM = (2, 2)  # the first release whose jar holds the message schemas
LISTENERS_FROM = (2, 8)  # the first release whose schemas name their listeners
KRAFT_FROM = (3, 3)  # the first release line read as a KRaft broker
TELEMETRY_FROM = (3, 7)  # KIP-714: listed only with a telemetry receiver plugin
TELEMETRY_APIS = frozenset({"GetTelemetrySubscriptions", "PushTelemetry"})
PRODUCE_FROM_0 = (4, 0)  # KAFKA-18659: a KRaft broker lists Produce from v0 it refuses

Row = list[Any]  # [key, name, min, max]


def line_of(release: str) -> tuple[int, ...]:
    """``"0.10.2"`` -> ``(0, 10, 2)``: release lines in order."""
    return tuple(int(part) for part in release.split("."))


def jar_dir() -> Path:
    from fakebroker.real.install import clients_dir

    return clients_dir() / "kafka-clients-releases"


def jar_path(coordinates: str) -> Path:
    """Where the jar of ``group:artifact:version`` is kept: ``jar_dir()``."""
    _, artifact, version = coordinates.split(":")
    return jar_dir() / f"{artifact}-{version}.jar"


def fetch_all(coordinates: list[str]) -> None:
    """Every jar of ``coordinates`` (``group:artifact:version``) not yet in ``jar_dir()``,
    fetched by one Maven run (checksums checked: ``-C``)."""
    missing = [c for c in coordinates if not jar_path(c).exists()]
    if not missing:
        return
    jar_dir().mkdir(parents=True, exist_ok=True)
    items = "".join(
        "<artifactItem><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version>"
        "</artifactItem>".format(*c.split(":")) for c in missing)
    pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion><groupId>fakebroker.releases</groupId>
  <artifactId>jars</artifactId><version>0</version><packaging>pom</packaging>
  <build><plugins><plugin><groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId><version>3.6.1</version>
    <configuration><outputDirectory>{jar_dir()}</outputDirectory>
      <artifactItems>{items}</artifactItems></configuration>
  </plugin></plugins></build>
</project>"""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pom.xml").write_text(pom)
        subprocess.run(["mvn", "-q", "-B", "-C", "-f", str(Path(tmp) / "pom.xml"),
                        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy"],
                       check=True, stdin=subprocess.DEVNULL, timeout=900)


def fetch(coordinates: str) -> Path:
    """The jar of ``group:artifact:version`` in ``jar_dir()``, fetched by Maven if absent."""
    fetch_all([coordinates])
    return jar_path(coordinates)


def every_jar() -> list[str]:
    """The coordinates of every jar the import reads: each release's kafka-clients, the KRaft
    releases' kafka-server-common, and slf4j-api."""
    return [SLF4J_API,
            *(f"org.apache.kafka:kafka-clients:{v}" for v in RELEASES.values()),
            *(f"org.apache.kafka:kafka-server-common:{v}" for r, v in RELEASES.items()
              if line_of(r) >= KRAFT_FROM)]


def clients_jar(release: str) -> Path:
    return fetch(f"org.apache.kafka:kafka-clients:{RELEASES[release]}")


@functools.cache
def compiled(program: Path) -> Path:
    """The folder of ``program`` (a one-file Java source reading Kafka's classes by reflection
    only, so compiled without them) compiled, once per source text, in ``jar_dir()``."""
    digest = hashlib.sha256(program.read_bytes()).hexdigest()[:16]
    folder = jar_dir() / "programs" / f"{program.stem}-{digest}"
    if not (folder / f"{program.stem}.class").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-d", str(folder), str(program)], check=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    return folder


def run_java(program: Path, *jars: Path) -> list[list[str]]:
    """The tab-separated lines ``program`` (a one-file Java source) prints, run on ``jars``."""
    classpath = ":".join(map(str, [compiled(program), *jars, fetch(SLF4J_API)]))
    out = subprocess.run(["java", "-cp", classpath, program.stem], check=True,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=120).stdout
    return [line.split("\t") for line in out.splitlines()]


def default_answer(jar: Path) -> list[Row]:
    """The release's default ApiVersions answer, built by its own jar (0.10.0 to 2.7)."""
    rows = run_java(JAVA_PROGRAM, jar)
    return sorted([int(key), name, int(low), int(high)] for key, name, low, high in rows)


def request_schemas(jar: Path) -> list[dict[str, Any]]:
    """The jar's request schemas (``common/message/*Request.json``)."""
    with zipfile.ZipFile(jar) as archive:
        schemas = [parse_schema(archive.read(name).decode())
                   for name in archive.namelist()
                   if name.startswith("common/message/") and name.endswith("Request.json")]
    return [s for s in schemas if s.get("type") == "request"]


def advertised_range(schema: dict[str, Any]) -> tuple[int, int] | None:
    """A request schema's listed (min, max): its valid versions less an unstable latest one;
    None when no stable version is left."""
    versions = parse_versions(schema["validVersions"], 10_000)
    if not versions:
        return None
    low, high = min(versions), max(versions)
    if schema.get("latestVersionUnstable", False):
        high -= 1
    return (low, high) if high >= low else None


def schema_answer(release: str, jar: Path) -> tuple[list[Row], list[Row]]:
    """What a 2.8+ broker lists, and the versions it lists but refuses, from the request
    schemas (rules: the module's docstring)."""
    listener = "broker" if line_of(release) >= KRAFT_FROM else "zkBroker"
    rows, refused = [], []
    for schema in request_schemas(jar):
        name = schema["name"].removesuffix("Request")
        if listener not in schema.get("listeners", ()):
            continue
        if line_of(release) >= TELEMETRY_FROM and name in TELEMETRY_APIS:
            continue
        listed = advertised_range(schema)
        if listed is not None and name == "Produce" and line_of(release) >= PRODUCE_FROM_0:
            if listed[0] > 0:
                refused.append([schema["apiKey"], name, 0, listed[0] - 1])
            listed = (0, listed[1])
        if listed is not None:
            rows.append([schema["apiKey"], name, *listed])
    return sorted(rows), refused


def check_against_schemas(release: str, rows: list[Row], jar: Path) -> None:
    """2.2 to 2.7: every range the jar's answer lists equals its schema's valid versions."""
    schemas = {s["apiKey"]: s for s in request_schemas(jar)}
    for key, name, low, high in rows:
        versions = parse_versions(schemas[key]["validVersions"], 10_000)
        if (min(versions), max(versions)) != (low, high):
            raise ValueError(f"{release} {name}: listed {low}-{high}, schema says "
                             f"{schemas[key]['validVersions']}")


def features(release: str, jar: Path) -> dict[str, list[Any]]:
    """What the release's broker lists as supported and finalized features (none before
    3.3, the ZooKeeper brokers)."""
    if line_of(release) < KRAFT_FROM:
        return {"supported": [], "finalized": []}
    common = fetch(f"org.apache.kafka:kafka-server-common:{RELEASES[release]}")
    lines = run_java(FEATURES_PROGRAM, common, jar)
    return {"supported": [[name, int(low), int(high)]
                          for kind, name, low, high in (row for row in lines if len(row) == 4)
                          if kind == "supported"],
            "finalized": [[name, int(level)] for kind, name, level in
                          (row for row in lines if len(row) == 3) if kind == "finalized"]}


def release_row(release: str) -> dict[str, Any]:
    """One release's entry of the table."""
    jar = clients_jar(release)
    refused: list[Row] = []
    if line_of(release) >= LISTENERS_FROM:
        rows, refused = schema_answer(release, jar)
    else:
        rows = default_answer(jar)
        if line_of(release) >= SCHEMAS_FROM:
            check_against_schemas(release, rows, jar)
    return {"artifact": f"org.apache.kafka:kafka-clients:{RELEASES[release]}", "apis": rows,
            "refused": refused, "features": features(release, jar)}


def build_table() -> dict[str, Any]:
    """The whole table, release lines in order."""
    fetch_all(every_jar())
    return {release: release_row(release) for release in RELEASES}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m fakebroker.protocol.releases_importer RELEASES_JSON")
        return 2
    Path(argv[0]).write_text(render(build_table()) + "\n")
    print(f"wrote {len(RELEASES)} releases to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
