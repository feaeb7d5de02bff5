"""The ``fakebroker`` command: ``fakebroker serve`` runs a fake cluster until SIGINT/SIGTERM.

When every broker listens it prints ``bootstrap.servers=HOST:PORT,...`` on stdout and, with
``--ready-file``, writes JSON ``{"bootstrap_servers": ..., "brokers": [{"id", "host", "port"}],
"cluster_id": ...}`` (written to a temporary name, then renamed, so a reader never sees half).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

import trio

from fakebroker.runtime import FakeCluster, open_cluster


def topic_arg(text: str) -> tuple[str, int]:
    """``name`` or ``name:partitions``."""
    name, _, partitions = text.partition(":")
    try:
        return name, int(partitions) if partitions else 1
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME or NAME:PARTITIONS, got {text!r}"
        ) from None


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="fakebroker", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a fake Kafka cluster until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on and advertise")
    serve.add_argument("--port", type=int, default=0,
                       help="first broker's port; brokers use consecutive ports (0 = any free)")
    serve.add_argument("--brokers", type=int, default=1, help="number of brokers (default 1)")
    serve.add_argument("--topic", action="append", default=[], type=topic_arg,
                       metavar="NAME[:PARTITIONS]", help="create a topic (repeatable)")
    serve.add_argument("--no-auto-create-topics", dest="auto_create_topics",
                       action="store_false", help="refuse unknown topics instead of creating")
    serve.add_argument("--default-partitions", type=int, default=1,
                       help="partitions of auto-created topics (num.partitions, default 1)")
    serve.add_argument("--cluster-id", default="fakebroker-cluster")
    serve.add_argument("--ready-file", type=Path, help="write connection details here as JSON")
    serve.add_argument("--log-level", default="WARNING", help="Python logging level")
    return top


def write_ready_file(path: Path, cluster: FakeCluster) -> None:
    details = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "brokers": [b.as_dict() for b in cluster.brokers],
        "cluster_id": cluster.state.cluster_id,
        "pid": os.getpid(),
    }
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(details, indent=2) + "\n")
    temporary.replace(path)


async def serve(args: argparse.Namespace) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with open_cluster(
            brokers=args.brokers, topics=dict(args.topic), host=args.host, port=args.port,
            auto_create_topics=args.auto_create_topics,
            default_partitions=args.default_partitions, cluster_id=args.cluster_id,
        ) as cluster:
            if args.ready_file:
                write_ready_file(args.ready_file, cluster)
            print(f"bootstrap.servers={cluster.bootstrap_servers}", flush=True)
            async for _ in signals:
                break
    if args.ready_file:
        args.ready_file.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        trio.run(serve, args)
    except OSError as exc:
        print(f"fakebroker: {exc}", file=sys.stderr)
        return 1
    return 0
