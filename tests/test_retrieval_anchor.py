"""A question that names an entity prefers the facts about it to facts that only name it."""

from __future__ import annotations

from hippograph.domain.models import ACTIVE_STATUSES, GLOBAL_SCOPE
from hippograph.service.memory import Memory
from hippograph.store.seam import Filter
from hippograph.text.query_intent import plan as query_plan

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


def _best(memory: Memory, query: str, keep: int, weighed: int | None) -> list[tuple[str, float]]:
    """The ``keep`` best fused candidates for ``query``, the raise looking at those ``weighed`` allows."""
    where = Filter(statuses=ACTIVE_STATUSES, scopes=(GLOBAL_SCOPE,))
    plan = query_plan(query, memory.stores.clock())
    vector = memory.stores.embedder.embed([query])[0]
    keywords = memory.stores.vectors.start_text_search("facts", plan.search_text, 40, where)
    found, _ = memory.retriever.retrieve(query, vector, where, 10, plan, keywords, weighed=weighed)
    assert len(found) > keep
    return [(c.id, c.fused) for c in found[:keep]]


def test_the_raise_looks_only_where_it_can_change_the_pool_and_changes_nothing_there(memory: Memory) -> None:
    # More candidates than ranking weighs: the raise for facts centred on a named entity skips
    # those it could not bring among the best ``weighed``. The best ``weighed`` must be the ones,
    # with the scores, that raising every candidate gives.
    people = ["Maya", "Tom", "Priya", "Ines", "Olu"]
    things = ["the violin", "the cello", "chess", "pottery", "Spanish", "the piano", "climbing"]
    memory.remember_many(
        [
            {"content": f"{people[i % 5]} started learning {things[i % 7]} with {people[(i + 2) % 5]}"}
            for i in range(60)
        ]
    )
    for query in ("What is Maya learning?", "Who learns chess with Tom?", "Is Priya learning Spanish?"):
        for keep in (3, 10):
            assert _best(memory, query, keep, keep) == _best(memory, query, keep, None)
