"""``fakebroker ctl``: the control API from a shell script, one call per command.

The broker is found by ``--url`` (the ``control_url`` of the ready file), ``--ready-file``
(the file ``fakebroker serve --ready-file`` wrote) or ``$FAKEBROKER_CONTROL_URL``. Answers are
printed as JSON on stdout; an error answer is printed on stderr and the exit status is 1
(2 for bad command-line use), so ``set -e`` scripts stop at a refused call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from fakebroker.control.actions import PARAMETERS


class ControlCallError(Exception):
    def __init__(self, status: int, answer: Any):
        super().__init__(f"HTTP {status}: {answer}")
        self.status = status
        self.answer = answer


def call(url: str, method: str, path: str, body: Any = None, timeout: float = 30.0) -> Any:
    """One control API call; ``ControlCallError`` for an error answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        text = exc.read()
        try:
            raise ControlCallError(exc.code, json.loads(text)) from None
        except ValueError:
            raise ControlCallError(exc.code, text.decode(errors="replace")) from None


DESCRIPTION = ("Control a running 'fakebroker serve' through its HTTP control API, one call "
               "per command: the answer is printed as JSON on stdout; an error answer goes to "
               "stderr with exit status 1 (2 for bad command-line use).")


def add_arguments(ctl: argparse.ArgumentParser) -> None:
    """Give ``fakebroker ctl``'s parser its description, options and calls; every option has
    its help."""
    ctl.description = DESCRIPTION
    ctl.add_argument("--url", help="control URL (http://127.0.0.1:PORT) [FAKEBROKER_CONTROL_URL]")
    ctl.add_argument("--ready-file", type=Path, metavar="FILE",
                     help="read control_url from this ready file")
    calls = ctl.add_subparsers(dest="call", required=True)
    calls.add_parser("health", help="GET /health")
    calls.add_parser("cluster", help="GET /cluster: brokers, topics, partitions, groups")
    topic = calls.add_parser("create-topic", help="POST /topics")
    topic.add_argument("name", help="the topic's name")
    topic.add_argument("--partitions", type=int, default=1, help="partition count (default 1)")
    topic.add_argument("--replication-factor", type=int, default=1,
                       help="replicas of each partition (default 1)")
    topic.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                       help="a topic config, as Kafka names it (repeatable)")
    _fault_parsers(calls)
    action = calls.add_parser(
        "action", help="POST /actions/NAME: a natural failure",
        description="Run one of the cluster's actions (natural failures); each takes the "
                    "options listed with it below.",
        epilog=_actions_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    action.add_argument("name", choices=sorted(PARAMETERS), metavar="NAME",
                        help="the action: one of those below")
    for parameter in sorted({p for spec in PARAMETERS.values() for p in spec}):
        kind = PARAMETERS_TYPES.get(parameter, str)
        users = ", ".join(name for name, spec in PARAMETERS.items() if parameter in spec)
        action.add_argument(f"--{parameter.replace('_', '-')}", type=kind, dest=parameter,
                            help=f"{ACTION_PARAMETERS[parameter]} ({users})")
    journal = calls.add_parser("journal", help="GET /journal: requests seen (JSON lines)")
    journal.add_argument("--api", help="only requests of this API (Fetch)")
    journal.add_argument("--client-id", help="only requests of this client.id")
    journal.add_argument("--error", help="only requests answered with this error")
    journal.add_argument("--broker", type=int, help="only requests to this broker id")
    journal.add_argument("--since", type=int, metavar="SEQ",
                         help="only requests after this sequence number")
    journal.add_argument("--limit", type=int, help="at most this many, the newest")
    journal.add_argument("--faulted", action="store_true", help="only faulted requests")
    calls.add_parser("coverage", help="GET /coverage")


PARAMETERS_TYPES = {name: kind for spec in PARAMETERS.values()
                    for name, (kind, _) in spec.items()}
# What each action parameter is (the actions that take it are added to its help).
ACTION_PARAMETERS = {
    "before": "offset the log start moves to (-1: the partition's end)",
    "broker": "a broker id",
    "count": "how many held requests to let go, the oldest first (default: all)",
    "fault": "a fault rule's id",
    "group": "a group id (or a transactional id, for move-coordinator)",
    "member_id": "a member id of the group",
    "ms": "milliseconds every request waits before it is handled",
    "offset": "offset the log is cut at: records from it on are lost",
    "partition": "a partition of the topic",
    "topic": "a topic name",
    "transactional_id": "a producer's transactional.id",
}


def _actions_epilog() -> str:
    """Each action with its options (optional ones in brackets), from the cluster's declared
    operations."""
    from fakebroker.operations import OPERATIONS, REQUIRED

    lines = ["actions:"]
    for name, declared in sorted(OPERATIONS.items()):
        options = [f"--{p.name.replace('_', '-')}" for p in declared.parameters]
        lines.append(" ".join([f"  {name}", *(
            option if p.default is REQUIRED and not p.optional else f"[{option}]"
            for option, p in zip(options, declared.parameters, strict=True))]))
    return "\n".join(lines)


FAULT_OPTIONS: dict[str, tuple[type, str]] = {
    "api": (str, "match requests of this API, by name (Fetch) or key"),
    "broker": (int, "match requests to this broker id"),
    "client-id": (str, "match requests of this client.id"),
    "topic": (str, "match requests naming this topic (name or topic id)"),
    "partition": (int, "match this partition of the topic"),
    "group": (str, "match requests naming this group id"),
    "transactional-id": (str, "match requests naming this transactional.id"),
    "count": (int, "apply to this many matching requests (default 1)"),
    "after": (int, "let the first N matching requests through untouched"),
    "probability": (float, "apply to each match with this probability (seeded by --seed)"),
    "error": (str, "answer this Kafka error, by name (NOT_LEADER_OR_FOLLOWER) or code, "
                   "where Kafka puts it"),
    "delay-ms": (int, "handle each matching request this many milliseconds late"),
    "throttle-ms": (int, "answer with this throttle_time_ms, muting the connection as long"),
}
FAULT_FLAGS = {
    "drop": "close the connection without answering",
    "hang": "never answer",
    "hold": "hold each matching request until 'fault release'",
    "apply-then": "apply the request first (records appended, offsets stored), then answer "
                  "--error or --respond, or --drop it: the lost acknowledgement",
}


def _fault_parsers(calls: Any) -> None:
    fault = calls.add_parser("fault", help="fault rules: add, list, show, remove, clear, wait, "
                                           "release")
    verbs = fault.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="POST /faults; prints the rule with its id",
                           description="Add a fault rule: every criterion given must match; "
                                       "the rule then does what its actions say.")
    for name, (kind, text) in FAULT_OPTIONS.items():
        add.add_argument(f"--{name}", type=kind, help=text)
    add.add_argument("--versions", metavar="LOW[-HIGH]",
                     help="match these API versions (inclusive)")
    add.add_argument("--forever", action="store_true",
                     help="apply until removed (instead of --count)")
    for flag, text in FAULT_FLAGS.items():
        add.add_argument(f"--{flag}", action="store_true", help=text)
    add.add_argument("--respond", metavar="JSON",
                     help="answer this, the whole answer's fields as a JSON object")
    add.add_argument("--json", help="the rule as a JSON object instead of options")
    verbs.add_parser("list", help="GET /faults")
    for verb in ("show", "remove"):
        verbs.add_parser(verb, help=f"{verb} one rule").add_argument(
            "id", type=int, help="the rule's id")
    verbs.add_parser("clear", help="DELETE /faults")
    wait = verbs.add_parser("wait", help="wait until a rule was hit N times")
    wait.add_argument("id", type=int, help="the rule's id")
    wait.add_argument("--hits", type=int, default=1, help="hits to wait for, in all (default 1)")
    wait.add_argument("--timeout", type=float, default=30.0,
                      help="seconds before giving up, exit status 1 (default 30)")
    release = verbs.add_parser("release", help="POST /faults/ID/release: let held requests "
                                               "go on")
    release.add_argument("id", type=int, help="the hold rule's id")
    release.add_argument("--count", type=int, help="the N oldest (default: all)")


def fault_body(args: argparse.Namespace) -> dict[str, Any]:
    if args.json:
        return _json_option("--json", args.json)
    body: dict[str, Any] = {}
    for name in FAULT_OPTIONS:
        value = getattr(args, name.replace("-", "_"))
        if value is not None:
            body[name.replace("-", "_")] = value
    if body.get("error", "").lstrip("-").isdigit():
        body["error"] = int(body["error"])
    if args.versions:
        low, _, high = args.versions.partition("-")
        body["versions"] = [int(low), int(high or low)]
    if args.forever:
        body["count"] = None
    for flag in ("drop", "hang", "hold", "apply_then"):
        if getattr(args, flag):
            body[flag] = True
    if args.respond:
        body["respond"] = _json_option("--respond", args.respond)
    return body


def _json_option(flag: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        print(f"fakebroker ctl: {flag} is not JSON: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


class NotHitInTime(Exception):
    """``fault wait`` gave up: the rule was not hit often enough within the timeout (the
    broker answered all along; not a ``TimeoutError``, which is an ``OSError``, as a broker
    that cannot be reached is)."""


class NoBroker(Exception):
    """No control URL can be had from the command line, the ready file or the environment."""


def control_url(args: argparse.Namespace) -> str:
    """The control API's URL: ``--url``, else the ready file's ``control_url``, else
    ``$FAKEBROKER_CONTROL_URL``; ``NoBroker`` says why there is none."""
    if args.url:
        return args.url
    if args.ready_file:
        try:
            url = json.loads(args.ready_file.read_text()).get("control_url")
        except (OSError, ValueError) as exc:
            raise NoBroker(f"cannot read the ready file {args.ready_file}: {exc}") from None
        if not url:
            raise NoBroker(f"{args.ready_file}: the broker was started without --control-port, "
                           "so it serves no control API")
        return url
    url = os.environ.get("FAKEBROKER_CONTROL_URL")
    if not url:
        raise NoBroker("give --url, --ready-file or $FAKEBROKER_CONTROL_URL")
    return url


def run(args: argparse.Namespace) -> int:
    try:
        url = control_url(args)
    except NoBroker as exc:
        print(f"fakebroker ctl: {exc}", file=sys.stderr)
        return 2
    try:
        answer = _dispatch(url, args)
    except ControlCallError as exc:
        print(json.dumps(exc.answer), file=sys.stderr)
        return 1
    except NotHitInTime as exc:
        print(f"fakebroker ctl: {exc}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"fakebroker ctl: cannot reach {url}: {exc}", file=sys.stderr)
        return 1
    if args.call == "journal":
        for entry in answer:
            print(json.dumps(entry))
    else:
        print(json.dumps(answer, indent=2))
    return 0


def _dispatch(url: str, args: argparse.Namespace) -> Any:
    if args.call in ("health", "cluster", "coverage"):
        return call(url, "GET", f"/{args.call}")
    if args.call == "create-topic":
        configs = dict(item.split("=", 1) for item in args.config)
        return call(url, "POST", "/topics", {
            "name": args.name, "partitions": args.partitions,
            "replication_factor": args.replication_factor, "configs": configs})
    if args.call == "action":
        body = {p: getattr(args, p) for p in PARAMETERS[args.name]
                if getattr(args, p) is not None}
        return call(url, "POST", f"/actions/{args.name}", body)
    if args.call == "journal":
        query = {k: v for k, v in {
            "api": args.api, "client_id": args.client_id, "error": args.error,
            "broker": args.broker, "since": args.since, "limit": args.limit,
            "faulted": "true" if args.faulted else None}.items() if v is not None}
        return call(url, "GET", "/journal?" + urllib.parse.urlencode(query))
    verb = args.verb
    if verb == "add":
        return call(url, "POST", "/faults", fault_body(args))
    if verb == "list":
        return call(url, "GET", "/faults")
    if verb == "clear":
        return call(url, "DELETE", "/faults")
    if verb == "show":
        return call(url, "GET", f"/faults/{args.id}")
    if verb == "remove":
        return call(url, "DELETE", f"/faults/{args.id}")
    if verb == "release":
        body = None if args.count is None else {"count": args.count}
        return call(url, "POST", f"/faults/{args.id}/release", body)
    deadline = time.monotonic() + args.timeout
    while True:
        rule = call(url, "GET", f"/faults/{args.id}")
        if rule["hits"] >= args.hits:
            return rule
        if time.monotonic() > deadline:
            raise NotHitInTime(f"fault {args.id} was hit {rule['hits']} time(s), not "
                               f"{args.hits}, within {args.timeout} s")
        time.sleep(0.05)
