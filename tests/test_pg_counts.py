"""How many facts a PostgreSQL graph says it holds: counted while small, the planner's count once
large (every search asks; a count of a million rows is a scan)."""

from __future__ import annotations

import pytest

from hippograph.store import pg_graph
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_graph import PgGraphStore
from testkit.facts import make_fact


def test_a_large_graph_is_counted_by_the_planners_count(
    pg_db: PgDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = PgGraphStore(pg_db)
    with graph.transaction():
        graph.insert_facts([make_fact(f"fact {i}", id=f"f_{i:016x}") for i in range(30)])
    monkeypatch.setattr(pg_graph, "_COUNTED", 10)
    assert graph.fact_count() == 30  # never analysed: the planner has no count yet, so it counts
    with pg_db.transaction() as conn:
        conn.execute("DELETE FROM hg_fact WHERE id IN (SELECT id FROM hg_fact LIMIT 5)")
        conn.execute("ANALYZE hg_fact")  # reads every row of a small table: its count is exact
    assert graph.fact_count() == 25
    with pg_db.transaction() as conn:  # rows written since the last ANALYZE are not in its count
        conn.execute("DELETE FROM hg_fact WHERE id IN (SELECT id FROM hg_fact LIMIT 5)")
    assert graph.fact_count() == 25
    monkeypatch.setattr(pg_graph, "_COUNTED", 1_000)
    assert graph.fact_count() == 20
    graph.close()
