"""Scripted faults: rules that match requests (``rules``); the pieces each API module declares
where Kafka puts its errors with (``shapes``); the machinery that puts a rule's errors there
(``placement``); the seam that applies them (``seam``): the request pipeline takes every
request of every API through it with one call."""

from fakebroker.faults.rules import FaultError, FaultRegistry, FaultRule, RequestView, Target

__all__ = ["FaultError", "FaultRegistry", "FaultRule", "RequestView", "Target"]
