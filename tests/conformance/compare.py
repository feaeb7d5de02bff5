"""Field-by-field comparison of normalised answers, the intended differences, and the table.

``differences(kafka, fake)`` lists every field path where two answers differ. Each difference
is then matched against ``intended.toml``: a known difference is reported as "intended" with
its reason, any other makes its API×version cell "differs". ``table`` writes CONFORMANCE.md.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance.normalise import Keyed
from tests.real_kafka import KAFKA_VERSION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

INTENDED = Path(__file__).with_name("intended.toml")
KNOWN = Path(__file__).with_name("known.toml")
KNOWN_KEYS = ("id", "where", "kafka", "fake", "reason", "test")
# A cell's status, in the order the summary counts them.
NOT_SERVED = f"not served by Kafka {'.'.join(KAFKA_VERSION.split('.')[:2])}"
NO_REQUEST = "no request in the corpus"
STATUSES = ("identical", "intended", "differs", NOT_SERVED, NO_REQUEST)
KEYS = frozenset(("id", "api", "versions", "case", "path", "paths", "kafka", "fake", "reason"))
ABSENT = "<absent>"
KAFKA, FAKE = "kafka", "fakebroker"


@dataclass(frozen=True)
class Difference:
    """One field where the answers differ: its path and both values (ABSENT when missing)."""

    path: str
    kafka: Any
    fake: Any


def differences(kafka: Any, fake: Any, path: str = "") -> list[Difference]:
    """Every path where ``kafka`` and ``fake`` differ: mappings field by field (``Keyed``
    ones key by key), lists item by item (and their lengths), other values by equality."""
    if isinstance(kafka, Mapping) and isinstance(fake, Mapping):
        keyed = isinstance(kafka, Keyed) or isinstance(fake, Keyed)
        found = []
        for key in list(kafka) + [k for k in fake if k not in kafka]:
            sub = f"{path}[{key}]" if keyed else (f"{path}.{key}" if path else str(key))
            found += differences(kafka.get(key, ABSENT), fake.get(key, ABSENT), sub)
        return found
    if isinstance(kafka, list) and isinstance(fake, list):
        found = []
        if len(kafka) != len(fake):
            found.append(Difference(f"{path}.length", len(kafka), len(fake)))
        for i, (k, f) in enumerate(zip(kafka, fake, strict=False)):
            found += differences(k, f, f"{path}[{i}]")
        return found
    if kafka == fake and type(kafka) is type(fake):
        return []
    return [Difference(path or "(answer)", kafka, fake)]


def short(value: Any, width: int = 60) -> str:
    """A value in at most ``width`` characters, for the table (strings quoted, but for the
    markers the normalisers and the replay write, such as ``<absent>``)."""
    if isinstance(value, bytes):
        text = f"bytes[{len(value)}]"
    elif isinstance(value, str):
        text = repr(value) if not value.startswith("<") else value
    else:
        text = repr(value)
    return _cut(text, width)


def _cut(text: str, width: int) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in pattern) + r"\Z")


def _versions(text: str) -> frozenset[int]:
    found: set[int] = set()
    for part in filter(None, text.replace(" ", "").split(",")):
        lo, _, hi = part.partition("-")
        found.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(found)


@dataclass
class Intended:
    """A difference the project keeps on purpose: which API, versions, cases and field paths
    (``*`` matches anything), optionally which values (glob on the shortened value), and why."""

    id: str
    api: str
    reason: str
    paths: tuple[re.Pattern[str], ...]
    versions: frozenset[int] | None = None
    case: re.Pattern[str] | None = None
    kafka: re.Pattern[str] | None = None
    fake: re.Pattern[str] | None = None
    used: int = 0

    def matches(self, api: str, version: int, case: str, difference: Difference) -> bool:
        return (api == self.api
                and (self.versions is None or version in self.versions)
                and (self.case is None or bool(self.case.match(case)))
                and any(p.match(difference.path) for p in self.paths)
                and (self.kafka is None or bool(self.kafka.match(short(difference.kafka, 999))))
                and (self.fake is None or bool(self.fake.match(short(difference.fake, 999)))))


def load_intended(path: Path = INTENDED) -> list[Intended]:
    """The intended differences of ``path`` (``[[difference]]`` tables), in file order."""
    entries = tomllib.loads(path.read_text()).get("difference", [])
    found: list[Intended] = []
    for entry in entries:
        unknown = set(entry) - KEYS
        if unknown or entry["id"] in {i.id for i in found}:
            raise ValueError(f"{path.name}: entry {entry['id']!r}: unknown keys "
                             f"{sorted(unknown)} or an id used twice")
        paths = entry["paths"] if "paths" in entry else [entry["path"]]
        found.append(Intended(
            id=entry["id"], api=entry["api"], reason=" ".join(entry["reason"].split()),
            paths=tuple(_glob(p) for p in paths),
            versions=_versions(entry["versions"]) if "versions" in entry else None,
            case=_glob(entry["case"]) if "case" in entry else None,
            kafka=_glob(entry["kafka"]) if "kafka" in entry else None,
            fake=_glob(entry["fake"]) if "fake" in entry else None))
    return found


@dataclass(frozen=True)
class Known:
    """A difference outside the corpus (``known.toml``): ``where`` it shows, what ``kafka``
    and ``fake`` do, the ``reason`` it is kept and the ``test`` that shows it."""

    id: str
    where: str
    kafka: str
    fake: str
    reason: str
    test: str


def load_known(path: Path = KNOWN) -> list[Known]:
    """The known differences of ``path`` (``[[known]]`` tables, every key given), in order."""
    found = []
    for entry in tomllib.loads(path.read_text()).get("known", []):
        if set(entry) != set(KNOWN_KEYS):
            raise ValueError(f"{path.name}: entry {entry.get('id')!r}: keys {sorted(entry)}")
        found.append(Known(**{k: " ".join(str(entry[k]).split()) for k in KNOWN_KEYS}))
    return found


def known_section(known: Sequence[Known]) -> str:
    """CONFORMANCE.md's section of the known differences outside the corpus."""
    lines = ["## Known differences outside the corpus", "",
             "Measured by the tests named (on both brokers where they take the `kafka` "
             "fixture); listed in `tests/conformance/known.toml`.", ""]
    for entry in known:
        lines.append(f"* **{entry.id}** ({entry.where}). Kafka: {entry.kafka}. fakebroker: "
                     f"{entry.fake}. {entry.reason} (`{entry.test}`)")
    return "\n".join(lines) + "\n"


@dataclass
class Finding:
    """A difference in one request's answers, and the intended entry it matches (if any)."""

    case: str
    difference: Difference
    intended: Intended | None


@dataclass
class Cell:
    """One API×version: how many requests were compared and what differed."""

    api: str
    version: int
    status: str = "identical"  # one of STATUSES
    requests: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def unexplained(self) -> list[Finding]:
        return [f for f in self.findings if f.intended is None]


def judge(cells: dict[tuple[str, int], Cell], api: str, version: int, case: str,
          kafka: Any, fake: Any, intended: Sequence[Intended]) -> None:
    """Compare one request's normalised answers into its cell."""
    cell = cells.setdefault((api, version), Cell(api, version))
    cell.requests += 1
    for difference in differences(kafka, fake):
        known = next((i for i in intended if i.matches(api, version, case, difference)), None)
        if known is not None:
            known.used += 1
        cell.findings.append(Finding(case, difference, known))
    if cell.unexplained:
        cell.status = "differs"
    elif cell.findings:
        cell.status = "intended"


def summary(cells: Iterable[Cell]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for cell in cells:
        counts[cell.status] = counts.get(cell.status, 0) + 1
    return counts


def table(cells: Sequence[Cell], intended: Sequence[Intended], header: str) -> str:
    """The conformance table as Markdown: a row per API×version, then the intended
    differences with their reasons, then intended entries no difference used."""
    counts = summary(cells)
    lines = [header, "",
             f"**{len(cells)} API×version cells: "
             + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES
                         if s != NO_REQUEST or s in counts) + ".**", "",
             "| API | v | requests | result | differences (field: Kafka / fakebroker) |",
             "|---|---|---|---|---|"]
    for cell in cells:
        details = []
        if cell.unexplained:
            seen: set[tuple[str, str]] = set()
            for f in cell.unexplained:
                if (f.difference.path, f.case) in seen:
                    continue
                seen.add((f.difference.path, f.case))
                details.append(f"{_cut(f.case, 50)} — `{_cut(f.difference.path, 70)}`: "
                               f"{short(f.difference.kafka)} / {short(f.difference.fake)}")
        paths: dict[str, list[str]] = {}
        for f in cell.findings:
            if f.intended is not None:
                generic = re.sub(r"\[\d+\]", "[]", f.difference.path)
                found = paths.setdefault(f.intended.id, [])
                if generic not in found:
                    found.append(generic)
        order = [i.id for i in intended]
        for known in sorted(paths, key=order.index):
            shown = ", ".join(f"`{_cut(p, 50)}`" for p in paths[known][:3])
            more = f" (+{len(paths[known]) - 3})" if len(paths[known]) > 3 else ""
            details.append(f"intended {known}: {shown}{more}")
        requests = str(cell.requests) if cell.requests else "–"
        lines.append(f"| {cell.api} | {cell.version} | {requests} | {cell.status} | "
                     + "<br>".join(details) + " |")
    lines += ["", "## Intended differences", ""]
    for entry in intended:
        where = entry.api + (f" v{_ranges(entry.versions)}" if entry.versions else "")
        lines.append(f"* **{entry.id}** ({where}): {entry.reason}")
    unused = [e for e in intended if not e.used]
    if unused:
        lines += ["", "## Intended entries that matched nothing", ""]
        lines += [f"* {e.id} ({e.api})" for e in unused]
    return "\n".join(lines) + "\n\n" + known_section(load_known())


def _ranges(versions: Iterable[int]) -> str:
    ordered = sorted(versions)
    runs: list[list[int]] = []
    for v in ordered:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
