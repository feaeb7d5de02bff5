"""The ``fakebroker`` command: ``fakebroker serve`` runs a fake cluster until SIGINT/SIGTERM;
``fakebroker ctl`` controls a running one; ``fakebroker kafka install|serve`` installs and runs
Apache Kafka itself (``fakebroker.real.command``).

When every broker listens, ``serve`` prints ``bootstrap.servers=HOST:PORT,...`` (and, with
``--listener``, ``listeners.NAME=HOST:PORT,...`` for each listener and ``ssl.ca_file=...``,
``ssl.client_cert_file=...``, ``ssl.client_key_file=...`` with a TLS listener; and
``control_url=...`` with ``--control-port``) on stdout and, with ``--ready-file``, writes JSON
``{"bootstrap_servers": ..., "brokers": [{"id", "host", "port"}], "listeners": {NAME:
"HOST:PORT,..."}, "ssl": {"ca_file", "client_cert_file", "client_key_file"} or null,
"listen_host": ..., "cluster_id": ..., "control_url": ..., "pid": ...}`` (written to a
temporary name, then renamed, so a reader never sees half). Brokers are listed at their
advertised host; ``bootstrap_servers`` and ``brokers`` at the PLAINTEXT listener (the first
listener without one).

The control API listens on 127.0.0.1 whatever ``--host`` is; ``--control-host`` binds it
elsewhere, and then only with a token (``--control-token``, or generated). A token in force
is written to the ready file as ``"control_token"`` (the file then readable by its owner
alone) and never to stdout or a log.

Every ``serve`` flag may also come from an environment variable named after it
(``--advertised-host`` from ``FAKEBROKER_ADVERTISED_HOST``, ``--topic`` from
``FAKEBROKER_TOPICS=orders:3,audit:1``); a flag given on the command line wins. A bad value,
from a flag, a variable or a scenario file, a port in use or a file that cannot be read ends
the command with one line on stderr and exit status 2, before anything starts. A
``FAKEBROKER_*`` variable no part of fakebroker reads (a typo) is a warning on stderr naming
the closest ``serve`` variable.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from fakebroker.options import (
    CLUSTER_SETTINGS,
    ENV_PREFIX,
    OptionError,
    Setting,
    check_advertised,
    parse_int,
    parse_topic,
    parse_topics,
    topic_counts,
)
from fakebroker.ready_file import READY_FILE, check_ready_file, write_details
from fakebroker.version import __version__

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

if TYPE_CHECKING:
    from fakebroker.control.scenario import Scenario
    from fakebroker.runtime import FakeCluster

USAGE_ERROR = 2
DESCRIPTION = ("A fake Kafka broker for tests, speaking Kafka's wire protocol. 'serve' runs a "
               "fake cluster until SIGINT or SIGTERM; 'ctl' controls a running one; 'kafka' "
               "installs and runs Apache Kafka itself.")


def _log_level(text: str) -> str:
    """A name of Python's logging levels, any case."""
    level = text.strip().upper()
    if not isinstance(logging.getLevelName(level), int):
        raise ValueError(f"unknown level {text!r} (DEBUG, INFO, WARNING, ERROR or CRITICAL)")
    return level


def _port_or_zero(text: str) -> int:
    port = parse_int(text)
    if not 0 <= port <= 65535:
        raise ValueError(f"expected a port from 0 to 65535, got {port}")
    return port


def _host(text: str) -> str:
    if not text.strip():
        raise ValueError("expected a host name or address")
    return text.strip()


def _token(text: str) -> str:
    """A control token as given: printable ASCII without spaces, as an HTTP header carries
    it. The ``ValueError`` never repeats the value (it is a secret)."""
    if not text or not all(33 <= ord(c) <= 126 for c in text):
        raise ValueError("expected a non-empty token of printable ASCII characters without "
                         "spaces")
    return text


# The flags of serve that are not cluster settings: Settings too (flag and variable alike).
SERVE_OPTIONS: dict[str, Setting] = {o.name: o for o in (
    Setting("control_port", _port_or_zero,
                "serve the HTTP control API on this port (0 = any free port)", metavar="PORT"),
    Setting("control_host", _host,
            "address the control API listens on (default 127.0.0.1, whatever --host is); "
            "any other than loopback requires a token (generated unless --control-token)",
            metavar="HOST"),
    Setting("control_token", _token,
            "bearer token every control request must carry (Authorization: Bearer TOKEN); "
            "prefer the variable to the flag, which other users see in ps",
            metavar="TOKEN"),
    Setting("journal", Path, "append every request to FILE as a JSON line", metavar="FILE"),
    Setting("scenario", Path, "brokers, topics, faults and a timeline of actions",
                metavar="FILE.toml"),
    READY_FILE,
    Setting("log_level", _log_level, "Python logging level (default WARNING)", metavar="LEVEL"),
)}
TOPICS_ENV = ENV_PREFIX + "TOPICS"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit status 2), never a usage dump.

    ``arguments``, when given, adds the parser's arguments the first time it parses or
    prints its help: a sub-command whose arguments cost imports (``ctl``'s come from the
    cluster's declared operations) costs nothing when another sub-command runs."""

    def __init__(self, *args: Any, arguments: Callable[[argparse.ArgumentParser], None]
                 | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arguments = arguments

    def _add_arguments(self) -> None:
        if self._arguments is not None:
            arguments, self._arguments = self._arguments, None
            arguments(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self._add_arguments()
        return super().parse_known_args(*args, **kwargs)

    def format_help(self) -> str:
        self._add_arguments()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def _flag_type(option: Setting) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return option.from_text(text)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(str(exc).partition(": ")[2]) from None
    convert.__name__ = option.name  # argparse names the type in its messages
    return convert


def _topic_flag(text: str) -> tuple[str, int]:
    try:
        return parse_topic(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="fakebroker", description=DESCRIPTION)
    top.add_argument("--version", action="version", version=f"fakebroker {__version__}")
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = commands.add_parser(
        "serve", help="run a fake Kafka cluster until interrupted",
        description="Run a fake Kafka cluster until SIGINT or SIGTERM. Every flag may also be "
                    "given by the environment variable shown beside it; the flag wins.")
    for setting in CLUSTER_SETTINGS.values():
        if setting.name in ("max_request_bytes", "journal_capacity"):
            continue  # Python-only settings: no reason to change them from a shell
        serve.add_argument(setting.flag, type=_flag_type(setting), metavar=setting.metavar,
                           dest=setting.name, action="append" if setting.repeatable else None,
                           help=f"{setting.help} [{setting.env}]")
    serve.add_argument("--no-auto-create-topics", dest="auto_create_topics",
                       action="store_false", default=None,
                       help="same as --auto-create-topics false")
    serve.add_argument("--topic", action="append", type=_topic_flag, metavar="NAME[:PARTITIONS]",
                       help=f"create a topic (repeatable) [{TOPICS_ENV}=a:3,b:1]")
    for option in SERVE_OPTIONS.values():
        serve.add_argument(option.flag, type=_flag_type(option), metavar=option.metavar,
                           help=f"{option.help} [{option.env}]")
    commands.add_parser("ctl", help="control a running 'fakebroker serve' (its --control-port)",
                        arguments=_ctl_arguments)
    commands.add_parser("kafka", help="install Apache Kafka's broker, run it as 1 or N nodes",
                        arguments=_kafka_arguments)
    return top


def _ctl_arguments(parser: argparse.ArgumentParser) -> None:
    from fakebroker.control import ctl

    ctl.add_arguments(parser)


def _kafka_arguments(parser: argparse.ArgumentParser) -> None:
    from fakebroker.real import command

    command.add_arguments(parser)


def resolve(args: argparse.Namespace, environ: Mapping[str, str]) -> argparse.Namespace:
    """Fill every serve option not given as a flag from its environment variable.
    ``OptionError`` names the variable of a bad value."""
    for option in (*CLUSTER_SETTINGS.values(), *SERVE_OPTIONS.values()):
        value = getattr(args, option.name, None)
        if option.repeatable and isinstance(value, list):  # each flag's items, in order
            setattr(args, option.name,
                    option.checked(tuple(item for items in value for item in items)))
        elif value is None and option.env in environ:
            try:
                setattr(args, option.name, option.from_text(environ[option.env]))
            except OptionError as exc:
                raise OptionError(f"{option.env}: {exc}") from None
    if args.topic is None:
        try:
            args.topic = list(parse_topics(environ.get(TOPICS_ENV, "")).items())
        except ValueError as exc:
            raise OptionError(f"{TOPICS_ENV}: {exc}") from None
    try:
        topic_counts(args.topic)
    except ValueError as exc:
        raise OptionError(f"--topic: {exc}") from None
    return args


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``FAKEBROKER_*`` variable no part of fakebroker reads (a typo, most
    likely), naming the closest ``serve`` variable."""
    serve = [o.env for o in (*CLUSTER_SETTINGS.values(), *SERVE_OPTIONS.values())]
    serve.append(TOPICS_ENV)
    unknown = [name for name in sorted(environ) if name.startswith(ENV_PREFIX)
               and name not in serve and name not in OTHER_VARIABLES]
    if not unknown:
        return []
    import difflib  # only to name the closest variable: not on every start

    return [f"{name} is not a fakebroker variable; did you mean "
            f"{difflib.get_close_matches(name, serve, n=1, cutoff=0)[0]}?" for name in unknown]


# The variables other parts of fakebroker read: ctl, Kafka's, the Spark connector's and the
# benchmark's installs, and the project's own test suite and CI (set beside a serve).
OTHER_VARIABLES = frozenset(ENV_PREFIX + name for name in (
    "CONTROL_URL", "CLIENTS_DIR", "MAVEN_REPOSITORY", "SPARK_KAFKA_JARS", "KAFKA_CDS",
    "KAFKA_JVM_OPTS", "CI_DIR", "EXPECT_INSTALLED", "JAVA_CDS", "JAVA_CLIENT", "JAVA_OPTS",
    "NODE_OPTS"))


def cluster_options(args: argparse.Namespace, scenario: Scenario | None) -> dict[str, Any]:
    """open_cluster's options: the scenario's (if any), overridden by flags (or variables)
    given."""
    options: dict[str, Any] = dict(scenario.cluster) if scenario is not None else {}
    for name in CLUSTER_SETTINGS:
        if getattr(args, name, None) is not None:
            options[name] = getattr(args, name)
    options["topics"] = {**(scenario.topics if scenario is not None else {}),
                         **dict(args.topic)}
    return options


def write_ready_file(path: Path, cluster: FakeCluster, control_url: str | None,
                     control_token: str | None = None) -> None:
    """Write the connection details to ``path`` (``write_details``); with a
    ``control_token`` in it, readable by its owner alone (mode 0600)."""
    details: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "brokers": [b.as_dict() for b in cluster.brokers],
        "listeners": cluster.listeners,
        "ssl": cluster.ssl,
        "listen_host": cluster.settings.host,
        "cluster_id": cluster.state.cluster_id,
        "control_url": control_url,
        "pid": os.getpid(),
    }
    if control_token is not None:
        details["control_token"] = control_token
    write_details(path, details, private=control_token is not None)


async def serve(args: argparse.Namespace, scenario: Scenario | None) -> None:
    """Run the cluster until SIGINT or SIGTERM; the ready file is written once every broker
    (and the control API) listens, and removed once the cluster has stopped on a signal."""
    import trio

    from fakebroker.runtime import listen, open_cluster

    journal = args.journal.open("a", encoding="utf-8") if args.journal else None
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with open_cluster(**cluster_options(args, scenario),
                                    journal_sink=journal) as cluster, \
                    trio.open_nursery() as nursery:
                if scenario is not None:
                    from fakebroker.control.scenario import install_faults, run_timeline

                    install_faults(cluster, scenario)
                control_url = control_token = None
                if args.control_port is not None:
                    from fakebroker.control import access
                    from fakebroker.control.http import serve_control

                    control_host = args.control_host or access.LOOPBACK
                    control_token = access.token_for(control_host, args.control_token)
                    listener = await listen(control_host, args.control_port)
                    control_url = access.control_url(control_host,
                                                     listener.socket.getsockname()[1],
                                                     cluster.settings.advertised)
                    nursery.start_soon(serve_control, cluster, listener, control_token)
                if args.ready_file:
                    write_ready_file(args.ready_file, cluster, control_url, control_token)
                print(f"bootstrap.servers={cluster.bootstrap_servers}", flush=True)
                if cluster.settings.listeners:
                    for name, servers in cluster.listeners.items():
                        print(f"listeners.{name}={servers}", flush=True)
                    for name, path in (cluster.ssl or {}).items():
                        if path is not None:
                            print(f"ssl.{name}={path}", flush=True)
                if control_url:
                    print(f"control_url={control_url}", flush=True)
                if scenario is not None:
                    nursery.start_soon(run_timeline, cluster, scenario)
                stopping = threading.Event()
                threading.Thread(target=_import_ahead, args=(stopping,),
                                 name="fakebroker import ahead", daemon=True).start()
                async for _ in signals:
                    break
                stopping.set()
                nursery.cancel_scope.cancel()
    finally:
        if journal is not None:
            journal.close()
    if args.ready_file:
        args.ready_file.unlink(missing_ok=True)


# What every client's first request needs and a broker does not need to listen, each step
# after what it imports, so that each is short: the codec and framing, construct (the type of
# parsed messages), the request path (journal, the handlers' context, what a request names,
# fault rules, error placement, the pipeline) and ApiVersions' module (every client asks it
# first).
IMPORT_AHEAD = (
    "fakebroker.protocol.specs", "fakebroker.protocol.framing", "construct",
    "fakebroker.journal", "fakebroker.api.context", "fakebroker.api.targets",
    "fakebroker.faults.rules", "fakebroker.api.placement", "fakebroker.pipeline",
    "fakebroker.api.api_versions",
)


def _import_ahead(stopping: threading.Event) -> None:
    """Import ``IMPORT_AHEAD`` in turn until done or ``stopping`` is set. ``serve`` runs this in
    a daemon thread once it is ready, so a client's own start overlaps it while the broker
    stays responsive: a request that needs a module still being imported waits for that
    import, as it would have waited importing it itself; a stop waits for one step at most,
    not for the rest (the thread holds the interpreter's lock while it imports). Imports only,
    of modules whose imports form no cycle with the broker's: Python's per-module import
    locks make that safe beside the trio thread."""
    for name in IMPORT_AHEAD:
        if stopping.is_set():
            return
        importlib.import_module(name)


def _one_line(exc: BaseException) -> str:
    """A start-up failure as one line (the first of a group's, which trio may wrap)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    error = getattr(exc, "error", None)  # ClusterError: Kafka's error name first
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{error}: {text}" if error else text


def command() -> NoReturn:
    """The ``fakebroker`` command as a process (the console script, ``python -m fakebroker``):
    ``main()``, then exit with its status at once.

    When ``main`` returns, the command has let go of everything it owns: ``serve`` has closed
    every listener and connection, flushed and closed the journal and removed its ready file.
    All that is left is the interpreter's teardown, freeing every module and object one by one
    (about 40 ms of CPU after ``serve``, most of the time a stop took), which nothing needs;
    so the atexit handlers run (logging's flushes its handlers), stdout and stderr are
    flushed, and ``os._exit`` ends the process with ``main``'s status. The ordinary exit is
    kept when a thread that is not a daemon still runs (the interpreter would wait for it),
    and for an exception out of ``main`` (argparse's ``SystemExit`` for ``--help``, a bug's
    traceback)."""
    status = main()
    if any(not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        sys.exit(status)
    atexit._run_exitfuncs()  # all of them: logging's, and coverage's in a measured run
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing left to do
            pass
    os._exit(status)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "ctl":
        from fakebroker.control import ctl

        return ctl.run(args)
    if args.command == "kafka":
        from fakebroker.real import command

        return command.run(args)
    return run_serve(args, os.environ if environ is None else environ)


def run_serve(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``fakebroker serve``: 0 after a clean stop, 2 (one line on stderr) when it cannot
    start."""
    import trio

    from fakebroker.protocol.errors import ClusterError

    for warning in unknown_variables(environ):
        print(f"fakebroker: warning: {warning}", file=sys.stderr)
    try:
        resolve(args, environ)
        level = args.log_level or "WARNING"
        if args.host is not None and args.scenario is None:  # else checked with the file's
            check_advertised(args.host, args.advertised_host,
                             lambda name: CLUSTER_SETTINGS[name].flag)
        if args.ready_file:
            check_ready_file(args.ready_file)
    except OptionError as exc:
        return _refuse(exc)
    scenario = None
    if args.scenario:  # only a run with a scenario pays for reading one (tomllib, actions)
        from fakebroker.control.scenario import ScenarioError, load_scenario

        try:
            scenario = load_scenario(args.scenario, cluster_options(args, None))
        except (OptionError, ScenarioError) as exc:
            return _refuse(exc)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        trio.run(serve, args, scenario)
    except (OSError, ClusterError, OptionError) as exc:
        return _refuse(exc)
    except BaseExceptionGroup as group:
        leaf = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, OSError | ClusterError | OptionError):
            return _refuse(leaf)
        raise
    return 0


def _refuse(exc: BaseException) -> int:
    print(f"fakebroker: {_one_line(exc)}", file=sys.stderr)
    return USAGE_ERROR

