"""No API left behind: every API Apache Kafka 4.4 serves a client, the fake serves too, up to
Kafka's newest version — except the ones named in ``NOT_SERVED`` / ``BEHIND``, each with its
reason (internal to brokers and controllers, or still to come under an open issue).

Both brokers run side by side (the session's real Kafka, ``real_kafka``, and a ``FakeKafka``)
and are asked the same ApiVersions request. The lists must be exact: an API that lands makes
this test fail until its entry is removed, so they only shrink as work lands.
"""

from __future__ import annotations

import pytest

from fakebroker import FakeKafka
from fakebroker.protocol.specs import api_keys_by_name
from fakebroker.wire_client import WireClient

SHARE_STATE = "broker-internal: the share coordinator's state, which brokers ask each other"

# API name -> why Kafka 4.4 serves it on a client listener and the fake does not.
NOT_SERVED: dict[str, str] = {
    "InitializeShareGroupState": SHARE_STATE,
    "ReadShareGroupState": SHARE_STATE,
    "WriteShareGroupState": SHARE_STATE,
    "DeleteShareGroupState": SHARE_STATE,
    "ReadShareGroupStateSummary": SHARE_STATE,
}

# API name -> why the fake serves it only up to a version below Kafka 4.4's newest.
BEHIND: dict[str, str] = {}


def advertised(bootstrap_servers: str) -> dict[int, tuple[int, int]]:
    """API key -> (min, max) version, as the broker's ApiVersions v3 answer lists them."""
    with WireClient(bootstrap_servers.split(",")[0]) as client:
        response = client.request("ApiVersions", 3, {"client_software_name": "wire",
                                                      "client_software_version": "1.0"})
    assert response.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


@pytest.fixture(scope="module")
def both(real_kafka) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """(Kafka's ApiVersions, the fake's), asked of both brokers running."""
    with FakeKafka() as fake:
        return advertised(real_kafka.bootstrap_servers), advertised(fake.bootstrap_servers)


def named(keys: set[int]) -> set[str]:
    by_key = {key: name for name, key in api_keys_by_name().items()}
    return {by_key.get(key, str(key)) for key in keys}


def test_every_api_kafka_serves_is_served_or_declared_not_yet(both) -> None:
    kafka, fake = both
    missing = named(set(kafka) - set(fake))
    assert missing - set(NOT_SERVED) == set(), "served by Kafka 4.4, not by the fake, not declared"
    assert set(NOT_SERVED) - missing == set(), "served now (or no longer by Kafka): undeclare it"


def test_every_served_api_reaches_kafkas_newest_version_or_is_declared_behind(both) -> None:
    kafka, fake = both
    behind = named({key for key in set(kafka) & set(fake) if fake[key][1] < kafka[key][1]})
    assert behind - set(BEHIND) == set(), "below Kafka 4.4's newest version, not declared"
    assert set(BEHIND) - behind == set(), "at Kafka's newest version now: undeclare it"


def test_the_declared_apis_are_apis_kafka_knows() -> None:
    assert set(NOT_SERVED) | set(BEHIND) <= set(api_keys_by_name())
