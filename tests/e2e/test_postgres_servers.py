"""Two server processes with their own data dirs, as on two machines, share one memory in
PostgreSQL (issue 27), driven over MCP stdio as their clients would."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from testkit.client import call, stdio_session

pytestmark = pytest.mark.anyio

CITIES = ["Lisbon", "Oslo", "Lima", "Osaka", "Porto", "Quito"]


@asynccontextmanager
async def _servers(
    tmp_path: Path, models_dir: Path, pg_url: str, n: int
) -> AsyncIterator[list[ClientSession]]:
    """``n`` servers over stdio, each with a data dir of its own, all on the database ``pg_url``."""
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                stdio_session(tmp_path / f"s{i}", models_dir, "--store-url", pg_url)
            )
            for i in range(n)
        ]


async def test_two_servers_share_one_memory_and_each_sees_the_others_writes(
    tmp_path: Path, models_dir: Path, pg_url: str
) -> None:
    async with _servers(tmp_path, models_dir, pg_url, 2) as (a, b):
        stored = await call(a, "remember", content="Ines keeps the spare keys in the blue drawer.")
        found = await call(b, "search", query="where are the spare keys?")
        assert found["results"][0]["id"] == stored["id"]

        # Both change one claim at once: one value stays current, whichever server is asked.
        async def move(server: ClientSession, cities: list[str]) -> None:
            for city in cities:
                await call(server, "remember", content=f"Mara lives in {city}.", subject="Mara",
                           predicate="lives_in", object=city, source="user_edit")  # fmt: skip

        async with anyio.create_task_group() as group:
            group.start_soon(move, a, CITIES[0::2])
            group.start_soon(move, b, CITIES[1::2])
        answers = [await call(s, "search", query="Where does Mara live?", limit=10) for s in (a, b)]
        current = [[r["content"] for r in got["results"] if r["status"] != "superseded"] for got in answers]
        assert current[0] == current[1] and len([c for c in current[0] if "Mara lives" in c]) == 1

        # A correction on one server is what the other's next read answers.
        latest = next(r for r in answers[0]["results"] if "Mara lives" in r["content"])
        fixed = await call(a, "correct", fact_id=latest["id"], content="Mara lives in Bergen.")
        after = await call(b, "search", query="Where does Mara live?")
        assert after["results"][0]["id"] == fixed["id"]
        assert not (tmp_path / "s0" / "graph.kuzu").exists() and not (tmp_path / "s1" / "vectors").exists()


SHARED = "The release train leaves every second Tuesday at noon."


async def test_four_servers_writing_at_once_keep_one_memory(
    tmp_path: Path, models_dir: Path, pg_url: str
) -> None:
    async with _servers(tmp_path, models_dir, pg_url, 4) as servers:
        a, b, c, d = servers
        written: list[tuple[str, str, str]] = []  # (id, scope, content) of every acknowledged write

        async def write(n: int, server: ClientSession) -> None:
            for i, city in enumerate(CITIES):
                # The first server keeps half of its notes in a project; the rest are global.
                scope = "project:apollo" if n == 0 and i % 2 else "global"
                content = f"Courier {n} delivered parcel {i} to the depot in {city}."
                got = await call(server, "remember", content=content, scope=scope)
                written.append((got["id"], scope, content))
            got = await call(server, "remember", content=SHARED)  # all four say it at once
            written.append((got["id"], "global", SHARED))

        async with anyio.create_task_group() as group:
            for n, server in enumerate(servers):
                group.start_soon(write, n, server)

        # No fact stored twice: the sentence all four said is one fact, corroborated.
        assert len({fid for fid, _, content in written if content == SHARED}) == 1
        ids = {fid for fid, _, _ in written}
        assert len(ids) == 4 * len(CITIES) + 1
        for server in servers:  # every acknowledged write, from every server
            for fid, scope, content in written:
                assert (await call(server, "explain", fact_id=fid, scope=scope))["fact"]["content"] == content
        counts = [json.loads(_text(await s.read_resource("memory://stats"))) for s in servers]
        for count in counts:  # a server's own data dir (its logs) is its own: disk_bytes differs
            del count["disk_bytes"]
        assert all(count == counts[0] for count in counts) and counts[0]["facts"] == len(ids)

        # A correction on one server is the next search's answer on another.
        parcel = next(fid for fid, scope, content in written if "Courier 3 delivered parcel 2" in content)
        fixed = await call(
            c, "correct", fact_id=parcel, content="Courier 3 delivered parcel 2 to the depot in Reykjavik."
        )
        after = await call(a, "search", query="Which depot got courier 3's parcel 2?", limit=5)
        assert after["results"][0]["id"] == fixed["id"]

        # A project's facts stay out of another server's global search, and in its own.
        apollo = {fid for fid, scope, _ in written if scope == "project:apollo"}
        for server in (b, c, d):
            found = await call(server, "search", query="Courier 0 delivered parcels to the depots", limit=20)
            assert apollo.isdisjoint(r["id"] for r in found["results"])
        own = await call(
            d, "search", query="Courier 0 delivered parcels to the depots", limit=20, scope="project:apollo"
        )
        assert apollo <= {r["id"] for r in own["results"]}


def _text(result: Any) -> str:
    return str(result.contents[0].text)
