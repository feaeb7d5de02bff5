"""The fault seam: the one call through which every request meets the fault rules.

``await Seam(registry, topic_name, peer).respond(...)`` takes one decoded request (from
``peer``: its listener and principal are matched too), the partitions or entries it names, and
a way to run its handler; it returns the answer body,
after the rules that match the request did what they do, in this order:

1. ``hold``: wait until the rule releases the request (or its peer leaves: it ends there);
2. ``delay_ms``: wait that long;
3. ``hang``: wait until the peer leaves, never answering; or ``drop`` (without
   ``apply_then``): close the connection;
4. ``ignore``: the arrays the rules name emptied in the request (in the entries they cover);
   then the answer: the rule's ``respond`` body; or the handler's answer with the rules' errors
   placed where Kafka puts them (``placement``: faulted entries taken out of the request
   first, so nothing is applied for them; the handler not run at all for an error at top
   level); with ``apply_then`` the whole request is handled first;
5. ``drop`` with ``apply_then``: close the connection after the request was applied;
   ``throttle_ms``: ``throttle_time_ms`` in the answer, and ``throttle_ms`` set here for the
   connection to mute its next answers.

With no rule matching, ``respond`` is the handler's answer, untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio

from fakebroker.api.context import ConnectionClosed
from fakebroker.api.placement import (
    filter_request,
    inject_errors,
    layout_errors,
    top_level_answer,
    without_arrays,
)
from fakebroker.api.targets import (
    Target,
    TopicResolver,
    request_groups,
    request_transactional_ids,
)
from fakebroker.faults.rules import FaultPlan, FaultRegistry, RequestView
from fakebroker.protocol.specs import api_spec

if TYPE_CHECKING:
    from fakebroker.outcomes import Peer

Handle = Callable[[Any], Awaitable[Any]]  # runs the handler on a request: its answer body


class Seam:
    """One request's pass through the fault rules.

    Its attributes say what the rules did, as far as they got (also when the request was
    cancelled part way, because its connection closed): ``fault`` describes the rules applied
    (``"#1 hold, #2 NOT_LEADER_OR_FOLLOWER"``; None if none matched), ``outcome`` how the
    request ended when a rule ended it unanswered (``held``, ``hung`` or ``dropped``), and
    ``throttle_ms`` how long the connection's next answers wait.
    """

    __slots__ = ("faults", "topic_name", "peer", "fault", "outcome", "throttle_ms")

    def __init__(self, faults: FaultRegistry, topic_name: TopicResolver, peer: Peer) -> None:
        self.faults = faults
        self.topic_name = topic_name
        self.peer = peer  # the request's connection; ``peer.gone``: its peer closed it
        self.fault: str | None = None
        self.outcome: str | None = None
        self.throttle_ms = 0

    async def respond(self, api_key: int, version: int, broker: int, client_id: str | None,
                      request: Any, targets: list[Target], handle: Handle) -> Any:
        """The answer body (None: no answer) to ``request``, through the rules it matches.
        Raises ``ConnectionClosed`` when the connection is to close unanswered: dropped,
        hung or held until the peer left, or an acks=0 Produce that failed."""
        if not self.faults.rules:
            return await handle(request)
        view = RequestView(api_key, api_spec(api_key).name, version, broker, client_id,
                           self.peer.listener, self.peer.principal, request, targets,
                           request_groups(api_key, request),
                           request_transactional_ids(api_key, request))
        plan = self.faults.plan(view)
        if plan is None:
            return await handle(request)
        self.fault = plan.describe()
        if plan.holds:
            await self._held(plan)
        if plan.delay_ms:
            await trio.sleep(plan.delay_ms / 1000)
        if plan.hang:
            self.outcome = "hung"
            await self.peer.gone.wait()
            raise ConnectionClosed(f"fault {self.fault}: the peer left a hung request")
        if plan.drop and not plan.apply_then:
            self.outcome = "dropped"
            raise ConnectionClosed(f"fault {self.fault}: connection dropped")
        if plan.ignored:
            view.request = without_arrays(api_key, version, request, plan.ignored,
                                          self.topic_name)
        response = await self._answer(plan, view, targets, handle)
        if plan.drop:
            self.outcome = "dropped"
            raise ConnectionClosed(f"fault {self.fault}: applied, connection dropped")
        if plan.throttle_ms and response is not None:
            response["throttle_time_ms"] = self.throttle_ms = plan.throttle_ms
        return response

    async def _held(self, plan: FaultPlan) -> None:
        """Wait until every rule holding the request released it; ``ConnectionClosed`` when
        the peer left first."""
        self.outcome = "held"
        try:
            for hold in plan.holds:
                if not await hold.wait(self.peer.gone):
                    raise ConnectionClosed(f"fault {self.fault}: the peer left a held request")
        finally:
            for hold in plan.holds:
                hold.forget()
        self.outcome = None

    async def _answer(self, plan: FaultPlan, view: RequestView, targets: list[Target],
                      handle: Handle) -> Any:
        api_key, version, request = view.api_key, view.version, view.request
        if plan.respond is not None:
            if plan.apply_then:
                await handle(request)
            return dict(plan.respond(view) if callable(plan.respond) else plan.respond)
        if not plan.errors:
            return await handle(request)
        layout = layout_errors(api_key, version, targets, plan.whole_error,
                               plan.target_errors)
        if plan.apply_then:
            response = await handle(request)
        elif layout.top is not None:
            response = top_level_answer(api_key, request)
        else:
            response = await handle(filter_request(api_key, version, request, layout,
                                                   self.topic_name))
        if response is None:  # acks=0: Kafka closes the connection of a failed produce
            raise ConnectionClosed(f"acks=0 produce failed: fault {self.fault}")
        return inject_errors(api_key, version, request, dict(response), layout,
                             self.topic_name)
