"""The sameness rule, pure: restatements merge, changed values and denials never do."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import Fact, FactKind, FactStatus, Provenance, Source
from hippograph.domain.sameness import (
    LIST_SIMILARITY,
    MIN_SIMILARITY,
    Difference,
    Judgement,
    Verdict,
    answers,
    compare,
    judge,
    one_slot_apart,
    same_subject,
)
from testkit.facts import make_fact

NOW = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def fact(content: str, **fields: object) -> Fact:
    return make_fact(content, at=NOW, **{"id": "f_00000000000000a1", **fields})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The user likes concise answers without emojis", "The user prefers concise answers with no emojis"),
        ("Rosa's favourite food is sushi", "Rosa's favorite food is sushi."),
        ("Rosa's favourite food is sushi", "Sushi is Rosa's favourite food"),
        ("Alice drinks tea every morning", "Every morning Alice drinks tea"),
        ("I am allergic to peanuts", "I'm allergic to peanuts"),
        ("The user has two cats", "The user has 2 cats"),
        ("Hana speaks Japanese and English", "Hana speaks English and Japanese"),
        ("Send the weekly report to Dana every Monday", "Every Monday, send the weekly report to Dana"),
    ],
)
def test_rewordings_say_the_same(a: str, b: str) -> None:
    assert compare(a, b) is None
    assert compare(b, a) is None


@pytest.mark.parametrize(
    ("a", "b", "difference"),
    [
        (
            "The user likes concise answers without emojis",
            "The user likes concise answers with emojis",
            "negation",
        ),
        ("Alice drinks tea every morning", "Alice doesn't drink tea in the morning", "negation"),
        ("The standup is at 9:30", "The standup is at 10:00", "number"),
        ("The user has two cats", "The user has three cats", "number"),
        ("Rosa's favourite food is sushi", "Rosa's favourite food is pizza", "value"),
        ("The user is left-handed", "The user is right-handed", "value"),
        ("Bob works at Acme", "Bob works at Globex", "name"),
        ("Jonas reports to Greta", "Greta reports to Jonas", "name"),
        ("The user prefers tea over coffee", "The user prefers coffee over tea", "order"),
        ("Alice drinks tea every morning", "Alice drinks green tea every morning", "value"),
        # A number one leaves out is no changed number: the other says more.
        ("The standup is at 9:30 in the big room", "The standup is in the big room", "value"),
        ("The kids are 5 and 8", "The kids are 5", "value"),
    ],
)
def test_a_changed_value_or_a_denial_is_a_difference(a: str, b: str, difference: str) -> None:
    assert compare(a, b) == Difference(difference)
    assert compare(b, a) == Difference(difference)


def test_same_subject_reads_names_or_the_first_content_word() -> None:
    assert same_subject("Rosa's favourite food is sushi", "Rosa loves pizza")
    assert not same_subject("Rosa's favourite food is sushi", "Marco's favourite food is sushi")
    assert same_subject("The user likes tea", "User prefers coffee")
    assert not same_subject("The standup is at 9:30", "The retro is at 9:30")


def test_judge_merges_only_a_close_restatement() -> None:
    old = fact("The user likes concise answers without emojis")
    again = fact("The user prefers concise answers with no emojis", id="f_00000000000000a2")
    assert judge(again, old, 0.95).verdict is Verdict.SAME
    assert judge(again, old, 0.5).verdict is Verdict.UNRELATED


def test_judge_flags_only_evidence_of_a_changed_value_and_links_only_a_denial() -> None:
    sushi = fact("Rosa's favourite food is sushi")
    # Another content word: a new value or a synonym, the words cannot tell: the caller judges.
    pizza = fact("Rosa's favourite food is pizza", id="f_00000000000000a2")
    assert judge(pizza, sushi, 0.8) == judge(pizza, sushi, 0.99)
    assert judge(pizza, sushi, 0.8) == Judgement(Verdict.UNSURE, Difference.VALUE)
    # Another name or number is evidence.
    moved = fact("Rosa's favourite food is the sushi at Kaito", id="f_00000000000000a5")
    place = fact("Rosa's favourite food is the sushi at Umi", id="f_00000000000000a6")
    assert judge(place, moved, 0.9) == Judgement(Verdict.CONFLICT, Difference.NAME)
    two = fact("Rosa eats sushi twice a week", id="f_00000000000000a7")
    three = fact("Rosa eats sushi three times a week", id="f_00000000000000a8")
    assert judge(three, two, 0.9).verdict is Verdict.CONFLICT
    denial = fact("Rosa's favourite food is not sushi", id="f_00000000000000a3")
    assert judge(denial, sushi, 0.9).verdict is Verdict.CONTRADICTS
    other = fact("Marco's favourite food is pizza", id="f_00000000000000a4")
    assert judge(other, sushi, 0.8).verdict is Verdict.SIMILAR


def test_a_fact_about_the_same_subject_is_shown_further_away_but_never_merged() -> None:
    lisbon = fact("Ana's flat is in Lisbon")
    porto = fact("Ana's flat is in Porto", id="f_00000000000000a2")
    same = fact("Ana's flat is in Lisbon", id="f_00000000000000a3")
    middle = (LIST_SIMILARITY + MIN_SIMILARITY) / 2
    assert judge(porto, lisbon, middle) == Judgement(Verdict.CONFLICT, Difference.NAME)
    assert judge(same, lisbon, middle).verdict is Verdict.UNSURE  # too far apart to merge
    cycles = fact("Ana cycles to her office in Porto", id="f_00000000000000a5")
    assert judge(cycles, lisbon, LIST_SIMILARITY - 0.01).verdict is Verdict.UNRELATED
    stranger = fact("Bruno's flat is in Porto", id="f_00000000000000a4")
    assert judge(stranger, lisbon, middle).verdict is Verdict.UNRELATED


def test_one_sentence_with_one_slot_changed_is_shown_however_far_apart() -> None:
    lisbon = fact("Ana's flat is in Lisbon")
    porto = fact("Ana's flat is in Porto", id="f_00000000000000a2")
    assert judge(porto, lisbon, 0.3) == Judgement(Verdict.CONFLICT, Difference.NAME)
    # Another holder of the slot: shown, never called a conflict (both may hold).
    bruno = fact("Bruno's flat is in Lisbon", id="f_00000000000000a3")
    assert judge(bruno, lisbon, 0.3).verdict is Verdict.UNSURE


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("Carmen is on call this week", "Dmitri is on call this week", True),
        ("Send the weekly report to Dana every Monday", "Send the weekly report to Felix every Monday", True),
        ("I am allergic to peanuts", "I am allergic to shellfish", True),
        ("Felix uses Neovim with the LazyVim config", "Felix uses Emacs with the Doom config", False),
        ("The user takes the 8:15 train to work", "The user cycles to work", False),
        ("Ana likes tea", "Ana likes tea", False),
        ("Tea", "Coffee", False),
    ],
)
def test_one_slot_apart_needs_a_shared_frame_larger_than_the_change(a: str, b: str, apart: bool) -> None:
    assert one_slot_apart(a, b) is apart


def test_judge_reads_the_fields_too() -> None:
    said = fact("We shipped the release", event_time=NOW)
    assert (
        judge(replace(said, id="f_00000000000000a2", kind=FactKind.EPISODE), said, 1.0).verdict
        is Verdict.SIMILAR
    )
    later = replace(said, id="f_00000000000000a2", event_time=datetime(2024, 6, 1, tzinfo=UTC))
    assert judge(later, said, 1.0) == Judgement(Verdict.REPEATED, Difference.TIME)
    # Another number on another day: changed since, or another event; a conflict only if the
    # new statement says it changed.
    rent = fact("The allotment rent is 48 pounds a year", event_time=NOW)
    risen = replace(rent, id="f_00000000000000a2", event_time=datetime(2024, 6, 1, tzinfo=UTC))
    assert judge(replace(risen, content="The allotment rent is 62 pounds a year"), rent, 0.9) == Judgement(
        Verdict.DATED_CHANGE, Difference.NUMBER
    )
    goes_up = replace(risen, content="The allotment rent goes up to 62 pounds a year")
    assert judge(goes_up, rent, 0.8) == Judgement(Verdict.CONFLICT, Difference.NUMBER)
    # Other content words about the same subject on another day: reworded or changed.
    terrier = fact("Our dog is a scruffy border terrier called Pickle", event_time=NOW)
    later_terrier = replace(
        terrier,
        id="f_00000000000000a2",
        content="Pickle is our border terrier",
        event_time=datetime(2024, 6, 1, tzinfo=UTC),
    )
    assert judge(later_terrier, terrier, 0.87) == Judgement(Verdict.UNSURE, Difference.VALUE)
    # ... which it cannot tell from another event in other words: the caller judges.
    reworded = replace(later, content="We shipped the hotfix release")
    assert judge(reworded, said, 0.9) == Judgement(Verdict.UNSURE, Difference.VALUE)
    # Another time and other words about something else: only another time.
    other = replace(later, content="The release notes went out by email")
    assert judge(other, said, 0.8) == Judgement(Verdict.SIMILAR, Difference.TIME)
    denied = replace(said, id="f_00000000000000a2", kind=FactKind.NEGATIVE)
    assert judge(denied, said, 1.0).verdict is Verdict.CONTRADICTS
    # One claim in other words is one statement; another value is a conflict.
    osaka = fact("Ken lives in Osaka", subject="Ken", predicate="lives_in", object="Osaka")
    based = fact(
        "Ken is based in Osaka", id="f_00000000000000a2", subject="Ken", predicate="lives_in", object="Osaka"
    )
    assert judge(based, osaka, 0.9).verdict is Verdict.SAME
    kyoto = replace(based, content="Ken is based in Kyoto", object="Kyoto")
    assert judge(kyoto, osaka, 0.9).verdict is Verdict.CONFLICT
    # A claim the stored fact lacks is kept as a fact of its own.
    free = fact("Ken lives in Osaka")
    assert judge(osaka, free, 1.0).verdict is Verdict.SIMILAR


def test_answers_needs_every_word_of_the_query() -> None:
    assert answers("where does Alice live", "Alice lives in Berlin")
    assert not answers("zzqx quantum llama", "Alice lives in Berlin")
    assert not answers("the", "Alice lives in Berlin")
    assert answers("standup 9:30", "The standup is at 9:30")


def test_corroborate_strengthens_and_purge_erases() -> None:
    old = fact("The user likes tea", evidence="we talked about drinks")
    later = datetime(2024, 6, 1, tzinfo=UTC)
    said = fact("The user likes tea", id="f_00000000000000a2", source=Source.USER_EDIT, confidence=1.0,
                provenance=Provenance.USER_STATED, evidence="the user said so")  # fmt: skip
    strong = lc.corroborate(old, said, later)
    assert (strong.id, strong.content, strong.corroborations) == (old.id, old.content, 2)
    assert strong.status is FactStatus.CONFIRMED and not strong.pinned
    assert strong.confidence == 1.0 and strong.source is Source.USER_EDIT
    assert strong.sources == (Source.CONVERSATION, Source.USER_EDIT)
    assert strong.provenance is Provenance.USER_STATED and strong.evidence == "the user said so"
    assert strong.last_stated == later
    weak = lc.corroborate(
        old, replace(said, source=Source.CONVERSATION, confidence=0.8, evidence=None), later
    )
    assert round(weak.confidence, 6) == 0.96 and weak.evidence == "we talked about drinks"
    # Stated again 200 days later, it is as fresh as a new fact.
    assert lc.decay_factor(strong, datetime(2024, 6, 2, tzinfo=UTC)) == 1.0

    tomb = lc.purge(replace(strong, subject="user", predicate="likes", object="tea", tags=("drinks",)), later)
    assert tomb.status is FactStatus.PURGED and tomb.id == old.id
    assert (tomb.content, tomb.evidence, tomb.subject, tomb.object, tomb.tags) == ("", None, None, None, ())
    assert lc.purge(tomb, later) == tomb
    assert lc.retract(tomb, later, "again") == tomb
    with pytest.raises(lc.InvalidTransition, match="forgotten"):
        lc.check_correctable(tomb)


def test_a_name_one_text_adds_replaces_none_unless_it_says_something_changed() -> None:
    # The full name of the same person: other words, not another name.
    assert (
        compare("Rashida is the staff engineer", "Rashida Okonkwo is the staff engineer") is Difference.VALUE
    )
    assert (
        compare("Rashida Okonkwo is the staff engineer", "Rashida is the staff engineer") is Difference.VALUE
    )
    # Each text with a name the other lacks: another name.
    assert compare("My manager is Sarah Kim", "My manager is David Osei") is Difference.NAME
    # A statement that says something changed and adds a name names the new holder.
    priya = fact("Priya manages the billing team")
    marco = fact("Since May the billing team is led by Marco instead of Priya", id="f_00000000000000a2")
    assert judge(marco, priya, 0.8) == Judgement(Verdict.CONFLICT, Difference.NAME)
    full = fact("Priya Raman manages the billing team", id="f_00000000000000a3")
    assert judge(full, priya, 0.9).verdict is Verdict.UNSURE


@pytest.mark.parametrize(
    ("new", "old", "difference"),
    [
        (
            "Actually Tariq's birthday is 13 June, not the 3rd.",
            "Tariq's birthday is on 3 June.",
            Difference.NUMBER,
        ),
        ("Correction: Lotte is 6, not 5 - she turned 6 in May.", "Lotte is 5 years old.", Difference.NUMBER),
        ("The team uses Jenkins, not Buildkite.", "The team uses Buildkite.", Difference.NAME),
        ("The team uses Jenkins, not Buildkite.", "The team uses Jenkins.", None),
        ("Noor is vegetarian, not vegan.", "Noor is vegan.", Difference.NEGATION),
        ("Noor does not eat fish.", "Noor eats fish.", Difference.NEGATION),
    ],
)
def test_a_clause_ruling_a_value_out_sets_it_right_without_denying(
    new: str, old: str, difference: Difference | None
) -> None:
    assert compare(new, old) is difference


def test_a_day_against_a_surname_is_no_changed_name() -> None:
    assert compare(
        "Ilse Brandt is a neighbour and runs the choir.", "The choir meets on Thursdays at Ilse's flat."
    ) is (Difference.VALUE)
    assert compare("The choir meets on Fridays.", "The choir meets on Thursdays.") is Difference.DATE
    assert compare("Rehearsals start in March.", "Rehearsals start in May.") is Difference.DATE
    assert compare("The choir is led by Ilse.", "The choir is led by Marta.") is Difference.NAME
