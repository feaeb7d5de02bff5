"""The matrix as Markdown: one row per client, one column per release and round; a cell is the
outcome both brokers gave, or ``fake X ≠ Kafka Y`` where they differ."""

from __future__ import annotations

from tests.matrix.rounds import ROUNDS
from tests.matrix.run import RELEASES, Matrix


def cell(matrix: Matrix, client: str, release: str, round_: str) -> str:
    on_fake = matrix.cells.get((client, release, "fake", round_))
    on_kafka = matrix.cells.get((client, release, "kafka", round_))
    if on_fake is None or on_kafka is None:
        return "—"
    if on_fake.outcome == on_kafka.outcome:
        return on_fake.outcome
    return f"fake {on_fake.outcome} ≠ Kafka {on_kafka.outcome}"


def render(matrix: Matrix) -> str:
    """The full table, then the clients skipped and the run's duration."""
    clients = list(dict.fromkeys(c for c, *_ in matrix.cells))
    releases = [r for r in RELEASES if any(k[1] == r for k in matrix.cells)]
    rounds = [r for r in ROUNDS if any(k[3] == r for k in matrix.cells)]
    head = ["client", *(f"{r} ({RELEASES[r]}): {n}" for r in releases for n in rounds)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for client in clients:
        row = [client, *(cell(matrix, client, r, n) for r in releases for n in rounds)]
        lines.append("| " + " | ".join(row) + " |")
    for client, why in matrix.skipped.items():
        lines.append(f"\nNot run: {client} ({why}).")
    lines.append(f"\nMeasured in {matrix.seconds / 60:.1f} min.")
    return "\n".join(lines) + "\n"
