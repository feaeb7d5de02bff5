"""The valid requests the fuzzer mutates: the conformance corpus (tests/conformance/corpus.py,
the written requests and those captured from real clients), each at every version it is
written for.

The corpus's placeholders (topic ids, member ids, producer ids a broker gave) are filled in by
a ``Side`` (tests/conformance/replay.py) that learns them from the broker's own answers, so
seeds are made while the corpus is replayed, unmutated, to the broker under test: that replay
also leaves the broker with the corpus's topics, groups and producers, the state the mutated
requests then meet.
"""

from __future__ import annotations

import uuid

from fakebroker.api import HANDLERS, served_versions
from fakebroker.protocol.codec import ZERO_UUID
from fakebroker.protocol.specs import api_spec
from fakebroker.state.cluster import Cluster
from fakebroker.wire_client import api_key
from tests.conformance.corpus import Request, resolve
from tests.conformance.replay import Side
from tests.fuzz.mutations import Seed


def fake_versions() -> dict[str, list[int]]:
    """Every API the fake serves, at every version it serves."""
    return {api_spec(key).name: list(served_versions(key) or ()) for key in HANDLERS}


class OfflineSide(Side):
    """A ``Side`` for a broker reached without sockets (the in-process mode): topic ids come
    from the cluster itself, answers are learnt from what the caller hands to ``learn``."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__("fake", "127.0.0.1:0")
        self._cluster = cluster

    def topic_id(self, name: str) -> uuid.UUID:
        topic = self._cluster.topics.get(name)
        return topic.id if topic is not None else ZERO_UUID


def seed_of(request: Request, side: Side) -> Seed:
    """The seed of one corpus request, its placeholders filled in by ``side`` (which has
    learnt from the broker's answers to the requests before it: ``Side.learn``)."""
    return Seed.of(api_key(request.api), request.version, request.client_id,
                   resolve(request.body, side))
