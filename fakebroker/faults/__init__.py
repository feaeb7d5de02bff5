"""Scripted faults: rules that match requests (``rules``) and where their errors go in each
API's answer (``placement``). The server applies them at one seam for every API."""

from fakebroker.faults.rules import FaultError, FaultRegistry, FaultRule, RequestView, Target

__all__ = ["FaultError", "FaultRegistry", "FaultRule", "RequestView", "Target"]
