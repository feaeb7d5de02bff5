"""``Pending``: an answer that state owes a request and gives later.

State never waits. An operation that cannot answer yet — a JoinGroup at the join barrier, a
follower's SyncGroup before the leader's — returns a ``Pending``, and the coordinator settles it
when the state changes (the barrier closes, a timeout passes, the member is removed). Whoever
asked waits on a primitive of its own (a handler: a trio event, ``fakebroker.api.common``),
woken by ``on_settled``.

Guarantees:

* A ``Pending`` is settled once, with a value (``resolve``) or an exception (``fail``);
  settling it again is a bug and raises ``RuntimeError``.
* Callbacks run synchronously when it settles, each once, in the order they were added; one
  added after settling runs at once. They run inside the coordinator's operation, so they must
  only wake their waiter, never change state.
* ``result()`` of a settled ``Pending`` returns its value or raises its exception.
* A ``Pending`` nobody waits for any more (its request was cancelled) costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    """A value or an exception, given later by the state that returned it."""

    __slots__ = ("_callbacks", "_error", "_settled", "_value")

    def __init__(self) -> None:
        self._settled = False
        self._value: T | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def settled(self) -> bool:
        return self._settled

    def resolve(self, value: T) -> None:
        """Settle with ``value``."""
        self._settle(value, None)

    def fail(self, error: BaseException) -> None:
        """Settle with ``error``: ``result()`` raises it."""
        self._settle(None, error)

    def on_settled(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once settled (now, if it is)."""
        if self._settled:
            callback()
        else:
            self._callbacks.append(callback)

    def result(self) -> T:
        """The value; raises the exception it failed with, or ``RuntimeError`` if unsettled."""
        if not self._settled:
            raise RuntimeError("the answer is still pending")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def _settle(self, value: T | None, error: BaseException | None) -> None:
        if self._settled:
            raise RuntimeError("a pending answer is settled once")
        self._settled, self._value, self._error = True, value, error
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
