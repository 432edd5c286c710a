"""The user as an anchor: facts in the user's own voice, or about "the user", are about the owner
entity of their scope, whose profile is the user's profile (issue 26)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from hippograph.service.memory import Memory
from hippograph.text.names import OWNER, about_owner

pytestmark = pytest.mark.anyio


def test_the_users_own_voice_and_the_words_the_user_are_about_the_user() -> None:
    assert about_owner("I moved to Lyon in March.")
    assert about_owner("user: my cat is called Miso")
    assert about_owner("The user prefers dark roast.")
    assert not about_owner("assistant: I will update the config.")
    assert not about_owner("Priya moved to Lyon.")
    assert not about_owner("the build uses msbuild")  # "I" only as a word, in capitals


def test_first_person_facts_link_the_owner_of_their_scope_and_other_voices_do_not(memory: Memory) -> None:
    def linked(content: str, scope: str = "project:me") -> list[tuple[str, str]]:
        return [(e.name, e.type) for e in memory.remember(content, scope=scope).linked_entities]

    assert linked("I moved to Lyon in March.") == [("Lyon", "place"), (OWNER, "person")]
    assert (OWNER, "person") in linked("The user prefers dark roast coffee.")
    assert linked("assistant: I will update the config.") == []
    assert (OWNER, "person") not in linked("Caroline: I went to the support group yesterday.")
    mine = memory.entities.resolve(OWNER, "project:me")
    theirs = memory.entities.resolve(OWNER, "project:other")
    assert mine is not None and mine.scope == "project:me" and theirs is None


def test_a_question_in_the_first_person_is_about_the_user(memory: Memory) -> None:
    scope = "project:me"
    for text in (
        "Omar prefers green tea.",
        "My favourite drink is a flat white.",
        "The office kettle is broken.",
    ):
        memory.remember(text, scope=scope)
    found = memory.search("what do I like to drink?", scope=scope, detail=True)
    assert found.results[0].content == "My favourite drink is a flat white."
    assert "entity" in found.results[0].reasons  # found through the owner entity too
    about_omar = memory.search("what does Omar like to drink?", scope=scope, detail=True)
    assert "entity" not in next(r for r in about_omar.results if r.content.startswith("My")).reasons


async def test_the_owner_profile_is_the_users_profile_over_mcp(client: Client) -> None:
    for content in ("I moved to Lyon in March.", "My cat is called Miso.", "Omar moved to Porto."):
        result = await client.call_tool("remember", {"content": content, "scope": "project:me"})
        assert not result.is_error, result.content
    read = await client.read_resource("memory://entity/the user?scope=project:me")
    profile: dict[str, Any] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert (profile["name"], profile["type"], profile["scope"]) == (OWNER, "person", "project:me")
    assert sorted(f["content"] for f in profile["facts"]) == [
        "I moved to Lyon in March.",
        "My cat is called Miso.",
    ]
