"""The calls running on an open memory: closing refuses new ones and waits for those under way.

A write that a proxy sent commits with its receipt, then keeps its reply (``Memory.call_once``);
stores closed between the two would leave a receipt without a reply, and the proxy's retry could
only answer "applied, reply lost". So closing first waits here for every call to end.

That wait must be short: an MCP client that closes a stdio server's stdin sends SIGTERM two
seconds later and SIGKILL two after that, while the owner may hold a queue of proxied writes.
So a call that has written nothing yet (its receipt still waits for its write) and still waits
for the write lock gives way: ``WriteLock`` raises ``Closing``, the proxy sends the call again,
and the next owner runs it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from hippograph.domain.errors import Closing

_CLOSING = "this memory is closing: send the call again (the next owner answers it)"


class CallsInFlight:
    """A count of running calls, and a gate that shuts once closing begins."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self._closing = False
        self._last_ended = time.monotonic()  # when the last call ended (or counting began)
        self._ended = 0

    @property
    def running(self) -> int:
        """How many calls are under way."""
        with self._changed:
            return self._running

    @property
    def ended(self) -> int:
        """How many calls have ended."""
        with self._changed:
            return self._ended

    def idle_for(self) -> float:
        """Seconds since the last call ended, or 0 while one runs."""
        with self._changed:
            return 0.0 if self._running else time.monotonic() - self._last_ended

    @property
    def closing(self) -> bool:
        """Whether closing has begun (new calls are refused)."""
        with self._changed:
            return self._closing

    @contextmanager
    def call(self) -> Iterator[None]:
        """Count one call while it runs; refuse it with ``Closing`` once closing has begun."""
        with self._changed:
            if self._closing:
                raise Closing(_CLOSING)
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._ended += 1
                self._last_ended = time.monotonic()
                self._changed.notify_all()

    def shut(self, timeout_s: float) -> bool:
        """Refuse new calls and wait up to ``timeout_s`` for the running ones; whether all ended."""
        with self._changed:
            self._closing = True
            return self._changed.wait_for(lambda: self._running == 0, timeout_s)


# How often a thread waiting for the write lock asks whether it should give way.
_GIVE_WAY_POLL_S = 0.05


class WriteLock:
    """One writer at a time (re-entrant). While ``give_way`` says so, a thread waiting for the
    lock stops waiting and raises ``Closing`` (by default nobody gives way).

    ``across``, when a store is shared by several processes (the PostgreSQL one), is the store's
    own writer lock (``GraphStore.writer``): taken after this one by its outermost holder and let
    go with it, so one writer at a time holds across every server of the memory."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.give_way: Callable[[], bool] = lambda: False
        self.across: Callable[[], AbstractContextManager[None]] | None = None
        self._depth = 0  # how deep the holding thread is (only it changes it)
        self._held: AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        while not self._lock.acquire(timeout=_GIVE_WAY_POLL_S):
            if self.give_way():
                raise Closing(_CLOSING)
        if self._depth == 0 and self.across is not None:
            held = self.across()
            try:
                held.__enter__()
            except BaseException:
                self._lock.release()
                raise
            self._held = held
        self._depth += 1

    def __exit__(self, *_: object) -> None:
        self._depth -= 1
        held, outermost = self._held, self._depth == 0
        if outermost:
            self._held = None
        try:
            if outermost and held is not None:
                held.__exit__(None, None, None)
        finally:
            self._lock.release()
