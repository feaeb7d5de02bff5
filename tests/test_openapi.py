"""The control API's OpenAPI document names exactly the routes and methods the server routes,
and the bodies it declares are the ones the server takes."""

from __future__ import annotations

import json

import h11
import pytest
import trio

from fakebroker import open_cluster
from fakebroker.control.http import ControlApi, HttpError
from fakebroker.control.openapi import document
from fakebroker.faults.rules import FIELDS
from fakebroker.journal import FILTERS
from fakebroker.operations import OPERATIONS

METHODS = ("GET", "POST", "DELETE", "PUT", "PATCH")


async def status(api: ControlApi, method: str, path: str, body: object = None
                 ) -> tuple[int, str]:
    """The status of a request, and the error's message if it is refused."""
    try:
        code, _ = await api.route(method, path, json.dumps(body).encode() if body else b"")
        return code, ""
    except HttpError as exc:
        return exc.status, str(exc)


def test_every_documented_route_is_served_and_every_other_method_refused():
    paths = document()["paths"]

    async def main():
        async with open_cluster(topics={"orders": 1}) as cluster:
            api = ControlApi(cluster)
            for path, item in paths.items():
                concrete = path.replace("{id}", "1")
                documented = {m.upper() for m in item if m != "parameters"}
                for method in METHODS:
                    code, message = await status(api, method, concrete)
                    if method in documented:
                        assert not message.startswith("no route") and code != 405, \
                            (method, path, message)
                    else:
                        assert code == 405, (method, path, code)
            assert (await status(api, "GET", "/nothing-documented"))[0] == 404

    trio.run(main)


def test_with_a_token_every_documented_route_answers_401_without_it():
    paths = document()["paths"]

    async def main():
        async with open_cluster() as cluster:
            api = ControlApi(cluster, token="s3cret")
            for path, item in paths.items():
                assert all("401" in op["responses"] for m, op in item.items()
                           if m != "parameters")
                for method in (m.upper() for m in item if m != "parameters"):
                    request = h11.Request(method=method, target=path.replace("{id}", "1"),
                                          headers=[("host", "127.0.0.1")])
                    with pytest.raises(HttpError) as refused:
                        await api.serve(request, b"")
                    assert refused.value.status == 401, (method, path)
            assert list(cluster.faults) == []  # nothing changed

    trio.run(main)


def test_every_operation_and_its_parameters_is_an_action_route():
    paths = document()["paths"]
    for name, op in OPERATIONS.items():
        body = paths[f"/actions/{name}"]["post"]["requestBody"]["content"]["application/json"]
        assert list(body["schema"]["properties"]) == [p.name for p in op.parameters]


def test_the_fault_rule_schema_is_the_fields_and_the_journal_query_its_filters():
    doc = document()
    assert list(doc["components"]["schemas"]["FaultRule"]["properties"]) == list(FIELDS)
    query = doc["paths"]["/journal"]["get"]["parameters"]
    assert [p["name"] for p in query] == list(FILTERS)


@pytest.mark.parametrize("body", [{"topic": "orders"}, {"topic": "orders", "partition": 0}])
def test_a_body_as_the_document_declares_it_is_taken(body):
    async def main():
        async with open_cluster(brokers=2, topics={"orders": 1}) as cluster:
            code, _ = await status(ControlApi(cluster), "POST", "/actions/move-leader", body)
            return code

    assert trio.run(main) == 200
