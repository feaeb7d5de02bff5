"""Benchmarks of fakebroker against the tools a test suite would otherwise use.

``python -m fakebroker.bench [--workloads ...] [--systems ...] [--quick] [--repeat N]`` runs
every workload against fakebroker and its peers in one run, on the same client and the same
machine, and prints per workload each system's median figure and fakebroker's ratio to each
peer, with the targets. Peers: tansu 0.6 (Rust, in-memory storage), librdkafka's mock
cluster, nafka 0.1 (Python), Apache Kafka 4.4.0 (single-node KRaft, ``fakebroker.real.launch``:
``kafka`` at Kafka's rebalance delay, ``kafka-nodelay`` without it) and, for latency, a bare
trio echo server. tansu and nafka are installed on first use into a cache folder outside the
repository (``fakebroker.bench.peers``); Kafka's jars by ``fakebroker kafka install`` (a peer whose
install is missing is reported unavailable, with the reason).

Workloads (one module each): ``startup`` (1), ``throughput`` (2 produce, 3 consume, 6 memory),
``latency`` (4), ``first_record`` (5), ``idle`` (7), ``user_suite`` (8), ``scale`` (9: cost
curves over partitions, topics, connections, record size and groups). Never run as a timed
test: the figures depend on the machine and its load, so only ratios from one run mean
anything.
"""
