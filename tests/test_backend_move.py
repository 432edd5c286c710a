"""Moving a memory between the backends (issue 27): an embedded memory exported and imported into
PostgreSQL, and back, keeps every count and answers the same questions with the same top 10."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.service.transfer import export, import_hippograph
from hippograph.store.embed import FastEmbedder

PEOPLE = ["Alice", "Bogdan", "Chiara", "Dmitri", "Esi", "Farah"]
DOINGS = [
    "went hiking",
    "baked sourdough bread",
    "fixed the kitchen sink",
    "read a novel about whales",
    "practised the cello",
    "planted tomatoes",
    "repaired a bicycle",
    "painted the fence",
]
PLACES = ["in Oslo", "in Lima", "at the lake house", "at a cousin's flat", "near the harbour"]
DAYS = ["on Monday", "on Friday", "last weekend", "yesterday"]
QUESTIONS = [
    "Who went hiking?",
    "What did Chiara do in Lima?",
    "Who bakes bread?",
    "bicycle repair",
    "What happened at the lake house?",
    "Which instrument does Esi play?",
    "garden vegetables",
    "What did Farah do last weekend?",
    "whales",
    "Who painted something?",
]


def _fill(memory: Memory) -> None:
    """Facts and conversation turns in two scopes, tags, a correction and a forgotten fact."""
    for i, (person, doing) in enumerate(itertools.product(PEOPLE, DOINGS)):
        memory.remember(
            f"{person} {doing} {PLACES[i % 5]} {DAYS[i % 4]}.",
            kind="episode" if i % 2 else "fact",
            session_id=f"chat-{i % 3}" if i % 2 else None,
            scope="project:garden" if i % 7 == 0 else "global",
            tags=["hobby"] if i % 5 == 0 else None,
        )
    moved = memory.remember("Esi lives in Accra.")
    memory.correct("Esi lives in Kumasi now.", fact_id=moved.id)
    memory.forget(memory.remember("Bogdan's locker code was changed.").id)


def _exported(memory: Memory) -> list[str]:
    out = io.StringIO()
    export(memory.stores, out)
    return out.getvalue().splitlines()


def _answers(memory: Memory) -> dict[tuple[str, str], list[str]]:
    return {
        (q, scope): [h.id for h in memory.search(q, scope=scope, limit=10).results]
        for q in QUESTIONS
        for scope in ("global", "project:garden")
    }


def _counts(memory: Memory) -> dict[str, int]:
    return {**memory.graph.census.counts(), "indexed": memory.vectors.count("facts")}


@pytest.fixture
def opened(embedder: FastEmbedder, base_settings: Settings, tmp_path: Path) -> Iterator[list[Memory]]:
    memories: list[Memory] = []
    yield memories
    for memory in memories:
        memory.close()


def test_a_memory_moved_to_postgresql_and_back_keeps_its_counts_and_answers(
    opened: list[Memory], embedder: FastEmbedder, base_settings: Settings, tmp_path: Path, pg_url: str
) -> None:
    def open_memory(name: str, url: str | None = None) -> Memory:
        settings = base_settings.model_copy(
            update={"data_dir": tmp_path / name, "store_url": SecretStr(url) if url else None}
        )
        opened.append(Memory.open(settings, embedder=embedder))
        return opened[-1]

    embedded = open_memory("embedded")
    _fill(embedded)
    lines = _exported(embedded)
    in_postgres = open_memory("postgres", pg_url)
    report = import_hippograph(in_postgres.stores, in_postgres.upkeep, lines)
    back = open_memory("back")
    import_hippograph(back.stores, back.upkeep, _exported(in_postgres))

    assert report.skipped_existing == 0 and report.facts_added == sum('"type": "fact"' in x for x in lines)
    assert _counts(in_postgres) == _counts(embedded) == _counts(back)
    assert _exported(in_postgres)[1:] == lines[1:] == _exported(back)[1:]  # the header has the time
    # LanceDB ranks rows not yet folded into its full-text index with other statistics than
    # folded ones: the embedded memories answer from folded indexes, as after a server's upkeep.
    embedded.vectors.optimize()
    back.vectors.optimize()
    expected = _answers(embedded)
    assert all(expected.values())
    assert _answers(in_postgres) == expected
    assert _answers(back) == expected
