"""A conversation turn next to a match shares its score: answers often sit beside the question."""

from __future__ import annotations

from hippograph.service.memory import Memory

DISTRACTORS = [
    "The office coffee machine was replaced in spring",
    "Quarterly taxes are due on the fifteenth",
    "Weekly planning happens on Monday mornings",
    "The staging database is PostgreSQL 15",
]


def test_the_turn_before_a_match_comes_back_with_a_neighbour_reason(memory: Memory) -> None:
    for text in DISTRACTORS:
        memory.remember(text)
    asked = memory.remember("Guess where we went on Saturday!", kind="episode", session_id="chat-1")
    reply = memory.remember(
        "We adopted a greyhound puppy from the shelter", kind="episode", session_id="chat-1"
    )
    hits = memory.search("Which dog did they adopt from the shelter?", limit=5, detail=True).results
    ids = [h.id for h in hits]
    assert ids[0] == reply.id
    before = next(h for h in hits if h.id == asked.id)
    assert before.reasons["neighbour"] == {"from": reply.id, "edge": "NEXT"}


def test_neighbour_sharing_can_be_turned_off(memory: Memory) -> None:
    memory.remember("Guess where we went on Saturday!", kind="episode", session_id="chat-1")
    memory.remember("We adopted a greyhound puppy from the shelter", kind="episode", session_id="chat-1")
    memory.retriever.with_policy(next_share=0.0, prev_share=0.0)
    hits = memory.search("Which dog did they adopt from the shelter?", limit=5, detail=True).results
    assert all("neighbour" not in h.reasons for h in hits)
