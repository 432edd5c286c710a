"""What search's notes tell the caller about how it read the query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hippograph.service.memory import Memory
from hippograph.service.reads import _window_note
from hippograph.text.query_intent import plan


def test_a_time_phrase_that_reorders_results_is_named_with_its_dates(memory: Memory) -> None:
    today = datetime.now(UTC).date()
    memory.remember("Rotation: Kwame is on call for the platform team.", event_time="2026-01-09")
    memory.remember("Bought a new kettle for the office.", event_time=today.isoformat())
    dated = memory.search("who is on call this week?")
    [note] = [n for n in dated.notes if "this week" in n]
    monday = today - timedelta(days=today.weekday())
    assert note == (
        f'"this week" read as {monday.isoformat()} to {(monday + timedelta(days=6)).isoformat()}: '
        "facts dated in it ranked first"
    )
    assert not [n for n in memory.search("who is on call?").notes if "read as" in n]


def test_what_is_planned_next_week_comes_first(memory: Memory) -> None:
    today = datetime.now(UTC).date()
    monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
    memory.remember(
        "The boiler service is booked with Halden Heating.",
        event_time=(monday - timedelta(days=21)).isoformat(),
    )
    planned = memory.remember(
        "The boiler service visit from Halden Heating is booked.",
        event_time=(monday + timedelta(days=2)).isoformat(),
    ).id
    memory.remember("Paid the Halden Heating invoice for the boiler.", event_time=today.isoformat())
    out = memory.search("what is booked next week?")
    assert out.results[0].id == planned
    assert (
        f'"next week" read as {monday.isoformat()} to {(monday + timedelta(days=6)).isoformat()}: '
        "facts dated in it ranked first"
    ) in out.notes


def test_every_plan_dated_in_the_period_asked_about_is_listed(memory: Memory) -> None:
    today = datetime.now(UTC).date()
    monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
    plans = [
        "Dentist check-up for Ilka.",
        "Parents' evening at the primary school.",
        "The boiler service visit.",
        "Drinks with Oskar after work.",
        "Renew the car's road tax.",
    ]
    ids = {
        memory.remember(p, event_time=(monday + timedelta(days=i)).isoformat()).id
        for i, p in enumerate(plans)
    }
    for other in (
        "Our cat is called Miso.",
        "The router sits in the hall cupboard.",
        "I prefer aisle seats.",
    ):
        memory.remember(other)
    assert ids <= {h.id for h in memory.search("what is coming up next week?").results}
    ranged = memory.search("appointments", after="next week", before="next week").results
    assert ids == {h.id for h in ranged}


def test_a_phrase_of_hours_is_read_as_the_day_it_falls_on() -> None:
    now = datetime(2026, 3, 18, 15, 0, tzinfo=UTC)
    note = _window_note(plan("what broke 3 hours ago?", now), [{"time": {"factor": 0.5}}])
    assert note == '"3 hours ago" read as 2026-03-18 to 2026-03-18: facts dated in it ranked first'
