"""``fakebroker serve``: ready line and file, consecutive ports, clean stop on SIGTERM/SIGINT."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.conftest import start_served, stop_served


def free_port_run(count: int) -> int:
    """A port p such that p..p+count-1 were free a moment ago."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count < 65535 and all(_free(base + i) for i in range(count)):
            return base
    raise RuntimeError("no run of free ports")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def test_serve_announces_its_brokers_and_stops_cleanly_on_sigterm(tmp_path):
    process, details = start_served(tmp_path, "--brokers", "3", "--topic", "orders:3")
    assert [b["id"] for b in details["brokers"]] == [1, 2, 3]
    assert details["bootstrap_servers"] == ",".join(
        f"{b['host']}:{b['port']}" for b in details["brokers"])
    producer = KafkaProducer(bootstrap_servers=details["bootstrap_servers"])
    producer.send("orders", key=b"k", value=b"v", partition=2).get(timeout=10)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=details["bootstrap_servers"])
    consumer.assign([TopicPartition("orders", 2)])
    assert consumer.end_offsets([TopicPartition("orders", 2)]) == {TopicPartition("orders", 2): 1}
    consumer.close()
    assert stop_served(process) == 0
    assert process.stdout.read().strip() == f"bootstrap.servers={details['bootstrap_servers']}"
    assert not (tmp_path / "ready.json").exists()


def test_serve_uses_consecutive_ports_from_port(tmp_path):
    base = free_port_run(2)
    process, details = start_served(tmp_path, "--port", str(base), "--brokers", "2")
    assert [b["port"] for b in details["brokers"]] == [base, base + 1]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 0


def test_python_dash_m_fakebroker_has_the_same_commands():
    result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--help"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "--ready-file" in result.stdout


def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "fakebroker", "serve", "--port", str(port)],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "fakebroker:" in result.stderr
