"""Shared fixtures: a ``fakebroker serve`` process for tests of the standalone broker; the
Java client versions (``java_client``); a real Kafka broker (``real_kafka``) and one as the
secure preset (``secure_real_kafka``); and which fakebroker the suite tests (CI: the
installed wheel, never the source tree)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import fakebroker
from tests.absent import check_needs
from tests.clients.java import CLIENT_VERSIONS as JAVA_CLIENT_VERSIONS
from tests.real_kafka import SUITE_LOG_TIMING, RealKafka, require_real_kafka, start_real_kafka
from tests.real_secure_kafka import SecureRealKafka, start_secure_real_kafka

ROOT = Path(__file__).resolve().parents[1]
# Where ``python -m fakebroker`` subprocesses run: outside the checkout, so they use the
# installed fakebroker, not the source tree's.
OUTSIDE = tempfile.gettempdir()


def pytest_report_header() -> str:
    return f"fakebroker {fakebroker.__version__} from {Path(fakebroker.__file__).parent}"


def pytest_configure(config: pytest.Config) -> None:
    """With FAKEBROKER_EXPECT_INSTALLED set (CI), refuse to test the source tree: the suite
    must run on the installed wheel, so a file missing from it fails here."""
    imported = Path(fakebroker.__file__).resolve()
    if os.environ.get("FAKEBROKER_EXPECT_INSTALLED") and imported.is_relative_to(ROOT):
        raise pytest.UsageError(f"fakebroker was imported from the checkout ({imported}), "
                                "not from the installed wheel: run `pytest`, not "
                                "`python -m pytest`")
    config.addinivalue_line("markers", "needs(available, what): a test that needs what is "
                            "not always installed: skipped without it, failed under CI "
                            "(tests/absent.py)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    check_needs(item)


def start_served(tmp_path: Path, *args: str, env: dict[str, str] | None = None
                 ) -> tuple[subprocess.Popen, dict]:
    """Run ``python -m fakebroker serve ARGS --ready-file ...`` (with ``env`` added to the
    environment); wait for the ready file."""
    ready = tmp_path / "ready.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "fakebroker", "serve", "--ready-file", str(ready), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, cwd=tmp_path,  # the installed fakebroker
    )
    deadline = time.monotonic() + 20
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"fakebroker serve did not start: {process.stderr.read()}")
        time.sleep(0.02)
    return process, json.loads(ready.read_text())


def stop_served(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.fixture
def served_cluster(tmp_path: Path) -> Iterator[str]:
    """bootstrap.servers of a running ``fakebroker serve --brokers 2 --topic served:3``."""
    process, details = start_served(tmp_path, "--brokers", "2", "--topic", "served:3")
    yield details["bootstrap_servers"]
    stop_served(process)


@pytest.fixture(params=JAVA_CLIENT_VERSIONS, ids=lambda v: f"java-{v}")
def java_client(request: pytest.FixtureRequest) -> str:
    """Runs the test once per Apache Kafka Java client version (tests/clients/java.py):
    pass it on as ``client_version=``."""
    return request.param


@pytest.fixture
def fake_kafka_factory(fake_kafka_factory: Callable[..., Any]) -> Callable[..., Any]:
    """The plugin's, each cluster's overrides on top of ``SUITE_LOG_TIMING`` (retention
    checks timed as the real broker's)."""
    def start(**options: Any) -> Any:
        overrides = {**SUITE_LOG_TIMING, **dict(options.get("overrides") or {})}
        return fake_kafka_factory(**{**options, "overrides": overrides})
    return start


@pytest.fixture(scope="session")
def real_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKafka]:
    """A real Apache Kafka 4.4.0 broker (single-node KRaft) for the session: the oracle
    (tests/real_kafka.py). Skips when not installed, but fails under CI=true."""
    require_real_kafka()
    with start_real_kafka(tmp_path_factory.mktemp("real-kafka")) as broker:
        yield broker


@pytest.fixture(scope="session")
def real_kafka_3_9(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKafka]:
    """A real Apache Kafka 3.9.1 broker (single-node KRaft, as ``real_kafka``) for the session:
    the older release the release table is checked against. Skips when not installed, but
    fails under CI=true."""
    require_real_kafka("3.9.1")
    with start_real_kafka(tmp_path_factory.mktemp("real-kafka-3.9"), version="3.9.1") as broker:
        yield broker


@pytest.fixture(scope="session")
def secure_real_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureRealKafka]:
    """Apache Kafka 4.4.0 as the secure preset (tests/real_secure_kafka.py) for the session,
    started by the first test that needs it. Skips when not installed, but fails under
    CI=true."""
    require_real_kafka()
    with start_secure_real_kafka(tmp_path_factory.mktemp("secure-real-kafka")) as broker:
        yield broker


# One test body, two brokers: the plugin's `kafka` fixture (--kafka=fake|real|both, the
# fake_only marker) on our suite's own real brokers.
from tests.dual import (  # noqa: E402,F401
    overridden_real_clusters,
    pytest_fakebroker_real_cluster,
    real_cluster,
    secure_real_cluster,
)
