"""Drive a real hippograph server process with the official MCP Python client."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import PYTHON, server_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def stdio_session(data_dir: Path, models_dir: Path, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "hippograph", "serve", *args], env=server_env(data_dir, models_dir)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(60):
            await session.initialize()
        yield session


async def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    with anyio.fail_after(60):
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode} before listening")
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


@asynccontextmanager
async def http_session(data_dir: Path, models_dir: Path, transport: str) -> AsyncIterator[ClientSession]:
    """Start ``hippograph serve --transport sse|http`` on a free loopback port and connect."""
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "hippograph", "serve", "--transport", transport, "--port", str(port)],
        env=server_env(data_dir, models_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        await _wait_for_port(port, process)
        if transport == "sse":
            client = sse_client(f"http://127.0.0.1:{port}/sse")
        else:
            client = streamable_http_client(f"http://127.0.0.1:{port}/mcp")
        async with client as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
            yield session
    finally:
        process.terminate()
        process.wait(timeout=30)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool and return its structured output; fail loudly on a tool error."""
    with anyio.fail_after(60):
        result = await session.call_tool(tool, arguments)
    if result.is_error:
        raise AssertionError(f"{tool} failed: {result.content}")
    assert result.structured_content is not None
    return dict(result.structured_content)


async def call_error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return the error text the model would see."""
    with anyio.fail_after(60):
        result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {json.dumps(result.structured_content)}"
    return " ".join(getattr(block, "text", "") for block in result.content)
