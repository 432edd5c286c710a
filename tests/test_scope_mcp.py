"""Through MCP, a client reading one scope sees nothing of another: tools, resources, errors."""

from __future__ import annotations

import json

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


async def _remember(client: Client, **arguments: object) -> str:
    result = await client.call_tool("remember", arguments)
    assert not result.is_error, result.content
    return str(result.structured_content["id"])  # type: ignore[index]


async def _text(client: Client, uri: str) -> str:
    return (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]


async def test_a_scope_shows_nothing_of_another_that_shares_its_session(client: Client) -> None:
    secret = "Falcon launch codes are kept in the blue vault"
    falcon = await _remember(
        client, content=secret, scope="project:falcon", session_id="s1", entities=["Falcon"], tags=["ops"]
    )
    inventory = await _remember(
        client,
        content="Falcon vault inventory happens on Fridays",
        scope="project:falcon",
        session_id="s1",
        entities=["Falcon"],
    )
    hack = await _remember(
        client,
        content="Hack team lunch is on Thursday",
        scope="project:hack",
        session_id="s1",
        entities=["Hackweek"],
        tags=["ops"],
    )

    seen = []
    for tool, arguments in (
        # Unnamed, so it is answered; named ("Falcon ...", below) it gets "no confident match".
        ("search", {"query": "launch codes blue vault", "scope": "project:hack"}),
        ("search", {"query": "ops lunch vault", "scope": "project:hack", "tags": ["ops"]}),
        ("recall", {"context": "Falcon launch codes in the vault", "scope": "project:hack"}),
    ):
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        seen.append(json.dumps(result.structured_content))
    for uri in (
        "memory://context/Falcon%20launch%20codes?scope=project:hack",
        "memory://entity/Hackweek?scope=project:hack",
    ):
        seen.append(await _text(client, uri))
    assert hack in seen[0] and hack in seen[4]
    for text in seen:
        for shown in (falcon, inventory, secret, "Falcon vault"):
            assert shown not in text, text


async def test_the_entity_resource_reads_an_entity_of_the_scope_it_names(client: Client) -> None:
    fact = await _remember(client, content="Falcon ships in May", scope="project:falcon", entities=["Falcon"])
    profile = await _text(client, "memory://entity/Falcon?scope=project:falcon")
    assert profile.startswith("# Falcon") and fact in profile
    with pytest.raises(Exception, match=r"memory://entity/Falcon\?scope="):
        await _text(client, "memory://entity/Falcon")  # global sees no project entity
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert "memory://entity/{name}{?scope}" in templates


async def test_link_across_scopes_is_a_tool_error_and_writes_nothing(client: Client) -> None:
    falcon = await _remember(client, content="Falcon ships in May", scope="project:falcon")
    hack = await _remember(client, content="Hack week is in June", scope="project:hack")
    before = json.loads(await _text(client, "memory://stats"))
    result = await client.call_tool("link", {"from_id": falcon, "to_id": hack, "relation": "causes"})
    assert result.is_error
    message = " ".join(getattr(block, "text", "") for block in result.content)
    assert "project:falcon" in message and "project:hack" in message and "same scope" in message
    after = json.loads(await _text(client, "memory://stats"))
    assert (after["facts"], after["edges"]) == (before["facts"], before["edges"])
