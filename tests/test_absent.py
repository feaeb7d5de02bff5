"""A test that needs something not always installed (``tests.absent``): skipped without it on
a developer's machine, failed under CI, where its absence is a broken install."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

NEEDY = '''
from tests.absent import needs

@needs(False, "a client that is not here (bash .ci/install-clients)")
def test_needy():
    pass

@needs(True, "a client that is here")
def test_served():
    pass
'''


@pytest.mark.parametrize("ci,outcome", [(None, {"skipped": 1, "passed": 1}),
                                        ("true", {"errors": 1, "passed": 1})])
def test_a_missing_need_skips_and_fails_under_ci(pytester, monkeypatch, ci, outcome):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_needy=NEEDY)
    result = pytester.runpytest_inprocess("-p", "tests.conftest", "-rsE")
    result.assert_outcomes(**outcome)
    result.stdout.fnmatch_lines(["*a client that is not here (bash .ci/install-clients)*"])
