"""Replies cost what they must, over a real stdio server: recall's whole text fits its budget,
counted with the model's own tokenizer.

(Compact search hits and tool schemas, over an in-process client: tests/test_reply_size.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from testkit.client import call, call_tool, stdio_session
from tests.test_reply_size import _text

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def tokens(models_dir: Path) -> Tokenizer:
    """The model's tokenizer read from its files, not through the code under test."""
    tokenizer = Tokenizer.from_file(str(models_dir / "all-MiniLM-L6-v2-int8" / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


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
