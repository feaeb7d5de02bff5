"""Every code block of the documentation (docs/ and README.md) runs here, as written.

A page's blocks run in order, in a fresh working folder of their own:

* ``python`` with a ``title="NAME.py"``: a file the reader saves; it is written to the
  folder, and a ``sh`` block of the page must run it;
* ``python`` that is a test function of this repository (it opens with ``@pytest.mark`` or
  ``def test_``): a copy of a test, found verbatim in tests/ (the cookbook's), so the test
  that runs it is the suite's own;
* any other ``python``: run, the page's blocks sharing one namespace, as a reader pasting
  them into one session would;
* ``sh``: run by bash (``set -e``) with the test environment's commands first on PATH;
  what it starts in the background is stopped after the page. On a page that runs a suite
  on a running Kafka (``REAL_KAFKA_PAGES``), ``localhost:9092`` is the session's Apache
  Kafka (tests/real_kafka.py). Its ``pip install`` and
  ``python3 -m venv`` lines are not run (the environment has what they install): each extra
  they name must be one pyproject.toml declares. Fixed ports (9092-9094, 9644) become free
  ones. A ``fakebroker serve`` left in the foreground is stopped by SIGTERM once it printed
  ``bootstrap.servers=`` and must then exit 0;
* ``toml``: a scenario file: one of tests/scenarios (run by tests/test_scenarios.py), or
  else served (``fakebroker serve --scenario``) until ready;
* ``yaml``: a CI job: its ``run`` steps run as ``sh`` blocks, with its ``env``, ``uses``
  steps skipped and ``npm test`` standing for any suite (here: a real client's round trip
  at ``$KAFKA_BOOTSTRAP``);
* ``text``: output, not run.

Every block must be one of these; examples stay short and bounded in time (each page's
``sh`` block 60 s; 240 s where it starts a JVM: Spark, or Apache Kafka).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.rglob("*.md"), ROOT / "README.md"])
KINDS = ("python", "sh", "toml", "yaml", "text")
BLOCK = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```$", re.S | re.M)
SPARK_PAGES = {"how-to/spark.md"}
REAL_KAFKA_PAGES = {"how-to/real-kafka.md"}
# Pages whose shell blocks start a JVM: a Spark job (a JVM and a session), or Apache Kafka
# (pytest --kafka=real|both, fakebroker kafka serve).
JVM_PAGES = SPARK_PAGES | REAL_KAFKA_PAGES | {"how-to/two-brokers.md"}
# Seconds a page's shell block may run: a JVM's start takes minutes, not seconds, on a loaded
# 2-core machine (measured: Kafka's start alone passed 60 s at a load of 40-50; the test's own
# limit is 300 s).
SH_SECONDS, JVM_SH_SECONDS = 60, 240


SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::(\d+):(\d*))?"$', re.M)


def with_snippets(text: str) -> str:
    """The page as the site shows it: ``--8<-- "FILE"`` (or ``"FILE:FIRST:[LAST]"``) lines
    replaced by those lines of the repository's file (pymdownx.snippets)."""
    def include(match: re.Match[str]) -> str:
        lines = (ROOT / match[1]).read_text().splitlines(keepends=True)
        first = int(match[2] or 1) - 1
        return "".join(lines[first:int(match[3]) if match[3] else None])
    return SNIPPET.sub(include, text)


def blocks(page: Path) -> list[tuple[str, str, str]]:
    """(language, attributes, text) of every fenced block of a page as shown, in order."""
    return BLOCK.findall(with_snippets(page.read_text()))


def page_id(page: Path) -> str:
    return "README.md" if page.parent == ROOT else str(page.relative_to(DOCS))


def test_every_block_is_of_a_kind_the_tests_run():
    for page in PAGES:
        for language, _, text in blocks(page):
            assert language in KINDS, f"{page_id(page)}: ```{language}\n{text[:80]}"


def test_the_pages_have_blocks():  # the pattern above finds them (it could find none)
    assert sum(len(blocks(page)) for page in PAGES) > 60


# --- what README says of installing -----------------------------------------------------------

def test_the_readme_installs_into_a_virtual_environment_from_the_checkout():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set-up and the main job\n", 1)[1].split("\n## ", 1)[0]
    assert "not on PyPI yet" in setup and "python3 -m venv" in setup
    tests = readme.split("## Tests\n", 1)[1].split("\n## ", 1)[0]
    assert 'pip install -e ".[test]"' in tests and "stale" in tests


def test_nothing_tells_to_install_fakebroker_by_name_while_it_is_not_on_pypi():
    by_name = re.compile(r"""pip install\s+["']?fakebroker(?=[\[\s"'=]|$)""", re.M)
    texts = [*PAGES, *ROOT.glob("fakebroker/**/*.py"), *ROOT.glob(".ci/*")]
    assert [str(path.relative_to(ROOT)) for path in texts
            if path.is_file() and by_name.search(path.read_text())] == []


# --- the cookbook's copies ------------------------------------------------------------------

def is_test_copy(text: str) -> bool:
    return text.startswith(("@pytest.mark", "def test_"))


def test_every_test_shown_is_a_test_of_the_suite():
    tests = "".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    copies = [text for page in PAGES for language, _, text in blocks(page)
              if language == "python" and is_test_copy(text)]
    assert len(copies) >= 12
    for text in copies:
        assert text in tests, text.splitlines()[1]


def test_every_scenario_file_is_shown_in_the_cookbook():
    files = {p.read_text() for p in (ROOT / "tests" / "scenarios").glob("*.toml")}
    shown = {text for language, _, text in blocks(DOCS / "how-to" / "cookbook.md")
             if language == "toml"}
    assert len(files) == 9 and shown == files


# --- running a page ----------------------------------------------------------------------------

def free_port_base(count: int) -> int:
    """The first of ``count`` consecutive ports free now (an OS-assigned one and the next)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        try:
            held = []
            for port in range(base, base + count):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError("no free consecutive ports")


def environment() -> dict[str, str]:
    """This process's environment without serve's settings (a reader's shell has none), the
    test environment's commands first."""
    from fakebroker.cli import SERVE_OPTIONS, TOPICS_ENV
    from fakebroker.options import CLUSTER_SETTINGS

    settings = {s.env for s in (*CLUSTER_SETTINGS.values(), *SERVE_OPTIONS.values())}
    env = {k: v for k, v in os.environ.items() if k not in settings | {TOPICS_ENV}}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    if "PYTHONPATH" in os.environ:  # a checkout under test stays the package under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def extras() -> set[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


INSTALL = re.compile(
    r"^\s*(pip install|python3? -m (venv|pip install)|\. \S+/bin/activate|bash \.ci/install-)")


def without_installs(script: str) -> str:
    """The script with its install commands checked and left out (``:`` in their place)."""
    kept = []
    for line in script.splitlines():
        commands = line.split("&&")
        for index, command in enumerate(commands):
            if INSTALL.match(command):
                for named in re.findall(r"\[([\w,-]+)\]", command):
                    assert set(named.split(",")) <= extras(), line
                commands[index] = " : " if index else ": "
        kept.append("&&".join(commands))
    return "\n".join(kept)


def with_free_ports(script: str) -> str:
    """The block with its ports 9092-9094 and 9644 replaced by free ones, in one pass (a
    free port such as 59093 must not be rewritten again as if the page had written 9093)."""
    base = free_port_base(3)
    ports = {str(9092 + offset): str(base + offset) for offset in range(3)}
    ports["9644"] = str(free_port_base(1))
    return re.sub("|".join(ports), lambda found: ports[found.group()], script)


def in_foreground(script: str) -> bool:
    """Whether the block's first ``fakebroker serve`` runs in the foreground (no ``&``)."""
    joined = script.replace("\\\n", " ")  # continued lines as one
    return "&" not in joined.split("fakebroker serve", 1)[-1].split("\n", 1)[0]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop what a block left in the background (SIGTERM) and wait until all of it ended,
    so the next block finds none of its files (a ready file is removed on exit)."""
    deadline = time.monotonic() + 15
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
        while time.monotonic() < deadline:
            os.killpg(process.pid, 0)
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_sh(script: str, folder: Path, env: dict[str, str], timeout: float = SH_SECONDS) -> str:
    """Run a shell block; returns its output. Its background jobs are stopped afterwards."""
    script = with_free_ports(without_installs(script))
    out = folder / "sh.out"
    with out.open("w") as sink:
        process = subprocess.Popen(["bash", "-e", "-c", script], cwd=folder, env=env,
                                   stdout=sink, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    stopped = False
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if not stopped and in_foreground(script) and "bootstrap.servers=" in out.read_text():
                for pid in children(process.pid) or [process.pid]:  # the serve itself
                    os.kill(pid, signal.SIGTERM)
                stopped = True
            time.sleep(0.05)
        status = process.poll()
    finally:
        stop_group(process)
    output = out.read_text()
    assert status == 0, f"exit {status}:\n{script}\n--- output:\n{output}"
    return output


NPM_STANDIN = """#!/usr/bin/env python3
# npm test, as the docs' CI job runs it: here, a real client's round trip at KAFKA_BOOTSTRAP
import os
from confluent_kafka import Producer
producer = Producer({"bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"]})
producer.produce("orders", b"from any language")
assert producer.flush(10) == 0
"""


def run_yaml(text: str, folder: Path, env: dict[str, str]) -> None:
    import yaml  # MkDocs' own dependency (the docs extra)

    stand_ins = folder / "bin"
    stand_ins.mkdir()
    (stand_ins / "npm").write_text(NPM_STANDIN)
    (stand_ins / "npm").chmod(0o755)
    env = {**env, "PATH": f"{stand_ins}{os.pathsep}{env['PATH']}"}
    script = []
    for job in yaml.safe_load(text)["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                variables = " ".join(f"{k}={v!r}" for k, v in step.get("env", {}).items())
                command = step["run"].strip()
                script.append(f"export {variables}\n{command}" if variables else command)
    run_sh("\n".join(script), folder, env)


def run_toml(text: str, folder: Path, env: dict[str, str]) -> None:
    if text in {p.read_text() for p in (ROOT / "tests" / "scenarios").glob("*.toml")}:
        return  # tests/test_scenarios.py runs it with real clients
    (folder / "scenario.toml").write_text(text)
    run_sh("fakebroker serve --scenario scenario.toml --ready-file ready.json &\n"
           "for _ in $(seq 100); do [ -f ready.json ] && exit 0; sleep 0.1; done; exit 1",
           folder, env)


def run_page(page: Path, folder: Path, real_kafka: str | None = None) -> None:
    """Run the page's blocks in ``folder``; ``real_kafka``: the bootstrap servers of the
    running Kafka its ``localhost:9092`` stands for."""
    env = environment()
    (folder / "tests").symlink_to(ROOT / "tests")
    for name in ("examples", "pyproject.toml"):
        (folder / name).symlink_to(ROOT / name)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    files = []
    shell = ""
    for language, attributes, text in blocks(page):
        title = re.search(r'title="([^"]+)"', attributes)
        if language == "python" and title:
            (folder / title.group(1)).write_text(text)
            files.append(title.group(1))
        elif language == "python" and not is_test_copy(text):
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                exec(compile(text, f"{page_id(page)} block", "exec"), namespace)
            finally:
                os.chdir(cwd)
        elif language == "sh":
            shell += text
            if real_kafka is not None:
                text = text.replace("localhost:9092", real_kafka)
            run_sh(text, folder, env,
                   JVM_SH_SECONDS if page_id(page) in JVM_PAGES else SH_SECONDS)
        elif language == "yaml":
            run_yaml(text, folder, env)
        elif language == "toml":
            run_toml(text, folder, env)
    for name in files:
        assert name in shell, f"{page_id(page)}: no sh block runs {name}"


def page_param(page: Path):
    marks = [pytest.mark.spark] if page_id(page) in SPARK_PAGES else []
    if page_id(page) in REAL_KAFKA_PAGES:
        marks.append(pytest.mark.real_kafka)
    return pytest.param(page, id=page_id(page), marks=marks)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", [page_param(p) for p in PAGES if blocks(p)])
def test_the_pages_examples_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest):
    real_kafka = (request.getfixturevalue("real_kafka").bootstrap_servers
                  if page_id(page) in REAL_KAFKA_PAGES else None)
    run_page(page, tmp_path, real_kafka)


def test_a_foreground_serve_is_stopped_cleanly(tmp_path):  # the runner's own rule
    out = run_sh("fakebroker serve --port 9092", tmp_path, environment(), timeout=30)
    assert out.startswith("bootstrap.servers=127.0.0.1:")


def test_a_free_port_is_not_rewritten_as_a_page_port(monkeypatch):  # the runner's own rule
    monkeypatch.setitem(globals(), "free_port_base", lambda count: 59093 if count == 3 else 9700)
    assert with_free_ports("serve --port 9092 / 9093,9094 / 9644") == \
        "serve --port 59093 / 59094,59095 / 9700"


def test_an_install_line_must_name_declared_extras():
    assert without_installs('pip install ".[test]" && pytest') == ': && pytest'
    assert without_installs('python3 -m venv .venv && . .venv/bin/activate') == ': && : '
    with pytest.raises(AssertionError):
        without_installs('pip install "fakebroker[nonesuch]"')


def test_the_generated_reference_names_every_flag_setting_field_and_route():
    import runpy

    pages = runpy.run_path(str(DOCS / "gen_reference.py"), run_name="test")["PAGES"]
    from fakebroker.cli import SERVE_OPTIONS
    from fakebroker.faults.rules import FIELDS
    from fakebroker.operations import OPERATIONS
    from fakebroker.options import CLUSTER_SETTINGS

    serve = pages["reference/serve.md"]()
    for setting in (*CLUSTER_SETTINGS.values(), *SERVE_OPTIONS.values()):
        if setting.name not in ("max_request_bytes", "journal_capacity"):
            assert f"`{setting.flag} " in serve and f"`{setting.env}" in serve, setting.name
    kafka = pages["reference/kafka.md"]()
    for command, flags in (("install", ("--version VERSION", "--repository URL")),
                           ("serve", ("--nodes N", "--version VERSION", "--override KEY=VALUE",
                                      "--ready-file FILE"))):
        section = kafka.split(f"`fakebroker kafka {command}`", 1)[1].split("\n### ", 1)[0]
        assert all(f"| `{flag}` |" in section for flag in flags), command
    settings = pages["reference/settings.md"]()
    assert all(f"| `{name}` |" in settings for name in CLUSTER_SETTINGS)
    faults = pages["reference/faults.md"]()
    assert all(f"| `{name}` |" in faults for name in FIELDS)
    api = pages["reference/control-api.md"]()
    assert all(f"POST /actions/{name}`" in api for name in OPERATIONS)
    assert pages["reference/apis.md"]().count("\n| ") > 30
