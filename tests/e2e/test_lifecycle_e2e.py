"""The lifecycle end to end over a real stdio server: correction chains, looking back, forget, errors.

(Reads that change nothing, fading and bi-temporal search: tests/test_trust_over_time.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.client import call, call_error, stdio_session

pytestmark = pytest.mark.anyio


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

        now = (await call(session, "search", query="where does Alice live"))["results"]
        now_ids = [h["id"] for h in now]
        assert now_ids[0] == lyon["id"]
        assert now[0]["replaces"] == "Alice lives in Paris"  # what changed, without an explain
        assert berlin["id"] not in now_ids and paris["id"] not in now_ids
        then = await call(session, "search", query="where does Alice live", known_at=berlin["created_at"])
        assert [(h["id"], h["status"]) for h in then["results"]] == [(berlin["id"], "staged")]
        history = await call(session, "search", query="where does Alice live", include_history=True)
        assert {berlin["id"], paris["id"], lyon["id"]} <= {h["id"] for h in history["results"]}
        await call(session, "forget", fact_id=paris["id"], purge=True)
        now = (await call(session, "search", query="where does Alice live"))["results"]
        assert now[0]["id"] == lyon["id"] and "replaces" not in now[0]  # a purged text is not shown


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
