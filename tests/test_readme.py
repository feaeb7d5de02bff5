"""README.md's cookbook is the tests: its code blocks are copies of what the tests run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cookbook_blocks(language: str) -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Cookbook\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def test_every_cookbook_python_example_is_a_test_of_the_cookbook():
    tests = (ROOT / "tests" / "test_cookbook.py").read_text()
    examples = cookbook_blocks("python")
    assert len(examples) == tests.count("# cookbook: ") == 12
    for example in examples:
        assert example in tests, example.splitlines()[1]


def test_every_cookbook_scenario_file_is_one_the_tests_run():
    files = {p.read_text() for p in (ROOT / "tests" / "scenarios").glob("*.toml")}
    examples = cookbook_blocks("toml")
    assert len(examples) == len(files) == 9
    assert set(examples) == files


def test_every_serve_flag_and_its_variable_is_in_the_readme():
    from fakebroker.cli import parser

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## `fakebroker serve`\n", 1)[1].split("\n## ", 1)[0]
    serve = next(a for a in parser()._subparsers._group_actions[0].choices.values()
                 if a.prog.endswith(" serve"))
    flags = [s for a in serve._actions for s in a.option_strings
             if s.startswith("--") and s != "--help"]
    variables = re.findall(r"\[(FAKEBROKER_\w+)", serve.format_help())
    assert len(flags) > 10 and len(variables) > 10
    for name in flags + variables:
        assert f"`{name}" in section, name


def test_every_cluster_setting_is_in_the_readme_options_table():
    from fakebroker.options import CLUSTER_SETTINGS

    readme = (ROOT / "README.md").read_text()
    for name in CLUSTER_SETTINGS:
        assert f"| `{name}` |" in readme, name


def test_the_readme_installs_into_a_virtual_environment_from_the_checkout():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set-up and the main job\n", 1)[1].split("\n## ", 1)[0]
    assert "not on PyPI yet" in setup and "python3 -m venv" in setup
    tests = readme.split("## Tests\n", 1)[1].split("\n## ", 1)[0]
    assert 'pip install -e ".[test]"' in tests and "stale" in tests


def test_nothing_tells_to_install_fakebroker_by_name_while_it_is_not_on_pypi():
    by_name = re.compile(r"""pip install\s+["']?fakebroker(?=[\[\s"'=]|$)""", re.M)
    texts = [ROOT / "README.md", *ROOT.glob("fakebroker/**/*.py"), *ROOT.glob(".ci/*")]
    assert [str(path.relative_to(ROOT)) for path in texts
            if path.is_file() and by_name.search(path.read_text())] == []
