"""The walking skeleton end to end: real server processes, real transports, real stores."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from mcp import ClientSession

from testkit.client import call, call_error, http_session, stdio_session

pytestmark = pytest.mark.anyio

FACTS = [
    {"content": "Alice drinks green tea every morning", "subject": "Alice", "entities": ["Alice"]},
    {"content": "The quarterly budget review is scheduled for Friday", "tags": ["work"]},
    {"content": "Bob's dog is called Rex", "entities": ["Bob", "Rex"], "kind": "fact"},
]
# Each paraphrase shares no word with its fact: only meaning can find it.
PARAPHRASES = [
    ("which beverage does she have at breakfast", 0),
    ("name of the pet puppy", 2),
]
KEYWORDS = [("Rex", 2), ("quarterly", 1)]

Opener = Callable[[], AbstractAsyncContextManager[ClientSession]]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


async def _round_trip(open_session: Opener) -> None:
    async with open_session() as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"remember", "search"} <= tools
        ids = [(await call(session, "remember", **fact))["id"] for fact in FACTS]
        assert len(set(ids)) == 3

    # A new server process on the same data dir: what was acknowledged is there.
    async with open_session() as session:
        for query, expected in PARAPHRASES:
            assert not _words(query) & _words(FACTS[expected]["content"])
            results = (await call(session, "search", query=query, limit=3, detail=True))["results"]
            assert results[0]["id"] == ids[expected], (query, results)
            assert "vector" in results[0]["reasons"]
        for query, expected in KEYWORDS:
            results = (await call(session, "search", query=query, limit=3, detail=True))["results"]
            assert results[0]["id"] == ids[expected], (query, results)
            assert "fts" in results[0]["reasons"]


async def test_stdio_round_trip_survives_restart(tmp_path: Path, models_dir: Path) -> None:
    await _round_trip(lambda: stdio_session(tmp_path / "data", models_dir))


@pytest.mark.parametrize("transport", ["sse", "http"])
async def test_http_transports_round_trip(tmp_path: Path, models_dir: Path, transport: str) -> None:
    await _round_trip(lambda: http_session(tmp_path / "data", models_dir, transport))


async def test_bad_input_is_a_readable_tool_error_and_writes_nothing(
    tmp_path: Path, models_dir: Path
) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        cases = [
            ({"content": "   "}, "content is empty"),
            ({"content": "x" * 9000}, "over the 8192-byte limit"),
            ({"content": "ok", "kind": "rumour"}, "kind"),
            ({"content": "ok", "confidence": 1.5}, "outside 0..1"),
            ({"content": "ok", "event_time": "next blursday"}, "ISO 8601"),
            ({"content": "ok", "scope": "team alpha"}, "project:NAME"),
        ]
        for arguments, expected in cases:
            message = await call_error(session, "remember", **arguments)
            assert expected in message, (arguments, message)
        assert (await call(session, "search", query="ok"))["results"] == []


async def test_remember_reply_names_linked_entities(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        first = await call(
            session, "remember", content="Carol leads Project Apollo", entities=["Carol", "Project Apollo"]
        )
        assert {e["name"] for e in first["linked_entities"]} == {"Carol", "Project Apollo"}
        assert all(e["created"] for e in first["linked_entities"])
        # Free text alone links entities already known, by name mention.
        second = await call(session, "remember", content="project apollo ships in March")
        assert [(e["name"], e["created"]) for e in second["linked_entities"]] == [("Project Apollo", False)]
