"""What search's notes tell the caller about how it read the query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hippograph.service.memory import Memory


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
