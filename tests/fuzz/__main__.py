"""``python -m tests.fuzz in-process --inputs N [--seed S] [--crashes FILE]`` fuzzes the fake's
request path in process (tests/fuzz/inprocess.py); ``python -m tests.fuzz differential --inputs
N [--seed S] [--differences FILE]`` sends the same mutated requests to the fake and to a local
Apache Kafka 4.4.0 and compares the outcomes (tests/fuzz/differential.py); ``--only API,API``,
``--skip A-B,C`` and ``--trace`` narrow down the earlier inputs a difference needs. Both print
a summary; exit 1 on a crash (in-process) or a difference not explained in
tests/fuzz/differences.toml (differential)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("mode", choices=("in-process", "differential"))
    parser.add_argument("--inputs", type=int, default=100_000, help="mutated requests to send")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--unguided", action="store_true",
                        help="in-process: no coverage tracing (new outcomes alone make parents)")
    parser.add_argument("--crashes", type=Path,
                        help="in-process: write crashes as JSON lines (each as it is found)")
    parser.add_argument("--differences", type=Path,
                        help="differential: write every difference as JSON lines")
    parser.add_argument("--only", default="",
                        help="differential: send only these APIs' inputs (comma-separated "
                             "names; the others are drawn, not sent)")
    parser.add_argument("--skip", default="",
                        help="differential: inputs not sent, as ranges 'A-B,C' (to narrow "
                             "down the earlier inputs a difference needs)")
    parser.add_argument("--trace", action="store_true",
                        help="differential: print every input sent with both outcomes")
    args = parser.parse_args(argv)
    if args.mode == "in-process":
        from tests.fuzz.inprocess import run_in_process

        def progress(line: str) -> None:
            print(line, flush=True)
            if args.crashes and line.startswith("CRASH "):
                with args.crashes.open("a") as out:
                    out.write(line.removeprefix("CRASH ") + "\n")

        if args.crashes:
            args.crashes.write_text("")
        report = run_in_process(args.inputs, args.seed, guided=not args.unguided,
                                progress=progress)
        print(report.summary())
        for crash in report.crashes:
            print(f"CRASH #{crash.index} {crash.label}\n{crash.problem}")
        if args.crashes:
            args.crashes.write_text("".join(json.dumps(c.as_json()) + "\n"
                                            for c in report.crashes))
        return 1 if report.crashes else 0
    from tests.fuzz.differential import run_differential

    only = {name for name in args.only.split(",") if name}
    skipped = [range(int(a), int(b or a) + 1) for a, _, b in
               (part.partition("-") for part in args.skip.split(",") if part)]

    def sent(index: int, api: str) -> bool:
        return (not only or api in only) and not any(index in r for r in skipped)

    with tempfile.TemporaryDirectory(prefix="fuzz-kafka-") as tmp:
        result = run_differential(Path(tmp), args.inputs, args.seed,
                                  progress=lambda line: print(line, flush=True),
                                  sent=sent if only or skipped else None,
                                  trace=(lambda line: print(line, flush=True))
                                  if args.trace else None)
    print(result.summary())
    if args.differences:
        args.differences.write_text("".join(json.dumps(d.as_json()) + "\n"
                                            for d in result.differences))
    return 1 if result.unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
