"""The MCP surface beyond tools: prompts, argument completions, and every tool's closed world."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp_types import PromptReference, ResourceTemplateReference

pytestmark = pytest.mark.anyio


async def test_every_tool_declares_a_closed_world(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert tools
    assert {t.name: t.annotations.open_world_hint for t in tools if t.annotations} == {
        t.name: False for t in tools
    }


async def test_prompts_list_offers_recall_summary_and_save(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"what_do_you_know", "summarize_entity", "save_decisions", "tidy_memory"}
    assert [(a.name, a.required) for a in prompts["summarize_entity"].arguments or []] == [("name", True)]
    assert [(a.name, a.required) for a in prompts["what_do_you_know"].arguments or []] == [("topic", True)]
    assert [(a.name, a.required) for a in prompts["save_decisions"].arguments or []] == [("focus", False)]


async def test_what_do_you_know_carries_the_stored_facts_about_the_topic(client: Client) -> None:
    await client.call_tool("remember", {"content": "Marta leads the Lisbon data team", "entities": ["Marta"]})
    prompt = await client.get_prompt("what_do_you_know", {"topic": "Marta"})
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "What do you know about Marta?" in text
    assert "Marta leads the Lisbon data team" in text


async def test_save_decisions_asks_to_search_before_remembering(client: Client) -> None:
    prompt = await client.get_prompt("save_decisions", {"focus": "the release"})
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "about the release" in text
    assert "search" in text and "correct" in text
    assert "kind='negative'" in text and "triggers" in text


async def test_entity_names_complete_for_the_prompt_and_the_entity_template(client: Client) -> None:
    await client.call_tool("remember", {"content": "Marta leads the Lisbon data team", "entities": ["Marta"]})
    await client.call_tool("remember", {"content": "Marcus joined in May", "entities": ["Marcus"]})
    await client.call_tool("remember", {"content": "Oskar plays chess", "entities": ["Oskar"]})
    topic = PromptReference(name="what_do_you_know")
    prompt = await client.complete(topic, {"name": "topic", "value": "mar"})
    assert prompt.completion.values == ["Marcus", "Marta"]
    template = ResourceTemplateReference(uri="memory://entity/{name}{?scope}")
    resource = await client.complete(template, {"name": "name", "value": "Os"})
    assert resource.completion.values == ["Oskar"]


async def test_scopes_complete_for_the_templates(client: Client) -> None:
    await client.call_tool("remember", {"content": "Apollo ships on Fridays", "scope": "project:apollo"})
    template = ResourceTemplateReference(uri="memory://context/{query}{?scope}")
    result = await client.complete(template, {"name": "scope", "value": "project:"})
    assert result.completion.values == ["project:apollo"]


async def test_an_entity_of_another_scope_is_not_offered(client: Client) -> None:
    await client.call_tool(
        "remember", {"content": "Zed owns Apollo's builds", "entities": ["Zed"], "scope": "project:apollo"}
    )
    template = ResourceTemplateReference(uri="memory://entity/{name}{?scope}")
    unscoped = await client.complete(template, {"name": "name", "value": "Z"})
    assert unscoped.completion.values == []
    scoped = await client.complete(template, {"name": "name", "value": "Z"}, {"scope": "project:apollo"})
    assert scoped.completion.values == ["Zed"]
