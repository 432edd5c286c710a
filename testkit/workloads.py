"""Reliability workloads, run small by the tests and large by bench/reliability.py.

Real server processes on one data dir, driven by the official MCP client; every
acknowledged write is checked afterwards against both stores.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import ClientSession

from hippograph.service.memory import Memory
from hippograph.sharing.ownership import read_owner
from testkit.client import connect_http, stdio_session
from testkit.process import http_server, settings_at


@dataclass
class Tally:
    attempted: int = 0
    acknowledged: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    searches: int = 0


async def _writer(session: ClientSession, label: str, count: int, tally: Tally, concurrency: int) -> None:
    limiter = anyio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with limiter:
            tally.attempted += 1
            result = await session.call_tool(
                "remember", {"content": f"{label} wrote note number {i} about otters"}
            )
            if result.is_error or not result.structured_content:
                tally.errors.append(str(result.content))
            else:
                tally.acknowledged.append(result.structured_content["id"])
            if i % 5 == 0:
                found = await session.call_tool("search", {"query": f"{label} note {i}", "limit": 3})
                tally.searches += 1
                if found.is_error:
                    tally.errors.append(str(found.content))

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(one, i)


async def concurrent_processes(
    data_dir: Path, models_dir: Path, processes: int, writes_each: int, concurrency: int = 8
) -> Tally:
    """``processes`` stdio servers on one data dir, each taking ``writes_each`` concurrent remembers."""
    tally = Tally()

    async def client(n: int) -> None:
        async with stdio_session(data_dir, models_dir) as session:
            await _writer(session, f"client{n}", writes_each, tally, concurrency)

    async with anyio.create_task_group() as tg:
        for n in range(processes):
            tg.start_soon(client, n)
    return tally


async def kill_rounds(data_dir: Path, models_dir: Path, rounds: int, writes_per_round: int) -> Tally:
    """Kill -9 the server in the middle of each write burst; restart; keep every acknowledged write."""
    tally = Tally()
    for _ in range(rounds):
        async with http_server(data_dir, models_dir) as server:
            process = server.process
            killed = anyio.Event()

            async def burst(
                session: ClientSession,
                start: int,
                process: subprocess.Popen[bytes] = process,
                killed: anyio.Event = killed,
            ) -> None:
                async def one(i: int) -> None:
                    tally.attempted += 1
                    try:
                        result = await session.call_tool("remember", {"content": f"burst note {start + i}"})
                    except Exception:
                        return  # in flight when the server died: never acknowledged
                    if not result.is_error and result.structured_content:
                        tally.acknowledged.append(result.structured_content["id"])
                        if len(tally.acknowledged) % writes_per_round == writes_per_round // 2:
                            os.kill(process.pid, signal.SIGKILL)
                            killed.set()

                with anyio.move_on_after(60):
                    async with anyio.create_task_group() as tg:
                        for i in range(writes_per_round):
                            tg.start_soon(one, i)

            try:
                async with connect_http(server.url) as session:
                    await burst(session, tally.attempted)
            except Exception:  # the transport breaks when the server is killed under it
                pass
            if not killed.is_set() and process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
    return tally


async def owner_kills(data_dir: Path, models_dir: Path, rounds: int, proxies: int, writes_each: int) -> Tally:
    """Each round: an owner and ``proxies`` stdio servers writing conversation turns (never merged,
    so a write run twice shows as two facts); the owner is killed -9 a third of the way in, and
    the proxies' retries reach whichever of them takes over."""
    tally = Tally()
    for r in range(rounds):
        owning, killed = anyio.Event(), anyio.Event()
        pid: list[int] = []

        async def owner(
            owning: anyio.Event = owning, killed: anyio.Event = killed, pid: list[int] = pid
        ) -> None:
            try:
                async with stdio_session(data_dir, models_dir) as session:
                    await session.call_tool("search", {"query": "warm up"})
                    info = read_owner(data_dir)
                    assert info is not None
                    pid.append(info.pid)
                    owning.set()
                    await killed.wait()
            except Exception:  # its transport breaks when it is killed
                pass

        async def proxy(n: int, r: int = r, killed: anyio.Event = killed, pid: list[int] = pid) -> None:
            async with stdio_session(data_dir, models_dir) as session:
                limiter = anyio.Semaphore(4)

                async def one(i: int) -> None:
                    async with limiter:
                        tally.attempted += 1
                        result = await session.call_tool(
                            "remember",
                            {
                                "content": f"round {r} proxy {n} turn {i}",
                                "kind": "episode",
                                "session_id": f"p{n}",
                            },
                        )
                        if result.is_error or not result.structured_content:
                            tally.errors.append(str(result.content))
                            return
                        tally.acknowledged.append(result.structured_content["id"])
                        if not killed.is_set() and len(tally.acknowledged) % (proxies * writes_each) >= (
                            proxies * writes_each // 3
                        ):
                            os.kill(pid[0], signal.SIGKILL)
                            killed.set()

                async with anyio.create_task_group() as tg:
                    for i in range(writes_each):
                        tg.start_soon(one, i)

        async with anyio.create_task_group() as tg:
            tg.start_soon(owner)
            await owning.wait()
            async with anyio.create_task_group() as writers:
                for n in range(proxies):
                    writers.start_soon(proxy, n)
            if not killed.is_set():
                os.kill(pid[0], signal.SIGKILL)
                killed.set()
    return tally


def verify(data_dir: Path, models_dir: Path, acknowledged: list[str]) -> dict[str, int]:
    """Open the stores directly: every acknowledged fact is in Kùzu, none is stored twice, and
    LanceDB agrees with Kùzu."""
    memory = Memory.open(settings_at(data_dir, models_dir))
    try:
        in_graph = memory.graph.fact_ids()
        in_index = set(memory.vectors.ids("facts"))
        contents = Counter(fact.content for fact in memory.graph.all_facts())
        return {
            "acknowledged": len(acknowledged),
            "missing": len(set(acknowledged) - in_graph),
            "duplicated": sum(n - 1 for n in contents.values()),
            "graph_facts": len(in_graph),
            "index_disagrees": len(in_graph ^ in_index),
        }
    finally:
        memory.close()
