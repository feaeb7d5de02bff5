"""The pytest plugin's hook (``fakebroker.pytest_plugin`` registers it): a suite's conftest.py
may choose the real cluster each test runs on under ``--kafka=real``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fakebroker.real_cluster import RealCluster


@pytest.hookspec(firstresult=True)
def pytest_fakebroker_real_cluster(request: pytest.FixtureRequest,
                                   options: dict[str, Any]) -> RealCluster | None:
    """The real cluster a test taking ``kafka`` runs on under ``--kafka=real``, given its
    ``fake_kafka`` marker's options (``{}`` without a marker); the first answer that is not
    None is taken. The plugin's own, tried last, is the session's ``--kafka-bootstrap``
    cluster (fixture ``real_kafka_cluster``) and fails a test whose options shape the fake
    only (anything but ``topics`` and ``brokers``). A suite that starts brokers of its own
    answers here, e.g. a broker per set of broker configs; a test's ``kafka`` is then
    ``cluster.isolated(prefix, options.get("topics"))``, skipped when the cluster has fewer
    brokers than ``options["brokers"]``."""
