"""Entities without an LLM: names in remembered text become typed entities; first names reach full names."""

from __future__ import annotations

from hippograph.service.memory import Memory


def _created(out: object) -> dict[str, str]:
    return {e.name: e.type for e in out.linked_entities if e.created}  # type: ignore[attr-defined]


def test_remember_finds_a_new_person_and_a_place_as_typed_entities(memory: Memory) -> None:
    out = memory.remember("Henry moved to Lisbon last spring to work on the new harbour.")
    assert _created(out) == {"Henry": "person", "Lisbon": "place"}
    about = {e.name: e.type for e in memory.explain(out.id).entities}
    assert about == {"Henry": "person", "Lisbon": "place"}


def test_a_chat_turn_gets_its_speaker_as_a_person(memory: Memory) -> None:
    out = memory.remember("Caroline: I went to the support group yesterday, it was so powerful.")
    assert _created(out) == {"Caroline": "person"}


def test_a_label_that_opens_a_line_is_no_speaker(memory: Memory) -> None:
    out = memory.remember("Note: the backup job runs at night.")
    assert out.linked_entities == []


def test_code_identifiers_and_projects_are_entities(memory: Memory) -> None:
    out = memory.remember("Project Apollo keeps its lock logic in kuzu_session.py and write_lock.")
    assert _created(out) == {"Project Apollo": "project", "kuzu_session.py": "code", "write_lock": "code"}


def test_a_name_the_caller_gives_takes_the_type_the_text_shows(memory: Memory) -> None:
    out = memory.remember("Lena Fischer reviewed the release notes.", entities=["Lena Fischer"])
    assert _created(out) == {"Lena Fischer": "person"}


def test_a_first_name_in_a_new_fact_links_to_the_one_full_name(memory: Memory) -> None:
    first = memory.remember("Priya Raman joined the platform team in March.")
    priya = next(e for e in first.linked_entities if e.name == "Priya Raman")
    assert priya.type == "person"
    later = memory.remember("Ask Priya about the deploy checklist.")
    assert [(e.id, e.created) for e in later.linked_entities] == [(priya.id, False)]


def test_a_first_name_shared_by_two_people_links_to_neither(memory: Memory) -> None:
    memory.remember("Priya Raman joined the platform team in March.")
    memory.remember("Priya Shah runs the data team.")
    later = memory.remember("Ask Priya about the deploy checklist.")
    assert {e.name for e in later.linked_entities} <= {"Priya"}


def test_a_first_name_finds_only_a_person_the_callers_scope_sees(memory: Memory) -> None:
    memory.remember("Priya Raman joined the platform team in March.", scope="project:a")
    later = memory.remember("Ask Priya about the deploy checklist.", scope="project:b")
    assert "Priya Raman" not in {e.name for e in later.linked_entities}


def test_a_query_by_first_name_reaches_facts_stored_with_the_full_name(memory: Memory) -> None:
    for text in (
        "Tom prefers black coffee over tea.",
        "The office drinks coffee on Fridays.",
        "Green tea leaves are picked in spring.",
    ):
        memory.remember(text)
    memory.remember("Priya Raman joined the platform team in March.")
    tea = memory.remember("She prefers green tea over coffee, no sugar.", entities=["Priya Raman"])
    hits = memory.search("What does Priya prefer to drink?", limit=5, detail=True).results
    found = next(h for h in hits if h.id == tea.id)
    assert found.reasons["entity"]["via"] == "Priya Raman"


def test_a_quoted_title_is_named_without_its_quotes(memory: Memory) -> None:
    out = memory.remember("I'm reading 'The Night Circus' by Erin Morgenstern.")
    names = [e.name for e in out.linked_entities]
    assert "Erin Morgenstern" in names and not [n for n in names if "'" in n]


def test_no_entity_is_a_possessive_a_lowercase_word_or_a_bare_number(memory: Memory) -> None:
    vet = memory.remember("Pepper's vet is Dr. Anand at Elm Street Clinic.")
    assert "Pepper" in _created(vet) and "Pepper's" not in _created(vet)
    assert _created(memory.remember("We chose navy blue for the hallway paint.")) == {}
    assert "2" not in _created(memory.remember("Chapter 2 draft is due to Eilidh on January 31."))
    # a text written all in lowercase still has its names
    assert "sarah" in _created(memory.remember("met with sarah at the offsite"))
