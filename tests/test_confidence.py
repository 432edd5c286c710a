"""Search says when memory knows nothing: a question about a name no fact mentions, with nothing
close in meaning, gets no results and a note; every hit carries a relevance comparable across queries."""

from __future__ import annotations

from hippograph.service.memory import Memory

FACTS = [
    "Maya adopted a greyhound called Pixel last spring",
    "Maya runs the Lisbon half marathon every October",
    "The team deploys the billing service on Thursdays",
    "Tom prefers green tea to coffee in the afternoon",
]


def test_a_question_about_someone_never_stored_gets_no_confident_match(memory: Memory) -> None:
    for content in FACTS:
        memory.remember(content)
    out = memory.search("What is Rodrigo's favourite football team?")
    assert out.results == []
    assert any("no confident match" in note and "Rodrigo" in note for note in out.notes)


def test_a_question_about_a_stored_person_still_answers(memory: Memory) -> None:
    ids = [memory.remember(content).id for content in FACTS]
    out = memory.search("What is the name of Maya's dog?")
    assert ids[0] in [hit.id for hit in out.results[:2]]
    assert not out.notes


def test_relevance_is_the_same_scale_for_every_query(memory: Memory) -> None:
    for content in FACTS:
        memory.remember(content)
    close = max(hit.relevance for hit in memory.search("Which dog did Maya adopt?").results)
    far = max(hit.relevance for hit in memory.search("quarterly tax deadlines").results)
    assert 0.0 <= far < close <= 1.0
    assert close > 0.5


def test_an_everyday_question_nothing_answers_keeps_the_nearest_facts_under_a_note(memory: Memory) -> None:
    for content in FACTS:
        memory.remember(content)
    out = memory.search("Who repairs my bicycle?")
    assert out.results  # no name is unknown: the nearest facts stay, for the caller to judge
    assert max(hit.relevance for hit in out.results) < memory.retriever.policy.confident_relevance
    assert any(note.startswith("no confident match (best relevance") for note in out.notes)


def test_a_question_a_fact_answers_gets_no_note(memory: Memory) -> None:
    ids = [memory.remember(content).id for content in FACTS]
    out = memory.search("When does the billing service get deployed?")
    assert out.results[0].id == ids[2]
    assert not out.notes


def test_an_abbreviation_a_fact_spells_out_is_no_unknown_name(memory: Memory) -> None:
    lead = memory.remember("Brennan O'Malley is the tech lead for the payments team").id
    for content in FACTS:
        memory.remember(content)
    out = memory.search("Who is the TL for payments?")
    assert lead in [hit.id for hit in out.results[:3]]
    assert not any("no fact mentions" in note for note in out.notes)


def test_a_short_question_a_fact_holds_word_for_word_gets_no_note(memory: Memory) -> None:
    for content in FACTS:
        memory.remember(content)
    talk = memory.remember("My talk at the graduate symposium is on April 4 in room B12").id
    for question in ("when is my talk", "Pixel"):
        out = memory.search(question)
        relevance = {hit.id: hit.relevance for hit in out.results}
        assert not out.notes, (question, out.notes)
        if question == "when is my talk":
            assert out.results[0].id == talk
            # the cosine alone is under the floor: the words are the evidence
            assert relevance[talk] < memory.retriever.policy.confident_relevance


def test_results_far_from_the_query_after_the_first_are_left_out(memory: Memory) -> None:
    for content in FACTS:
        memory.remember(content)
    router = memory.remember("To fix the wifi, restart the router in the hall cupboard").id
    out = memory.search("how do I fix the wifi", limit=5)
    assert out.results[0].id == router
    floor = memory.retriever.policy.tail_relevance
    assert all(hit.relevance >= floor for hit in out.results[1:])
    memory.retriever.with_policy(tail_relevance=0.0)
    assert len(memory.search("how do I fix the wifi", limit=5).results) > len(out.results)
