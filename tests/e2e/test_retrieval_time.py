"""Issue 15 over a real stdio server: a time phrase in the query puts the facts of its period first.

The server's clock is the real one (a stdio server cannot be given another), so facts are
placed in time by ``event_time``, relative to today where the phrase is relative.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from testkit.client import call, stdio_session

pytestmark = pytest.mark.anyio

# The last days' news, told plainly ...
RECENT = {
    1: "The deploy pipeline now uses blue-green releases",
    3: "The on-call rotation has two people per shift from now on",
    5: "The staging database runs PostgreSQL 16",
}
# ... and older changes, told with the question's own words.
OLDER = {
    22: "What changed: the team changed the code review rule to require two approvals",
    29: "What changed: the team changed the release branch naming to release/yyyy-mm",
    36: "What changed: the team changed the incident template to include a timeline",
    43: "What changed: the team changed the backup schedule to every four hours",
}


def _day(days_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).date().isoformat()


async def test_what_changed_since_last_week_puts_the_last_weeks_facts_first(
    tmp_path: Path, models_dir: Path
) -> None:
    # "since last week" starts on the Monday of last week, 7 to 13 days back: the facts of the
    # last 6 days are inside whatever today is, those three weeks back and more are outside.
    async with stdio_session(tmp_path / "data", models_dir) as session:
        ids = {}
        for days, content in {**RECENT, **OLDER}.items():
            ids[days] = (await call(session, "remember", content=content, event_time=_day(days)))["id"]
        hits = (await call(session, "search", query="What changed since last week?", limit=7))["results"]
        assert {h["id"] for h in hits[: len(RECENT)]} == {ids[d] for d in RECENT}


async def test_a_month_in_the_query_puts_that_months_fact_first(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        for content in ("The office coffee machine was replaced", "Erin's sister lives in Porto"):
            await call(session, "remember", content=content)
        # Equally about Erin and a race; the August fact also names the year the question names.
        august = await call(
            session,
            "remember",
            content="Erin ran a half marathon in Lisbon in 2023",
            entities=["Erin"],
            event_time="2023-08-12",
        )
        may = await call(
            session,
            "remember",
            content="Erin ran a trail race in the Alps",
            entities=["Erin"],
            event_time="2023-05-20",
        )
        hits = (await call(session, "search", query="What did Erin do in May 2023?", limit=5, detail=True))[
            "results"
        ]
        assert [h["id"] for h in hits[:2]] == [may["id"], august["id"]]
        assert hits[0]["reasons"]["time"]["inside"] is True
        assert hits[1]["reasons"]["time"]["inside"] is False
