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
