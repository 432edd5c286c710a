"""Talk MCP to a server as a client does, with the official Python client: sessions and tool calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from testkit.process import PYTHON, http_server, server_env

# A raw MCP initialize request and the headers an HTTP transport wants, for tests that speak
# JSON-RPC by hand (malformed messages, Host/Origin checks) rather than through a client.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def connect_stdio(
    command: str,
    args: Sequence[str],
    env: dict[str, str],
    *,
    errlog: TextIO | None = None,
    timeout: float = 60,
) -> AsyncIterator[ClientSession]:
    """Spawn any MCP server over stdio and initialize a session (its stderr to ``errlog``)."""
    params = StdioServerParameters(command=command, args=list(args), env=env)
    client = stdio_client(params) if errlog is None else stdio_client(params, errlog=errlog)
    async with client as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(timeout):
            await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(
    data_dir: Path,
    models_dir: Path,
    *args: str,
    errlog: TextIO | None = None,
    timeout: float = 60,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """``python -m hippograph serve [args]`` over stdio on a data dir, initialized (``env``: more
    of the server's environment, e.g. a setting)."""
    async with connect_stdio(
        PYTHON,
        ["-m", "hippograph", "serve", *args],
        server_env(data_dir, models_dir, **(env or {})),
        errlog=errlog,
        timeout=timeout,
    ) as session:
        yield session


@asynccontextmanager
async def connect_http(
    url: str, transport: str = "http", timeout: float = 60
) -> AsyncIterator[ClientSession]:
    """An initialized session with a listening server: streamable HTTP, or SSE when ``transport='sse'``."""
    client = sse_client(url) if transport == "sse" else streamable_http_client(url)
    async with client as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(timeout):
            await session.initialize()
        yield session


@asynccontextmanager
async def http_session(data_dir: Path, models_dir: Path, transport: str) -> AsyncIterator[ClientSession]:
    """Start ``hippograph serve --transport sse|http`` on a free loopback port and connect."""
    async with (
        http_server(data_dir, models_dir, transport) as server,
        connect_http(server.url, transport) as session,
    ):
        yield session


async def call_tool(
    session: ClientSession, tool: str, arguments: Mapping[str, Any] | None = None, *, timeout: float = 120
) -> CallToolResult:
    """Call a tool of any server; raise RuntimeError with the text it answered if that is an error."""
    with anyio.fail_after(timeout):
        result = await session.call_tool(tool, dict(arguments or {}))
    if result.is_error:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{tool} failed: {text[:300]}")
    return result


def result_text(result: CallToolResult) -> str:
    """The text blocks of a tool's reply, joined: what a model reads of an error."""
    return " ".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a hippograph tool and return its structured output; fail loudly on a tool error."""
    result = await call_tool(session, tool, arguments, timeout=60)
    assert result.structured_content is not None
    return dict(result.structured_content)


async def call_error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return the error text the model would see."""
    with anyio.fail_after(60):
        result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {json.dumps(result.structured_content)}"
    return " ".join(getattr(block, "text", "") for block in result.content)
