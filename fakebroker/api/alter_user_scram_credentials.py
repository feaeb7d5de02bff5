"""AlterUserScramCredentials (key 51): add, replace and delete users' SCRAM credentials.

Versions: 0. Flexible from v0.

Behavior, as Kafka 4.4's controller (``ScramControlManager.alterCredentials``): an upsertion
carries the salt, the iteration count and the salted password (the client salts, the broker
keeps StoredKey and ServerKey, never the password); a deletion names a user and a mechanism.
Each user gets one result: DUPLICATE_RESOURCE ("A user credential cannot be altered twice in
the same request") when named twice anywhere in the request (deletions and upsertions alike),
UNACCEPTABLE_CREDENTIAL for an empty user name ("Username must not be empty") or an iteration
count below 4096 ("Too few iterations") or above 16384 ("Too many iterations"),
UNSUPPORTED_SASL_MECHANISM for a mechanism other than 1 (SCRAM-SHA-256) and 2 (SCRAM-SHA-512)
("Unknown SCRAM mechanism"), RESOURCE_NOT_FOUND for deleting a credential the user does not
have ("Attempt to delete a user credential that does not exist"), UNKNOWN_SERVER_ERROR with no
message for an empty salted password (Kafka's HMAC refuses an empty key). The others are
applied together; results list the deletions done, then the upsertions done, then the users
refused. A change applies from the next authentication; connections already authenticated
keep working. PLAIN passwords (``sasl_users``) are not SCRAM credentials and stay as they are.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import Placement, per_group
from fakebroker.protocol.errors import error_code
from fakebroker.state.credentials import MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential

API_KEY = 51
# Per user; a fault names the users of the upsertions (the deletions' users are not matched).
ERROR_PLACEMENT = Placement(per_group("upsertions", "results", "user", key="name"))
MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
TWICE = "A user credential cannot be altered twice in the same request"
AUTHORIZES = (cluster("ALTER"),)

Refusal = tuple[str, str | None]  # (error name, message)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    credentials = ctx.cluster.credentials
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    refused: dict[str, Refusal] = {}
    for deletion in request.deletions:
        name = deletion.name
        if name in refused:
            continue
        if deletions.pop(name, None) is not None:
            refused[name] = ("DUPLICATE_RESOURCE", TWICE)
        elif (refusal := _named(name, deletion.mechanism)) is not None:
            refused[name] = refusal
        elif credentials.scram(MECHANISMS[deletion.mechanism], name) is None:
            refused[name] = ("RESOURCE_NOT_FOUND",
                             "Attempt to delete a user credential that does not exist")
        else:
            deletions[name] = deletion
    for upsertion in request.upsertions:
        name = upsertion.name
        if name in refused:
            continue
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            refused[name] = ("DUPLICATE_RESOURCE", TWICE)
        elif (refusal := _upsertable(upsertion)) is not None:
            refused[name] = refusal
        else:
            upsertions[name] = upsertion
    results = []
    for name, deletion in deletions.items():
        credentials.delete_scram(name, MECHANISMS[deletion.mechanism])
        results.append(_result(name))
    for name, upsertion in upsertions.items():
        if not upsertion.salted_password:
            refused[name] = ("UNKNOWN_SERVER_ERROR", None)
            continue
        credentials.set_scram(name, ScramCredential.from_salted_password(
            MECHANISMS[upsertion.mechanism], upsertion.salted_password, upsertion.salt,
            upsertion.iterations))
        results.append(_result(name))
    results.extend(_result(name, *refusal) for name, refusal in refused.items())
    return {"throttle_time_ms": 0, "results": results}


def _named(name: str, mechanism: int) -> Refusal | None:
    if not name:
        return ("UNACCEPTABLE_CREDENTIAL", "Username must not be empty")
    if mechanism not in MECHANISMS:
        return ("UNSUPPORTED_SASL_MECHANISM", "Unknown SCRAM mechanism")
    return None


def _upsertable(upsertion: Any) -> Refusal | None:
    refusal = _named(upsertion.name, upsertion.mechanism)
    if refusal is None and upsertion.iterations < MIN_ITERATIONS:
        refusal = ("UNACCEPTABLE_CREDENTIAL", "Too few iterations")
    elif refusal is None and upsertion.iterations > MAX_ITERATIONS:
        refusal = ("UNACCEPTABLE_CREDENTIAL", "Too many iterations")
    return refusal


def _result(user: str, error: str | None = None, message: str | None = None
            ) -> dict[str, Any]:
    return {"user": user, "error_code": error_code(error) if error else 0,
            "error_message": message}
