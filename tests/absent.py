"""What a test does when something it needs is not here: skip on a developer's machine, fail
under CI (the environment variable ``CI`` set to true, 1 or yes; .ci/run exports CI=true),
where everything is installed and an absence is a broken install, not a reason to skip."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def under_ci() -> bool:
    """This run is CI's (``CI`` is true, 1 or yes, in any case)."""
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def absent(what: str) -> NoReturn:
    """Stop the calling test (or module, at its top) because ``what`` is missing: a failure
    under CI, a skip elsewhere."""
    if under_ci():
        pytest.fail(what, pytrace=False)
    pytest.skip(what, allow_module_level=True)


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """Mark a test (or a module, in ``pytestmark``) that needs ``what``, here when
    ``available``: without it the test is skipped, or failed under CI (tests/conftest.py's
    ``pytest_runtest_setup`` reads the mark)."""
    return pytest.mark.needs(available, what)


def check_needs(item: pytest.Item) -> None:
    """``absent`` for the first missing thing a test's ``needs`` marks name."""
    for mark in item.iter_markers("needs"):
        available, what = mark.args
        if not available:
            absent(what)
