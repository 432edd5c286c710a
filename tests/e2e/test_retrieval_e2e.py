"""Issue 4 over a real stdio server: graph paths, why-questions, date filters, narrative budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.client import call, stdio_session

pytestmark = pytest.mark.anyio

DISTRACTORS = [
    "The office coffee machine was replaced in spring",
    "Quarterly taxes are due on the fifteenth",
    "The team prefers tabs over spaces in Go code",
    "Our CI runs on two cores with 24 GiB of memory",
    "The staging database is PostgreSQL 15",
    "Weekly planning happens on Monday mornings",
    "The design review template lives in the wiki",
    "Marketing wants a new landing page by summer",
]


async def _remember_all(session, contents: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    return [(await call(session, "remember", content=c))["id"] for c in contents]


async def test_fact_sharing_no_words_comes_back_via_its_entity(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        await _remember_all(session, DISTRACTORS)
        hidden = await call(
            session, "remember", content="He adopted a greyhound last spring", entities=["Bob"]
        )
        hits = (await call(session, "search", query="Tell me about Bob", limit=5, detail=True))["results"]
        hit = next(h for h in hits if h["id"] == hidden["id"])
        graph = hit["reasons"]["graph"]
        assert graph["edge"] == "ABOUT"
        assert graph["via_entity"] == "Bob"
        assert graph["hops"] == 1


async def test_two_hop_path_through_a_shared_entity(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        await _remember_all(session, DISTRACTORS)
        await call(session, "remember", content="Carol works at Acme", entities=["Carol", "Acme"])
        roof = await call(
            session, "remember", content="Its headquarters has a rooftop garden", entities=["Acme"]
        )
        hits = (await call(session, "search", query="Where is Carol employed?", limit=10, detail=True))[
            "results"
        ]
        hit = next(h for h in hits if h["id"] == roof["id"])
        assert hit["reasons"]["graph"]["via_entity"] == "Acme"


async def test_why_question_follows_a_causes_link(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        await _remember_all(session, DISTRACTORS)
        cause = await call(session, "remember", content="The build server ran out of disk space")
        effect = await call(session, "remember", content="The nightly release failed on Tuesday")
        await call(session, "link", from_id=cause["id"], to_id=effect["id"], relation="causes")
        hits = (
            await call(session, "search", query="Why did the nightly release fail?", limit=5, detail=True)
        )["results"]
        assert hits[0]["id"] == effect["id"]
        hit = next(h for h in hits if h["id"] == cause["id"])
        assert hit["reasons"]["graph"]["edge"] == "CAUSES"
        assert hit["reasons"]["graph"]["from"] == effect["id"]


async def test_date_filters_exclude_out_of_range_facts(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        may = await call(session, "remember", content="Jon opened his dance studio", event_time="2023-05-08")
        jan = await call(
            session, "remember", content="Jon hired a second dance teacher", event_time="2024-01-10"
        )
        later = await call(session, "search", query="Jon dance studio", after="2024-01-01")
        assert [h["id"] for h in later["results"]] == [jan["id"]]
        earlier = await call(session, "search", query="Jon dance studio", before="2023-12-31")
        assert [h["id"] for h in earlier["results"]] == [may["id"]]
        in_may = await call(session, "search", query="Jon dance studio", after="May 2023", before="May 2023")
        assert [h["id"] for h in in_may["results"]] == [may["id"]]
        assert in_may["results"][0]["time"] == "2023-05-08"


async def test_search_filters_by_kind_entity_and_tags(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        step = await call(
            session,
            "remember",
            content="Deploy Apollo with make release",
            kind="procedure",
            entities=["Apollo"],
        )
        pref = await call(
            session, "remember", content="Apollo releases should happen on Thursdays", tags=["ops"]
        )
        kinds = await call(session, "search", query="Apollo release", kind=["procedure"])
        assert [h["id"] for h in kinds["results"]] == [step["id"]]
        tagged = await call(session, "search", query="Apollo release", tags=["ops"])
        assert [h["id"] for h in tagged["results"]] == [pref["id"]]
        about = await call(session, "search", query="release", entity="apollo")
        assert {h["id"] for h in about["results"]} == {step["id"], pref["id"]}


async def test_a_large_budget_leaves_room_for_every_section(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        for i in range(25):
            await call(
                session,
                "remember",
                content=f"Nadia visited museum number {i} in Vienna and wrote a note about its paintings",
                entities=["Nadia", "Vienna"],
                event_time=f"2024-03-{i + 1:02d}",
            )
        big = await call(session, "recall", context="Nadia's trip to Vienna", budget_tokens=2000)
        for section in ("## Facts", "### Nadia", "## Entities", "## Timeline", "## Evidence"):
            assert section in big["narrative"]


async def test_context_resources_serve_the_narrative(tmp_path: Path, models_dir: Path) -> None:
    async with stdio_session(tmp_path / "data", models_dir) as session:
        await call(session, "remember", content="Omar prefers window seats on flights", entities=["Omar"])
        general = await session.read_resource("memory://context")
        assert "Omar prefers window seats" in general.contents[0].text  # type: ignore[union-attr]
        specific = await session.read_resource("memory://context/Omar%20flights")
        assert "window seats" in specific.contents[0].text  # type: ignore[union-attr]
