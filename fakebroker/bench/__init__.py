"""Benchmarks of fakebroker against the tools a test suite would otherwise use.

``python -m fakebroker.bench [--workloads ...] [--systems ...] [--quick] [--repeat N]`` runs
every workload against fakebroker and its peers in one run, on the same client and the same
machine, and prints per workload each system's median figure and fakebroker's ratio to each
peer, with the targets of issue #6. Peers: tansu 0.6 (Rust, in-memory storage), librdkafka's
mock cluster, nafka 0.1 (Python) and, for latency, a bare trio echo server. They are installed
on first use into a cache folder outside the repository (``fakebroker.bench.peers``).

Workloads (one module each): ``startup`` (1), ``throughput`` (2 produce, 3 consume, 6 memory),
``latency`` (4), ``first_record`` (5), ``idle`` (7). Never run as a timed test: the figures
depend on the machine and its load, so only ratios from one run mean anything.
"""
