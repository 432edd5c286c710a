"""LanceDB queries awaited in one step answer as LanceDB's synchronous API does."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

from hippograph.service.memory import Memory
from hippograph.store.lance_queries import NPROBES, REFINE, awaited, nearest_rows, scan, text_rows
from hippograph.store.vectors import Filter

pytestmark = pytest.mark.embedded

FACTS = [
    "Priya keeps the spare keys in the blue drawer.",
    "Tomasz moved the staging cluster to Vault on Tuesday.",
    "The billing service ships with ./ship.sh billing once CI is green.",
    "Ines prefers rooibos tea after 4 pm.",
    "Kafka's retention on the orders topic is 7 days (ticket OPS-112).",
    "Dana reviewed the Terraform plan for the EU region.",
    "Our team's on-call rotation switches every Monday at 09:00 UTC.",
    "Marcus said the 'blue drawer' is actually the left one.",
]
TEXTS = [
    "blue drawer",
    "Vault staging",
    "ship.sh billing",
    "OPS-112",
    '"left one"',
    "tea: 4 pm",
    "nothing here",
]


@pytest.fixture
def table(memory: Memory) -> Any:
    for i, fact in enumerate(FACTS):
        memory.remember(fact, scope="project:a" if i % 2 else "global")
    memory.vectors.flush()
    return memory.vectors._tables["facts"]


def _rows(arrow: Any, score: str) -> list[tuple[str, float]]:
    return [(r["id"], round(float(r[score]), 5)) for r in arrow.to_pylist()]


FILTERS = [None, Filter(scopes=["global"]), Filter(scopes=["project:a"], statuses=["staged"])]


@pytest.mark.parametrize("where", FILTERS)
def test_a_vector_query_returns_the_rows_the_sync_api_does(
    memory: Memory, table: Any, where: Filter | None
) -> None:
    clause = where.sql() if where else None
    for text in TEXTS:
        vector = np.asarray(memory.embedder.embed([text])[0], dtype=np.float32)
        sync = table.search(vector).distance_type("cosine").limit(5).nprobes(NPROBES).refine_factor(REFINE)
        sync = sync.where(clause, prefilter=True) if clause else sync
        expected = _rows(sync.select(["id", "_distance"]).to_arrow(), "_distance")
        got = nearest_rows(table, vector, 5, clause, ["id", "_distance"])
        assert _rows(got, "_distance") == expected
        assert expected  # every filter admits some rows


@pytest.mark.parametrize("where", FILTERS[:2])
def test_a_text_query_returns_the_rows_the_sync_api_does(table: Any, where: Filter | None) -> None:
    clause = where.sql() if where else None
    found = 0
    for text in TEXTS:
        sync = table.search(text, query_type="fts").limit(5)
        sync = sync.where(clause, prefilter=True) if clause else sync
        expected = _rows(sync.select(["id", "_score"]).to_arrow(), "_score")
        got = _rows(awaited(text_rows(table, text, 5, clause, ["id", "_score"])), "_score")
        # Rows of equal score come back in any order, from either API: compare score by score.
        assert [s for _, s in got] == [s for _, s in expected]
        full = len(got) == 5  # then the lowest score's rows may go on past the limit
        assert _by_score(got, full) == _by_score(expected, full)
        found += len(got)
    assert found


def _by_score(rows: list[tuple[str, float]], full: bool) -> dict[float, set[str]]:
    grouped: dict[float, set[str]] = collections.defaultdict(set)
    for fid, score in rows:
        grouped[score].add(fid)
    if full:
        del grouped[rows[-1][1]]
    return dict(grouped)


@pytest.mark.parametrize("where", FILTERS)
def test_a_scan_returns_the_rows_the_sync_api_does(table: Any, where: Filter | None) -> None:
    clause = where.sql() if where else None
    sync = table.search().select(["id", "scope", "vector"]).limit(None)
    expected = (sync.where(clause) if clause else sync).to_arrow().sort_by("id")
    got = scan(table, clause, ["id", "scope", "vector"]).sort_by("id")
    assert got.num_rows and got.equals(expected)
