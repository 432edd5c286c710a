"""What reaches the server over a stream transport: stdin's lines, and a reply to every unreadable message.

The SDK's stdio and SSE transports put a message they cannot parse or validate on the
session's stream as an exception, and the session drops it: the client waits for a reply that
never comes. Two such messages are ordinary: a lone UTF-16 surrogate (what JavaScript's
``JSON.stringify`` writes for half an emoji, ``"\\ud83d"``: valid JSON text, but no Unicode
string) and nesting deeper than the parser's limit. ``answering_malformed`` sits between a
transport and the server and answers each with a JSON-RPC error, carrying the request's id
whenever it can still be read, so the client's request ends with an error it can show.

``stdin_lines`` reads stdin in a daemon thread. The SDK reads it in a worker thread that nothing
wakes while the client is silent, and that thread kept a stopped server (Ctrl-C, SIGTERM) alive
until the client closed the pipe.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

log = logging.getLogger(__name__)


def error_reply(problem: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a message the transport could not read (``problem``)."""
    if not isinstance(problem, ValidationError):
        return _error(None, INVALID_REQUEST, f"Invalid request: {problem}")
    errors = problem.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid" and isinstance(errors[0]["input"], str | bytes):
        return _unparsable(errors[0]["input"], errors[0]["msg"])
    # Parsed, but not a JSON-RPC message: where an error quotes the whole message, its id is known.
    whole = next(
        (e["input"] for e in errors if isinstance(e.get("input"), dict) and "jsonrpc" in e["input"]), None
    )
    detail = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'message'}: {e.get('msg')}" for e in errors[:3]
    )
    return _error(_id_of(whole), INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({detail})")


def _unparsable(raw: str | bytes, reason: str) -> JSONRPCError:
    """Why ``raw`` could not be parsed, with its id if Python's more lenient parser can read one
    (it takes lone surrogates, and nesting down to its recursion limit)."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, f"Parse error: {reason}")
    if _has_lone_surrogate(message):
        reason = (
            "a string holds a lone UTF-16 surrogate (half of a character such as an emoji, "
            "e.g. \\ud83d); send whole characters"
        )
    return _error(_id_of(message), PARSE_ERROR, f"Parse error: {reason}")


def _id_of(message: Any) -> str | int | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


@asynccontextmanager
async def answering_malformed(
    read: Any, write: Any
) -> AsyncIterator[anyio.abc.ObjectReceiveStream[SessionMessage | Exception]]:
    """A transport's read stream with every unreadable message answered on ``write`` instead of
    passed on (the server would drop it without a word)."""
    passed_send, passed = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def forward() -> None:
        async with passed_send:
            async for item in read:
                if isinstance(item, Exception):
                    reply = error_reply(item)
                    log.info("answered an unreadable message: %s", reply.error.message[:200])
                    await write.send(SessionMessage(reply))
                else:
                    await passed_send.send(item)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(forward)
        yield passed
        tasks.cancel_scope.cancel()


async def stdin_lines(fd: int) -> AsyncIterator[str]:
    """The lines of file descriptor ``fd`` (UTF-8, undecodable bytes replaced, as the SDK reads
    them), read by a daemon thread: a read blocked on a silent client never keeps the process
    from exiting. It reads the descriptor itself: a daemon thread blocked inside ``sys.stdin``'s
    buffer would hold its lock when the interpreter finalizes it (a fatal error)."""
    send, receive = anyio.create_memory_object_stream[str](1)
    token = anyio.lowlevel.current_token()

    def deliver(line: bytes) -> None:
        anyio.from_thread.run(send.send, line.decode("utf-8", errors="replace"), token=token)

    def read() -> None:
        pending = bytearray()
        try:
            while chunk := os.read(fd, 1 << 16):
                start = len(pending)
                pending += chunk
                while (end := pending.find(b"\n", start)) >= 0:
                    deliver(bytes(pending[: end + 1]))
                    del pending[: end + 1]
                    start = 0
            if pending:
                deliver(bytes(pending))
            anyio.from_thread.run_sync(send.close, token=token)
        except Exception:  # the server stopped first (the stream or the event loop is closed)
            return

    threading.Thread(target=read, name="hippograph-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line
