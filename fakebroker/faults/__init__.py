"""Scripted faults: rules that match requests (``rules``); the pieces each API module declares
where Kafka puts its errors with (``shapes``); the machinery that puts a rule's errors there
(``placement``). The server applies them at one seam for every API."""

from fakebroker.faults.rules import FaultError, FaultRegistry, FaultRule, RequestView, Target

__all__ = ["FaultError", "FaultRegistry", "FaultRule", "RequestView", "Target"]
