"""The task that keeps time for a coordinator that never sleeps: ``run_timers``.

The coordinators (``fakebroker.state.groups``, ``fakebroker.state.transactions``) know their
deadlines — classic session and rebalance timeouts, the initial rebalance delay, member ids
handed out with MEMBER_ID_REQUIRED, KIP-848 session and revocation timeouts, transaction
timeouts — and apply those due when told the time. This task sleeps on trio's clock until the
earliest deadline, or until the coordinator sets an earlier one, then applies what is due with
``now`` = ``trio.current_time()``. So a timeout fires no earlier than its deadline, and under
``trio.testing.MockClock(autojump_threshold=0)`` exactly at it, without real sleeping.
``open_cluster`` starts one for each coordinator when the cluster makes it
(``Cluster.on_coordinator``): no group and no transaction, no timer task.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import trio


class Timed(Protocol):
    """What a coordinator offers its timer."""

    def next_deadline(self) -> float: ...

    def expire(self, now: float) -> None: ...

    def watch_deadlines(self, callback: Callable[[float], None]) -> Callable[[], None]: ...


async def run_timers(timed: Timed) -> None:
    """Apply every timeout of ``timed`` when it is due; runs until cancelled."""
    woken = trio.Event()
    sleeps_to = math.inf

    def wake(deadline: float) -> None:
        if deadline < sleeps_to:
            woken.set()

    unwatch = timed.watch_deadlines(wake)
    try:
        while True:  # told the time first: at its start, a coordinator learns when it is
            timed.expire(trio.current_time())
            sleeps_to = timed.next_deadline()
            with trio.move_on_at(sleeps_to):
                await woken.wait()
            woken = trio.Event()
    finally:
        unwatch()
