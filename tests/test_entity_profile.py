"""memory://entity/{name}: one entity's profile as JSON, within a token budget (issue 26)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from hippograph.domain import replies
from hippograph.domain.errors import InvalidInput
from hippograph.service.memory import Memory

pytestmark = pytest.mark.anyio


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _profile(client: Client, uri: str) -> dict[str, Any]:
    return json.loads((await client.read_resource(uri)).contents[0].text)  # type: ignore[union-attr]


async def test_a_profile_lists_facts_related_entities_timeline_changes_and_contests(client: Client) -> None:
    old = await _call(client, "remember", content="Mara leads the Atlas team", entities=["Mara", "Atlas"])
    await _call(
        client, "remember", content="Mara moved to Lisbon", entities=["Mara"], event_time="2024-03-01"
    )
    await _call(client, "remember", content="Mara and Jonas ship Atlas v2", entities=["Mara", "Jonas"])
    new = await _call(client, "correct", content="Mara leads the Orion team", fact_id=old["id"])
    await _call(client, "remember", content="Jonas reviews Atlas on Fridays", entities=["Jonas", "Atlas"])

    profile = await _profile(client, "memory://entity/Mara")

    assert (profile["name"], profile["scope"]) == ("Mara", "global")
    facts = {f["id"]: f["content"] for f in profile["facts"]}
    assert new["id"] in facts and old["id"] not in facts  # current facts only
    assert "Jonas reviews Atlas on Fridays" not in facts.values()  # not about Mara
    related = {r["name"]: r["facts"] for r in profile["related"]}
    assert related["Jonas"] == 1 and related["Atlas"] == 1  # the correction is about Orion, not Atlas
    assert [e["time"][:10] for e in profile["timeline"]] == ["2024-03-01"]
    assert profile["changed"] == [{"id": new["id"], "replaces": "Mara leads the Atlas team"}]
    named = {e["id"] for e in profile["timeline"]} | {c["id"] for c in profile["changed"]}
    assert named <= set(facts)  # every section names only facts the profile holds


async def test_a_profile_fits_its_budget_dropping_the_lowest_ranked_facts(memory: Memory) -> None:
    for i in range(40):
        memory.remember(f"Kofi reviewed pull request {i} of the billing service", entities=["Kofi"])
    small = memory.profile("Kofi", budget_tokens=200)
    large = memory.profile("Kofi")
    assert small.tokens <= 200 < large.tokens <= 800
    assert 0 < len(small.facts) < len(large.facts)
    assert [f.id for f in small.facts] == [f.id for f in large.facts][: len(small.facts)]
    assert small.tokens == memory.embedder.count_tokens(replies.text(small))  # priced as sent


def test_a_budget_too_small_for_any_fact_is_refused(memory: Memory) -> None:
    memory.remember("Kofi plays the kora", entities=["Kofi"])
    with pytest.raises(InvalidInput, match="budget_tokens must be at least 100"):
        memory.profile("Kofi", budget_tokens=20)


async def test_an_unknown_entity_says_how_to_read_one_of_another_scope(client: Client) -> None:
    with pytest.raises(Exception, match=r"no entity is called 'Nobody'"):
        await client.read_resource("memory://entity/Nobody")


async def test_a_summary_written_through_the_prompt_shows_in_the_profile_apart_from_the_facts(
    client: Client,
) -> None:
    first = await _call(client, "remember", content="Ilse maintains the payments gateway", entities=["Ilse"])
    prompt = await client.get_prompt("summarize_entity", {"name": "Ilse"})
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "Ilse maintains the payments gateway" in text and first["id"] in text  # the profile
    assert 'remember(content=<the summary>, entities=["Ilse"], tags=["summary"])' in text
    summary = await _call(
        client, "remember", content="Ilse owns payments end to end", entities=["Ilse"], tags=["summary"]
    )
    later = await _call(client, "remember", content="Ilse moved to the Oslo office", entities=["Ilse"])

    profile = await _profile(client, "memory://entity/Ilse")
    assert profile["summary"]["id"] == summary["id"] and profile["summary"]["newer_facts"] == 1
    assert summary["id"] not in {f["id"] for f in profile["facts"]}  # shown once
    assert later["id"] in {f["id"] for f in profile["facts"]}
    again = (await client.get_prompt("summarize_entity", {"name": "Ilse"})).messages[0].content.text  # type: ignore[union-attr]
    assert f'correct(fact_id="{summary["id"]}"' in again  # a new summary replaces the old one


async def test_a_profile_with_no_summary_leaves_the_key_out(client: Client) -> None:
    await _call(client, "remember", content="Tove tests the mobile app", entities=["Tove"])
    assert "summary" not in await _profile(client, "memory://entity/Tove")


async def test_summarizing_an_unknown_entity_is_the_clients_mistake(client: Client) -> None:
    with pytest.raises(Exception, match="no entity is called 'Nobody'"):
        await client.get_prompt("summarize_entity", {"name": "Nobody"})
