"""The words around a name imply its type where they take only one: "a cabin near Drumlow"."""

from __future__ import annotations

import pytest

from hippograph.service.memory import Memory
from hippograph.text.name_frames import framed_type


def _frame(text: str, name: str) -> str | None:
    start = text.index(name)
    return framed_type(text, start, start + len(name))


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("We rented a cabin near Drumlow for the long weekend.", "Drumlow", "place"),
        ("Her parents still live in Vellacourt.", "Vellacourt", "place"),
        ("The train to Ostrava leaves at seven.", "Ostrava", "place"),
        ("Our flight lands at Tegelholm just after noon.", "Tegelholm", "place"),
        ("Remind Oyelaran about the dentist on Friday.", "Oyelaran", "person"),
        ("Please loop in Szymon before we sign.", "Szymon", "person"),
        ("Keep Ibrahima posted on the visa paperwork.", "Ibrahima", "person"),
        ("Tadeo from accounting wants the receipts by Monday.", "Tadeo", "person"),
        ("She landed a job at Brightwell after the bootcamp.", "Brightwell", "organization"),
        ("We have a mortgage with Hallam Mutual.", "Hallam Mutual", "organization"),
        ("My son plays for the Eastfield Otters on Saturdays.", "Eastfield Otters", "organization"),
        ("Our lawyers at Crane Whitby drafted the lease.", "Crane Whitby", "organization"),
        ("The release notes are tracked in Quillpad.", "Quillpad", "tool"),
        ("The nightly jobs run on Moorhen now.", "Moorhen", "tool"),
        ("We migrated the search index from Sorrel to Vantablade.", "Vantablade", "tool"),
        ("Check the Ledgerline dashboard before paging anyone.", "Ledgerline", "tool"),
        ("The shopping list lives in Tallyho, share it with Ben.", "Tallyho", "tool"),
        ("I borrowed the ladder from Eamon next door.", "Eamon", "person"),
        ("Cycling from Ghent to Dendermonde takes an hour.", "Dendermonde", "place"),
        ("Fernway Energy keeps charging us for the old meter.", "Fernway Energy", "organization"),
    ],
)
def test_a_phrase_that_takes_one_type_types_the_name(text: str, name: str, kind: str) -> None:
    assert _frame(text, name) == kind


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("We moved to Halvern last spring.", "Halvern"),  # a town or a queue
        ("I worked with Tamsin on the migration.", "Tamsin"),  # a colleague or a library
        ("We switched to Corvane in March.", "Corvane"),  # a bank or an editor
        ("She is at the Berlin office this week.", "Berlin"),  # the name qualifies "office"
        ("I emailed Stripe support about the refund.", "Stripe"),  # the same
        ("Use Priya's template for the report.", "Priya"),  # a possessive: the frame is the template's
        ("We stayed near the lake. Ardent runs the bakery.", "Ardent"),  # no frame across a sentence
        ("Our servers live in Frankfurt.", "Frankfurt"),  # a tool holds lists and files, not servers
        ("We deploy with deploy_tool.py on Fridays.", "deploy_tool.py"),  # code speaks for itself
    ],
)
def test_no_frame_where_the_phrase_takes_more_than_one_type(text: str, name: str) -> None:
    assert _frame(text, name) is None


def _type(memory: Memory, name: str) -> str:
    entity = memory.entities.resolve(name, "global")
    assert entity is not None
    return entity.type


def test_remember_types_a_new_name_by_its_frame(memory: Memory) -> None:
    memory.remember("We stayed in a guesthouse near Kilbrannan for a week.")
    memory.remember("The on-call rota is tracked in Pallister.")
    assert (_type(memory, "Kilbrannan"), _type(memory, "Pallister")) == ("place", "tool")


def test_a_frame_types_a_neutral_entity_but_never_retypes_a_typed_one(memory: Memory) -> None:
    memory.remember("The quarterly numbers look fine.", entities=["Oakhurst"])
    assert _type(memory, "Oakhurst") == "concept"
    memory.remember("My sister bought a flat near Oakhurst.")
    assert _type(memory, "Oakhurst") == "place"
    memory.remember("Oakhurst, our payroll firm, sent the invoice.")  # a stated type stands over a frame
    assert _type(memory, "Oakhurst") == "organization"
    memory.remember("Grandma lives in a cottage near Oakhurst.")
    assert _type(memory, "Oakhurst") == "organization"
