"""A sentence that says what a name is types it: titles, a name's head word, apposition, a copula."""

from __future__ import annotations

import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.text.name_cues import cued_type, head_type
from hippograph.text.names import capitalised_runs


def _cue(text: str, name: str) -> str | None:
    start = text.index(name)
    return cued_type(text, start, start + len(name))


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("Ask Dr. Okonkwo about the rash.", "Okonkwo", "person"),
        ("My cousin Ilse sent the photos.", "Ilse", "person"),
        ("Quarry Ridge Analytics wants the raw export.", "Quarry Ridge Analytics", "organization"),
        ("We landed at Marrow Airport after midnight.", "Marrow Airport", "place"),
        ("He teaches at the University of Antwerp.", "University of Antwerp", "organization"),
        ("Our payroll firm, Saltbox, cancelled the contract.", "Saltbox", "organization"),
        ("She sings in a choir called The Wrens.", "The Wrens", "organization"),
        ("Tolga, our new intern, starts on Monday.", "Tolga", "person"),
        ("Fernhill is a small village in Wales.", "Fernhill", "place"),
        ("The editor is Helix now, not Vim.", "Helix", "tool"),
        ("Our bank is Calder Mutual.", "Calder Mutual", "organization"),
        ("Our new tutor is Ottilie Brook.", "Ottilie Brook", "person"),  # said to be a tutor: no place
        ("We swam at Crannoch Beach.", "Crannoch Beach", "place"),
    ],
)
def test_what_the_sentence_says_a_name_is_is_its_type(text: str, name: str, kind: str) -> None:
    assert _cue(text, name) == kind


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The app Sarah built is slow on old phones.", "Sarah"),  # a bare noun before: no apposition
        ("After the meeting at the bank, Sarah called.", "Sarah"),  # a comma between two phrases
        ("Sarah is a bank teller in Leeds.", "Sarah"),  # the phrase's head is "teller", no kind
        ("Send the slides to Marguerite.", "Marguerite"),
    ],
)
def test_no_cue_where_the_sentence_does_not_say(text: str, name: str) -> None:
    assert _cue(text, name) is None


def test_a_head_word_types_only_a_name_of_several_words() -> None:
    assert head_type("Analytics") is None
    assert head_type("Lakeview Bank") == "organization"
    assert head_type("Bank of Ireland") == "organization"


def test_a_title_is_no_part_of_the_name_and_two_words_with_a_head_open_a_sentence_whole() -> None:
    def runs(text: str) -> list[str]:
        return [n.text for n in capitalised_runs(text)]

    assert runs("Our landlord, Mr. Petrov Ivanov, fixes things.") == ["Petrov Ivanov"]
    assert runs("Northgate Traders sent a late invoice.") == ["Northgate Traders"]
    assert runs("Ask Lakeview Bank for the statement.") == ["Ask Lakeview Bank"]  # the typer judges "Ask"


def _created(out: object) -> dict[str, str]:
    return {e.name: e.type for e in out.linked_entities if e.created}  # type: ignore[attr-defined]


def test_remember_types_names_by_what_the_sentence_says(memory: Memory) -> None:
    out = memory.remember("Her startup, Quillfeather, raised a seed round from Mr. Abernathy.")
    assert _created(out) == {"Quillfeather": "organization", "Abernathy": "person"}


def test_a_name_after_a_title_spoken_to_is_still_no_fact_about_them(memory: Memory) -> None:
    out = memory.remember("Thanks, Mr. Abernathy!")
    assert "Abernathy" not in _created(out)


def test_a_later_sentence_types_a_known_entity_that_had_no_type_and_it_stays(
    memory: Memory, settings: Settings, embedder: FastEmbedder
) -> None:
    first = memory.remember("The invoice came in late again.", entities=["Quillon"])
    quillon = next(e for e in first.linked_entities if e.name == "Quillon")
    assert quillon.type == "concept"  # a name the text does not hold: nothing says what it is
    later = memory.remember("Quillon, our payroll firm, sent the invoice on Friday.")
    assert [(e.id, e.type, e.created) for e in later.linked_entities if e.name == "Quillon"] == [
        (quillon.id, "organization", False)
    ]
    assert memory.vectors.ids("entities")[quillon.id] == "organization"
    memory.close()
    again = Memory.open(settings, embedder=embedder)
    try:
        assert again.entities.resolve("Quillon", "global").type == "organization"  # type: ignore[union-attr]
    finally:
        again.close()


def test_a_stated_type_replaces_a_guessed_one_and_a_later_guess_changes_nothing(memory: Memory) -> None:
    memory.remember("Marlowe fixed the flaky build on Tuesday.")
    memory.remember("Marlowe, our CI tool, now runs the nightly checks.")
    assert memory.entities.resolve("Marlowe", "global").type == "tool"  # type: ignore[union-attr]
    memory.remember("Marlowe greeted everyone at the party on Friday.")
    assert memory.entities.resolve("Marlowe", "global").type == "tool"  # type: ignore[union-attr]


def test_a_name_written_with_its_article_finds_the_entity_found_without_it(memory: Memory) -> None:
    out = memory.remember("Our band, The Lonely Spoons, plays on Friday.")
    assert _created(out) == {"Lonely Spoons": "organization"}  # the apposition types it past "The"
    spoons = memory.entities.resolve("The Lonely Spoons", "global")
    assert spoons is not None and spoons.name == "Lonely Spoons"
    assert memory.entities.resolve("The Spoons", "global") is None


def test_a_name_written_with_its_title_finds_the_entity_found_without_it(memory: Memory) -> None:
    memory.remember("Dr. Okonkwo moved my check-up to Thursday morning.")
    doctor = memory.entities.resolve("Dr. Okonkwo", "global")
    assert doctor is not None and doctor.name == "Okonkwo"
    assert memory.entities.resolve("Dr. Mensah", "global") is None
    memory.remember("We flew over America on the way back.", entities=["America"])
    assert memory.entities.resolve("Captain America", "global") is None  # a title names a person


def test_a_title_and_a_last_name_find_the_one_person_so_named(memory: Memory) -> None:
    memory.remember("Helen Okafor is the children's doctor at Riverside Pediatrics.")
    out = memory.remember("Dr. Okafor said the ear infection is gone.")
    assert [e.name for e in out.linked_entities if e.type == "person"] == ["Helen Okafor"]
    memory.remember("Samuel Okafor coaches the under-12 team.")
    out = memory.remember("Dr. Okafor moved the check-up to Friday.")  # two people so named: neither
    assert "Helen Okafor" not in [e.name for e in out.linked_entities]


def test_a_person_told_or_asked_is_a_person_whose_surname_heads_places(memory: Memory) -> None:
    told = memory.remember("Remind Ansel Hill that the rota changed.")
    asked = memory.remember("Ask Wren Lake before touching the billing cron.")
    assert _created(told) == {"Ansel Hill": "person"}
    assert _created(asked) == {"Wren Lake": "person"}
    emailed = memory.remember("Email Corvane Clinic about the results.")
    assert _created(emailed) == {"Corvane Clinic": "organization"}  # organisations get emails too
    thanked = memory.remember("Thank Bramble Park for the permit.")
    assert _created(thanked) == {"Bramble Park": "place"}  # a park is thanked, never asked
