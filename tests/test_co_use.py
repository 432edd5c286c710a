"""Facts a reply relied on together are linked (issue 26, co-use links), through MCP: mark_used
of two or more facts links them, again strengthens the link, reads never link, scopes never join."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from hippograph.service.usage import CO_USE_MAX, CO_USED

pytestmark = pytest.mark.anyio


async def _call(client: Client, tool: str, **arguments: object) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def _co_use_links(client: Client, fact_id: str, scope: str = "global") -> dict[str, float]:
    """Other fact id -> weight of each co-use link ``explain`` shows for ``fact_id``."""
    explained = await _call(client, "explain", fact_id=fact_id, scope=scope)
    return {
        edge["other_id"]: edge["props"]["weight"]
        for edge in explained["edges"]
        if edge["type"] == "RELATES_TO" and edge["props"].get("relation") == CO_USED
    }


async def test_facts_used_together_are_linked_and_each_co_use_strengthens_the_link(client: Client) -> None:
    tea = (await _call(client, "remember", content="Ines drinks rooibos in the afternoon"))["id"]
    mug = (await _call(client, "remember", content="Ines keeps a blue mug on her desk"))["id"]
    bike = (await _call(client, "remember", content="Ines cycles to work along the canal"))["id"]

    await _call(client, "mark_used", fact_ids=[tea, mug])
    assert await _co_use_links(client, tea) == {mug: 0.5}
    assert await _co_use_links(client, mug) == {tea: 0.5}
    assert await _co_use_links(client, bike) == {}

    await _call(client, "mark_used", fact_ids=[mug, tea])
    assert await _co_use_links(client, tea) == {mug: 0.75}

    await _call(client, "mark_used", fact_ids=[bike])  # used alone: no link
    assert await _co_use_links(client, bike) == {}


async def test_searches_and_recalls_link_nothing(client: Client) -> None:
    ids = [
        (await _call(client, "remember", content=text))["id"]
        for text in ("Omar's flight lands at nine", "Omar is staying at the harbour hotel")
    ]
    for _ in range(3):
        await _call(client, "search", query="when does Omar land and where is he staying")
        await _call(client, "recall", context="Omar's trip: flight and hotel")
    assert [await _co_use_links(client, fid) for fid in ids] == [{}, {}]


async def test_a_co_use_link_never_joins_two_scopes(client: Client) -> None:
    here = (await _call(client, "remember", content="The Falcon demo is on Monday", scope="project:falcon"))[
        "id"
    ]
    shared = (await _call(client, "remember", content="Demos are recorded for the wiki"))["id"]  # global

    # A project scope sees the global facts too, so a reply in it may rely on both.
    await _call(client, "mark_used", fact_ids=[here, shared], scope="project:falcon")
    assert await _co_use_links(client, here, "project:falcon") == {}
    assert await _co_use_links(client, shared, "project:falcon") == {}


async def test_only_the_first_few_facts_of_a_long_list_are_linked(client: Client) -> None:
    ids = [
        (await _call(client, "remember", content=f"Checklist step {n}: verify the backups"))["id"]
        for n in range(10)
    ]

    await _call(client, "mark_used", fact_ids=ids)
    linked = [len(await _co_use_links(client, fid)) for fid in ids]
    assert sorted(linked) == [0] * (len(ids) - CO_USE_MAX) + [CO_USE_MAX - 1] * CO_USE_MAX
