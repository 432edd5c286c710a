"""Memory a user can trust over months, over MCP: reads change nothing, only evidence promotes,
fading never hides what the user said, and search looks back in valid time and record time.

(``hippograph maintain`` two years ahead, run as a process: tests/e2e/test_trust_over_time.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from mcp import Client

from hippograph.config import Settings
from hippograph.mcp_app import build_server
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from testkit.client import call, call_error

pytestmark = pytest.mark.anyio

FACTS = [
    {"content": "Ravi is allergic to peanuts", "entities": ["Ravi"], "source": "user_edit"},
    {"content": "Rumour: the Lisbon office might close next year", "confidence": 0.4},
    {"content": "Alice prefers green tea in the morning", "kind": "preference", "entities": ["Alice"]},
    {"content": "Deploys go out on Tuesdays after the standup", "kind": "procedure"},
    {"content": "We chose PostgreSQL over MySQL for Apollo", "kind": "decision", "entities": ["Apollo"]},
    {"content": "Bob: I finally fixed the flaky test", "kind": "episode", "session_id": "s1"},
]
QUESTIONS = [
    "what is Ravi allergic to",
    "is the Lisbon office closing",
    "what does Alice drink",
    "when do deploys happen",
    "which database does Apollo use",
]


@pytest.fixture
async def opened(settings: Settings, embedder: FastEmbedder) -> AsyncIterator[Opener]:
    opener = Opener(settings, embedder)
    yield opener
    opener.close()


class Opener:
    """Opens the data dir as a server would, closes it, opens it again (a restart)."""

    def __init__(self, settings: Settings, embedder: FastEmbedder) -> None:
        self.settings, self.embedder = settings, embedder
        self.memory: SharedMemory | None = None

    def client(self) -> Client:
        self.close()
        self.memory = SharedMemory.open(self.settings, embedder=self.embedder)
        return Client(build_server(self.memory))

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None


async def beliefs(client: Client, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    """What memory believes of each fact, as explain tells a client."""
    held = {}
    for fid in ids:
        x = await call(client, "explain", fact_id=fid)
        held[fid] = (
            x["fact"]["status"],
            x["fact"]["confidence"],
            x["access_count"],
            x.get("last_accessed"),
            x["relevance"]["value"],
            x.get("status_reason"),
        )
    return held


async def ranking(client: Client, query: str) -> list[tuple[str, float, str]]:
    hits = (await call(client, "search", query=query))["results"]
    return [(h["id"], h["score"], h["status"]) for h in hits]


async def test_twenty_reads_change_no_belief_nor_any_later_ranking(opened: Opener) -> None:
    async with opened.client() as client:
        ids = [(await call(client, "remember", **fact))["id"] for fact in FACTS]
        before = await beliefs(client, ids)
        first = {q: await ranking(client, q) for q in QUESTIONS}
        for i in range(20):
            question = QUESTIONS[i % len(QUESTIONS)]
            if i % 4 == 0:
                await call(client, "recall", context=question)
            elif i % 4 == 1:
                await client.read_resource("memory://context")
                await client.read_resource("memory://entity/Alice")
            else:
                assert (await call(client, "search", query=question))["results"]
        assert await beliefs(client, ids) == before
        assert {q: await ranking(client, q) for q in QUESTIONS} == first
        assert all(status == "staged" for status, *_ in before.values())
    async with opened.client() as client:  # nothing was waiting to be applied at close either
        assert await beliefs(client, ids) == before
        assert {q: await ranking(client, q) for q in QUESTIONS} == first


async def test_a_reported_use_is_evidence_and_explain_shows_it(opened: Opener) -> None:
    async with opened.client() as client:
        used = await call(client, "remember", content="Ravi is allergic to peanuts", entities=["Ravi"])
        other = await call(client, "remember", content="Ravi's desk is by the window", entities=["Ravi"])
        replies = [await call(client, "mark_used", fact_ids=[used["id"], used["id"]]) for _ in range(3)]
        assert [r["facts"] for r in replies] == [
            [{"id": used["id"], "status": "staged", "times_used": 1}],
            [{"id": used["id"], "status": "staged", "times_used": 2}],
            [{"id": used["id"], "status": "confirmed", "times_used": 3}],
        ]
        explained = await call(client, "explain", fact_id=used["id"])
        assert (explained["access_count"], explained["status_reason"]) == (3, "confirmed after 3 uses")
        assert explained["fact"]["confidence"] == 0.8  # a use is no proof of truth
        assert explained["last_accessed"] is not None

        newer = await call(client, "correct", fact_id=other["id"], content="Ravi's desk is by the door")
        message = await call_error(client, "mark_used", fact_ids=[used["id"], other["id"]])
        assert "superseded" in message and newer["id"] in message
        assert "no fact has id" in await call_error(client, "mark_used", fact_ids=["f_0123456789abcdef"])
        assert "fact_ids[1]" in await call_error(client, "mark_used", fact_ids=[used["id"], "42"])
        assert "list of fact ids" in await call_error(client, "mark_used", fact_ids=[])
        # A refused call changed nothing, not even for the good id in it.
        assert (await call(client, "explain", fact_id=used["id"]))["access_count"] == 3


async def test_as_of_answers_what_was_true_then_with_the_status_it_had(opened: Opener) -> None:
    async with opened.client() as client:
        berlin = await call(
            client,
            "remember",
            content="Alice lives in Berlin",
            subject="Alice",
            predicate="lives_in",
            object="Berlin",
            event_time="2023-01-10",
        )
        await call(client, "confirm", fact_id=berlin["id"])
        await call(client, "remember", content="Bob works at Initech", entities=["Bob"])
        paris = await call(
            client,
            "correct",
            fact_id=berlin["id"],
            content="Alice moved to Paris",
            object="Paris",
            event_time="2024-03-01",
        )

        explained = await call(client, "explain", fact_id=berlin["id"])
        assert explained["fact"]["status"] == "superseded"
        assert explained["fact"]["valid_until"] == "2024-03-01T00:00:00Z"  # the move, not the correction
        assert explained["believed_until"] == paris["created_at"]

        def alice(found: dict[str, Any]) -> list[tuple[str, str, str | None]]:
            return [
                (h["id"], h["status"], h["reasons"].get("status_now"))
                for h in found["results"]
                if h["id"] in (berlin["id"], paris["id"])
            ]

        query = "where does Alice live"
        for when in ("2023-06-01", "2023", "2024-02-29T23:00:00Z"):
            assert alice(await call(client, "search", detail=True, query=query, as_of=when)) == [
                (berlin["id"], "confirmed", "superseded")
            ], when
        # The correction of a confirmed fact starts confirmed (lifecycle.correction_of).
        assert alice(await call(client, "search", detail=True, query=query, as_of="2024-06-01")) == [
            (paris["id"], "confirmed", None)
        ]
        assert alice(await call(client, "search", detail=True, query=query, as_of="2022-12-31")) == []
        assert alice(await call(client, "search", detail=True, query=query)) == [
            (paris["id"], "confirmed", None)
        ]

        corrected_at = datetime.fromisoformat(paris["created_at"].replace("Z", "+00:00"))
        just_before = (corrected_at - timedelta(milliseconds=1)).isoformat()
        assert alice(await call(client, "search", detail=True, query=query, known_at=just_before)) == [
            (berlin["id"], "confirmed", "superseded")
        ]
        assert alice(
            await call(client, "search", detail=True, query=query, known_at=paris["created_at"])
        ) == [(paris["id"], "confirmed", None)]
        # Where memory, just before the correction, thought Alice would live in mid-2024.
        both = await call(
            client, "search", detail=True, query=query, as_of="2024-06-01", known_at=just_before
        )
        assert alice(both) == [(berlin["id"], "confirmed", "superseded")]
        only_then_confirmed = await call(
            client, "search", detail=True, query=query, as_of="2023", status=["confirmed"]
        )
        assert alice(only_then_confirmed) == [(berlin["id"], "confirmed", "superseded")]

        message = await call_error(client, "search", query=query, as_of="when Alice was young")
        assert "as_of" in message and "ISO 8601" in message
