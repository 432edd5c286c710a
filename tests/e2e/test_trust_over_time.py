"""Memory a user can trust over months: ``hippograph maintain`` two years ahead, run as a process
(a preview, then for real), hides nothing the user said.

(Reads that change nothing, evidence, as_of and known_at, over MCP in process:
tests/test_trust_over_time.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from testkit.client import call
from testkit.process import run_cli
from tests.test_trust_over_time import FACTS, Opener

pytestmark = pytest.mark.anyio


async def test_maintain_two_years_ahead_hides_nothing_the_user_said(
    opened: Opener, tmp_path: Path, models_dir: Path
) -> None:
    data_dir = tmp_path / "data"
    async with opened.client() as client:
        facts = {
            "stated": await call(
                client,
                "remember",
                content="My dog is called Biscuit",
                source="user_edit",
                entities=["Biscuit"],
            ),
            "ordinary": await call(client, "remember", content="The office plants need water on Mondays"),
            "confirmed": await call(client, "remember", content="Maria's birthday is on 3 March"),
            "ephemeral": await call(
                client, "remember", content="I am in a meeting with the auditors until 3pm", ttl="ephemeral"
            ),
        }
        await call(client, "confirm", fact_id=facts["confirmed"]["id"])
        wrong = await call(client, "remember", content="The team offsite is in Porto")
        facts["corrected"] = await call(
            client, "correct", fact_id=wrong["id"], content="The team offsite is in Lisbon"
        )
        for filler in FACTS:
            await call(client, "remember", **filler)
        questions = {
            "stated": "what is my dog called",
            "ordinary": "when do the plants need water",
            "confirmed": "when is Maria's birthday",
            "ephemeral": "am I in a meeting with the auditors",
            "corrected": "where is the team offsite",
        }
        found_today = {
            name: [h["id"] for h in (await call(client, "search", query=q, limit=3))["results"]]
            for name, q in questions.items()
        }
        for name, fact in facts.items():
            assert fact["id"] in found_today[name], name
        statuses_today = (await call(client, "explain", fact_id=facts["stated"]["id"]))["fact"]["status"]
    opened.close()

    later = datetime.now(UTC) + timedelta(days=730)
    preview = run_cli(data_dir, models_dir, "maintain", "--now", later.isoformat(), "--dry-run", "--json")
    assert preview.returncode == 0, preview.stderr
    previewed = json.loads(preview.stdout)
    assert previewed["dry_run"] is True and previewed["expired"] == 1
    becomes = {c["id"]: c["becomes"] for c in previewed["changes"]}
    assert becomes[facts["ephemeral"]["id"]] == "retracted"
    assert becomes[facts["stated"]["id"]] == becomes[facts["ordinary"]["id"]] == "dormant"
    assert facts["confirmed"]["id"] not in becomes
    text = run_cli(data_dir, models_dir, "maintain", "--now", later.isoformat(), "--dry-run")
    assert "would become dormant: My dog is called Biscuit" in text.stdout

    async with opened.client() as client:  # the preview wrote nothing
        stats = json.loads((await client.read_resource("memory://stats")).contents[0].text)  # type: ignore[union-attr]
        assert stats["last_maintenance"] is None and "dormant" not in stats["by_status"]
        assert (await call(client, "explain", fact_id=facts["stated"]["id"]))["fact"][
            "status"
        ] == statuses_today
    opened.close()

    done = run_cli(data_dir, models_dir, "maintain", "--now", later.isoformat(), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {c["id"]: c["becomes"] for c in report["changes"]} == becomes
    assert report["now"].startswith(later.date().isoformat())

    # What the user stated, corrected or confirmed is found wherever it was found today; the best
    # answer too, even an ordinary one gone dormant (others may rank lower: fading lowers rank).
    kept = {facts[n]["id"] for n in ("stated", "corrected", "confirmed")}
    async with opened.client() as client:
        for name, question in questions.items():
            found = [h["id"] for h in (await call(client, "search", query=question, limit=3))["results"]]
            if name == "ephemeral":
                assert facts[name]["id"] not in found
            else:
                assert facts[name]["id"] in found, name
                assert set(found_today[name]) & kept <= set(found), name
        status = {
            n: (await call(client, "explain", fact_id=f["id"]))["fact"]["status"] for n, f in facts.items()
        }
        assert status == {
            "stated": "dormant",
            "ordinary": "dormant",
            "confirmed": "confirmed",
            "ephemeral": "retracted",
            "corrected": "dormant",
        }
        stats = json.loads((await client.read_resource("memory://stats")).contents[0].text)  # type: ignore[union-attr]
        ran_at = datetime.fromisoformat(stats["last_maintenance"].replace("Z", "+00:00"))
        assert ran_at <= datetime.now(UTC)  # --now is never stored

        woken = await call(client, "mark_used", fact_ids=[facts["stated"]["id"]])
        assert woken["facts"][0]["status"] == "staged"
