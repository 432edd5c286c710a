"""A new name's type is the one the embedding model and the recogniser agree on, or none: the
recogniser alone took first names for organisations and software for people (issue 24)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hippograph.service.memory import Memory
from hippograph.store.embed import Embedder
from hippograph.store.name_typing import NameTyper
from hippograph.store.ner import NameFinder, shared_recogniser
from hippograph.text.names import UNKNOWN_TYPE


def _typed(memory: Memory, text: str, scope: str) -> dict[str, str]:
    return {e.name: e.type for e in memory.remember(text, scope=scope).linked_entities}


def test_a_first_name_the_recogniser_calls_an_organisation_is_a_person(memory: Memory) -> None:
    # In a sentence about builds the rewrite "a software tool fixed the flaky build" wins: a
    # known weakness of the sentence signal (name_typing's docstring), not asserted here.
    text = "Magdalena booked the table for Friday."
    assert [(n.text, n.type) for n in NameFinder(shared_recogniser()).find(text)] == [
        ("Magdalena", "organization")
    ]
    assert _typed(memory, text, "project:a") == {"Magdalena": "person"}


def test_software_the_recogniser_calls_a_person_is_a_tool_by_what_the_sentence_says(memory: Memory) -> None:
    # The name alone is nearer people than software; "We cache sessions in a software tool"
    # is nearer the sentence than the other rewrites.
    text = "We cache sessions in Memcached."
    assert [(n.text, n.type) for n in NameFinder(shared_recogniser()).find(text)] == [("Memcached", "person")]
    assert _typed(memory, text, "project:b") == {"Memcached": "tool"}


def test_where_both_agree_the_type_stands(memory: Memory) -> None:
    assert _typed(memory, "The offsite is in Ljubljana.", "project:c") == {"Ljubljana": "place"}


def test_a_name_the_signals_do_not_clearly_type_gets_no_type_rather_than_a_wrong_one(memory: Memory) -> None:
    # A person's name in a sentence about code: the name says person, the sentence says tool,
    # neither by a clear margin over the recogniser's type.
    assert _typed(memory, "Pair with Mateus on the caching layer tomorrow.", "project:e") == {
        "Mateus": UNKNOWN_TYPE
    }


def test_a_name_opening_its_sentence_is_found_and_an_ordinary_first_word_is_not(memory: Memory) -> None:
    assert _typed(memory, "Rosalind maintains the CI runners.", "project:f") == {"Rosalind": "person"}
    assert _typed(memory, "Pottery class was fun today.", "project:g") == {}
    assert _typed(memory, "Thanks for fixing the flaky test!", "project:h") == {}


def test_a_request_opening_a_recognised_name_is_no_part_of_it(memory: Memory) -> None:
    # The recogniser takes the verb in: "Tell Marco" (person), "Email Tomasz" (organization); the
    # finder leaves it out where the words around the rest type it (a frame: "tell" a person).
    finder = NameFinder(shared_recogniser())
    assert [(n.text, n.type) for n in finder.find("Tell Marco the build is green.")] == [("Marco", "person")]
    assert _typed(memory, "Tell Marco the build is green.", "project:i") == {"Marco": "person"}
    assert list(_typed(memory, "Ping Sarah Lee about the outage.", "project:j")) == ["Sarah Lee"]
    # A first name opening the sentence is the name's own.
    assert _typed(memory, "Priya Raman said the budget is fine.", "project:k") == {"Priya Raman": "person"}


def test_a_run_of_capitalised_words_opening_its_sentence_keeps_its_first_word_if_a_name(
    memory: Memory,
) -> None:
    # Until 2026-12-01 a run's first word was dropped when it opened its sentence: "Nursery",
    # "Sailing Club" and "Hollowmere" were made entities. Now the name typer judges it, as it
    # does a recognised name's first word.
    assert list(_typed(memory, "Hollowmere Sailing Club runs a course in May.", "project:l")) == [
        "Hollowmere Sailing Club"
    ]
    assert "Zeynep Yılmaz" in _typed(memory, "Zeynep Yılmaz chairs the residents' association.", "project:m")
    assert list(_typed(memory, "Ask Lakeview Bank for the statement.", "project:n")) == ["Lakeview Bank"]
    # A frame that types the rest of the run says the first word is no part of it.
    assert _typed(memory, "Build Tidewater from source, the package is old.", "project:o") == {
        "Tidewater": "tool"
    }
    assert list(_typed(memory, "Ask Mr. Haddad about the field trip.", "project:p")) == ["Haddad"]
    # A first word the recogniser takes for a date, or one that ends its own sentence, is no part.
    assert list(_typed(memory, "Yesterday Lakeview Bank called about the loan.", "project:q")) == [
        "Lakeview Bank"
    ]
    assert list(_typed(memory, "Thanks. Priya Raman will call.", "project:r")) == ["Priya Raman"]


class _Recording:
    """The memory's embedder, recording every text it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name = "recording"  # its own cache of example and name vectors
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return self._inner.embed(texts)


def test_a_known_name_opening_its_sentence_is_not_judged_again(memory: Memory) -> None:
    texts = ["Willem Fischer met Pavel in Leipzig to plan the launch."]
    found = NameFinder(shared_recogniser()).find_many(texts)
    assert "Willem Fischer" in [n.text for n in found[0]]
    recording = _Recording(memory.stores.embedder)
    NameTyper(recording).retype(texts, found, lambda t, name: name.text == "Willem Fischer")
    assert "Willem" not in recording.texts  # an entity has the name: its first word is part of it
    NameTyper(recording).retype(texts, found, lambda t, name: False)
    assert "Willem" in recording.texts


def test_a_label_opening_a_line_is_no_speaker_and_a_name_is(memory: Memory) -> None:
    assert _typed(memory, "Correction: the standup moved to 9:30.", "project:l") == {}
    assert _typed(memory, "Reminder: the dentist moved to Tuesday.", "project:m") == {}
    assert _typed(memory, "Caroline: I went to the support group yesterday.", "project:n") == {
        "Caroline": "person"
    }


def test_a_brand_and_its_product_are_one_name_and_a_tickets_key_or_a_quantity_is_typed_as_nothing(
    memory: Memory,
) -> None:
    assert _typed(memory, "We moved the build from Jenkins to GitHub Actions.", "project:o").get(
        "GitHub Actions"
    )
    assert _typed(memory, "Incident INC-2231 double-posted 312 refunds.", "project:p") == {
        "INC-2231": UNKNOWN_TYPE
    }
    assert _typed(memory, "The p99 latency went up to 840ms after the deploy.", "project:q") == {}
