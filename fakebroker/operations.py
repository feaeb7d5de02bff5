"""Cluster operations, declared once: a ``FakeCluster`` method marked ``@operation``.

From that one declaration (the method's name, signature, type hints and docstring) come:

* the method of the synchronous ``FakeKafka`` (``OnClusterThread``: the same parameters and
  result, run on the cluster's trio thread),
* the HTTP control API's ``POST /actions/{name}``, ``fakebroker ctl action NAME --param ...``
  and scenario timelines' ``action = "name"`` (``fakebroker.control.actions``), whose
  parameters are the method's, checked against its type hints before anything changes.

Names on the wire are the method's with dashes (``move_leader`` -> ``move-leader``).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
REQUIRED: Any = inspect.Parameter.empty


class Parameter(NamedTuple):
    """One parameter of a declared operation, from the method's signature and hints."""

    name: str
    type: type  # int, str, bool ...
    default: Any  # REQUIRED when it must be given
    optional: bool  # None is a valid value


@dataclass(frozen=True)
class Operation:
    """One declared cluster operation."""

    name: str  # as on the wire: move-leader
    method: str  # FakeCluster's method: move_leader
    result: str | None  # the key its result is given under in data answers
    is_async: bool
    summary: str

    @functools.cached_property
    def parameters(self) -> tuple[Parameter, ...]:
        return _parameters(_DECLARED[self.name])


# wire name -> the declared function; filled as the class body that declares them runs.
_DECLARED: dict[str, Callable[..., Any]] = {}
OPERATIONS: dict[str, Operation] = {}


def operation(result: str | None = None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Declare a ``FakeCluster`` method a cluster operation; ``result`` names its return
    value in data answers (``{"leader": 2}``)."""

    def declare(method: Callable[P, R]) -> Callable[P, R]:
        name = method.__name__.replace("_", "-")
        doc = inspect.getdoc(method) or ""
        _DECLARED[name] = method
        OPERATIONS[name] = Operation(name, method.__name__, result,
                                     inspect.iscoroutinefunction(method),
                                     doc.split("\n\n", 1)[0].replace("\n", " "))
        return method

    return declare


def _parameters(method: Callable[..., Any]) -> tuple[Parameter, ...]:
    hints = typing.get_type_hints(method)
    found = []
    for parameter in list(inspect.signature(method).parameters.values())[1:]:  # not self
        hint = hints[parameter.name]
        optional = False
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            members = [m for m in typing.get_args(hint) if m is not type(None)]
            optional = len(members) < len(typing.get_args(hint))
            (hint,) = members
        found.append(Parameter(parameter.name, hint, parameter.default, optional))
    return tuple(found)


class OnClusterThread(Generic[P, R]):
    """A ``FakeKafka`` method that runs a ``FakeCluster`` operation on the cluster's trio
    thread: ``move_leader = OnClusterThread(FakeCluster.move_leader)``. Same parameters,
    same result, same docstring."""

    def __init__(self, method: Callable[Concatenate[Any, P], R]):
        self._method = method.__name__
        self._async = inspect.iscoroutinefunction(method)
        self.__doc__ = method.__doc__

    def __get__(self, kafka: Any, owner: type | None = None) -> Callable[P, R]:
        if kafka is None:
            return self  # type: ignore[return-value]
        method = self._method
        run = kafka.call_async if self._async else kafka.call

        def on_cluster_thread(*args: P.args, **kwargs: P.kwargs) -> R:
            return run(functools.partial(getattr(kafka.cluster, method), *args, **kwargs))

        on_cluster_thread.__doc__ = self.__doc__
        on_cluster_thread.__name__ = method
        return on_cluster_thread
