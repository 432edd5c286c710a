"""Replies cost what they must: recall's whole text fits its budget, search hits are compact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from tokenizers import Tokenizer

from testkit.client import call, call_tool, stdio_session

pytestmark = pytest.mark.anyio

COMPACT_HIT = {"id", "content", "kind", "status", "score", "relevance", "time", "entities", "contested_by"}


@pytest.fixture(scope="module")
def tokens(models_dir: Path) -> Tokenizer:
    """The model's tokenizer read from its files, not through the code under test."""
    tokenizer = Tokenizer.from_file(str(models_dir / "all-MiniLM-L6-v2-int8" / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _text(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []))


def _count(tokenizer: Tokenizer, text: str) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


async def test_recall_text_never_exceeds_the_budget(
    tmp_path: Path, models_dir: Path, tokens: Tokenizer
) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        for i in range(30):
            await call(
                session,
                "remember",
                content=f"Nadia visited museum number {i} in Vienna and wrote a long note about "
                f"its paintings, its sculptures and the café on floor {i % 4}",
                entities=["Nadia", "Vienna"],
                event_time=f"2024-03-{i % 28 + 1:02d}",
            )
        context = {"context": "Nadia's trip to Vienna"}
        unlimited = await call_tool(session, "recall", {**context, "budget_tokens": 16000})
        assert _count(tokens, _text(unlimited)) > 2000  # every budget below must cut
        ranked = unlimited.structured_content["fact_ids"]  # type: ignore[index]
        for budget in (200, 500, 2000):
            result = await call_tool(session, "recall", {**context, "budget_tokens": budget})
            text = _text(result)
            assert _count(tokens, text) <= budget, budget
            reply = json.loads(text)
            assert reply == result.structured_content
            # The reply counts its own text, that number included; where no count is exactly
            # self-consistent ("474" measures 475, "475" measures 474) it says the larger.
            assert 0 <= reply["tokens"] - _count(tokens, text) <= 1
            # Facts first, best first: the facts kept are the top of the ranking.
            assert reply["fact_ids"] == ranked[: len(reply["fact_ids"])]
            assert len(reply["fact_ids"]) >= {200: 1, 500: 4, 2000: 15}[budget]
            for fact_id in reply["fact_ids"]:
                assert fact_id in reply["narrative"]


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
