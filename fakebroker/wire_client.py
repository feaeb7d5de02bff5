"""A minimal raw Kafka client: one socket, requests at an exact API version.

It uses the project's own codecs to encode requests and decode responses, so a test can ask
any broker (the fake or Apache Kafka) at any version and look at every field. The inspection
API over a real cluster (``fakebroker.real_cluster``) reads what no client library hands out
through it; the project's wire tests use it too. Real-client tests use real clients instead.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import struct
from typing import Any

from construct import Container

from fakebroker.protocol.framing import decode_response, encode_request
from fakebroker.protocol.specs import api_keys_by_name


def api_key(api: str | int) -> int:
    return api if isinstance(api, int) else api_keys_by_name()[api]


class WireClient:
    """Blocking request/response over one TCP connection (TLS with ``ssl_context``, the
    TLS handshake done when it is made)."""

    def __init__(self, address: str, timeout: float = 10.0, client_id: str | None = "wire",
                 ssl_context: ssl.SSLContext | None = None):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        if ssl_context is not None:
            try:
                self.sock = ssl_context.wrap_socket(self.sock, server_hostname=host)
            except BaseException:
                self.sock.close()
                raise
        self.client_id = client_id
        self.correlation = itertools.count(1)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, api: str | int, version: int, body: Any) -> int:
        """Send a request without waiting; returns its correlation id."""
        correlation_id = next(self.correlation)
        self.sock.sendall(encode_request(api_key(api), version, correlation_id,
                                         self.client_id, body))
        return correlation_id

    def receive_frame(self) -> bytes:
        """One response frame (without size prefix); ``ConnectionError`` if the peer closed."""
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def receive(self, api: str | int, version: int) -> tuple[int, Container]:
        return decode_response(api_key(api), version, self.receive_frame())

    def request(self, api: str | int, version: int, body: Any) -> Container:
        """Send and wait for the answer; checks the correlation id is echoed."""
        sent = self.send(api, version, body)
        correlation_id, response = self.receive(api, version)
        assert correlation_id == sent
        return response

    def is_closed_by_peer(self) -> bool:
        """True when the broker closed this connection (reads EOF)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _exactly(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            data += chunk
        return bytes(data)
