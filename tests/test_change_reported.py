"""A statement that reports a change ("I moved to Berlin") is shown the stored fact nearest it,
however far its words are, with a note and no label: the caller judges whether it replaces it."""

from __future__ import annotations

import pytest

from hippograph.domain import sameness
from hippograph.service.memory import Memory
from hippograph.service.nearest import CHANGE_NOTE, REPEATED_NOTE

OTHERS = [
    "My sister has two cats named Miso and Tofu.",
    "Our team tracks tickets in Linear.",
    "The quarterly review is in March.",
]


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Berlin last month.",
        "We switched our CI to GitHub Actions.",
        "Standup is now at 10:15.",
        "I no longer drink coffee.",
        "Marco took over the billing team.",
        "I started eating fish again.",
        "Correction: the retro is on Thursdays.",
        "Actually the gate code is 4471.",
        "The twins turned 9 in May.",
        "Our broadband bill goes up to £41 in April.",
        "They raised the membership fee.",
    ],
)
def test_a_statement_with_a_change_word_reports_a_change(text: str) -> None:
    assert sameness.says_changed(text)


@pytest.mark.parametrize(
    "text",
    [
        "I live in Paris.",
        "The nowhere-man song is on repeat.",
        "Knowledge of changelogs helps.",
        "Never fly with that airline again: the delays are awful.",  # a warning, no change
        "We won't order from Pizzeria Roma again.",
        "Turned the heating off before leaving.",
    ],
)
def test_a_plain_statement_reports_no_change(text: str) -> None:
    assert not sameness.says_changed(text)


def test_the_fact_a_reported_change_replaces_is_shown_with_the_note(memory: Memory) -> None:
    memory.remember_many([{"content": text, "scope": "project:home"} for text in OTHERS])
    paris = memory.remember("I live in Paris.", scope="project:home")

    moved = memory.remember("I moved to Berlin last month.", scope="project:home")

    assert [(s.id, s.conflict, s.restates, s.note) for s in moved.similar] == [
        (paris.id, None, False, CHANGE_NOTE)
    ]
    assert not moved.corroborated and moved.id != paris.id


def test_a_change_of_something_nothing_stored_is_near_shows_nothing(memory: Memory) -> None:
    memory.remember("My wife Noor is allergic to cashews.", scope="project:home")
    reply = memory.remember("We switched the car insurance to Lindqvist Mutual.", scope="project:home")
    assert reply.similar == []


def test_without_a_change_word_a_far_fact_is_not_shown(memory: Memory) -> None:
    memory.remember("I live in Paris.", scope="project:home")
    reply = memory.remember("I enjoy the museums in Berlin.", scope="project:home")
    assert reply.similar == []


def test_a_conversation_turn_reporting_a_change_is_compared_with_nothing(memory: Memory) -> None:
    memory.remember("I live in Paris.", scope="project:home")
    turn = memory.remember(
        "I moved to Berlin last month.", scope="project:home", kind="episode", session_id="s1"
    )
    assert turn.similar == []


def test_another_scopes_fact_is_never_shown(memory: Memory) -> None:
    memory.remember("I live in Paris.", scope="project:elsewhere")
    reply = memory.remember("I moved to Berlin last month.", scope="project:home")
    assert reply.similar == []


def test_the_same_words_dated_another_day_are_shown_as_a_repeat(memory: Memory) -> None:
    first = memory.remember("Our landlord is Fraser Doig.", event_time="2026-11-20").id
    again = memory.remember("Our landlord is Fraser Doig.", event_time="2026-11-25")
    assert again.id != first and not again.corroborated  # two dated statements: two facts
    [shown] = again.similar
    assert (shown.id, shown.note, shown.conflict, shown.restates) == (first, REPEATED_NOTE, None, False)
    same = memory.remember("Our landlord is Fraser Doig.", event_time="2026-11-25", restates=first)
    assert same.corroborated and same.id == first
