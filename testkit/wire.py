"""Talk MCP to a stdio server by hand: one JSON-RPC message a line, no client SDK.

For timing the server alone. The official Python client checks each reply's structured content
against the tool's output schema with ``jsonschema`` (~3 ms for a search reply of ten results at
5k facts, 2026-12-01) and hands every message through anyio streams: a search it times at ~22.7
ms took 15.8 ms on the wire. Another client (a desktop app, an IDE) pays its own price, not this one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from testkit.process import PYTHON, server_env

PROTOCOL = "2026-07-28"


class WireSession:
    """``hippograph serve`` on ``data_dir``, initialized, answering ``call`` one request at a time."""

    def __init__(self, data_dir: Path, models_dir: Path, *, errlog: IO[str] | None = None) -> None:
        self._process = subprocess.Popen(
            [PYTHON, "-m", "hippograph", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog if errlog is not None else subprocess.DEVNULL,
            env=server_env(data_dir, models_dir),
            text=True,
        )
        self._id = 0
        info = {"name": "hippograph-wire", "version": "1"}
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @property
    def pid(self) -> int:
        return self._process.pid

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request; RuntimeError with the server's error if it answers one."""
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        assert self._process.stdout is not None
        while True:  # notifications (logs, progress) come on the same stream: skipped
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output (exit {self._process.poll()})")
            message = json.loads(line)
            if message.get("id") == self._id:
                break
        if "error" in message:
            raise RuntimeError(f"{method} failed: {message['error']}")
        return dict(message["result"])

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool's result; RuntimeError with its text if the tool answered an error."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            text = " ".join(str(block.get("text", "")) for block in result.get("content", []))
            raise RuntimeError(f"{tool} failed: {text[:300]}")
        return result

    def close(self) -> None:
        """Close the server's input, as a client that quits does, and wait for it to exit."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __enter__(self) -> WireSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
