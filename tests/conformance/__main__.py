"""``python -m tests.conformance [--output FILE] [--details] [--dump FILE]``: run the
comparison (a real Kafka and a fake broker, ~20 s), write the conformance table (default:
CONFORMANCE.md at the top of the repository) and exit 1 if a difference is not listed as
intended (or an intended entry matched nothing). ``--details`` also prints every difference,
intended or not; ``--dump`` writes every request with both normalised answers (JSON lines)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tests.conformance.compare import short, summary
from tests.conformance.run import TABLE, run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=TABLE, help="table file to write")
    parser.add_argument("--details", action="store_true", help="print every difference")
    parser.add_argument("--dump", type=Path, help="write every exchange here (JSON lines)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        result = run(Path(tmp))
    args.output.write_text(result.markdown())
    if args.dump:
        with args.dump.open("w") as out:
            for exchange in result.exchanges:
                r = exchange.request
                out.write(json.dumps({"api": r.api, "version": r.version, "case": r.case,
                                      **exchange.answers}, default=repr) + "\n")
    for cell in result.cells:
        for finding in cell.findings if args.details else cell.unexplained:
            d = finding.difference
            label = finding.intended.id if finding.intended else "DIFFERS"
            print(f"{label:8} {cell.api} v{cell.version} [{finding.case}] {d.path}: "
                  f"{short(d.kafka, 200)} / {short(d.fake, 200)}")
    print(f"{args.output}: " + ", ".join(f"{n} {s}" for s, n in summary(result.cells).items()))
    for entry in result.unused:
        print(f"intended entry {entry.id} ({entry.api}) matched nothing: remove it")
    return 1 if result.failures or result.unused else 0


if __name__ == "__main__":
    sys.exit(main())
