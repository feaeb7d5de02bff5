"""The known differences outside the corpus (tests/conformance/known.toml) each name a test
that exists, and CONFORMANCE.md shows them as known.toml says (no real Kafka needed)."""

from __future__ import annotations

import ast

from tests.conformance.compare import known_section, load_known
from tests.conformance.run import TABLE
from tests.conftest import ROOT


def test_each_known_difference_names_a_test_that_exists():
    known = load_known()
    assert len(known) >= 3 and len({k.id for k in known}) == len(known)
    for entry in known:
        path, _, name = entry.test.partition("::")
        tree = ast.parse((ROOT / path).read_text())
        tests = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert name in tests, entry.test


def test_conformance_md_ends_with_the_known_differences():
    assert TABLE.read_text().endswith("\n\n" + known_section(load_known()))
