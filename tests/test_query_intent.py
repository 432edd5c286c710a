"""Query reading without an LLM: intent, time ranges, keywords, names, explicit time parameters."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippograph.domain.errors import InvalidInput
from hippograph.text.query_intent import (
    STOPWORDS,
    Intent,
    QueryPlan,
    content_words,
    plan,
)
from hippograph.text.time_phrases import parse_event_time, parse_time_bound

NOW = datetime(2026, 3, 18, 15, 0, tzinfo=UTC)  # a Wednesday


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


# --- intent ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        # LoCoMo-style questions
        ("When did Melanie paint a sunrise?", Intent.WHEN),
        ("When did Caroline go to the LGBTQ support group?", Intent.WHEN),
        ("What did Caroline research?", Intent.WHAT),
        ("What fields would Caroline be likely to pursue in her education?", Intent.WHAT),
        ("Who supports Caroline?", Intent.WHO),
        ("Why did Jon start his dance studio?", Intent.WHY),
        # A duration is answered from when things happened, so "how long" routes to WHEN.
        ("How long has Caroline had her current group of friends for?", Intent.WHEN),
        # A counterfactual names no cue: hybrid retrieval (the plan marks it complex).
        (
            "Would Caroline still want to pursue counseling if she hadn't received support growing up?",
            Intent.GENERAL,
        ),
        # why
        ("What caused the deploy to fail?", Intent.WHY),
        ("How come the build is so slow?", Intent.WHY),
        ("What is the reason Jon lost his job?", Intent.WHY),
        # when
        ("What year did Jon open the studio?", Intent.WHEN),
        ("Which month did we move the office?", Intent.WHEN),
        ("Since when has Gina used Postgres?", Intent.WHEN),
        ("How long ago did Melanie start pottery?", Intent.WHEN),
        ("Do you remember when we met?", Intent.WHEN),
        # who
        ("With whom did Caroline go camping?", Intent.WHO),
        ("Whose idea was the rebrand?", Intent.WHO),
        # how
        ("How do I deploy the staging server?", Intent.HOW),
        ("What are the steps to rotate the keys?", Intent.HOW),
        ("Procedure for restoring a backup", Intent.HOW),
        # what
        ("Which database does the billing service use?", Intent.WHAT),
        ("How many children does Melanie have?", Intent.WHAT),
        ("Where did Caroline move from?", Intent.WHAT),
        ("Tell me about Jon's dance studio", Intent.WHAT),
        # A "when" after an opening "what" starts a clause; the question is still a what.
        ("What did Caroline do when she got home?", Intent.WHAT),
        # general
        ("Melanie's pottery class", Intent.GENERAL),
        ("", Intent.GENERAL),
    ],
)
def test_intent_follows_cue_words_by_priority(query: str, intent: Intent) -> None:
    assert plan(query, NOW).intent is intent


def test_intent_values_are_plain_strings() -> None:
    assert [i.value for i in Intent] == ["why", "when", "who", "what", "how", "change", "general"]


# --- time ranges -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "after", "before"),
    [
        ("What did I do today?", utc(2026, 3, 18), utc(2026, 3, 19)),
        ("yesterday", utc(2026, 3, 17), utc(2026, 3, 18)),
        # calendar weeks run Monday to Monday
        ("What did we decide last week?", utc(2026, 3, 9), utc(2026, 3, 16)),
        ("this week", utc(2026, 3, 16), utc(2026, 3, 23)),
        ("last month", utc(2026, 2, 1), utc(2026, 3, 1)),
        ("this month", utc(2026, 3, 1), utc(2026, 4, 1)),
        ("last year", utc(2025, 1, 1), utc(2026, 1, 1)),
        ("this year", utc(2026, 1, 1), utc(2027, 1, 1)),
        # "N units ago" is the calendar day/week/month/year that holds that moment
        ("3 days ago", utc(2026, 3, 15), utc(2026, 3, 16)),
        ("two weeks ago", utc(2026, 3, 2), utc(2026, 3, 9)),
        ("a month ago", utc(2026, 2, 1), utc(2026, 3, 1)),
        ("5 months ago", utc(2025, 10, 1), utc(2025, 11, 1)),
        ("2 years ago", utc(2024, 1, 1), utc(2025, 1, 1)),
        ("3 hours ago", utc(2026, 3, 18, 12), utc(2026, 3, 18, 13)),
        # rolling windows: whole days from N units back through the end of today
        ("in the last 3 days", utc(2026, 3, 15), utc(2026, 3, 19)),
        ("in the last 2 weeks", utc(2026, 3, 4), utc(2026, 3, 19)),
        ("in the last 6 months", utc(2025, 9, 18), utc(2026, 3, 19)),
        ("past 7 days", utc(2026, 3, 11), utc(2026, 3, 19)),
        ("over the past week", utc(2026, 3, 11), utc(2026, 3, 19)),
        ("in the last week", utc(2026, 3, 11), utc(2026, 3, 19)),
        ("in the past 24 hours", utc(2026, 3, 17, 15), utc(2026, 3, 18, 16)),
        # open-ended
        ("since May 2023", utc(2023, 5, 1), None),
        ("since last week", utc(2026, 3, 9), None),
        ("before May 2023", None, utc(2023, 5, 1)),
        ("after May 2023", utc(2023, 6, 1), None),
        ("until May 2023", None, utc(2023, 6, 1)),
        ("after 2023-05-08", utc(2023, 5, 9), None),
        # named periods
        ("in May 2023", utc(2023, 5, 1), utc(2023, 6, 1)),
        ("May 2023", utc(2023, 5, 1), utc(2023, 6, 1)),
        ("Sept 2023", utc(2023, 9, 1), utc(2023, 10, 1)),
        ("in 2023", utc(2023, 1, 1), utc(2024, 1, 1)),
        ("in 2023-05", utc(2023, 5, 1), utc(2023, 6, 1)),
        ("on 2023-05-08", utc(2023, 5, 8), utc(2023, 5, 9)),
        ("on 8 May 2023", utc(2023, 5, 8), utc(2023, 5, 9)),
        ("May 8, 2023", utc(2023, 5, 8), utc(2023, 5, 9)),
        ("8 May, 2023", utc(2023, 5, 8), utc(2023, 5, 9)),
        ("the 8th of May 2023", utc(2023, 5, 8), utc(2023, 5, 9)),
        ("Jan 3rd, 2024", utc(2024, 1, 3), utc(2024, 1, 4)),
        # a written time is the minute (or second) it names
        ("2023-05-08T14:30:00Z", utc(2023, 5, 8, 14, 30), utc(2023, 5, 8, 14, 30, 1)),
        ("at 2023-05-08 14:30", utc(2023, 5, 8, 14, 30), utc(2023, 5, 8, 14, 31)),
        ("2023-05-08T14:30+02:00", utc(2023, 5, 8, 12, 30), utc(2023, 5, 8, 12, 31)),
        ("between 2023-05-01 and 2023-05-10", utc(2023, 5, 1), utc(2023, 5, 11)),
        ("from March 2023 to June 2023", utc(2023, 3, 1), utc(2023, 7, 1)),
        ("between 2020 and 2022", utc(2020, 1, 1), utc(2023, 1, 1)),
        # the year-less end takes its year from the other one
        ("between May and June 2023", utc(2023, 5, 1), utc(2023, 7, 1)),
        ("early 2023", utc(2023, 1, 1), utc(2023, 7, 1)),
        ("late 2023", utc(2023, 7, 1), utc(2024, 1, 1)),
        ("mid-2023", utc(2023, 4, 1), utc(2023, 10, 1)),
        ("summer 2022", utc(2022, 6, 1), utc(2022, 9, 1)),
        ("in the summer of 2022", utc(2022, 6, 1), utc(2022, 9, 1)),
        ("winter 2022", utc(2022, 12, 1), utc(2023, 3, 1)),
        # without a year: the most recent one that has begun
        ("in May", utc(2025, 5, 1), utc(2025, 6, 1)),
        ("in March", utc(2026, 3, 1), utc(2026, 4, 1)),
        ("last March", utc(2025, 3, 1), utc(2025, 4, 1)),
        ("last May", utc(2025, 5, 1), utc(2025, 6, 1)),
        ("on 8 May", utc(2025, 5, 8), utc(2025, 5, 9)),
        ("on March 2nd", utc(2026, 3, 2), utc(2026, 3, 3)),
        ("on Monday", utc(2026, 3, 16), utc(2026, 3, 17)),
        ("on Wednesday", utc(2026, 3, 18), utc(2026, 3, 19)),
        ("last Wednesday", utc(2026, 3, 11), utc(2026, 3, 12)),
        ("last Friday", utc(2026, 3, 13), utc(2026, 3, 14)),
        # ahead: plans and appointments
        ("What is coming up next week?", utc(2026, 3, 23), utc(2026, 3, 30)),
        ("next month", utc(2026, 4, 1), utc(2026, 5, 1)),
        ("next year", utc(2027, 1, 1), utc(2028, 1, 1)),
        ("tomorrow", utc(2026, 3, 19), utc(2026, 3, 20)),
        ("next Wednesday", utc(2026, 3, 25), utc(2026, 3, 26)),  # the coming one, never today
        ("next Friday", utc(2026, 3, 20), utc(2026, 3, 21)),
        ("3 days from now", utc(2026, 3, 21), utc(2026, 3, 22)),
        ("two weeks from now", utc(2026, 3, 30), utc(2026, 4, 6)),
        ("in the next 10 days", utc(2026, 3, 18), utc(2026, 3, 29)),
        ("over the coming week", utc(2026, 3, 18), utc(2026, 3, 26)),
        ("since next week", utc(2026, 3, 23), None),
    ],
)
def test_time_phrases_become_half_open_utc_ranges(
    query: str, after: datetime | None, before: datetime | None
) -> None:
    result = plan(query, NOW)
    assert (result.after, result.before) == (after, before)


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("What did Caroline do in May 2023?", "in May 2023"),
        ("Who did I meet 3 days ago at the conference?", "3 days ago"),
        ("notes since last week please", "since last week"),
        ("What happened between May and June 2023?", "between May and June 2023"),
        ("WHAT DID WE SHIP LAST WEEK", "LAST WEEK"),
    ],
)
def test_time_phrase_is_reported_as_written(query: str, phrase: str) -> None:
    assert plan(query, NOW).time_phrase == phrase


@pytest.mark.parametrize(
    "query",
    [
        "May I borrow your pen?",
        "Can you march on?",
        "I have 3 cats",
        "Who is Jan?",
        "What is in room 2023?",
        "Did Caroline read May's letter?",
        "What happened on the last day of camp?",
        "What did she study in the last year of her degree?",
        "Caroline's 2022 trip",
        "8 may people come",
        "What did Melanie paint?",
        "What is the next step?",
        "in 3 months of training",
        # a length of time, or a time after another one: no period ahead
        "They fixed the brakes in a day.",
        "the first time in 10 years",
        "She read the book in 3 days",
        "What did Caroline do the next week after the parade?",
        "in the next week after her surgery",
    ],
)
def test_words_that_only_look_like_dates_give_no_range(query: str) -> None:
    result = plan(query, NOW)
    assert (result.after, result.before, result.time_phrase) == (None, None, None)


def test_the_first_time_phrase_wins() -> None:
    result = plan("What happened yesterday and last week?", NOW)
    assert (result.after, result.before, result.time_phrase) == (
        utc(2026, 3, 17),
        utc(2026, 3, 18),
        "yesterday",
    )


def test_now_in_another_zone_is_read_in_utc() -> None:
    # 01:00 on the 19th in UTC+3 is still the 18th in UTC.
    local = datetime(2026, 3, 19, 1, 0, tzinfo=timezone(timedelta(hours=3)))
    assert plan("today", local).after == utc(2026, 3, 18)


def test_an_impossible_day_falls_back_to_its_month() -> None:
    result = plan("on 31 February 2023", NOW)
    assert (result.after, result.before, result.time_phrase) == (
        utc(2023, 2, 1),
        utc(2023, 3, 1),
        "February 2023",
    )


MONTH = timedelta(days=30)


@pytest.mark.parametrize(
    ("query", "grain"),
    [
        ("What changed since last week?", timedelta(days=7)),
        ("What did I do yesterday?", timedelta(days=1)),
        ("What did Erin do in May 2023?", timedelta(days=31)),
        ("What did we decide last month?", timedelta(days=28)),  # February 2026
        ("What happened this year?", timedelta(days=365)),
        ("Anything since 8 May 2023?", timedelta(days=1)),
        ("Who joined between May and June 2023?", timedelta(days=61)),
        ("What did I do recently?", MONTH),
    ],
)
def test_the_grain_is_the_length_of_the_period_the_phrase_names(query: str, grain: timedelta) -> None:
    assert plan(query, NOW, recent=MONTH).grain == grain


def test_recently_reaches_back_as_far_as_it_is_told() -> None:
    result = plan("What did Jon work on recently?", NOW, recent=MONTH)
    assert (result.after, result.before, result.time_phrase) == (NOW - MONTH, None, "recently")
    assert result.keywords == ("jon", "work")
    assert plan("What did Jon work on lately?", NOW, recent=MONTH).after == NOW - MONTH
    assert plan("What did Jon work on recently?", NOW).time_phrase is None  # no length given


def test_a_written_date_wins_over_recently() -> None:
    result = plan(
        "What new activity did Maria start recently, as mentioned on 3 June, 2023?", NOW, recent=MONTH
    )
    assert (result.after, result.before) == (utc(2023, 6, 3), utc(2023, 6, 4))
    assert result.intent is Intent.WHAT  # "what new activity" asks about an activity


@pytest.mark.parametrize(
    ("query", "keywords"),
    [
        ("What changed since last week?", ()),
        ("What's changed in the deploy pipeline since March?", ("deploy", "pipeline")),
        ("What has changed since yesterday", ()),
        ("What's new with Jon?", ("jon",)),
        ("Anything new about the billing service this month?", ("billing", "service")),
        ("Any updates on the migration?", ("migration",)),
    ],
)
def test_what_changed_asks_about_a_period_not_a_topic(query: str, keywords: tuple[str, ...]) -> None:
    result = plan(query, NOW)
    assert result.intent is Intent.CHANGE
    assert result.keywords == keywords


def test_keyword_search_looks_for_the_words_without_the_time_phrase() -> None:
    assert plan("What did Erin do in May 2023?", NOW).search_text == "What did Erin do ?"
    assert (
        plan("What changed in the deploy pipeline since last week?", NOW).search_text
        == "in the deploy pipeline ?"
    )
    # Nothing left to look for: no keyword search (the vector channels still run).
    assert plan("What changed since last week?", NOW).search_text == ""
    assert plan("Why did it fail?", NOW).search_text == "Why did it fail?"


# --- keywords, names, complexity -------------------------------------------------------------


def test_plan_of_a_locomo_question() -> None:
    assert plan("When did Caroline go to the LGBTQ support group?", NOW) == QueryPlan(
        intent=Intent.WHEN,
        after=None,
        before=None,
        time_phrase=None,
        grain=None,
        complex=True,  # two named things: Caroline and LGBTQ
        keywords=("caroline", "go", "lgbtq", "support", "group"),
        capitalized=("Caroline", "LGBTQ"),
        search_text="When did Caroline go to the LGBTQ support group?",
    )


def test_time_phrase_words_are_neither_keywords_nor_names() -> None:
    result = plan("What did Caroline and Melanie do in New York on 8 May 2023?", NOW)
    assert result.keywords == ("caroline", "melanie", "new", "york")
    assert result.capitalized == ("Caroline", "Melanie", "New York")


@pytest.mark.parametrize(
    ("query", "capitalized"),
    [
        ("When did Melanie paint a sunrise?", ("Melanie",)),
        ("Tell me about Jon's dance studio", ("Jon",)),
        ("Did Caroline's Mom visit?", ("Caroline", "Mom")),
        ("Should I call Jon, Gina or Melanie?", ("Jon", "Gina", "Melanie")),
        ("Is the Golden Gate Bridge in San Francisco?", ("Golden Gate Bridge", "San Francisco")),
        ("what about josé and Zoë?", ("Zoë",)),
        ("May I borrow your pen?", ()),
    ],
)
def test_capitalized_spans_skip_question_words(query: str, capitalized: tuple[str, ...]) -> None:
    assert plan(query, NOW).capitalized == capitalized


def test_keywords_are_lowercased_deduplicated_content_words() -> None:
    result = plan("Why did Jon's studio, the dance studio, close?", NOW)
    assert result.keywords == ("jon", "studio", "dance", "close")


def test_content_words_drop_stopwords_contractions_and_possessives() -> None:
    assert content_words("Caroline hadn't said she'd go to Melanie's art show, I'm sure") == [
        "caroline",
        "said",
        "go",
        "melanie",
        "art",
        "show",
        "sure",
    ]
    assert {"the", "what", "when", "tell"} <= STOPWORDS


@pytest.mark.parametrize(
    ("query", "complex_"),
    [
        ("When did Melanie paint a sunrise?", False),
        ("What did Caroline research?", False),
        ("What do Caroline and Melanie have in common?", True),
        ("Would Caroline still want to pursue counseling if she hadn't received support growing up?", True),
        ("Who started the project and why was it stopped?", True),
        ("What did Jon do? Where did he go?", True),
        ("Compare the two databases we tried", True),
    ],
)
def test_complex_marks_multi_clause_and_multi_entity_questions(query: str, complex_: bool) -> None:
    assert plan(query, NOW).complex is complex_


# --- explicit time parameters ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "end", "expected"),
    [
        ("2024-05-08", False, utc(2024, 5, 8)),
        ("2024-05-08", True, utc(2024, 5, 9)),  # after=X, before=X covers day X
        ("2024-05-08T14:30:00Z", False, utc(2024, 5, 8, 14, 30)),
        ("2024-05-08T14:30:00Z", True, utc(2024, 5, 8, 14, 30)),  # an instant is itself
        ("2024-05-08T14:30", True, utc(2024, 5, 8, 14, 30)),  # naive = UTC
        ("2024-05-08T14:30:00+02:00", False, utc(2024, 5, 8, 12, 30)),
        ("last week", False, utc(2026, 3, 9)),
        ("last week", True, utc(2026, 3, 16)),
        (" in May 2023 ", False, utc(2023, 5, 1)),
        ("May 2023", True, utc(2023, 6, 1)),
        ("3 days ago", False, utc(2026, 3, 15)),
        ("May", False, utc(2025, 5, 1)),  # a parameter is a time, so a bare month is one
        ("2023", True, utc(2024, 1, 1)),
        ("since May 2023", False, utc(2023, 5, 1)),
        ("yesterday", True, utc(2026, 3, 18)),
    ],
)
def test_parse_time_bound(value: str, end: bool, expected: datetime) -> None:
    assert parse_time_bound(value, NOW, end=end) == expected


@pytest.mark.parametrize("value", ["next blursday", "", "   ", "yesterday or so", "2024-13-45", "May I"])
def test_parse_time_bound_refuses_garbage_and_says_what_to_send(value: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse_time_bound(value, NOW, end=False)
    assert f"could not read {value!r} as a time" in str(raised.value)
    assert "2024-05-08" in str(raised.value) and "last week" in str(raised.value)


def test_parse_time_bound_refuses_an_open_end() -> None:
    with pytest.raises(InvalidInput, match="open-ended and gives no end"):
        parse_time_bound("since May 2023", NOW, end=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", utc(2023, 6, 27, 10, 37)),
        ("12:05 am on 1 January, 2024", utc(2024, 1, 1, 0, 5)),
        ("12:30 pm on 1 January, 2024", utc(2024, 1, 1, 12, 30)),
        ("13:56 on 8 May 2023", utc(2023, 5, 8, 13, 56)),
        ("8 May 2023", utc(2023, 5, 8)),
        ("May 8, 2023", utc(2023, 5, 8)),
        ("2023-05-08", utc(2023, 5, 8)),
        ("2023-05-08T13:56:00", utc(2023, 5, 8, 13, 56)),
        ("2023-05-08T13:56:00+02:00", utc(2023, 5, 8, 11, 56)),
    ],
)
def test_parse_event_time(value: str, expected: datetime) -> None:
    assert parse_event_time(value) == expected


@pytest.mark.parametrize("value", ["tomorrow", "", "31 February 2023", "13:56 pm on 8 May 2023", "May 2023"])
def test_parse_event_time_refuses_what_it_cannot_read(value: str) -> None:
    with pytest.raises(InvalidInput, match="as an event time: send an ISO 8601 date"):
        parse_event_time(value)


# --- properties ------------------------------------------------------------------------------

_NOWS = st.datetimes(timezones=st.just(UTC))
_TIME_WORDS = st.sampled_from(
    ["in", "on", "since", "before", "after", "between", "and", "from", "to", "last", "this", "past", "the",
     "ago", "May", "march", "Sept.", "8", "31", "2023", "9999", "0001-01-01", "9999-12-31T23:59Z", "days",
     "week", "early", "summer", "of", "Friday", "?", ","]
)  # fmt: skip
_QUERIES = st.text() | st.lists(_TIME_WORDS, max_size=8).map(" ".join)


@given(query=_QUERIES | st.just("recently"), now=_NOWS)
def test_plan_never_raises_and_ranges_are_ordered(query: str, now: datetime) -> None:
    result = plan(query, now, recent=MONTH)
    if result.after is not None and result.before is not None:
        assert result.after < result.before
    if result.time_phrase is not None:
        assert result.time_phrase in query


@given(value=_QUERIES, now=_NOWS, end=st.booleans())
def test_parse_time_bound_fails_only_with_invalid_input(value: str, now: datetime, end: bool) -> None:
    with contextlib.suppress(InvalidInput):
        assert parse_time_bound(value, now, end=end).tzinfo is UTC


@given(value=_QUERIES)
def test_parse_event_time_fails_only_with_invalid_input(value: str) -> None:
    with contextlib.suppress(InvalidInput):
        assert parse_event_time(value).tzinfo is UTC
