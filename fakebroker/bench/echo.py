"""The floor of a Python server's round trip: a bare trio TCP echo server.

``python -m fakebroker.bench.echo --port P`` echoes every byte back as it arrives, with no
framing or parsing, on 127.0.0.1:P until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import functools

import trio


async def echo(stream: trio.SocketStream) -> None:
    """Send back whatever arrives until the peer closes."""
    async for data in stream:
        await stream.send_all(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    trio.run(functools.partial(trio.serve_tcp, echo, args.port, host="127.0.0.1"))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
