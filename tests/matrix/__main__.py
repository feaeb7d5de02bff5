"""``python -m tests.matrix [--client NAME]... [--release LINE]... [--round ROUND]...
[--markdown FILE] [--readme README.md]``: run the client matrix (tests/matrix/__init__.py),
print the table, write it as Markdown to FILE and in short between README's ``<!-- matrix -->``
markers, exit 1 when a cell differs between the fake and Kafka (or, under
``CI=true``, a client is missing)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tests.matrix.clients import CLIENTS
from tests.matrix.rounds import ROUNDS
from tests.matrix.run import RELEASES, run_matrix
from tests.matrix.table import between_markers, compact, render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.matrix")
    parser.add_argument("--client", action="append", choices=[c.name for c in CLIENTS],
                        help="a client's row (repeatable; default every client)")
    parser.add_argument("--release", action="append", choices=list(RELEASES),
                        help="a release line (repeatable; default 3.9 and 4.4)")
    parser.add_argument("--round", action="append", choices=ROUNDS,
                        help="a round (repeatable; default all four)")
    parser.add_argument("--markdown", type=Path, help="write the table to this file")
    parser.add_argument("--readme", type=Path,
                        help="write the short table between this file's matrix markers")
    args = parser.parse_args(argv)
    clients = [c for c in CLIENTS if not args.client or c.name in args.client]
    matrix = run_matrix(clients, args.release or tuple(RELEASES), args.round or ROUNDS,
                        report=lambda line: print(line, flush=True))
    table = render(matrix)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    if args.readme:
        args.readme.write_text(between_markers(args.readme.read_text(), compact(matrix)))
    differences = matrix.differences()
    for client, release, round_, on_fake, on_kafka in differences:
        print(f"DIFFERS {client} {release} {round_}: fake {on_fake.outcome} "
              f"({on_fake.message}) / Kafka {on_kafka.outcome} ({on_kafka.message})")
    in_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    return 1 if differences or (in_ci and matrix.skipped) else 0


if __name__ == "__main__":
    sys.exit(main())
