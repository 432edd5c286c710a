"""Start hippograph as a client would: its environment, the CLI, an HTTP server on a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
from pydantic import SecretStr

from hippograph.config import Settings

PYTHON = sys.executable
# Where a data dir's memory lives when it is not in the data dir: set by a test run on PostgreSQL
# (``HIPPOGRAPH_TEST_BACKEND=postgresql``) to give each data dir a database of its own.
store_url_for: Callable[[Path], str] | None = None


def server_env(data_dir: Path, models_dir: Path, **extra: str) -> dict[str, str]:
    """The environment a real client would give a server process: only what it needs."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(data_dir)),
        "HIPPOGRAPH_DATA_DIR": str(data_dir),
        "HIPPOGRAPH_MODELS_DIR": str(models_dir),
        "HIPPOGRAPH_LOG_LEVEL": "WARNING",
    }
    if "PYTHONPATH" in os.environ:  # a source checkout run without installing it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if store_url_for is not None:
        env["HIPPOGRAPH_STORE_URL"] = store_url_for(data_dir)
    env.update(extra)
    return env


def settings_at(data_dir: Path, models_dir: Path, **fields: Any) -> Settings:
    """The settings a server started on ``data_dir`` has (``server_env``), to open its memory in
    this process: on PostgreSQL, with the data dir's database."""
    if store_url_for is not None:
        fields.setdefault("store_url", SecretStr(store_url_for(data_dir)))
    return Settings(data_dir=data_dir, models_dir=models_dir, **fields)


def run_cli(
    data_dir: Path, models_dir: Path, *args: str, stdin: str | None = None, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """Run the console script as a user (or a client's hook) would, against a data dir."""
    return subprocess.run(
        [PYTHON, "-m", "hippograph", *args],
        env=server_env(data_dir, models_dir, **extra_env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Return once ``process`` accepts connections on loopback ``port``; fail if it exits first."""
    with anyio.fail_after(timeout):
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


@dataclass(frozen=True)
class HttpServer:
    process: subprocess.Popen[bytes]
    port: int
    transport: str

    @property
    def url(self) -> str:
        """The MCP endpoint of its transport: ``/sse`` or ``/mcp``."""
        return f"http://127.0.0.1:{self.port}/{'sse' if self.transport == 'sse' else 'mcp'}"


@asynccontextmanager
async def http_server(
    data_dir: Path,
    models_dir: Path,
    transport: str = "http",
    *,
    host: str = "127.0.0.1",
    stderr: IO[bytes] | None = None,
    **extra_env: str,
) -> AsyncIterator[HttpServer]:
    """``hippograph serve --transport http|sse`` on a free port of ``host`` (reached on loopback),
    listening; stopped at exit. Its stderr goes to ``stderr`` if given."""
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "hippograph", "serve", "--transport", transport, "--host", host, "--port", str(port)],
        env=server_env(data_dir, models_dir, **extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
        await wait_for_port(port, process)
        yield HttpServer(process, port, transport)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)
