"""Runs nafka 0.1 inside its own venv (kafka-python 2.x): executed by path, isolated
(``python -I``: neither its folder nor the working directory on its sys.path),
stdlib + nafka only.

``serve --port P``: nafka's broker on 127.0.0.1:P, in memory, with nafka's own logging off
(its CLI logs every request at DEBUG, which no fixture user would pay for); runs until SIGTERM.
``inprocess --rounds N``: N times start nafka's thread runner (what its pytest fixture uses)
until a TCP client connects, then stop it; prints {"start_ms": [...], "stop_ms": [...]}.
"""

import argparse
import asyncio
import json
import socket
import time

from nafka.runner import BrokerThreadRunner
from nafka.server import run_server


def inprocess(rounds: int) -> None:
    starts, stops = [], []
    for _ in range(rounds):
        begin = time.perf_counter()
        runner = BrokerThreadRunner()
        broker = runner.start()
        socket.create_connection(broker.socket_addr[:2]).close()
        ready = time.perf_counter()
        runner.stop()
        starts.append((ready - begin) * 1000)
        stops.append((time.perf_counter() - ready) * 1000)
    print(json.dumps({"start_ms": starts, "stop_ms": stops}))


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve").add_argument("--port", type=int, required=True)
    commands.add_parser("inprocess").add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if args.command == "serve":
        asyncio.run(run_server(":memory:", args.port))
    else:
        inprocess(args.rounds)


if __name__ == "__main__":
    main()
