"""Replies cost what they must: search hits are compact, tool schemas carry no pydantic titles.

(Recall's whole text within its budget, over a real stdio server: tests/e2e/test_reply_size.py.)"""

from __future__ import annotations

import json

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

COMPACT_HIT = {"id", "content", "kind", "status", "score", "relevance", "time", "entities", "contested_by"}


def _text(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []))


async def test_search_hits_are_compact_unless_detail_is_asked(client: Client) -> None:
    await client.call_tool("remember", {"content": "Lena runs the Berlin office", "entities": ["Lena"]})
    compact = await client.call_tool("search", {"query": "who runs the Berlin office"})
    text = _text(compact)
    assert "\n" not in text and ": " not in text and "null" not in text
    assert json.loads(text) == compact.structured_content
    hit = compact.structured_content["results"][0]  # type: ignore[index]
    assert set(hit) <= COMPACT_HIT
    assert {"id", "content", "kind", "status", "score", "relevance", "time"} <= set(hit)
    assert "Lena" in hit["entities"]  # and Berlin, a place the recogniser finds
    detailed = await client.call_tool("search", {"query": "who runs the Berlin office", "detail": True})
    full = detailed.structured_content["results"][0]  # type: ignore[index]
    assert {"reasons", "scope", "source", "created_at", "confidence"} <= set(full)
    assert "vector" in full["reasons"]


async def test_tool_list_schemas_carry_no_pydantic_titles(client: Client) -> None:
    for tool in (await client.list_tools()).tools:
        listed = json.dumps([tool.input_schema, tool.output_schema])
        assert '"title"' not in listed, tool.name
