"""What a client sees of hippograph: tool metadata, resources, change events, progress."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

TOOLS = {
    "remember",
    "search",
    "recall",
    "correct",
    "confirm",
    "forget",
    "explain",
    "link",
    "mark_used",
    "review",
}
READ_ONLY = {"search", "recall", "explain", "review"}


async def test_every_tool_is_described_typed_and_annotated(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.title, name
        assert "Example" in (tool.description or "") or "example" in (tool.description or ""), name
        assert tool.output_schema, name
        assert tool.annotations is not None, name
        assert tool.annotations.read_only_hint is (name in READ_ONLY), name
        for param, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (name, param)
        assert "ctx" not in tool.input_schema["properties"]
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["confirm"].annotations.idempotent_hint is True


async def test_instructions_teach_the_model_to_use_memory(client: Client) -> None:
    instructions = client.instructions or ""
    for advice in ("search (or recall)", "Remember durable", "correct", "secrets"):
        assert advice in instructions


async def test_stats_and_entity_resources(client: Client) -> None:
    await client.call_tool("remember", {"content": "Lena runs the Berlin office", "entities": ["Lena"]})
    stats = json.loads((await client.read_resource("memory://stats")).contents[0].text)  # type: ignore[union-attr]
    assert stats["facts"] == 1
    profile = (await client.read_resource("memory://entity/Lena")).contents[0].text  # type: ignore[union-attr]
    assert "Lena runs the Berlin office" in profile
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert {"memory://context/{query}{?scope}", "memory://entity/{name}{?scope}"} <= templates


async def test_writes_notify_resource_subscribers(client: Client) -> None:
    async with client.listen(resource_subscriptions=["memory://context"]) as subscription:
        await client.call_tool("remember", {"content": "Oskar switched teams in June"})
        with anyio.fail_after(10):
            event = await subscription.__anext__()
    assert getattr(event, "uri", None) == "memory://context"


async def test_recall_reports_progress(client: Client) -> None:
    await client.call_tool("remember", {"content": "Pia is learning Japanese"})
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool("recall", {"context": "Pia"}, progress_callback=on_progress)
    assert not result.is_error
    assert seen and seen[-1][0] == seen[-1][1] == 2
