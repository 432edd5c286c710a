"""Every HTTP listener's limits: a connection must send its request head in time, and only so many are held.

uvicorn closes an idle connection only between requests (``timeout_keep_alive``): a client that
connects and sends nothing, or sends a request head a byte at a time, is held for ever, and its
``limit_concurrency`` answers 503 only once a request head has arrived, so idle sockets count
against real clients. Each listener (the MCP HTTP transports, the owner's private API, the
explorer) therefore uses ``HeadTimeoutProtocol``: a connection that has not completed a request
head ``header_timeout_s`` after it opened, or after its last response, is closed, and a
connection beyond ``max_connections`` is closed as soon as it is accepted.

A listener run in the foreground stops on SIGTERM as on Ctrl-C (``stop_signals``), so its
caller's ``finally`` closes the memory (owner.json unpublished, stores closed).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 100
# A stopping server waits this long for open requests (an SSE stream never ends by itself).
GRACEFUL_SHUTDOWN_S = 3


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections that send no complete request head in time."""

    header_timeout_s = HEADER_TIMEOUT_S
    max_connections = MAX_CONNECTIONS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline: asyncio.TimerHandle | None = None
        if len(self.connections) > self.max_connections:
            self.transport.close()
            return
        self._expect_head(after=None)

    def on_response_complete(self) -> None:
        done = self.cycle
        super().on_response_complete()  # may start a pipelined request: its head has come
        if not self.transport.is_closing():
            self._expect_head(after=done)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        super().connection_lost(exc)

    def _expect_head(self, after: object) -> None:
        """Close the connection unless a request head follows ``after`` (a finished request's
        cycle, or None) within the timeout. Each head starts a new ``self.cycle``; data alone
        (a head sent a byte at a time) does not."""
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        self._head_deadline = self.loop.call_later(self.header_timeout_s, self._head_overdue, after)

    def _head_overdue(self, after: object) -> None:
        if self.cycle is after and not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(
    app: Any,
    *,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    max_connections: int = MAX_CONNECTIONS,
    **options: Any,
) -> uvicorn.Config:
    """A uvicorn config whose connections obey the head timeout and the connection limit."""
    protocol = type(
        "HeadTimeoutProtocol",
        (HeadTimeoutProtocol,),
        {"header_timeout_s": header_timeout_s, "max_connections": max_connections},
    )
    options.setdefault("timeout_graceful_shutdown", GRACEFUL_SHUTDOWN_S)
    return uvicorn.Config(app, http=protocol, ws="none", **options)


@contextmanager
def stop_signals() -> Iterator[None]:
    """Inside, SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does (uvicorn, having shut down
    gracefully on either, raises the signal again on its way out), and Ctrl-C has Python's own
    handler, whatever the start-up put there: asyncio's runner stops its task gracefully on a
    Ctrl-C only under that handler."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous_term = signal.signal(signal.SIGTERM, interrupt)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)


@contextmanager
def interrupt_deferred() -> Iterator[None]:
    """A Ctrl-C during the block is raised when it ends, not inside it: building the tools'
    argument models, pydantic-core turns a KeyboardInterrupt raised within into a SchemaError
    (a traceback and exit 1 where a Ctrl-C stops quietly). Main thread only (``signal``)."""
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
        if caught:
            raise KeyboardInterrupt
