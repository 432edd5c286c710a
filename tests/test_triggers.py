"""Negative memories with triggers: a search or recall whose text holds a trigger's words gets the
memory back as a warning, whatever its rank, in the caller's scopes only (issue 26)."""

from __future__ import annotations

import pytest
from mcp import Client

from hippograph.domain.errors import InvalidInput
from hippograph.domain.triggers import as_tag, fired
from hippograph.service.memory import Memory

pytestmark = pytest.mark.anyio

_NEVER = "Never force-push to main: the release tags point at its history."


def _seed(memory: Memory, scope: str = "project:atlas") -> str:
    for n in range(12):
        memory.remember(f"Atlas deploy note {n}: the git push of build {n} went through", scope=scope)
    return memory.remember(
        _NEVER, kind="negative", triggers=["force push", "rewrite history"], scope=scope
    ).id


def test_a_trigger_is_a_tag_of_its_words_and_fires_on_those_words_in_that_order() -> None:
    assert as_tag("  Force PUSH!") == "trigger:force-push"
    tagged = [("f_1", "trigger:force-push"), ("f_2", "trigger:drop-table"), ("f_3", "ops")]
    assert fired(tagged, "Can I git push --force, then force-push again?") == [("f_1", "force push")]
    assert fired(tagged, "push with force") == []
    assert fired(tagged, "DROP TABLE users;") == [("f_2", "drop table")]
    assert fired(tagged, "a droptable helper") == []


def test_a_possessive_does_not_hide_a_trigger() -> None:
    assert as_tag("Friday's migration") == "trigger:friday-migration"
    tagged = [("f_1", "trigger:friday-migration")]
    assert fired(tagged, "Is friday's migration window still open?") == [("f_1", "friday migration")]
    assert fired(tagged, "Friday’s migration") == [("f_1", "friday migration")]
    assert fired(tagged, "Fridays migration") == []
    assert fired([("f_2", "trigger:friday-s-migration")], "friday's migration") == [
        ("f_2", "friday migration")
    ]


def test_a_search_holding_a_trigger_warns_whatever_the_rank(memory: Memory) -> None:
    never = _seed(memory)
    found = memory.search(
        "how do I force push the deploy branch after a git push?", limit=1, scope="project:atlas"
    )
    assert [w.model_dump() for w in found.warnings] == [
        {"id": never, "content": _NEVER, "trigger": "force push"}
    ]
    assert memory.search("how did the git push of build 3 go?", scope="project:atlas").warnings == []


def test_a_warning_stays_in_its_scope_and_ends_with_its_memory(memory: Memory) -> None:
    never = _seed(memory)
    assert memory.search("may I force push?", scope="project:hermes").warnings == []
    memory.forget(never, reason="main is protected now", scope="project:atlas")
    assert memory.search("may I force push?", scope="project:atlas").warnings == []


def test_a_global_negative_memory_warns_in_every_project(memory: Memory) -> None:
    never = memory.remember("Never run rm -rf with a variable path.", kind="negative", triggers=["rm -rf"]).id
    assert [w.id for w in memory.search("is rm -rf $DIR/build safe?", scope="project:atlas").warnings] == [
        never
    ]


def test_recall_carries_the_warnings_within_its_budget(memory: Memory) -> None:
    never = _seed(memory)
    out = memory.recall("we need to rewrite history on main", budget_tokens=120, scope="project:atlas")
    assert [w.id for w in out.warnings] == [never]
    assert out.tokens <= 120


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"triggers": ["force push"]}, "triggers are for kind='negative'"),
        ({"kind": "negative", "triggers": ["--"]}, "has no words"),
        ({"kind": "negative", "triggers": ["word " * 20]}, "is over 56 characters"),
    ],
)
def test_a_bad_trigger_is_refused_and_nothing_is_stored(
    memory: Memory, arguments: dict, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.remember("Do not deploy on Fridays.", scope="project:atlas", **arguments)
    assert memory.search("deploy on Fridays", scope="project:atlas").results == []


async def test_over_mcp_a_trigger_warning_is_present_and_absent(client: Client) -> None:
    stored = await client.call_tool(
        "remember",
        {"content": _NEVER, "kind": "negative", "triggers": ["force push"], "scope": "project:atlas"},
    )
    assert not stored.is_error, stored.content
    warned = await client.call_tool("search", {"query": "can I force push?", "scope": "project:atlas"})
    assert warned.structured_content["warnings"][0]["trigger"] == "force push"  # type: ignore[index]
    quiet = await client.call_tool("search", {"query": "who owns the release?", "scope": "project:atlas"})
    assert "warnings" not in (quiet.structured_content or {})
