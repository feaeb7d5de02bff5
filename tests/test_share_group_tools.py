"""Kafka's own tools for share groups (kafka-tools 4.4.0) on the fake as on Apache Kafka 4.4
(``--kafka=both``): ``kafka-configs`` on a group, ``kafka-console-share-consumer``, and
``kafka-share-groups`` listing, describing (offsets, members, state), resetting and deleting
offsets, deleting the group — Admin's share-group calls (describeShareGroups,
listShareGroupOffsets, alterShareGroupOffsets, deleteShareGroupOffsets, deleteShareGroups)
under a user's commands."""

from __future__ import annotations

from typing import Any

import pytest

from tests.absent import needs
from tests.clients.java import run_harness
from tests.clients.tools import run_tool, tools_available

pytestmark = [
    needs(tools_available(), "kafka-tools 4.4.0 (bash .ci/install-kafka)"),
    pytest.mark.fake_kafka(topics={"tasks": 2}),
    pytest.mark.timeout(180),
]
GROUP = "workers"


def tool(kafka: Any, name: str, *args: str) -> str:
    """What Kafka's ``name`` tool prints, run against ``kafka``; it must exit 0."""
    result = run_tool(name, "--bootstrap-server", kafka.bootstrap_servers, *args, timeout=90)
    assert result.status == 0, f"{name} {' '.join(args)} exited {result.status}:\n" \
                               f"{result.stdout}\n{result.stderr}"
    return result.stdout


def table(text: str) -> list[list[str]]:
    """The rows of a table the tool prints, header first, split on whitespace."""
    return [line.split() for line in text.splitlines() if line.strip()]


def share_groups(kafka: Any, *args: str) -> list[list[str]]:
    return table(tool(kafka, "kafka-share-groups", *args))


def test_a_share_group_through_kafkas_tools(kafka: Any) -> None:
    assert tool(kafka, "kafka-configs", "--alter", "--entity-type", "groups", "--entity-name",
                GROUP, "--add-config", "share.auto.offset.reset=earliest").strip() \
        == f"Completed updating config for group {GROUP}."
    described = tool(kafka, "kafka-configs", "--describe", "--entity-type", "groups",
                     "--entity-name", GROUP)
    assert described.splitlines()[0] == f"Dynamic configs for group {GROUP} are:"
    assert "share.auto.offset.reset=earliest" in described
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", "tasks",
                        "--count", "4", "--partition", "0")
    assert lines[-1] == {"done": 4}

    consumed = tool(kafka, "kafka-console-share-consumer", "--topic", "tasks", "--group", GROUP,
                    "--max-messages", "4", "--timeout-ms", "30000")
    assert consumed.split() == ["v0", "v1", "v2", "v3"]

    assert [GROUP] in share_groups(kafka, "--list")
    # the state as the share coordinator wrote it: the accepted records settled from 0
    assert share_groups(kafka, "--describe", "--group", GROUP) == [
        ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
        [GROUP, "tasks", "0", "0", "0"],
        [GROUP, "tasks", "1", "-", "-"]]
    state = share_groups(kafka, "--describe", "--group", GROUP, "--state")
    assert state[0] == ["GROUP", "COORDINATOR", "(ID)", "STATE", "#MEMBERS"]
    assert (state[1][0], state[1][-2:]) == (GROUP, ["Empty", "0"])
    assert share_groups(kafka, "--describe", "--group", GROUP, "--members") == []

    reset = share_groups(kafka, "--reset-offsets", "--group", GROUP, "--topic", "tasks",
                         "--to-earliest", "--execute")
    assert sorted(reset[1:]) == [[GROUP, "tasks", "0", "0"], [GROUP, "tasks", "1", "0"]]
    assert share_groups(kafka, "--describe", "--group", GROUP)[1:] == [
        [GROUP, "tasks", "0", "0", "4"], [GROUP, "tasks", "1", "0", "0"]]

    assert share_groups(kafka, "--delete-offsets", "--group", GROUP, "--topic", "tasks") == [
        ["TOPIC", "STATUS"], ["tasks", "Successful"]]
    assert tool(kafka, "kafka-share-groups", "--delete", "--group", GROUP).strip() == \
        f"Deletion of requested share groups ('{GROUP}') was successful."
    assert [GROUP] not in share_groups(kafka, "--list")
