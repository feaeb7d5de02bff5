"""The one task that keeps time for every group: ``run_group_timers``.

The coordinators never sleep (``fakebroker.state.groups``): they know their deadlines — classic
session and rebalance timeouts, the initial rebalance delay, member ids handed out with
MEMBER_ID_REQUIRED, KIP-848 session and revocation timeouts — and apply those due when told the
time. This task sleeps on trio's clock until the earliest deadline, or until a coordinator
sets an earlier one, then applies what is due with ``now`` = ``trio.current_time()``.
So a timeout fires no earlier than its deadline, and under
``trio.testing.MockClock(autojump_threshold=0)`` exactly at it, without real sleeping.
``open_cluster`` starts it when the cluster's groups are made (``Cluster.on_groups``): no group,
no deadline.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from fakebroker.state.groups import Groups


async def run_group_timers(groups: Groups) -> None:
    """Apply every group timeout when it is due; runs until cancelled."""
    woken = trio.Event()
    sleeps_to = math.inf

    def wake(deadline: float) -> None:
        if deadline < sleeps_to:
            woken.set()

    unwatch = groups.watch_deadlines(wake)
    try:
        while True:
            sleeps_to = groups.next_deadline()
            with trio.move_on_at(sleeps_to):
                await woken.wait()
            woken = trio.Event()
            groups.expire(trio.current_time())
    finally:
        unwatch()
