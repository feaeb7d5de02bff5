"""Who may use the HTTP control API: where it listens, its token, the URL clients are given.

Guarantees:

* The control API listens on ``LOOPBACK`` (127.0.0.1) unless another address is asked for,
  whatever address the brokers listen on.
* On any address that is not loopback it requires a bearer token: the one given, else one
  generated here (``secrets``) and handed to the caller to write where only its owner reads
  it (the ready file), never to a log.
* With a token (given or generated), a request is served only if it carries
  ``Authorization: Bearer <token>``; the comparison takes the same time whatever the guess
  (``hmac.compare_digest``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

LOOPBACK = "127.0.0.1"  # also the default of ``fakebroker serve --control-host``
CHALLENGE = 'Bearer realm="fakebroker"'  # the WWW-Authenticate header of a 401 answer


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an address of this machine alone (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def token_for(host: str, given: str | None) -> str | None:
    """The token the control API on ``host`` requires: ``given``, else a generated one for a
    host that is not loopback (256 random bits in hex: URL-safe base64 may begin with "-",
    which ``fakebroker ctl --token TOKEN`` would read as an option), else None (loopback, no
    token asked for)."""
    if given is not None or is_loopback(host):
        return given
    import secrets  # here, not at the top: ``fakebroker serve`` imports this module at start

    return secrets.token_hex(32)


def control_url(host: str, port: int, advertised: str) -> str:
    """The URL a client reaches the control API at: ``host``, or ``advertised`` (the
    brokers' advertised host) when ``host`` is a wildcard address (0.0.0.0, ::)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_unspecified:
        host = advertised
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return f"http://{host}:{port}"


def authorized(headers: Iterable[tuple[bytes, bytes]], token: str | None) -> bool:
    """Whether a request with ``headers`` (lower-case names, as h11 gives them) may be
    served: always without a token, else only with ``Authorization: Bearer <token>``."""
    if token is None:
        return True
    import hmac  # here, not at the top: ``fakebroker serve`` imports this module at start

    for name, value in headers:
        if name == b"authorization":
            scheme, _, credentials = value.strip().partition(b" ")
            if scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(),
                                                                   token.encode()):
                return True
    return False
