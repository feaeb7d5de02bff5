"""Spark's own Kafka connector, on a local SparkSession, for tests against the fake broker.

Pipelines say ``.format("kafka")``: that is Spark's JVM connector (``spark-sql-kafka-0-10``),
a set of jars from Maven Central. :func:`session` starts a local SparkSession with those jars
on its classpath (local paths, handed to ``spark.jars``: nothing is fetched when it starts),
bound to loopback, with quiet logs, so a pipeline runs in its tests exactly as in production::

    from fakebroker.spark import session

    with session() as spark:
        events = (spark.readStream.format("kafka")
                  .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
                  .option("subscribe", "events")
                  .load())

The pytest plugin's ``spark_kafka`` fixture is the same session, one per test module.

The jars are installed once, pinned, into ``~/.cache/fakebroker-clients/spark-kafka-4.2.0``
(or ``$FAKEBROKER_CLIENTS_DIR/spark-kafka-4.2.0``) by ``python -m fakebroker.spark.install``
(which ``.ci/install-clients`` runs); any folder
holding them can be named with ``jars_dir=`` or ``$FAKEBROKER_SPARK_KAFKA_JARS``. A missing
jar is a :class:`ConnectorNotInstalled` naming it and the command that installs it.
Needs fakebroker's ``spark`` extra (PySpark 4.2.0, pyarrow: ``pip install ".[spark]"`` in a
checkout, or a built wheel with ``[spark]``) and a JDK 17+.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CONNECTOR",
    "SPARK_VERSION",
    "Artifact",
    "ConnectorNotInstalled",
    "connector_jars",
    "jars_dir",
    "session",
]

SPARK_VERSION = "4.2.0"
"""The Spark release whose connector is installed; PySpark must be of the same release line."""


@dataclass(frozen=True)
class Artifact:
    """One Maven artifact, as ``group:artifact:version``; ``jar`` is its file name."""

    group: str
    artifact: str
    version: str

    @property
    def jar(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def __str__(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"


CONNECTOR = (
    Artifact("org.apache.spark", "spark-sql-kafka-0-10_2.13", SPARK_VERSION),
    Artifact("org.apache.spark", "spark-token-provider-kafka-0-10_2.13", SPARK_VERSION),
    # the versions spark-sql-kafka-0-10_2.13:4.2.0's pom names (fakebroker.spark.install checks)
    Artifact("org.apache.kafka", "kafka-clients", "3.9.2"),
    Artifact("org.apache.commons", "commons-pool2", "2.13.1"),
)
"""The connector's jars that PySpark does not carry itself (its other dependencies —
scala-library, hadoop-client, lz4, snappy, zstd, slf4j — are in PySpark's ``jars/``)."""

INSTALL_COMMAND = "python -m fakebroker.spark.install"
"""Installs :data:`CONNECTOR` from Maven Central (``fakebroker.spark.install``; needs Maven)."""


class ConnectorNotInstalled(FileNotFoundError):
    """A jar of Spark's Kafka connector is not where :func:`session` looks for it."""


def jars_dir() -> Path:
    """Where the connector's jars are looked for: ``$FAKEBROKER_SPARK_KAFKA_JARS``, else
    ``spark-kafka-<SPARK_VERSION>`` in ``$FAKEBROKER_CLIENTS_DIR`` (default
    ``~/.cache/fakebroker-clients``), where ``python -m fakebroker.spark.install`` puts them."""
    explicit = os.environ.get("FAKEBROKER_SPARK_KAFKA_JARS")
    if explicit:
        return Path(explicit)
    clients = os.environ.get("FAKEBROKER_CLIENTS_DIR") or Path.home() / ".cache/fakebroker-clients"
    return Path(clients) / f"spark-kafka-{SPARK_VERSION}"


def connector_jars(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The absolute paths of :data:`CONNECTOR`'s jars in ``directory`` (default
    :func:`jars_dir`). Raises :class:`ConnectorNotInstalled` naming every missing artifact,
    the folder and how to install them."""
    folder = Path(directory) if directory is not None else jars_dir()
    jars = [folder.resolve() / a.jar for a in CONNECTOR]
    missing = [a for a, jar in zip(CONNECTOR, jars, strict=True) if not jar.is_file()]
    if missing:
        names = ", ".join(str(a) for a in missing)
        raise ConnectorNotInstalled(
            f"Spark's Kafka connector is not installed: {names} missing from {folder}. "
            f"Install it with `{INSTALL_COMMAND}` (Maven and a JDK resolve the pinned jars "
            "from Maven Central; in fakebroker's repository `bash .ci/install-clients` runs "
            "it), or point $FAKEBROKER_SPARK_KAFKA_JARS at a folder that holds them.")
    return jars


@contextmanager
def session(
    *,
    master: str = "local[2]",
    app_name: str = "fakebroker",
    jars: str | os.PathLike[str] | None = None,
    config: Mapping[str, str] | None = None,
) -> Iterator[SparkSession]:
    """A SparkSession with Spark's Kafka connector on its classpath; stopped on exit, with its
    JVM, so the next one starts fresh.

    Guarantees: the connector's jars are local files (checked before the JVM starts: a
    missing one raises :class:`ConnectorNotInstalled` naming it); the driver binds and
    advertises 127.0.0.1 (``SPARK_LOCAL_IP`` too, so executors in other JVMs, e.g. master
    ``local-cluster[2,1,1024]``, bind loopback as well); Python workers run this interpreter;
    the UI is off and Spark logs only errors; ``spark.sql.shuffle.partitions`` is 2 and the
    session time zone UTC. ``jars``: the folder of the connector's jars (default
    :func:`jars_dir`); ``config``: more Spark settings, applied last.

    Spark allows one SparkContext per process: nest no sessions.
    """
    paths = connector_jars(jars)
    try:
        import pyspark
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f"{exc}: install fakebroker's spark extra (PySpark "
                                  f"{SPARK_VERSION}, pyarrow): pip install \".[spark]\" in a "
                                  "checkout, or the wheel with [spark]", name=exc.name) from None
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    line = ".".join(pyspark.__version__.split(".")[:2])
    if line != ".".join(SPARK_VERSION.split(".")[:2]):
        raise RuntimeError(f"PySpark {pyspark.__version__} is installed, but Spark's Kafka "
                           f"connector is {SPARK_VERSION}: pip install pyspark=={SPARK_VERSION}")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    logging = Path(__file__).with_name("log4j2.properties")
    java_options = (f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
                    f"-Dlog4j2.configurationFile=file:{logging}")
    settings = {
        "spark.jars": ",".join(str(p) for p in paths),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.streaming.stopTimeout": "10s",
        # C1 only and the serial collector: a short-lived JVM on few cores starts faster
        "spark.driver.extraJavaOptions": java_options,
        "spark.executor.extraJavaOptions": java_options,
        **dict(config or {}),
    }
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    finally:
        spark.stop()
        _stop_jvm(SparkContext)


def _stop_jvm(context: type) -> None:
    """Ends the JVM behind SparkContext (the py4j gateway), so the next session starts one."""
    gateway = getattr(context, "_gateway", None)
    if gateway is None:
        return
    gateway.shutdown()  # the JVM outlives the session: it exits at the end of its stdin
    gateway.proc.stdin.close()
    try:
        gateway.proc.wait(30)
    finally:
        if gateway.proc.poll() is None:
            gateway.proc.kill()
    context._gateway = None  # type: ignore[attr-defined]
    context._jvm = None  # type: ignore[attr-defined]
