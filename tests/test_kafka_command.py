"""``fakebroker kafka install`` takes Apache Kafka's jars from a Maven repository only with the
sha256 its lock list pins (a mirror here: a local HTTP server serving the installed jars, one
of them changed), installs nothing when one differs, and does nothing on a second run;
``fakebroker kafka serve`` runs the installed broker, writes its ready file once the broker
is in the cluster's metadata, and on SIGTERM stops it and removes its folder and the file."""

from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakebroker.real.install import kafka_dir, lock
from fakebroker.wire_client import WireClient
from tests.real_kafka import KAFKA_VERSION, require_real_kafka

pytestmark = pytest.mark.timeout(180)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_folder(root: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving ``root``; yields its URL."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maven2"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Maven repository on 127.0.0.1 holding the installed Kafka's jars (links to them):
    its URL and its folder."""
    require_real_kafka()
    root = tmp_path / "mirror"
    for jar in lock(KAFKA_VERSION):
        place = root / "maven2" / jar.path
        place.parent.mkdir(parents=True, exist_ok=True)
        place.symlink_to(kafka_dir(KAFKA_VERSION) / jar.file_name)
    yield from ((url, root / "maven2") for url in serve_folder(root))


def fakebroker_kafka(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m fakebroker kafka ARGS`` installing into ``tmp_path/clients``, with a home of
    its own (no ~/.m2 to take jars from)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "FAKEBROKER_CLIENTS_DIR": str(tmp_path / "clients"), "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "fakebroker", "kafka", *args], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_install_refuses_a_jar_whose_sha256_is_not_the_locked_one(tmp_path, mirror):
    url, folder = mirror
    changed = next(j for j in lock(KAFKA_VERSION) if j.artifact == "kafka_2.13")
    (folder / changed.path).unlink()
    (folder / changed.path).write_bytes(b"PK\x03\x04 not the jar Maven Central has")
    result = fakebroker_kafka(tmp_path, "install", "--repository", url)
    assert result.returncode == 1, result.stderr
    assert f"{url}/{changed.path} has sha256 " in result.stderr
    assert f"says {changed.sha256}: not installed" in result.stderr
    assert list((tmp_path / "clients").iterdir()) == []  # no install, no half of one


def test_install_from_a_mirror_checks_every_jar_and_a_second_install_fetches_nothing(
        tmp_path, mirror):
    url, _ = mirror
    jars = lock(KAFKA_VERSION)
    first = fakebroker_kafka(tmp_path, "install", "--repository", url)
    assert first.returncode == 0, first.stderr
    assert f"{len(jars)} jars in" in first.stderr
    assert f"({len(jars)} downloaded from {url})" in first.stderr
    installed = tmp_path / "clients" / f"kafka-{KAFKA_VERSION}"
    assert sorted(p.name for p in installed.glob("*.jar")) == sorted(j.file_name for j in jars)
    assert (installed / "SHA256SUMS").read_text() == (
        kafka_dir(KAFKA_VERSION) / "SHA256SUMS").read_text()
    again = fakebroker_kafka(tmp_path, "install", "--repository", "http://127.0.0.1:9/none")
    assert again.returncode == 0, again.stderr
    assert "is already installed" in again.stderr


@pytest.mark.real_kafka
def test_serve_writes_its_ready_file_and_stops_on_sigterm_leaving_nothing(tmp_path):
    require_real_kafka()
    ready = tmp_path / "ready.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "fakebroker", "kafka", "serve", "--nodes", "1",
         "--ready-file", str(ready)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "no ready file"
            time.sleep(0.1)
        details = json.loads(ready.read_text())
        (broker,) = details["brokers"]
        assert broker["id"] == 1
        assert details["bootstrap_servers"] == f"{broker['host']}:{broker['port']}"
        assert details["listeners"] == {"PLAINTEXT": details["bootstrap_servers"]}
        assert details["ssl"] is None and details["pid"] == process.pid
        assert details["kafka_version"] == KAFKA_VERSION
        with WireClient(details["bootstrap_servers"]) as client:
            answer = client.request("Metadata", 12, {"topics": [],
                                                     "allow_auto_topic_creation": False})
        assert answer.cluster_id == details["cluster_id"]
        assert [b.node_id for b in answer.brokers] == [1]
        assert Path(details["data_dir"]).is_dir()

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stdout.read() == f"bootstrap.servers={details['bootstrap_servers']}\n"
    assert not ready.exists()
    assert not Path(details["data_dir"]).exists()
