"""``fakebroker kafka``: Apache Kafka itself, outside pytest.

* ``fakebroker kafka install [--version V] [--repository URL]``: the broker's jars from Maven
  Central by the version's pinned lock list (``fakebroker.real.install``); exit 1, with nothing
  installed, when a jar cannot be had or does not match its checksum.
* ``fakebroker kafka serve [--nodes N] [--version V] [--override KEY=VALUE] [--ready-file
  F]``: the installed broker as a KRaft cluster of N nodes, each broker and controller
  (``fakebroker.real.launch.start_kafka_cluster``: replication factor N for Kafka's internal
  topics and new topics, minimum in-sync replicas 2 from two nodes on), in a temporary folder,
  until SIGINT or SIGTERM. When every broker is in the cluster's metadata it prints
  ``bootstrap.servers=HOST:PORT,...`` and, with ``--ready-file``, writes JSON as ``fakebroker
  serve`` does, with the keys that apply: ``{"bootstrap_servers", "brokers": [{"id", "host",
  "port"}], "listeners": {"PLAINTEXT": ...}, "ssl": null, "listen_host", "cluster_id",
  "pid"}``, plus ``"kafka_version"`` and ``"data_dir"``. On SIGINT or SIGTERM every node
  shuts down (controlled shutdown), then the folder and the ready file are removed: exit 0.
  A node that exits by itself stops the rest, exit 1 with its log's last lines; a cluster
  that cannot start (not installed, no JDK, a failed start): exit 2, one message on stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType

from fakebroker.real.install import DEFAULT_VERSION, MAVEN_CENTRAL, REPOSITORY_ENV, versions

START_FAILED = 2
NODE_EXITED = 1


def _nodes(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of nodes, got {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"a cluster has at least one node, not {count}")
    return count


def _override(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return name.strip(), value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Install Apache Kafka's broker from Maven Central (pinned, checked) "
                          "and run it as a KRaft cluster of 1 or N nodes, outside pytest.")
    commands = parser.add_subparsers(dest="kafka_command", required=True,
                                     parser_class=type(parser))
    install = commands.add_parser(
        "install", help="install Apache Kafka's broker jars into the user cache",
        description="Fetch the broker's jars by the version's pinned lock list, each checked "
                    "against its sha256, into ${FAKEBROKER_CLIENTS_DIR:-~/.cache/"
                    "fakebroker-clients}/kafka-VERSION; needs no Maven (jars in ~/.m2 are "
                    "reused) and, to run the broker later, a JDK 17+.")
    install.add_argument("--version", choices=versions(), default=DEFAULT_VERSION,
                         help=f"the Apache Kafka release: {', '.join(versions())}")
    install.add_argument("--repository", metavar="URL",
                         help=f"Maven repository to download from (a mirror) "
                              f"[{REPOSITORY_ENV}, else {MAVEN_CENTRAL}]")
    serve = commands.add_parser(
        "serve", help="run the installed Apache Kafka until interrupted",
        description="Run the installed broker as a KRaft cluster (each node broker and "
                    "controller) until SIGINT or SIGTERM, in a temporary folder removed "
                    "afterwards.")
    serve.add_argument("--nodes", type=_nodes, default=1, metavar="N",
                       help="nodes (brokers); replication factor N, min.insync.replicas 2 "
                            "from two nodes on")
    serve.add_argument("--version", choices=versions(), default=DEFAULT_VERSION,
                       help=f"the installed Apache Kafka release to run: "
                            f"{', '.join(versions())}")
    serve.add_argument("--override", type=_override, action="append", default=[],
                       metavar="KEY=VALUE",
                       help="a server.properties entry for every node (repeatable)")
    serve.add_argument("--ready-file", type=Path, metavar="FILE",
                       help="write connection details here as JSON once every broker is up")


def run(args: argparse.Namespace) -> int:
    if args.kafka_command == "install":
        return run_install(args)
    return run_serve(args)


def run_install(args: argparse.Namespace) -> int:
    from fakebroker.real.install import InstallError, install

    try:
        install(args.version, repository=args.repository,
                log=lambda line: print(f"fakebroker: {line}", file=sys.stderr))
    except InstallError as exc:
        print(f"fakebroker: {exc}", file=sys.stderr)
        return 1
    return 0


class _Stop(BaseException):
    """SIGINT or SIGTERM arrived."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def run_serve(args: argparse.Namespace) -> int:
    from fakebroker.options import OptionError
    from fakebroker.ready_file import check_ready_file, write_details
    from fakebroker.real.launch import RealKafkaError, RealKafkaMissing, start_kafka_cluster

    if args.ready_file:
        try:
            check_ready_file(args.ready_file)
        except OptionError as exc:
            print(f"fakebroker: {exc}", file=sys.stderr)
            return START_FAILED
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    data_dir = Path(tempfile.mkdtemp(prefix="fakebroker-kafka-"))
    cluster = None
    try:
        try:
            cluster = start_kafka_cluster(data_dir, nodes=args.nodes, version=args.version,
                                          overrides=dict(args.override))
        except (RealKafkaMissing, RealKafkaError, OSError) as exc:
            print(f"fakebroker: {exc}", file=sys.stderr)
            return START_FAILED
        if args.ready_file:
            write_details(args.ready_file, {
                "bootstrap_servers": cluster.bootstrap_servers,
                "brokers": [{"id": node.node_id, "host": node.bootstrap_servers.rsplit(":")[0],
                             "port": int(node.bootstrap_servers.rsplit(":")[1])}
                            for node in cluster.nodes],
                "listeners": {"PLAINTEXT": cluster.bootstrap_servers},
                "ssl": None,
                "listen_host": "127.0.0.1",
                "cluster_id": cluster.cluster_id,
                "kafka_version": cluster.version,
                "data_dir": str(data_dir),
                "pid": os.getpid(),
            })
        print(f"bootstrap.servers={cluster.bootstrap_servers}", flush=True)
        # Until a signal (its handler raises _Stop out of the wait) or a node's exit (seen,
        # not reaped: WNOWAIT leaves the node's status to its Popen).
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        exited = next(n for n in cluster.nodes if n.process.poll() is not None)
        print(f"fakebroker: Kafka node {exited.node_id} exited with "
              f"{exited.process.returncode}; last lines of {exited.log_file}:\n"
              f"{exited.log_tail()}", file=sys.stderr)
        return NODE_EXITED
    except _Stop:
        return 0
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):  # the clean-up is not interrupted
            signal.signal(signum, signal.SIG_IGN)
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
        if args.ready_file:
            args.ready_file.unlink(missing_ok=True)
