"""fakebroker.spark's promises that need no JVM: where it looks for Spark's Kafka connector,
the error naming a missing jar and its install command (raised before a JVM starts), the
PySpark release it needs, the pins, and the installer (``python -m fakebroker.spark.install``)
run from Maven's local repository (offline: nothing is fetched at test time)."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import pytest

from fakebroker import spark as fakespark
from fakebroker.spark import CONNECTOR, ConnectorNotInstalled, connector_jars, jars_dir
from fakebroker.spark.install import InstallError, install, installed, main
from tests.absent import absent

ROOT = Path(__file__).resolve().parents[1]
ALL = ("org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0, "
       "org.apache.spark:spark-token-provider-kafka-0-10_2.13:4.2.0, "
       "org.apache.kafka:kafka-clients:3.9.2, org.apache.commons:commons-pool2:2.13.1")


def test_a_missing_connector_is_named_with_its_install_command(tmp_path):
    with pytest.raises(ConnectorNotInstalled) as missing:
        connector_jars(tmp_path)

    assert str(missing.value).startswith(
        f"Spark's Kafka connector is not installed: {ALL} missing from {tmp_path}. "
        "Install it with `python -m fakebroker.spark.install` (Maven and a JDK resolve the "
        "pinned jars from Maven Central")
    assert "$FAKEBROKER_SPARK_KAFKA_JARS" in str(missing.value)


def test_only_the_missing_jars_are_named(tmp_path):
    for artifact in CONNECTOR[:3]:
        (tmp_path / artifact.jar).write_bytes(b"PK")

    with pytest.raises(ConnectorNotInstalled, match="installed: org.apache.commons:"
                       r"commons-pool2:2.13.1 missing from "):
        connector_jars(tmp_path)
    (tmp_path / CONNECTOR[3].jar).write_bytes(b"PK")
    assert connector_jars(tmp_path) == [tmp_path.resolve() / a.jar for a in CONNECTOR]


def test_the_jars_folder_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("FAKEBROKER_SPARK_KAFKA_JARS", raising=False)
    monkeypatch.setenv("FAKEBROKER_CLIENTS_DIR", str(tmp_path))
    assert jars_dir() == tmp_path / "spark-kafka-4.2.0"
    monkeypatch.delenv("FAKEBROKER_CLIENTS_DIR")
    assert jars_dir() == Path.home() / ".cache/fakebroker-clients/spark-kafka-4.2.0"
    monkeypatch.setenv("FAKEBROKER_SPARK_KAFKA_JARS", str(tmp_path / "mine"))
    assert jars_dir() == tmp_path / "mine"


def test_the_session_refuses_to_start_without_the_connector(tmp_path):
    with pytest.raises(ConnectorNotInstalled), fakespark.session(jars=tmp_path):
        pass  # never reached: the check comes before Spark is even imported


def test_the_session_needs_pyspark_of_the_connectors_release(monkeypatch, tmp_path):
    try:
        import pyspark
    except ImportError:
        absent("needs pyspark (.ci/install-clients)")
    for artifact in CONNECTOR:
        (tmp_path / artifact.jar).write_bytes(b"PK")
    monkeypatch.setattr(pyspark, "__version__", "4.3.0")

    with pytest.raises(RuntimeError, match=r"PySpark 4\.3\.0 is installed, but Spark's Kafka "
                       r"connector is 4\.2\.0: pip install pyspark==4\.2\.0"):
        with fakespark.session(jars=tmp_path):
            pass


def test_the_pins_are_pysparks():
    assert [str(a) for a in CONNECTOR] == ALL.split(", ")
    clients = (ROOT / ".ci" / "install-clients").read_text()
    assert "SPARK_PACKAGES=(pyspark==4.2.0 " in clients
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"pyspark>=4.2.0,<4.3",' in pyproject


def test_the_installed_jars_are_the_ones_checked_at_install():
    folder = jars_dir()
    if not (folder / ".stamp").is_file():
        absent(f"Spark's Kafka connector is not installed in {folder}")
    sums = dict(reversed(line.split()) for line in (folder / "SHA256SUMS").read_text().splitlines())
    assert sorted(sums) == sorted(a.jar for a in CONNECTOR)
    for jar in connector_jars():
        assert hashlib.sha256(jar.read_bytes()).hexdigest() == sums[jar.name]


def test_the_installer_resolves_the_pinned_jars_offline(tmp_path):
    if not installed(jars_dir()) or shutil.which("mvn") is None:
        absent("needs Maven and the connector installed once (.ci/install-clients)")
    target = tmp_path / "spark-kafka"

    assert install(target, offline=True) == target

    assert sorted(p.name for p in target.iterdir()) == sorted(
        [".stamp", "SHA256SUMS", *(a.jar for a in CONNECTOR)])
    for jar in CONNECTOR:  # the same bytes as the install CI made
        assert (target / jar.jar).read_bytes() == (jars_dir() / jar.jar).read_bytes()
    assert (target / ".stamp").read_text() == (jars_dir() / ".stamp").read_text()
    started = time.monotonic()
    assert main(["--dir", str(target), "--offline"]) == 0  # already there: nothing to do
    assert time.monotonic() - started < 0.5


def test_the_installer_names_a_missing_maven(tmp_path):
    with pytest.raises(InstallError, match="'no-such-mvn' is not on PATH: install Maven"):
        install(tmp_path / "jars", mvn="no-such-mvn")
    assert not (tmp_path / "jars").exists()

