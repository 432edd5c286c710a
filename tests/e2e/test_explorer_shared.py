"""The explorer while MCP servers run: it reads and acts through the process that owns the stores."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.testclient import TestClient

from hippograph.explorer import build_app
from hippograph.service.memory import Memory
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from testkit.client import call, stdio_session
from testkit.process import PYTHON, free_port, run_cli, server_env, settings_at

PAGE = {"X-Hippograph-Explorer": "1", "Origin": "http://127.0.0.1:8766"}


@pytest.mark.anyio
async def test_the_explorer_reads_and_confirms_through_the_owner_keeping_scopes_apart(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as server:
        told = await call(server, "remember", content="Priya leads the Falcon project", entities=["Priya"])
        hidden = await call(server, "remember", content="Falcon ships in May", scope="project:falcon")
        proxy = SharedMemory.open(settings_at(data_dir, models_dir), embedder=embedder)

        def browse() -> tuple[dict[str, Any], dict[str, Any], httpx.Response]:
            with TestClient(build_app(proxy), base_url="http://127.0.0.1:8766") as client:
                seen = client.get("/api/graph").json()
                falcon = client.get("/api/graph", params={"scope": "project:falcon"}).json()
                confirmed = client.post("/api/confirm", json={"fact_id": told["id"]}, headers=PAGE)
            return seen, falcon, confirmed

        try:
            assert not proxy.is_owner  # the server owns the stores; the explorer only asks it
            seen, falcon, confirmed = await anyio.to_thread.run_sync(browse)
        finally:
            proxy.close()
        explained = await call(server, "explain", fact_id=told["id"])
    ends = {end for edge in seen["edges"] for end in (edge["source"], edge["target"])}
    assert told["id"] in {n["id"] for n in seen["nodes"]}
    assert hidden["id"] not in {n["id"] for n in seen["nodes"]} | ends  # global never sees a project
    assert {told["id"], hidden["id"]} <= {n["id"] for n in falcon["nodes"]}
    assert (confirmed.status_code, confirmed.json()["status"]) == (200, "confirmed")
    assert explained["fact"]["status"] == "confirmed"  # the owner holds the confirm


def _graph_ids(port: int) -> set[str]:
    """The fact ids /api/graph lists once the explorer answers (its first requests may wait for
    the memory to open; the socket already listens)."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        body = client.get("/api/graph").raise_for_status().json()
    return {n["id"] for n in body["nodes"] if n["group"] == "fact"}


def _confirm(port: int, fact_id: str) -> httpx.Response:
    headers = {**PAGE, "Origin": f"http://127.0.0.1:{port}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        return client.post("/api/confirm", json={"fact_id": fact_id}, headers=headers)


@pytest.mark.anyio
async def test_explore_serves_the_graph_at_once_while_two_servers_run(
    tmp_path: Path, models_dir: Path
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as first, stdio_session(data_dir, models_dir) as second:
        told = await call(first, "remember", content="Tomas drives an electric car")
        port = free_port()
        started = time.monotonic()
        explorer = subprocess.Popen(
            [PYTHON, "-m", "hippograph", "explore", "--port", str(port)],
            env=server_env(data_dir, models_dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert explorer.stderr is not None
            with anyio.fail_after(60):
                said = await anyio.to_thread.run_sync(explorer.stderr.readline)
            with anyio.fail_after(60):
                drawn = await anyio.to_thread.run_sync(_graph_ids, port)
            served_after = time.monotonic() - started
            confirmed = await anyio.to_thread.run_sync(_confirm, port, told["id"])
            explained = await call(second, "explain", fact_id=told["id"])
        finally:
            explorer.send_signal(signal.SIGTERM)
            out, err = explorer.communicate(timeout=60)
    assert said == f"hippograph explorer: http://127.0.0.1:{port}/ (Ctrl-C to stop)\n"
    assert told["id"] in drawn
    # The bar is 5 s on an idle machine; a loaded CI runner gets room, a hang does not.
    assert served_after < 10, f"the graph took {served_after:.1f} s"
    assert (confirmed.status_code, explained["fact"]["status"]) == (200, "confirmed")
    assert (explorer.returncode, out) == (0, "")  # SIGTERM stops it cleanly; stdout stays empty
    assert "Traceback" not in err, err


def test_explore_on_a_taken_port_says_so_and_what_to_pass(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    Memory.open(settings_at(data_dir, models_dir), embedder=embedder).close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli(data_dir, models_dir, "explore", "--port", str(port))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"hippograph: port {port} on 127.0.0.1 is already in use (another explorer, or another program): "
        f"pass --port with a free one, e.g. hippograph explore --port {port + 1}\n"
    )
