"""Request and response headers and size-prefixed frames.

* A request frame is ``int32 size`` then the request header then the body. The header is v2
  (with tagged fields) for flexible API versions, v1 otherwise; the client id is always a
  classic nullable string.
* A response frame is ``int32 size``, the response header (v1 for flexible versions, v0
  otherwise; always v0 for ApiVersions, KIP-511) and the body.
* ``FrameReader`` (``fakebroker.protocol.frames``, with no codec: a connection reads frames
  before the request path is imported) splits the bytes a connection reads into whole request
  frames.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from fakebroker.protocol.codec import (
    DecodeError,
    header_codec,
    request_codec,
    response_codec,
)
from fakebroker.protocol.specs import api_spec

if TYPE_CHECKING:
    from construct import Container

API_VERSIONS_KEY = 18
_SIZE = struct.Struct(">i")
_PEEK = struct.Struct(">hhi")
_HEAD = struct.Struct(">ii")


class RequestHeader(NamedTuple):
    """The request header fields a handler may need (a named tuple: one per request)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id) from the first bytes of a request frame body."""
    if len(frame) < _PEEK.size:
        raise DecodeError("request shorter than its header")
    return _PEEK.unpack_from(frame)


def is_flexible(api_key: int, version: int) -> bool:
    return version in api_spec(api_key).flexible


def decode_request(frame: bytes) -> tuple[RequestHeader, Container]:
    """Parse a whole request (without its size prefix): header and body.

    Raises ``KeyError`` for an API or version Kafka does not define, ``DecodeError`` for bytes
    that do not parse.
    """
    api_key, version, _ = peek_header(frame)
    if not isinstance(frame, bytes):
        frame = bytes(frame)
    try:
        return request_parser(api_key, version)(frame)
    except (IndexError, struct.error) as exc:
        raise DecodeError(f"truncated or malformed request: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DecodeError(str(exc)) from exc


@functools.cache
def request_parser(api_key: int, version: int
                   ) -> Callable[[bytes], tuple[RequestHeader, Container]]:
    """Header and body parsers of one API version, joined (built once per version): takes
    ``bytes``; raises ``IndexError``, ``struct.error``, ``DecodeError`` or
    ``UnicodeDecodeError`` for bytes that do not parse (``decode_request`` turns them all
    into ``DecodeError``)."""
    header_version = 2 if is_flexible(api_key, version) else 1
    parse_header = header_codec("RequestHeader", header_version).compiled_parser()
    parse_body = request_codec(api_key, version).compiled_parser()

    def parse(frame: bytes) -> tuple[RequestHeader, Container]:
        raw, pos = parse_header(frame, 0)
        header = RequestHeader(api_key, version, raw["correlation_id"], raw["client_id"])
        return header, parse_body(frame, pos)[0]
    return parse


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Any
) -> bytes:
    """A size-prefixed request frame (used by tests and inspection tools)."""
    header_version = 2 if is_flexible(api_key, version) else 1
    out = bytearray(4)
    header_codec("RequestHeader", header_version).build_into(
        {"request_api_key": api_key, "request_api_version": version,
         "correlation_id": correlation_id, "client_id": client_id}, out
    )
    request_codec(api_key, version).build_into(body, out)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def encode_response(api_key: int, version: int, correlation_id: int, body: Any) -> bytearray:
    """A size-prefixed response frame for ``body`` at the request's version: a new bytearray
    the caller owns (not copied into ``bytes``: a fetch answer can be megabytes)."""
    return response_encoder(api_key, version)(correlation_id, body)


@functools.cache
def response_encoder(api_key: int, version: int) -> Callable[[int, Any], bytearray]:
    """``encode_response`` for one API version, with its header and codec looked up once."""
    flexible_header = api_key != API_VERSIONS_KEY and is_flexible(api_key, version)
    header_size = 9 if flexible_header else 8  # size, correlation id, empty tagged fields
    build = response_codec(api_key, version).compiled_builder()
    pack_head, pack_size = _HEAD.pack_into, _SIZE.pack_into

    def encode(correlation_id: int, body: Any) -> bytearray:
        out = bytearray(header_size)
        pack_head(out, 0, 0, correlation_id)
        build(body, out)
        pack_size(out, 0, len(out) - 4)
        return out
    return encode


def decode_response(api_key: int, version: int, frame: bytes) -> tuple[int, Container]:
    """(correlation id, body) of a response frame without its size prefix."""
    flexible_header = api_key != API_VERSIONS_KEY and is_flexible(api_key, version)
    header, pos = header_codec("ResponseHeader", 1 if flexible_header else 0).parse_from(frame)
    return header.correlation_id, response_codec(api_key, version).parse_from(frame, pos)[0]
