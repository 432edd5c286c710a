"""A rebuild (the compaction at close, the end of a purge) copies the whole graph in a page cache
far smaller than it: EXPORT DATABASE built each table's file in the pool, and failed at 100k
facts with the default pool, and at 16k facts with a 64 MiB pool (the scale used here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hippograph.domain.errors import StoreError
from hippograph.store import graph_copy
from hippograph.store.graph_copy import copy_graph, tables
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.migrations import migrate, schema_version
from hippograph.store.schema import graph_schema_version

_POOL = 64 << 20
_FACTS = 16_000


def _fill(session: KuzuSession, facts: int) -> None:
    """``facts`` facts of ~200 bytes, each about two of a hundred entities, some tagged and
    superseded, written in batches the way a bulk import does."""
    session.run(
        "UNWIND range(0, 99) AS i "
        "CREATE (:Entity {id: 'e' + CAST(i AS STRING), name: 'Person ' + CAST(i AS STRING)})"
    )
    for start in range(0, facts, 2_000):
        session.run(
            "UNWIND range($lo, $hi) AS i CREATE (:Fact {id: 'f' + CAST(i AS STRING), "
            "content: 'Person ' + CAST(i AS STRING) + ' reviewed the Terraform plan for sprint ' "
            "+ CAST(i AS STRING) + ', then wrote up what the team decided about the rollout window', "
            "status: 'active', tags: ['review'], created_at: timestamp('2026-01-01T00:00:00')})",
            {"lo": start, "hi": start + 1_999},
        )
        about = [
            {"f": f"f{i}", "e": f"e{(i + hop) % 100}"} for i in range(start, start + 2_000) for hop in (0, 37)
        ]
        session.run(
            "UNWIND $rows AS r MATCH (f:Fact {id: r.f}) MATCH (e:Entity {id: r.e}) "
            "CREATE (f)-[:ABOUT {role: 'subject'}]->(e)",
            {"rows": about},
        )
    session.run("CREATE (:Tag {name: 'review'})")
    session.run("MATCH (f:Fact), (t:Tag) WHERE f.id IN ['f1', 'f2'] CREATE (f)-[:HAS_TAG]->(t)")
    session.run(
        "MATCH (a:Fact {id: 'f2'}), (b:Fact {id: 'f1'}) CREATE (a)-[:SUPERSEDES {reason: 'moved'}]->(b)"
    )


def _contents(session: KuzuSession) -> dict[str, list[object]]:
    return {
        "facts": [
            tuple(row.values())
            for row in session.run(
                "MATCH (f:Fact) RETURN f.id, f.content, f.tags, f.created_at ORDER BY f.id"
            )
        ],
        "about": [
            tuple(row.values())
            for row in session.run(
                "MATCH (f:Fact)-[a:ABOUT]->(e:Entity) RETURN f.id, e.id, a.role ORDER BY f.id, e.id"
            )
        ],
        "other": sorted(
            tuple(row.values())
            for row in session.run(
                "MATCH (a:Fact)-[r:SUPERSEDES]->(b:Fact) RETURN a.id, b.id, r.reason "
                "UNION ALL MATCH (f:Fact)-[:HAS_TAG]->(t:Tag) RETURN f.id, t.name, '' "
                "UNION ALL MATCH (m:Meta) RETURN m.key, m.value, ''"
            )
        ),
    }


def test_a_store_far_larger_than_the_page_cache_is_rebuilt_whole_and_stays_usable(tmp_path: Path) -> None:
    path = tmp_path / "graph.lbug"
    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        migrate(session)
        _fill(session, _FACTS)
        before = _contents(session)
        assert len(before["facts"]) == _FACTS and len(before["about"]) == 2 * _FACTS

        session.rebuild()

        assert _contents(session) == before
        assert schema_version(session) >= 4
        session.run("CREATE (:Fact {id: 'after', content: 'written after the rebuild'})")
        assert session.run("MATCH (f:Fact {id: 'after'}) RETURN f.content AS c") == [
            {"c": "written after the rebuild"}
        ]
    finally:
        session.close()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".export", ".rebuild"))]


def test_a_copy_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    session = KuzuSession(tmp_path / "graph.lbug", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    export, fresh = tmp_path / "slices", tmp_path / "new.lbug"
    try:
        migrate(session)
        _fill(session, 2_000)

        def refuse(path: Path) -> object:
            raise RuntimeError(f"cannot open {path}")

        with session.lock, pytest.raises(RuntimeError, match="cannot open"):
            copy_graph(session._conn, export, fresh, refuse, _POOL)  # type: ignore[arg-type]
        assert not export.exists() and not fresh.exists()
        assert [t.name for t in tables(session._conn)][:2] == ["Entity", "Fact"]
    finally:
        session.close()


def test_a_rebuild_killed_in_its_new_files_checkpoint_does_not_stop_the_next_one(tmp_path: Path) -> None:
    """A process killed while its new file checkpointed leaves ``<new>.wal.checkpoint``, which
    ladybug refuses beside any other database ("Database ID for temporary file ... does not
    match"): kept, every later compaction and purge would fail. Made here from another live
    database's log, which ladybug writes in the same form."""
    other = tmp_path / "other.lbug"
    session = KuzuSession(other, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        session.run("CREATE NODE TABLE T(id STRING PRIMARY KEY)")
        session.run("CREATE (:T {id: 'x'})")
        stale = (Path(f"{other}.wal")).read_bytes()
    finally:
        session.close()
    path = tmp_path / "graph.lbug"
    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        migrate(session)
        _fill(session, 500)
        before = _contents(session)
        leftover = Path(f"{path}.rebuild.wal.checkpoint")  # where ``rebuild`` makes its new file
        leftover.write_bytes(stale)

        session.rebuild()

        assert _contents(session) == before
        assert not leftover.exists()
    finally:
        session.close()


def test_a_copy_whose_small_tables_read_back_otherwise_is_not_swapped_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 1M facts a rebuilt graph's Meta once read back shifted by a character ('7f' for '7'):
    Meta, the entities and the tags are compared row by row before the new file replaces the old."""
    path = tmp_path / "graph.lbug"
    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    imported = graph_copy.import_slices

    def garbling(conn: Any, *args: Any) -> None:
        imported(conn, *args)
        conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = m.value + 'f'")

    try:
        migrate(session)
        _fill(session, 500)
        before = _contents(session)
        monkeypatch.setattr(graph_copy, "import_slices", garbling)
        with pytest.raises(StoreError, match="small tables"):
            session.rebuild()
        assert _contents(session) == before
        assert schema_version(session) == graph_schema_version()
    finally:
        session.close()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".export", ".rebuild"))]
