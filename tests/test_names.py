"""The rules that find names without the model: speakers, capitalised runs, code identifiers, addressees."""

from __future__ import annotations

import pytest

from hippograph.text.names import (
    Name,
    addressed,
    capitalised_runs,
    capitalised_words,
    code_identifiers,
    keep,
    merge,
    opening_words,
    speaker,
)


def _texts(names: list[Name]) -> list[str]:
    return [n.text for n in names]


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Caroline: I went to the support group.", "Caroline"),
        ("Priya Raman: the deploy is done.", "Priya Raman"),
        ("Note: the deploy is done.", None),
        ("TODO: write the tests.", None),
        ("The plan: ship on Friday.", None),
        ("We met at 10:30 today.", None),
    ],
)
def test_a_speaker_is_a_name_that_opens_a_turn(text: str, who: str | None) -> None:
    found = speaker(text)
    assert (found.text if found else None) == who


def test_capitalised_runs_keep_the_sentences_first_word_for_the_typer_and_drop_edge_stopwords() -> None:
    # "Ask" may be a name's first word ("Harriet Nkemelu is ..."): the name typer judges it.
    text = "Ask Priya about it. We met Mary Jane Watson and The Big Lebowski fans in New York."
    assert _texts(capitalised_runs(text)) == ["Ask Priya", "Mary Jane Watson", "Big Lebowski", "New York"]
    # A title or a stopword after the first word ends a name there.
    assert _texts(capitalised_runs("Ask Mr. Haddad Senior about it.")) == ["Haddad Senior"]


def test_single_capitalised_words_inside_a_sentence_are_names() -> None:
    text = "Ask Priya about it. Then call Zbigniew, and move the cron jobs to Airflow; The UTC times stay."
    assert _texts(capitalised_words(text)) == ["Priya", "Zbigniew", "Airflow"]


def test_a_contraction_of_a_function_word_is_no_name_where_it_opens_a_sentence_or_not() -> None:
    text = "I'll call Dana. Then I’m off, and Don't-Panic Inc. is not a name here; We've met O'Brien."
    found = _texts(capitalised_words(text)) + _texts(opening_words(text))
    assert not {"I'll", "I’m", "We've"} & set(found) and "O'Brien" in found


def test_code_identifiers() -> None:
    text = "See kuzu_session.py, server/app/main.ts, write_lock and EntityIndex (or getItem) in YouTube."
    assert _texts(code_identifiers(text)) == [
        "kuzu_session.py",
        "server/app/main.ts",
        "write_lock",
        "EntityIndex",
        "getItem",
        "YouTube",
    ]
    assert _texts(code_identifiers(text, camel=False)) == [
        "kuzu_session.py",
        "server/app/main.ts",
        "write_lock",
    ]


@pytest.mark.parametrize(
    ("text", "name", "spoken_to"),
    [
        ("Maya, I started learning the cello.", "Maya", True),
        ("Wow Caroline, that's great!", "Caroline", True),
        ("That's great, Mel! Keep going.", "Mel", True),
        ("I met Maya, and we talked.", "Maya", False),
        ("Maya moved to Rome.", "Maya", False),
        ("We have two kids: Tove, who is 7, and Arvid.", "Tove", False),  # a relative clause
        ("Tove, who runs the bakery, retired.", "Tove", False),
    ],
)
def test_a_name_spoken_to_is_addressed(text: str, name: str, spoken_to: bool) -> None:
    start = text.index(name)
    assert addressed(text, start, start + len(name)) is spoken_to


def test_merge_keeps_the_first_finders_name_and_drops_overlaps_and_blocked_spans() -> None:
    first = [Name("Priya Raman", "person", "ner", 0, 11)]
    second = [
        Name("Raman", "concept", "capitalised", 6, 11),
        Name("Last Friday", "concept", "capitalised", 20, 31),
    ]
    third = [Name("Project Apollo", "organization", "ner", 40, 54), Name("it", "concept", "ner", 60, 62)]
    merged = merge(first, second, third, blocked=[(20, 31)])
    assert [(n.text, n.type) for n in merged] == [("Priya Raman", "person"), ("Project Apollo", "project")]


def test_a_name_found_again_is_kept_once_and_its_words_are_no_names_of_their_own() -> None:
    text = "The rota is owned by Lena Sato; ask Ximena when Lena Sato is away."
    runs = capitalised_runs(text)
    merged = merge([Name("Lena Sato", "person", "ner", 21, 30)], runs, capitalised_words(text))
    assert [(n.text, n.start) for n in merged] == [("Lena Sato", 21), ("Ximena", 36)]


def test_a_day_of_the_week_names_nothing() -> None:
    assert not any(map(keep, ["Thursday", "Thursdays", "Friday", "SUNDAY"]))
    assert all(map(keep, ["Tuesday Club", "Priya Raman", "Lakeview Bank"]))


def test_a_month_that_is_no_first_name_names_nothing() -> None:
    assert not any(map(keep, ["October", "March", "DECEMBER"]))
    assert all(map(keep, ["June", "April", "October Films"]))  # people are named June and April


def test_a_run_of_capitals_stops_where_its_sentence_ends() -> None:
    text = "We moved to Gdańsk. Mum stayed in Leeds with Prof. Adaeze Obi at St. Brigid's Primary."
    assert _texts(capitalised_runs(text)) == ["Adaeze Obi", "St. Brigid's Primary"]  # no "Gdańsk. Mum"
    assert _texts(capitalised_runs("Lunch in Gdańsk. Mum Kowalska paid.")) == ["Mum Kowalska"]


def test_a_possessive_before_a_noun_is_no_part_of_the_name() -> None:
    assert _texts(capitalised_runs("Actually Ewan Holt's birthday is in spring.")) == ["Actually Ewan Holt"]
    assert _texts(capitalised_words("Then Ewan's birthday came.")) == ["Ewan"]
    assert _texts(capitalised_runs("The hospital is St. Mary's.")) == ["St. Mary's"]
