"""Scripted faults: rules that match requests (``rules``), where their errors go in each
API's answer (``placement``), and the seam that applies them (``seam``): the request pipeline
takes every request of every API through it with one call."""

from fakebroker.faults.rules import FaultError, FaultRegistry, FaultRule, RequestView, Target

__all__ = ["FaultError", "FaultRegistry", "FaultRule", "RequestView", "Target"]
