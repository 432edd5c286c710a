"""Issue 3 end to end over a real stdio server: promotion, correction chains, as_of, forget, decay."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from testkit.client import call, call_error, stdio_session
from testkit.process import PYTHON, server_env

pytestmark = pytest.mark.anyio


async def test_fact_recalled_three_times_becomes_confirmed(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        fact = await call(session, "remember", content="Ravi is allergic to peanuts", entities=["Ravi"])
        assert fact["status"] == "staged"
        for _ in range(3):
            hits = (await call(session, "search", query="what is Ravi allergic to"))["results"]
            assert hits[0]["id"] == fact["id"]
        explained = await call(session, "explain", fact_id=fact["id"])
        assert explained["fact"]["status"] == "confirmed"
        assert explained["access_count"] == 3
        assert explained["relevance"]["usage_boost"] > 1.0


async def test_correct_builds_a_chain_that_explain_shows_both_ways(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        berlin = await call(
            session,
            "remember",
            content="Alice lives in Berlin",
            subject="Alice",
            predicate="lives_in",
            object="Berlin",
        )
        paris = await call(
            session, "correct", fact_id=berlin["id"], content="Alice lives in Paris", object="Paris"
        )
        assert paris["corrected"] == berlin["id"]
        lyon = await call(session, "correct", query="where does Alice live", content="Alice lives in Lyon")
        assert lyon["corrected"] == paris["id"]

        middle = await call(session, "explain", fact_id=paris["id"])
        assert [f["id"] for f in middle["supersedes"]] == [berlin["id"]]
        assert [f["id"] for f in middle["superseded_by"]] == [lyon["id"]]
        newest = await call(session, "explain", fact_id=lyon["id"])
        assert [(f["id"], f["hops"]) for f in newest["supersedes"]] == [(paris["id"], 1), (berlin["id"], 2)]
        oldest = await call(session, "explain", fact_id=berlin["id"])
        assert [f["id"] for f in oldest["superseded_by"]] == [paris["id"], lyon["id"]]
        assert oldest["fact"]["status"] == "superseded"
        assert oldest["fact"]["valid_until"] == paris["created_at"]

        now_ids = [h["id"] for h in (await call(session, "search", query="where does Alice live"))["results"]]
        assert now_ids[0] == lyon["id"]
        assert berlin["id"] not in now_ids and paris["id"] not in now_ids
        then = await call(session, "search", query="where does Alice live", as_of=berlin["created_at"])
        assert [h["id"] for h in then["results"]] == [berlin["id"]]
        history = await call(session, "search", query="where does Alice live", include_history=True)
        assert {berlin["id"], paris["id"], lyon["id"]} <= {h["id"] for h in history["results"]}


async def test_forget_removes_a_fact_from_results_but_keeps_history(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        fact = await call(session, "remember", content="The wifi password hint is the cat's name")
        forgotten = await call(session, "forget", fact_id=fact["id"], reason="user asked")
        assert forgotten["status"] == "retracted"
        assert fact["id"] not in [
            h["id"] for h in (await call(session, "search", query="wifi hint"))["results"]
        ]
        explained = await call(session, "explain", fact_id=fact["id"])
        assert explained["status_reason"] == "user asked"


async def test_lifecycle_mistakes_are_tool_errors_that_change_nothing(
    tmp_path: Path, models_dir: Path
) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        assert "no fact has id" in await call_error(session, "explain", fact_id="f_0123456789abcdef")
        assert "not a fact id" in await call_error(session, "confirm", fact_id="42")
        old = await call(session, "remember", content="Standup is at 9:30")
        new = await call(session, "correct", fact_id=old["id"], content="Standup is at 10:00")
        message = await call_error(session, "confirm", fact_id=old["id"])
        assert "superseded" in message and new["id"] in message
        message = await call_error(session, "correct", fact_id=old["id"], content="Standup is at 11:00")
        assert new["id"] in message
        gone = await call(session, "remember", content="Lunch is at noon")
        await call(session, "forget", fact_id=gone["id"])
        assert "forgotten" in await call_error(session, "correct", fact_id=gone["id"], content="Lunch at one")
        cycle = await call_error(session, "link", from_id=old["id"], to_id=new["id"], relation="supersedes")
        assert "cycle" in cycle
        assert (await call(session, "explain", fact_id=new["id"]))["fact"]["status"] == "staged"
        assert (await call(session, "explain", fact_id=old["id"]))["superseded_by"][0]["id"] == new["id"]


async def test_maintenance_200_days_ahead_retracts_unused_and_keeps_pinned(
    tmp_path: Path, models_dir: Path
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as session:
        unused = await call(session, "remember", content="The parking spot this week is B12")
        pinned = await call(session, "remember", content="Maria's birthday is on 3 March")
        await call(session, "confirm", fact_id=pinned["id"])

    later = datetime.fromisoformat(unused["created_at"].replace("Z", "+00:00")) + timedelta(days=200)
    result = subprocess.run(
        [PYTHON, "-m", "hippograph", "maintain", "--now", later.isoformat(), "--json"],
        env=server_env(data_dir, models_dir),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(result.stdout)
    assert report["retracted_decayed"] == 1
    assert report["examined"] == 2

    async with stdio_session(data_dir, models_dir) as session:
        assert (await call(session, "explain", fact_id=unused["id"]))["fact"]["status"] == "retracted"
        assert (await call(session, "explain", fact_id=pinned["id"]))["fact"]["status"] == "confirmed"
        hits = (await call(session, "search", query="parking spot and birthday"))["results"]
        assert [h["id"] for h in hits] == [pinned["id"]]
