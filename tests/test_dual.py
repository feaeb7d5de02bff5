"""The ``--kafka`` option and the ``fake_only`` marker (tests/dual.py): which broker each test
body runs on, and that a fake-only test says why."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
from tests.dual import pytest_fakebroker_real_cluster, real_cluster
"""

TESTS = """
import pytest

def test_on_any_broker(kafka):
    pass

@pytest.mark.fake_only("faults")
def test_with_faults(kafka):
    pass

def test_without_a_broker():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=TESTS)
    return pytester


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", *args)
    return [line.split("::")[1] for line in result.outlines if "::" in line]


@pytest.mark.parametrize("option,expected", [
    ((), ["test_on_any_broker[fake]", "test_with_faults[fake]", "test_without_a_broker"]),
    (("--kafka=real",), ["test_on_any_broker[real]", "test_with_faults[fake]",
                         "test_without_a_broker"]),
    (("--kafka=both",), ["test_on_any_broker[fake]", "test_on_any_broker[real]",
                         "test_with_faults[fake]", "test_without_a_broker"]),
])
def test_the_option_chooses_the_brokers_and_fake_only_tests_stay_on_the_fake(suite, option,
                                                                             expected):
    assert collected(suite, *option) == expected


def test_under_kafka_real_a_fake_only_test_is_skipped_with_its_reason(suite):
    result = suite.runpytest("--kafka=real", "-rs", "-k", "faults or without")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*fake only: faults*"])


def test_a_fake_only_marker_must_say_why(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.fake_only()
        def test_it(kafka):
            pass
    """)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fake_only needs one reason*"])


def test_a_fakebroker_setting_on_the_real_broker_fails_naming_it(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.fake_kafka(auto_create_topics=False, topics={"t": 1})
        def test_it(kafka):
            pass
    """)
    result = pytester.runpytest("--kafka=real")
    result.assert_outcomes(errors=1)  # at setup, before any broker starts
    result.stdout.fnmatch_lines(["*options ?'auto_create_topics'? set up the fake broker only*"])


def test_security_settings_short_of_the_whole_secure_preset_are_refused_on_the_real_broker(
        pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite="""
        import pytest
        from tests.security import SECURE

        @pytest.mark.fake_kafka(**{**SECURE, "ssl_client_auth": "none"}, topics={"t": 1})
        def test_it(kafka):
            pass
    """)
    result = pytester.runpytest("--kafka=real")
    result.assert_outcomes(errors=1)  # at setup, before any broker starts
    result.stdout.fnmatch_lines(["*'ssl_client_auth'*set up the fake broker only*"])


def test_a_suites_own_kafka_fixture_is_left_alone(pytester):
    pytester.makeconftest("""
        import pytest

        @pytest.fixture
        def kafka():
            return "the suite's own"
    """)
    pytester.makepyfile(test_suite="""
        def test_it(kafka):
            assert kafka == "the suite's own"
    """)
    assert collected(pytester, "--kafka=both") == ["test_it"]
    pytester.runpytest("--kafka=both").assert_outcomes(passed=1)


def test_without_a_conftest_a_fakebroker_setting_on_a_running_cluster_fails_naming_it(
        pytester):
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.fake_kafka(auto_create_topics=False, brokers=3, topics={"t": 1})
        def test_it(kafka):
            pass
    """)
    result = pytester.runpytest("--kafka=real", "--kafka-bootstrap=127.0.0.1:9")
    result.assert_outcomes(errors=1)  # before any connection to the cluster
    result.stdout.fnmatch_lines(["*options ?'auto_create_topics'? set up the fake broker only: "
                                 "mark the test @pytest.mark.fake_only(...) saying why"])
