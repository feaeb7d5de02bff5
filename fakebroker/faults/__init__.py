"""Scripted faults: rules that match requests (``rules``); the seam that applies them
(``seam``): the request pipeline takes every request of every API through it with one call.
What a request names and where an API's errors go are the API modules' declarations, read by
``fakebroker.api.targets`` and ``fakebroker.api.placement``."""

from fakebroker.faults.rules import FaultError, FaultRegistry, FaultRule, RequestView, Target

__all__ = ["FaultError", "FaultRegistry", "FaultRule", "RequestView", "Target"]
