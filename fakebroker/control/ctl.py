"""``fakebroker ctl``: the control API from a shell script, one call per command.

The broker is found by ``--url`` (the ``control_url`` of the ready file), ``--ready-file``
(the file ``fakebroker serve --ready-file`` wrote) or ``$FAKEBROKER_CONTROL_URL``; its token, if
it requires one, by ``--token``, the ready file's ``control_token`` or
``$FAKEBROKER_CONTROL_TOKEN``, sent as ``Authorization: Bearer <token>``. Answers are
printed as JSON on stdout; an error answer is printed on stderr and the exit status is 1
(2 for bad command-line use), so ``set -e`` scripts stop at a refused call.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakebroker.control.actions import PARAMETERS
from fakebroker.faults.rules import FIELDS
from fakebroker.journal import FILTERS


class ControlCallError(Exception):
    def __init__(self, status: int, answer: Any):
        super().__init__(f"HTTP {status}: {answer}")
        self.status = status
        self.answer = answer


def call(url: str, method: str, path: str, body: Any = None, timeout: float = 30.0,
         token: str | None = None) -> Any:
    """One control API call (with ``token`` as its bearer token, if given);
    ``ControlCallError`` for an error answer."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method,
                                     headers=headers)
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
    ctl.add_argument("--url", help=f"control URL (http://127.0.0.1:PORT) [{URL_ENV}]")
    ctl.add_argument("--ready-file", type=Path, metavar="FILE",
                     help="read control_url (and control_token) from this ready file")
    ctl.add_argument("--token", help=f"the control API's token [{TOKEN_ENV}]; default: the "
                                     "ready file's control_token")
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
    for name, kind in FILTERS.items():
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            journal.add_argument(flag, action="store_true", help=f"only {name} requests")
        else:
            journal.add_argument(flag, type=kind, help=JOURNAL_FILTERS.get(
                name, f"only requests of this {name.replace('_', ' ')}"))
    calls.add_parser("coverage", help="GET /coverage")


PARAMETERS_TYPES = {name: kind for spec in PARAMETERS.values()
                    for name, (kind, _) in spec.items()}
# What each action parameter is (the actions that take it are added to its help).
ACTION_PARAMETERS = {
    "before": "offset the log start moves to (-1: the partition's end)",
    "broker": "a broker id",
    "client_id": "a client's client.id (<default>: the default client-id, for a quota)",
    "count": "how many held requests to let go, the oldest first (default: all)",
    "fault": "a fault rule's id",
    "group": "a group id (or a transactional id, for move-coordinator)",
    "host": "the client address an ACL applies to, or * (every address)",
    "ip": "a client address a quota holds (<default>: the default ip)",
    "key": "a client quota: producer_byte_rate, consumer_byte_rate, request_percentage...",
    "member_id": "a member id of the group",
    "ms": "milliseconds every request waits before it is handled",
    "offset": "offset the log is cut at: records from it on are lost",
    "operation": "an ACL operation: READ, WRITE, DESCRIBE, ALL... (ANY matches every one)",
    "partition": "a partition of the topic",
    "password": "the SASL user's new password (PLAIN and SCRAM)",
    "pattern_type": "LITERAL or PREFIXED: how an ACL's resource name matches",
    "permission": "ALLOW or DENY",
    "principal": "a principal such as User:alice (User:* is everyone)",
    "resource_name": "the name of the resource an ACL names (kafka-cluster for CLUSTER)",
    "resource_type": "TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID... (ANY matches every type)",
    "topic": "a topic name",
    "transactional_id": "a producer's transactional.id",
    "user": "a SASL user's name (<default>: the default user, for a quota)",
    "value": "the quota's value (not given: the quota is removed)",
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


# The journal filters whose help is not "only requests of this <filter>".
JOURNAL_FILTERS = {
    "error": "only requests answered with this error",
    "since": "only requests after this sequence number",
    "limit": "at most this many, the newest",
}


def _fault_parsers(calls: Any) -> None:
    fault = calls.add_parser("fault", help="fault rules: add, list, show, remove, clear, wait, "
                                           "release")
    verbs = fault.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="POST /faults; prints the rule with its id",
                           description="Add a fault rule: every criterion given must match; "
                                       "the rule then does what its actions say.")
    for spec in FIELDS.values():
        flag = "--" + spec.name.replace("_", "-")
        if spec.option is bool:
            add.add_argument(flag, action="store_true", help=spec.help)
        elif spec.option is not None:
            add.add_argument(flag, type=spec.option, help=spec.help)
    add.add_argument("--versions", metavar="LOW[-HIGH]",
                     help="match these API versions (inclusive)")
    add.add_argument("--forever", action="store_true",
                     help="apply until removed (instead of --count)")
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
    for spec in FIELDS.values():
        value = getattr(args, spec.name, None) if spec.option is not None else None
        if value is not None and value is not False:  # a flag not given is left out
            body[spec.name] = value
    if body.get("error", "").lstrip("-").isdigit():
        body["error"] = int(body["error"])
    if args.versions:
        low, _, high = args.versions.partition("-")
        body["versions"] = [int(low), int(high or low)]
    if args.forever:
        body["count"] = None
    if args.respond:
        body["respond"] = _json_option("--respond", args.respond)
    return body


def _json_option(flag: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        print(f"fakebroker ctl: {flag} is not JSON: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


URL_ENV = "FAKEBROKER_CONTROL_URL"
TOKEN_ENV = "FAKEBROKER_CONTROL_TOKEN"


class NotHitInTime(Exception):
    """``fault wait`` gave up: the rule was not hit often enough within the timeout (the
    broker answered all along; not a ``TimeoutError``, which is an ``OSError``, as a broker
    that cannot be reached is)."""


class NoBroker(Exception):
    """No control URL can be had from the command line, the ready file or the environment."""


def control_target(args: argparse.Namespace) -> tuple[str, str | None]:
    """The control API's URL and token. The URL: ``--url``, else the ready file's
    ``control_url``, else ``$FAKEBROKER_CONTROL_URL``; ``NoBroker`` says why there is none.
    The token: ``--token``, else the ready file's ``control_token``, else
    ``$FAKEBROKER_CONTROL_TOKEN``, else None."""
    ready: dict[str, Any] = {}
    if args.ready_file:
        try:
            ready = json.loads(args.ready_file.read_text())
        except (OSError, ValueError) as exc:
            raise NoBroker(f"cannot read the ready file {args.ready_file}: {exc}") from None
    token = args.token or ready.get("control_token") or os.environ.get(TOKEN_ENV) or None
    if args.url:
        return args.url, token
    if args.ready_file:
        if not ready.get("control_url"):
            raise NoBroker(f"{args.ready_file}: the broker was started without --control-port, "
                           "so it serves no control API")
        return ready["control_url"], token
    url = os.environ.get(URL_ENV)
    if not url:
        raise NoBroker(f"give --url, --ready-file or ${URL_ENV}")
    return url, token


def run(args: argparse.Namespace) -> int:
    try:
        url, token = control_target(args)
    except NoBroker as exc:
        print(f"fakebroker ctl: {exc}", file=sys.stderr)
        return 2
    try:
        answer = _dispatch(functools.partial(call, url, token=token), args)
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


def _dispatch(send: Callable[..., Any], args: argparse.Namespace) -> Any:
    """The command's call(s) through ``send(method, path, body=None)``: its answer."""
    if args.call in ("health", "cluster", "coverage"):
        return send("GET", f"/{args.call}")
    if args.call == "create-topic":
        configs = dict(item.split("=", 1) for item in args.config)
        return send("POST", "/topics", {
            "name": args.name, "partitions": args.partitions,
            "replication_factor": args.replication_factor, "configs": configs})
    if args.call == "action":
        body = {p: getattr(args, p) for p in PARAMETERS[args.name]
                if getattr(args, p) is not None}
        return send("POST", f"/actions/{args.name}", body)
    if args.call == "journal":
        values = {name: getattr(args, name) for name in FILTERS}
        query = {name: "true" if value is True else value for name, value in values.items()
                 if value is not None and value is not False}
        return send("GET", "/journal?" + urllib.parse.urlencode(query))
    verb = args.verb
    if verb == "add":
        return send("POST", "/faults", fault_body(args))
    if verb == "list":
        return send("GET", "/faults")
    if verb == "clear":
        return send("DELETE", "/faults")
    if verb == "show":
        return send("GET", f"/faults/{args.id}")
    if verb == "remove":
        return send("DELETE", f"/faults/{args.id}")
    if verb == "release":
        body = None if args.count is None else {"count": args.count}
        return send("POST", f"/faults/{args.id}/release", body)
    deadline = time.monotonic() + args.timeout
    while True:
        rule = send("GET", f"/faults/{args.id}")
        if rule["hits"] >= args.hits:
            return rule
        if time.monotonic() > deadline:
            raise NotHitInTime(f"fault {args.id} was hit {rule['hits']} time(s), not "
                               f"{args.hits}, within {args.timeout} s")
        time.sleep(0.05)
