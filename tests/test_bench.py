"""Smoke test of the benchmark suite's code (not a timed test: no figure is judged).

Runs the quick start-up and latency workloads against fakebroker and the trio echo server
only, so the suite cannot rot without a test failing; the peers are never downloaded here.
"""

from fakebroker.bench.__main__ import main


def test_quick_start_and_latency_workloads_run(capsys):
    results = main(["--quick", "--workloads", "start,latency",
                    "--systems", "fakebroker,trio-echo"])
    assert not results.errors
    for metric in ("start_inprocess_ms", "start_process_ms", "api_versions_p50_us",
                   "metadata_p99_us", "metadata_new_p50_us"):
        assert results.medians(metric)["fakebroker"] > 0
    assert results.medians("api_versions_p50_us")["trio-echo"] > 0
    assert "| 4. ApiVersions v3 round trip p50 |" in capsys.readouterr().out
