"""The one log directory every fake broker reports (DescribeLogDirs, AlterReplicaLogDirs).

The fake keeps its logs in memory; it answers as a Kafka broker with a single entry in
``log.dirs``, Kafka's default ``/tmp/kafka-logs``. Its total and usable bytes are those of
the file system holding the host's temporary directory, as Kafka reports its directory's file
store (``getTotalSpace``, ``getUsableSpace``); a partition's size is the bytes of its log's
segments, as Kafka's ``UnifiedLog.size``: records DeleteRecords dropped count until a
retention check deletes their segment.
"""

from __future__ import annotations

import os
import tempfile

from fakebroker.state.log import PartitionLog

PATH = "/tmp/kafka-logs"  # Kafka's log.dirs default
LONG_MAX = 2**63 - 1


def space() -> tuple[int, int]:
    """(total bytes, usable bytes) of the file system under the temporary directory; a
    negative count becomes Long.MAX_VALUE, as Kafka adjusts it for large file systems."""
    stat = os.statvfs(tempfile.gettempdir())
    total, usable = stat.f_blocks * stat.f_frsize, stat.f_bavail * stat.f_frsize
    return tuple(n if 0 <= n <= LONG_MAX else LONG_MAX for n in (total, usable))  # type: ignore[return-value]


def size(log: PartitionLog) -> int:
    """The bytes of a partition log's segments."""
    return log.segments_size
