"""librdkafka's mock cluster without a client in front of it, through its C API (ctypes).

``rd_kafka_mock_cluster_new`` is what a C or C++ test uses: it needs a librdkafka handle and
serves real sockets from a librdkafka thread. The shared library is the one bundled in the
confluent-kafka wheel (librdkafka 2.16 for confluent-kafka 2.16.1).

As a process (``python -m fakebroker.bench.mock [--brokers N]``) it prints the bootstrap
servers on one line once the brokers listen, and runs until stdin closes or SIGTERM.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

import confluent_kafka


def _library() -> ctypes.CDLL:
    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka-*.so*"))
    if not found:
        raise RuntimeError(f"no librdkafka shared library in {libs}")
    lib = ctypes.CDLL(str(found[0]))
    vp = ctypes.c_void_p
    lib.rd_kafka_conf_new.restype = vp
    lib.rd_kafka_conf_set.argtypes = [vp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = vp
    lib.rd_kafka_new.argtypes = [ctypes.c_int, vp, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = vp
    lib.rd_kafka_mock_cluster_new.argtypes = [vp, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [vp]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [vp]
    lib.rd_kafka_destroy.argtypes = [vp]
    return lib


class MockCluster:
    """One running librdkafka mock cluster; ``bootstrap_servers`` once started."""

    _lib: ctypes.CDLL | None = None

    def __init__(self, brokers: int = 1):
        if MockCluster._lib is None:
            MockCluster._lib = _library()
        self.lib = MockCluster._lib
        self.brokers = brokers
        self._handle: int | None = None
        self._cluster: int | None = None
        self.bootstrap_servers = ""

    def start(self) -> MockCluster:
        """Create the handle and the cluster; its brokers listen when this returns."""
        errstr = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        # The handle only carries the cluster: no bootstrap servers, so silence that warning.
        self.lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, len(errstr))
        handle = self.lib.rd_kafka_new(0, conf, errstr, len(errstr))
        if not handle:
            raise RuntimeError(f"rd_kafka_new failed: {errstr.value.decode()}")
        cluster = self.lib.rd_kafka_mock_cluster_new(handle, self.brokers)
        if not cluster:
            self.lib.rd_kafka_destroy(handle)
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self._handle, self._cluster = handle, cluster
        self.bootstrap_servers = self.lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()
        return self

    def stop(self) -> None:
        """Destroy the cluster and its handle; safe to call twice."""
        if self._cluster is not None:
            self.lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
        if self._handle is not None:
            self.lib.rd_kafka_destroy(self._handle)
            self._handle = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=1)
    args = parser.parse_args()
    cluster = MockCluster(args.brokers).start()
    print(cluster.bootstrap_servers, flush=True)
    sys.stdin.read()
    cluster.stop()


if __name__ == "__main__":
    main()
