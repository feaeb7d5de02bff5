"""``connection_creation_rate`` (KIP-612) holds the connections an IP opens to a broker as
Apache Kafka 4.4 holds them (``--kafka=both``): a rate over 11 one-second samples, at least
10 s assumed, so an IP at 1 connection a second may open 10 at once; the next is accepted by
the kernel but never served: the broker holds it unread for the throttle time (at most a
second), then closes it, and does not count it.

Loopback clients are all 127.0.0.1 unless they bind another loopback address: each test
connects from an address of its own (127.x.y.z), so the quota it sets holds no other test's
connections."""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fakebroker.protocol.framing import encode_request
from fakebroker.real_cluster import wait_for
from fakebroker.wire_client import WireClient
from tests.quotas import EXACT, alter, described, quota_free_client

API_VERSIONS = encode_request(18, 3, 1, "probe", {"client_software_name": "probe",
                                                  "client_software_version": "1"})


def served(bootstrap: str, source: str) -> tuple[bool, float]:
    """Connect from address ``source`` and send ApiVersions: whether it is answered (else the
    broker closed the connection), and the seconds until then."""
    host, port = bootstrap.rsplit(":", 1)
    started = time.monotonic()
    with socket.socket() as sock:
        sock.settimeout(5)
        sock.bind((source, 0))
        sock.connect((host, int(port)))
        sock.sendall(API_VERSIONS)
        try:
            answered = len(sock.recv(4)) == 4
        except ConnectionResetError:  # closed with the request unread
            answered = False
        return answered, time.monotonic() - started


def a_loopback_address() -> str:
    return f"127.{random.randrange(1, 255)}.{random.randrange(256)}.{random.randrange(1, 255)}"


@pytest.fixture
def admin(kafka: Any) -> Iterator[WireClient]:
    """A wire client of the broker with no quota set while the test runs."""
    yield from quota_free_client(kafka)


def test_an_ip_over_its_connection_rate_is_held_then_closed_unserved(
        kafka: Any, admin: WireClient) -> None:
    """At 1 connection a second, 10 connections in a moment are served (10 over the 10 s
    assumed); the 11th is held, unanswered, for the rest of the second (the rate's excess over
    the quota, in the window) and closed. Another IP is not held; once the quota is removed,
    the IP's connections are served again."""
    source = a_loopback_address()
    alter(admin, [((("ip", source),), {"connection_creation_rate": 1.0})])
    described(admin, [("ip", EXACT, source)],
              {frozenset({("ip", source)}): {"connection_creation_rate": 1.0}})
    time.sleep(0.5)  # Kafka's acceptors take the quota a moment after Describe shows it
    started = time.monotonic()
    answers = [served(kafka.bootstrap_servers, source) for _ in range(10)]
    assert [answered for answered, _ in answers] == [True] * 10
    took = time.monotonic() - started
    answered, held = served(kafka.bootstrap_servers, source)
    assert not answered
    # Held (1 - took) s: 11 connections over 10 s + took, 1 a second; Kafka's acceptor closes
    # it at its next wake-up after that, within half a second.
    assert 1 - took - 0.1 <= held <= 1 - took + 0.7, (took, held)
    assert served(kafka.bootstrap_servers, "127.0.0.1")[0], "another IP is served"
    alter(admin, [((("ip", source),), {"connection_creation_rate": None})])
    described(admin, [("ip", EXACT, source)], {})
    wait_for(lambda: served(kafka.bootstrap_servers, source)[0], "the IP served again")


@pytest.mark.fake_only("the set_client_quota operation; the default ip entity would hold "
                       "every test's connections to the session's real broker")
def test_the_default_ip_quota_holds_every_ip_without_its_own(kafka: Any) -> None:
    held, own = a_loopback_address(), a_loopback_address()
    kafka.set_client_quota("connection_creation_rate", 1, ip="<default>")
    kafka.set_client_quota("connection_creation_rate", 100, ip=own)
    assert [served(kafka.bootstrap_servers, held)[0] for _ in range(11)] == [True] * 10 + [False]
    assert all(served(kafka.bootstrap_servers, own)[0] for _ in range(11))
