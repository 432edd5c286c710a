"""A question that names an entity prefers the facts about it to facts that only name it."""

from __future__ import annotations

from hippograph.service.memory import Memory

DISTRACTORS = [
    "The office coffee machine was replaced in spring",
    "Quarterly taxes are due on the fifteenth",
    "Weekly planning happens on Monday mornings",
]


def _store(memory: Memory) -> tuple[str, str]:
    for text in DISTRACTORS:
        memory.remember(text)
    addressed = memory.remember("Maya, I started learning the cello this spring!", entities=["Tom"])
    about = memory.remember("I started learning the violin this spring", entities=["Maya"])
    return about.id, addressed.id


def test_the_fact_about_the_named_entity_ranks_first(memory: Memory) -> None:
    about, addressed = _store(memory)
    hits = memory.search("What instrument is Maya learning?", limit=5).results
    assert [h.id for h in hits][:2] == [about, addressed]


def test_without_the_anchor_bonus_the_name_and_wording_win(memory: Memory) -> None:
    about, addressed = _store(memory)
    memory.retriever.with_policy(anchor_bonus=0.0)
    hits = memory.search("What instrument is Maya learning?", limit=5).results
    assert [h.id for h in hits][:2] == [addressed, about]


def _chat(memory: Memory) -> tuple[str, str]:
    for text in DISTRACTORS:
        memory.remember(text)
    memory.remember("Nate: Hey Joanna! Long time no see.")
    asked = memory.remember("Joanna: Nate, when did you win your first video game tournament?")
    said = memory.remember("Nate: Last week! It was my first win, a team shooter game.")
    return said.id, asked.id


def test_a_chat_turn_is_its_speakers_not_the_names_it_addresses(memory: Memory) -> None:
    said, asked = _chat(memory)
    roles = {e.name: e.role for e in memory.explain(asked).entities}
    assert roles == {"Joanna": "subject", "Nate": "mention"}
    hits = memory.search("When did Nate win his first video game tournament?", limit=5).results
    assert [h.id for h in hits][:2] == [said, asked]


def test_without_the_anchor_bonus_the_wording_of_the_question_wins(memory: Memory) -> None:
    said, asked = _chat(memory)
    memory.retriever.with_policy(anchor_bonus=0.0)
    hits = memory.search("When did Nate win his first video game tournament?", limit=5).results
    assert [h.id for h in hits][:2] == [asked, said]
