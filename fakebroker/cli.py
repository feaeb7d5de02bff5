"""The ``fakebroker`` command: ``fakebroker serve`` runs a fake cluster until SIGINT/SIGTERM;
``fakebroker ctl`` controls a running one.

When every broker listens, ``serve`` prints ``bootstrap.servers=HOST:PORT,...`` (and
``control_url=...`` with ``--control-port``) on stdout and, with ``--ready-file``, writes JSON
``{"bootstrap_servers": ..., "brokers": [{"id", "host", "port"}], "cluster_id": ...,
"control_url": ...}`` (written to a temporary name, then renamed, so a reader never sees half).
A ``--scenario`` file is checked whole before anything starts; its timeline starts when the
cluster is ready.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import trio

from fakebroker.control import ctl
from fakebroker.control.http import serve_control
from fakebroker.control.scenario import (
    Scenario,
    ScenarioError,
    install_faults,
    load_scenario,
    run_timeline,
)
from fakebroker.runtime import FakeCluster, listen, open_cluster
from fakebroker.state.cluster import ClusterError


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
    serve.add_argument("--brokers", type=int, help="number of brokers (default 1)")
    serve.add_argument("--topic", action="append", default=[], type=topic_arg,
                       metavar="NAME[:PARTITIONS]", help="create a topic (repeatable)")
    serve.add_argument("--no-auto-create-topics", dest="auto_create_topics",
                       action="store_false", default=None,
                       help="refuse unknown topics instead of creating")
    serve.add_argument("--default-partitions", type=int,
                       help="partitions of auto-created topics (num.partitions, default 1)")
    serve.add_argument("--cluster-id", help="the cluster id (default fakebroker-cluster)")
    serve.add_argument("--seed", type=int, help="seed of probabilistic faults (reproducible)")
    serve.add_argument("--control-port", type=int,
                       help="serve the HTTP control API on HOST:PORT (0 = any free port)")
    serve.add_argument("--journal", type=Path, metavar="FILE",
                       help="append every request to FILE as a JSON line")
    serve.add_argument("--scenario", type=Path, metavar="FILE.toml",
                       help="brokers, topics, faults and a timeline of actions")
    serve.add_argument("--ready-file", type=Path, help="write connection details here as JSON")
    serve.add_argument("--log-level", default="WARNING", help="Python logging level")
    ctl.add_parser(commands)
    return top


def write_ready_file(path: Path, cluster: FakeCluster, control_url: str | None) -> None:
    details = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "brokers": [b.as_dict() for b in cluster.brokers],
        "cluster_id": cluster.state.cluster_id,
        "control_url": control_url,
        "pid": os.getpid(),
    }
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(details, indent=2) + "\n")
    temporary.replace(path)


def cluster_options(args: argparse.Namespace, scenario: Scenario) -> dict[str, Any]:
    """open_cluster's options: the scenario's, overridden by flags given explicitly."""
    options: dict[str, Any] = {"brokers": 1, **scenario.cluster}
    for name in ("brokers", "auto_create_topics", "default_partitions", "cluster_id", "seed"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    options["topics"] = {**scenario.topics, **dict(args.topic)}
    return options


async def serve(args: argparse.Namespace, scenario: Scenario) -> None:
    journal = args.journal.open("a", encoding="utf-8") if args.journal else None
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with open_cluster(**cluster_options(args, scenario), host=args.host,
                                    port=args.port, journal_sink=journal) as cluster, \
                    trio.open_nursery() as nursery:
                install_faults(cluster, scenario)
                control_url = None
                if args.control_port is not None:
                    listener = await listen(args.host, args.control_port)
                    control_port = listener.socket.getsockname()[1]
                    control_url = f"http://{args.host}:{control_port}"
                    nursery.start_soon(serve_control, cluster, listener)
                if args.ready_file:
                    write_ready_file(args.ready_file, cluster, control_url)
                print(f"bootstrap.servers={cluster.bootstrap_servers}", flush=True)
                if control_url:
                    print(f"control_url={control_url}", flush=True)
                nursery.start_soon(run_timeline, cluster, scenario)
                async for _ in signals:
                    break
                nursery.cancel_scope.cancel()
    finally:
        if journal is not None:
            journal.close()
    if args.ready_file:
        args.ready_file.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "ctl":
        return ctl.run(args)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        scenario = load_scenario(args.scenario) if args.scenario else Scenario()
    except ScenarioError as exc:
        print(f"fakebroker: {exc}", file=sys.stderr)
        return 2
    try:
        trio.run(serve, args, scenario)
    except OSError as exc:
        print(f"fakebroker: {exc}", file=sys.stderr)
        return 1
    except ClusterError as exc:
        print(f"fakebroker: {exc.error}: {exc}", file=sys.stderr)
        return 2
    return 0
