"""The caller decides: remember(..., restates=<id>) strengthens that fact of the same scope instead
of storing a new one; another scope's id, an unknown id or a replaced fact is refused, and nothing
is written."""

from __future__ import annotations

import pytest
from mcp import Client

from hippograph.domain.errors import InvalidTransition, NotFound
from hippograph.service.memory import Memory


def _fact_count(memory: Memory) -> int:
    return int(memory.stats()["facts"])


def test_a_restatement_the_caller_names_strengthens_the_fact_it_restates(memory: Memory) -> None:
    first = memory.remember("Noor is employed by Quillby Labs", scope="project:hr")
    reply = memory.remember("Noor works at Quillby Labs", scope="project:hr", restates=first.id)
    assert (reply.id, reply.corroborated, reply.content) == (
        first.id,
        True,
        "Noor is employed by Quillby Labs",
    )
    assert _fact_count(memory) == 1
    [hit] = memory.search("where does Noor work", scope="project:hr").results
    assert (hit.id, hit.corroborations, hit.status) == (first.id, 2, "confirmed")


def test_restates_refuses_another_scopes_fact_as_an_unknown_one_and_writes_nothing(memory: Memory) -> None:
    elsewhere = memory.remember("Noor is employed by Quillby Labs", scope="project:hr")
    global_fact = memory.remember("Noor likes green tea")
    before = memory.graph.census.counts()
    for fact_id in (elsewhere.id, global_fact.id, "f_00000000000000ff"):
        with pytest.raises(NotFound, match=rf"no fact has id {fact_id} in project:ops"):
            memory.remember("Noor works at Quillby Labs", scope="project:ops", restates=fact_id)
    assert memory.graph.census.counts() == before


def test_restates_refuses_a_replaced_fact_naming_its_current_version(memory: Memory) -> None:
    old = memory.remember("The standup is at 9:30")
    new = memory.correct("The standup is at 10:00", fact_id=old.id)
    before = memory.graph.census.counts()
    with pytest.raises(InvalidTransition, match=new.id):
        memory.remember("The daily standup starts at 9:30", restates=old.id)
    assert memory.graph.census.counts() == before


@pytest.mark.anyio
async def test_restates_is_a_remember_argument_over_mcp(client: Client) -> None:
    first = await client.call_tool("remember", {"content": "Ife keeps her bike in the shed behind the house"})
    assert first.structured_content is not None
    fact_id = first.structured_content["id"]
    again = await client.call_tool(
        "remember",
        {"content": "Ife's bike is kept in the shed at the back of the house", "restates": fact_id},
    )
    assert again.structured_content is not None
    assert (again.structured_content["id"], again.structured_content["corroborated"]) == (fact_id, True)
    wrong = await client.call_tool(
        "remember", {"content": "Ife cycles to work", "restates": "f_00000000000000ff"}
    )
    assert wrong.is_error
    text = " ".join(getattr(block, "text", "") for block in wrong.content)
    assert "no fact has id f_00000000000000ff" in text
