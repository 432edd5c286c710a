"""recall(granularity="overview") (issue 26): storylines and topics, one line each, within budget."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from hippograph.service.memory import Memory
from hippograph.service.overview import NO_LINES

pytestmark = pytest.mark.anyio

SPRING = [
    ("2024-03-02", "Lena started restoring the old sailboat in her garage."),
    ("2024-03-02", "Lena sanded the sailboat hull down to bare wood."),
    ("2024-03-09", "Lena bought marine varnish for the sailboat deck."),
    ("2024-03-16", "Lena replaced two rotten ribs of the sailboat."),
    ("2024-03-23", "Lena painted the sailboat hull dark blue."),
    ("2024-03-30", "Lena fitted a new mast step to the sailboat."),
]
AUTUMN = [
    ("2024-10-05", "Lena launched the restored sailboat on the lake."),
    ("2024-10-12", "Lena sailed the sailboat to the island and back."),
    ("2024-10-19", "Lena's sailboat took on water after a storm."),
    ("2024-10-26", "Lena patched the sailboat's leaking seam."),
    ("2024-11-02", "Lena stored the sailboat for the winter."),
]


def _remember(memory: Memory, dated: list[tuple[str, str]]) -> None:
    for day, content in dated:
        memory.remember(content, event_time=day, entities=["Lena"])


def test_an_entitys_facts_on_several_days_make_storylines_cut_at_a_long_gap(memory: Memory) -> None:
    _remember(memory, SPRING + AUTUMN)
    out = memory.recall("Lena's sailboat", granularity="overview")
    lines = out.narrative.splitlines()
    stories = [line for line in lines if line.startswith("- storyline Lena:")]
    assert stories == [
        "- storyline Lena: 6 facts, 2024-03-02 to 2024-03-30 (memory://entity/Lena)",
        "- storyline Lena: 5 facts, 2024-10-05 to 2024-11-02 (memory://entity/Lena)",
    ]
    assert out.fact_ids == []  # it shows no facts: where to read them


def test_an_overview_with_no_line_says_so_and_points_to_the_facts(memory: Memory) -> None:
    _remember(memory, SPRING)
    out = memory.recall("the quarterly tax filing", granularity="overview")
    assert out.narrative == ""
    assert not [n for n in out.notes if "nearest facts;" in n]  # none are shown
    assert NO_LINES in out.notes


def test_the_overview_lists_the_topics_holding_the_best_facts(memory: Memory) -> None:
    _remember(memory, SPRING + AUTUMN)
    for i, content in enumerate(
        ["The kubernetes cluster upgrade is on Friday.", "Drain each kubernetes node before upgrading."] * 2
    ):
        memory.remember(f"{content} (step {i})")
    memory.consolidate()
    out = memory.recall("Lena's sailboat", granularity="overview")
    topics = [line for line in out.narrative.splitlines() if line.startswith("- topic ")]
    assert topics and all("memory://topic/t_" in line and "sailboat" in line for line in topics[:1])
    assert not any("kubernetes" in line for line in topics)  # no fact of it matched


async def test_the_overview_fits_its_budget_over_mcp_and_facts_stay_the_default(client: Client) -> None:
    for day, content in SPRING + AUTUMN:
        result = await client.call_tool(
            "remember", {"content": content, "event_time": day, "entities": ["Lena"]}
        )
        assert not result.is_error
    wide = await _recall(client, context="Lena's sailboat", granularity="overview", budget_tokens=400)
    narrow = await _recall(client, context="Lena's sailboat", granularity="overview", budget_tokens=60)
    assert wide["tokens"] <= 400 and narrow["tokens"] <= 60
    assert len(narrow["narrative"].splitlines()) < len(wide["narrative"].splitlines())
    facts = await _recall(client, context="Lena's sailboat")
    assert "storyline" not in facts["narrative"] and facts["fact_ids"]
    refused = await client.call_tool("recall", {"context": "Lena", "granularity": "summary"})
    assert refused.is_error and "granularity" in refused.content[0].text  # type: ignore[union-attr]


async def _recall(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("recall", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_an_overview_of_someone_unknown_keeps_the_names_note(memory: Memory) -> None:
    _remember(memory, SPRING)
    out = memory.recall("What does Zorblax Quintana think of the plan?", granularity="overview")
    assert out.narrative == ""
    assert any("no fact mentions Zorblax Quintana" in n for n in out.notes)
    assert NO_LINES not in out.notes  # granularity='facts' would show nothing either
