"""Two server processes with their own data dirs, as on two machines, share one memory in
PostgreSQL (issue 27), driven over MCP stdio as their clients would."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import ClientSession

from testkit.client import call, stdio_session

pytestmark = pytest.mark.anyio

CITIES = ["Lisbon", "Oslo", "Lima", "Osaka", "Porto", "Quito"]


async def test_two_servers_share_one_memory_and_each_sees_the_others_writes(
    tmp_path: Path, models_dir: Path, pg_url: str
) -> None:
    async with (
        stdio_session(tmp_path / "a", models_dir, "--store-url", pg_url) as a,
        stdio_session(tmp_path / "b", models_dir, "--store-url", pg_url) as b,
    ):
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
        assert not (tmp_path / "a" / "graph.kuzu").exists() and not (tmp_path / "b" / "vectors").exists()
