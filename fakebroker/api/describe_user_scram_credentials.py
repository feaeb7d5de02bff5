"""DescribeUserScramCredentials (key 50): which SCRAM mechanisms each user has, and their
iteration counts (never a salt or a key).

Versions: 0. Flexible from v0.

Behavior, as Kafka 4.4's ``ScramImage.describe``: a request listing no users (null or empty)
describes every user with a SCRAM credential; a listed user is answered once, with
RESOURCE_NOT_FOUND ("Attempt to describe a user credential that does not exist: NAME") when it
has none, and DUPLICATE_RESOURCE ("Cannot describe SCRAM credentials for the same user twice
in a single request: NAME") when listed more than once. A user's credentials are listed
SCRAM-SHA-256 (mechanism 1) then SCRAM-SHA-512 (2). The top-level error is 0; an error
message Kafka does not set is "" (the field's default), not null. Users made with
``sasl_users``, AlterUserScramCredentials and the ``set_sasl_user`` operation are all here.
"""

from __future__ import annotations

from typing import Any

from fakebroker.api.access import cluster
from fakebroker.api.context import RequestContext
from fakebroker.api.shapes import TOP_LEVEL
from fakebroker.protocol.errors import error_code

API_KEY = 50
ERROR_PLACEMENT = TOP_LEVEL
# Kafka's org.apache.kafka.clients.admin.ScramMechanism type numbers.
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
NOT_FOUND = "Attempt to describe a user credential that does not exist: "
DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
AUTHORIZES = (cluster("DESCRIBE"),)


def handle(request: Any, ctx: RequestContext) -> dict[str, Any]:
    users = ctx.cluster.credentials.scram_users()
    named = [user.name for user in request.users or ()]
    asked = dict.fromkeys(named or users)
    results = []
    for name in asked:
        result: dict[str, Any] = {"user": name, "error_code": 0, "error_message": "",
                                  "credential_infos": []}
        if named.count(name) > 1:
            result.update(error_code=error_code("DUPLICATE_RESOURCE"),
                          error_message=DUPLICATE + name)
        elif name not in users:
            result.update(error_code=error_code("RESOURCE_NOT_FOUND"),
                          error_message=NOT_FOUND + name)
        else:
            result["credential_infos"] = [
                {"mechanism": number, "iterations": users[name][mechanism].iterations}
                for mechanism, number in MECHANISM_TYPES.items() if mechanism in users[name]]
        results.append(result)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "results": results}
