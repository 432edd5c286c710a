"""Through MCP, a client reading one scope sees nothing of another: tools, resources, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import CallToolResult

from hippograph.config import Settings
from hippograph.mcp_app import build_server
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder

pytestmark = pytest.mark.anyio

UNKNOWN = "f_0123456789abcdef"


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
        "memory://context?scope=project:hack",
    ):
        seen.append(await _text(client, uri))
    assert hack in seen[0] and hack in seen[4]
    assert "Hack team lunch" in seen[5]
    for text in seen:
        for shown in (falcon, inventory, secret, "Falcon vault"):
            assert shown not in text, text


async def test_the_entity_resource_reads_an_entity_of_the_scope_it_names(client: Client) -> None:
    fact = await _remember(client, content="Falcon ships in May", scope="project:falcon", entities=["Falcon"])
    profile = await _text(client, "memory://entity/Falcon?scope=project:falcon")
    assert json.loads(profile)["name"] == "Falcon" and fact in profile
    with pytest.raises(Exception, match=r"memory://entity/Falcon\?scope="):
        await _text(client, "memory://entity/Falcon")  # global sees no project entity
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert "memory://entity/{name}{?scope}" in templates


async def test_link_across_scopes_is_a_tool_error_and_writes_nothing(client: Client) -> None:
    falcon = await _remember(client, content="Falcon ships in May", scope="project:falcon")
    office = await _remember(client, content="The office closes in August")
    hack = await _remember(client, content="Hack week is in June", scope="project:hack")
    before = json.loads(await _text(client, "memory://stats"))
    crossing = await client.call_tool(
        "link", {"from_id": falcon, "to_id": office, "relation": "causes", "scope": "project:falcon"}
    )
    assert crossing.is_error
    message = _message(crossing)
    assert "project:falcon" in message and "'global'" in message and "same scope" in message
    unseen = await client.call_tool(
        "link", {"from_id": falcon, "to_id": hack, "relation": "causes", "scope": "project:falcon"}
    )
    assert unseen.is_error and f"no fact has id {hack} in project:falcon or global" in _message(unseen)
    after = json.loads(await _text(client, "memory://stats"))
    assert (after["facts"], after["edges"]) == (before["facts"], before["edges"])


async def test_a_fact_id_tool_from_another_scope_answers_as_for_an_unknown_id(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    memory = SharedMemory.open(Settings(data_dir=tmp_path / "data", models_dir=models_dir), embedder=embedder)
    try:
        async with (
            Client(build_server(memory)) as plain,
            Client(build_server(memory, scope="project:hack")) as hack,
            Client(build_server(memory, scope="project:falcon")) as falcon,
        ):
            secret = "Falcon launch codes are kept in the blue vault"
            fid = await _remember(falcon, content=secret, confidence=0.7)  # the server's scope
            office = await _remember(plain, content="The office closes in August")
            lunch = await _remember(hack, content="Hack team lunch is on Thursday")
            before = (await falcon.call_tool("explain", {"fact_id": fid})).structured_content
            assert before["fact"]["scope"] == "project:falcon"  # type: ignore[index]

            def calls(fact_id: str, other: str) -> list[tuple[str, dict[str, object]]]:
                return [
                    ("explain", {"fact_id": fact_id}),
                    ("confirm", {"fact_id": fact_id}),
                    ("forget", {"fact_id": fact_id, "reason": "asked"}),
                    ("forget", {"fact_id": fact_id, "purge": True}),
                    ("mark_used", {"fact_ids": [other, fact_id]}),
                    ("correct", {"fact_id": fact_id, "content": "The codes moved"}),
                    ("link", {"from_id": fact_id, "to_id": other, "relation": "relates_to"}),
                    ("link", {"from_id": other, "to_id": fact_id, "relation": "supersedes"}),
                ]

            # A server's default scope, or a scope the call names: neither sees project:falcon.
            for client, other, named in (
                (plain, office, {}),
                (hack, lunch, {}),
                (plain, lunch, {"scope": "project:hack"}),
            ):
                for (tool, hidden), (_, unknown) in zip(
                    calls(fid, other), calls(UNKNOWN, other), strict=True
                ):
                    refused = await client.call_tool(tool, {**hidden, **named})
                    never = await client.call_tool(tool, {**unknown, **named})
                    assert refused.is_error and never.is_error, (tool, refused.content)
                    assert _message(refused).replace(fid, "<id>") == _message(never).replace(UNKNOWN, "<id>")
                    assert "no fact has id <id> in " in _message(refused).replace(fid, "<id>")

            after = (await falcon.call_tool("explain", {"fact_id": fid})).structured_content
            assert after == before
            assert after["fact"]["status"] == "staged" and after["fact"]["confidence"] == 0.7  # type: ignore[index]
            named_scope = await plain.call_tool("explain", {"fact_id": fid, "scope": "project:falcon"})
            assert not named_scope.is_error and secret in _message(named_scope)
    finally:
        memory.close()


def _message(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)
