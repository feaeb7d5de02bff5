"""The matrix as Markdown: in full (one row per client, one column per release and round; a
cell is the outcome both brokers gave, or ``fake X ≠ Kafka Y`` where they differ), and compact
for README (one column per release: the rounds that did not pass; clients alike share a row)."""

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


def compact(matrix: Matrix) -> str:
    """One column per release: how many rounds passed on both brokers, then each other
    round's cell; one row per run of clients (in the matrix's order) with the same cells."""
    clients = list(dict.fromkeys(c for c, *_ in matrix.cells))
    releases = [r for r in RELEASES if any(k[1] == r for k in matrix.cells)]
    rounds = [r for r in ROUNDS if any(k[3] == r for k in matrix.cells)]
    rows: list[tuple[list[str], list[str]]] = []
    for client in clients:
        outcomes = []
        for release in releases:
            cells = {n: cell(matrix, client, release, n) for n in rounds}
            others = [f"{n}: {c}" for n, c in cells.items() if c != "pass"]
            outcomes.append("; ".join([f"{len(cells) - len(others)} rounds pass", *others]))
        if rows and rows[-1][1] == outcomes:
            rows[-1][0].append(client)
        else:
            rows.append(([client], outcomes))
    lines = ["| clients | " + " | ".join(f"Kafka {r} (fake and {RELEASES[r]})"
                                        for r in releases) + " |",
             "|" + "---|" * (len(releases) + 1)]
    lines += ["| " + " | ".join([", ".join(names), *outcomes]) + " |" for names, outcomes in rows]
    return "\n".join(lines) + "\n"


def between_markers(text: str, table: str) -> str:
    """``text`` with what stands between README's ``<!-- matrix -->`` and
    ``<!-- /matrix -->`` lines replaced by ``table``."""
    head, rest = text.split("<!-- matrix -->\n", 1)
    _, tail = rest.split("<!-- /matrix -->\n", 1)
    return f"{head}<!-- matrix -->\n{table}<!-- /matrix -->\n{tail}"
