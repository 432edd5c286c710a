"""Arguments a tool does not declare are an error naming them, over MCP.

(Over the RPC to a real stdio server that owns the data dir: tests/e2e/test_tool_arguments.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from hippograph.api import OPERATIONS
from hippograph.service.memory import Memory
from testkit.client import result_text

pytestmark = pytest.mark.anyio

TOOLS = sorted(name for name, op in OPERATIONS.items() if op.tool)


def _valid_arguments(memory: Memory) -> dict[str, dict[str, Any]]:
    """For each tool, arguments it accepts: only the unknown one can make the call fail."""
    stored = memory.remember("Ines grows figs in Faro", entities=["Ines", "Faro"])
    fact = stored.id
    ines, faro = (e.id for e in stored.linked_entities)
    return {
        "remember": {"content": "Ines likes dates"},
        "search": {"query": "figs"},
        "recall": {"context": "Ines"},
        "correct": {"content": "Ines grows figs in Lagos", "fact_id": fact},
        "confirm": {"fact_id": fact},
        "mark_used": {"fact_ids": [fact]},
        "forget": {"fact_id": fact},
        "explain": {"fact_id": fact},
        "link": {"from_id": ines, "to_id": faro, "relation": "lives_in"},
        "review": {"kinds": ["weak"]},
    }


async def test_every_tool_refuses_an_unknown_argument_and_lists_its_own(
    served: tuple[Client, Memory],
) -> None:
    client, memory = served
    valid = _valid_arguments(memory)
    assert sorted(valid) == TOOLS
    before = (memory.graph.census.counts(), memory.export()["jsonl"].splitlines()[1:])
    for name in TOOLS:
        result = await client.call_tool(name, {**valid[name], "bogus_field": 1})
        assert result.is_error, name
        message = result_text(result)
        assert f"unknown argument 'bogus_field' for {name}: it takes only " in message, message
        for accepted in OPERATIONS[name].tool_signature.parameters:
            assert accepted in message, (name, accepted)
    # Nothing was written: not a fact, an edge, a confirmation, a correction or a retraction.
    assert (memory.graph.census.counts(), memory.export()["jsonl"].splitlines()[1:]) == before


async def test_an_internal_parameter_is_unknown_to_mcp_clients(served: tuple[Client, Memory]) -> None:
    client, memory = served
    result = await client.call_tool("remember", {"content": "Ines likes dates", "evidence": "she said so"})
    assert result.is_error
    assert "unknown argument 'evidence' for remember" in result_text(result)
    assert memory.graph.census.counts()["facts"] == 0


async def test_several_unknown_arguments_are_all_named(served: tuple[Client, Memory]) -> None:
    client, _ = served
    result = await client.call_tool("search", {"query": "figs", "top_k": 3, "filter": "x"})
    assert "unknown arguments 'filter', 'top_k' for search" in result_text(result)


async def test_an_unknown_argument_named_like_a_secret_is_not_echoed(served: tuple[Client, Memory]) -> None:
    client, _ = served
    token = "ghp_" + "Xk93hT2pLqR7sW4nB8vC1mZ6yD0eF5gH3jK9"
    result = await client.call_tool("search", {"query": "figs", token: 1})
    assert result.is_error
    assert token not in result_text(result) and "(a name holding a secret)" in result_text(result)


async def test_every_input_schema_says_no_other_arguments(served: tuple[Client, Memory]) -> None:
    client, _ = served
    tools = (await client.list_tools()).tools
    assert sorted(tool.name for tool in tools) == TOOLS
    assert all(tool.input_schema["additionalProperties"] is False for tool in tools)


async def test_a_secret_in_a_tag_is_a_tool_error_naming_the_field(served: tuple[Client, Memory]) -> None:
    client, memory = served
    token = "sk_live_" + "Xk93hT2pLqR7sW4nB8vC1mZ6"
    result = await client.call_tool("remember", {"content": "Ines pays by card", "tags": ["billing", token]})
    assert result.is_error
    message = result_text(result)
    assert "refused: tags[1] contains a stripe access token" in message
    assert token.lower() not in message.lower()
    assert memory.graph.census.counts()["facts"] == 0
