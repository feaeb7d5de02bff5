"""What the request path hands back to the server for one request (``Outcome``), and the peer
it came from: the words ``fakebroker.server`` and ``fakebroker.pipeline`` share.

A module of their own so the server can start listening without importing the request path
(decoding, faults, handlers): the pipeline is imported for a broker's first connection.

Outcomes:

* ``bytes`` or ``bytearray``: the answer frame, size prefix included, to write;
* ``Throttled(frame, seconds)``: the answer frame, after which the connection's next answers
  wait ``seconds`` (a fault's ``throttle_ms``: Kafka mutes a throttled channel, KIP-219);
* ``None``: no answer (Produce with acks=0);
* ``Close(reason)``: close the connection unanswered and log ``reason``;
  ``Close(reason, last)``: write the answer frame ``last`` first (a failed SASL
  authentication: Kafka answers, then closes).

``WAIT`` is ``Pipeline.answer_now``'s word for a request it does not answer at once.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple

import trio

if TYPE_CHECKING:
    from fakebroker.security.sasl.connection import SaslConnection

SASL_LISTENERS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})


class Close(NamedTuple):
    """Close the connection (after writing ``last`` when given); ``reason`` is logged."""

    reason: str
    last: bytes | bytearray | None = None


class Throttled(NamedTuple):
    """An answer frame after which the connection's next answers wait ``seconds``."""

    frame: bytes | bytearray
    seconds: float


Outcome = bytes | bytearray | Throttled | Close | None


class Wait(enum.Enum):
    """``answer_now``'s word for a request it does not answer: await ``answer`` instead."""

    WAIT = "wait"


WAIT = Wait.WAIT


ANONYMOUS = "User:ANONYMOUS"  # Kafka's principal of a client not (yet) authenticated


class Peer:
    """The connection a request came on, as the pipeline needs it: its listener's name and
    its principal (``ANONYMOUS`` until it authenticates; the server sets it then)."""

    __slots__ = ("connection_id", "host", "gone", "listener", "principal", "gated", "sasl")

    def __init__(self, connection_id: int, host: str, listener: str = "PLAINTEXT",
                 principal: str = ANONYMOUS) -> None:
        self.connection_id = connection_id
        self.host = host  # "/127.0.0.1": the client's address as Kafka reports it
        self.gone = trio.Event()  # set when the peer closed its side
        self.listener = listener  # one of options.SECURITY_PROTOCOLS
        self.principal = principal  # "User:alice"
        # Whether its requests pass the SASL gate (``SaslConnection.admit``): on a SASL
        # listener until authenticated for good (a session without a lifetime); a peer made
        # with a principal is authenticated already.
        self.gated = listener in SASL_LISTENERS and principal == ANONYMOUS
        self.sasl: SaslConnection | None = None  # made by the pipeline for its first request
