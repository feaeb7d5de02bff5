"""Kafka's own tool for streams groups (``kafka-streams-groups``, kafka-tools 4.4.0) on the
fake as on Apache Kafka 4.4 (``--kafka=both``), about a Kafka Streams 4.4.0 word count running
with ``group.protocol=streams``: listing the group, describing its state, members, tasks and
offsets, and once the application stopped resetting and deleting its offsets and deleting the
group — Admin's streams-group calls (listGroups, describeStreamsGroups,
listStreamsGroupOffsets, alterStreamsGroupOffsets, deleteStreamsGroupOffsets,
deleteStreamsGroups) under a user's commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakebroker.real_cluster import wait_for as eventually
from tests.absent import needs
from tests.clients.java import run_harness
from tests.clients.streams import start_word_count, streams_available
from tests.clients.tools import run_tool, tools_available

pytestmark = [
    needs(tools_available() and streams_available(),
          "kafka-tools and kafka-streams 4.4.0 (bash .ci/install-kafka)"),
    pytest.mark.fake_kafka(topics={"lines": 2, "counts": 2}),
    pytest.mark.timeout(180),
]
APP = "wc"


def tool(kafka: Any, *args: str) -> str:
    """What ``kafka-streams-groups`` prints, run against ``kafka``; it must exit 0."""
    result = run_tool("kafka-streams-groups", "--bootstrap-server", kafka.bootstrap_servers,
                      *args, timeout=90)
    assert result.status == 0, f"kafka-streams-groups {' '.join(args)} exited " \
                               f"{result.status}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def table(text: str) -> list[list[str]]:
    """The rows of a table the tool prints, header first, split on whitespace."""
    return [line.split() for line in text.splitlines() if line.strip()]


def test_a_streams_group_through_kafkas_tool(kafka: Any, tmp_path: Path) -> None:
    lines = run_harness("produce", "--bootstrap", kafka.bootstrap_servers, "--topic", "lines",
                        "--count", "6")
    assert lines[-1] == {"done": 6}
    with start_word_count(kafka.bootstrap_servers, app_id=APP, input="lines", output="counts",
                          state_dir=tmp_path / "state",
                          props=("group.protocol=streams",)) as app:
        app.wait_for({"state": "RUNNING"}, timeout=60)
        eventually(lambda: (g := kafka.group(APP)) and g.state == "Stable", "a stable group")
        assert tool(kafka, "--list").split() == [APP]
        offsets = table(tool(kafka, "--describe", "--group", APP))
        assert offsets[0] == ["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"]
        assert sorted(offsets[1:]) == [  # in no fixed order, on Kafka too
            [APP, "lines", "0", "0"], [APP, "lines", "1", "0"],
            [APP, "wc-words-repartition", "0", "0"], [APP, "wc-words-repartition", "1", "0"]]
        state = table(tool(kafka, "--describe", "--group", APP, "--state"))
        assert state[0] == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNOR", "STATE", "#MEMBERS"]
        assert (state[1][0], state[1][-3:]) == (APP, ["sticky", "Stable", "1"])
        members = table(tool(kafka, "--describe", "--group", APP, "--members", "--verbose"))
        assert members[0] == ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
                              "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID",
                              "ASSIGNMENTS"]
        (member,) = members[1:]
        group, target_epoch, topology_epoch, _, protocol, epoch, process, client = member[:8]
        assert (group, topology_epoch, protocol) == (APP, "0", "streams")
        assert target_epoch == epoch == str(kafka.group(APP).generation_id)
        assert client == f"{APP}-{process}-StreamThread-1-consumer"
        assert " ".join(member[8:]) == \
            "ACTIVE: 0:[0,1]; 1:[0,1]; TARGET-ACTIVE: 0:[0,1]; 1:[0,1];"
        app.stop()
    state = table(tool(kafka, "--describe", "--group", APP, "--state"))
    assert (state[-1][0], state[-1][-2:]) == (APP, ["Empty", "0"])
    reset = table(tool(kafka, "--reset-offsets", "--group", APP, "--input-topic", "lines",
                       "--to-earliest", "--execute"))
    assert reset == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
                     [APP, "lines", "0", "0"], [APP, "lines", "1", "0"]]
    assert kafka.committed(APP, "lines", 1) == 0
    deleted = tool(kafka, "--delete-offsets", "--group", APP, "--input-topic", "lines")
    assert table(deleted) == [["Request", "succeeded", "for", "deleting", "offsets", "from",
                               "group", f"{APP}."], ["TOPIC", "PARTITION", "STATUS"],
                              ["lines", "0", "Successful"], ["lines", "1", "Successful"]]
    assert kafka.committed(APP, "lines", 0) is None
    assert tool(kafka, "--delete", "--group", APP).strip() == \
        f"Deletion of requested streams groups ('{APP}') was successful."
    assert tool(kafka, "--list").split() == []
