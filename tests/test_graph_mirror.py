"""The graph index (the graph's shape in SQLite) agrees with Kùzu after every kind of write, and
across closes and crashes."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
from pathlib import Path

import pytest

from hippograph.config import MEMORY_BUDGET_MIN
from hippograph.domain.models import FACT_EDGES, Entity
from hippograph.service.memory import Memory
from hippograph.store.cache_budget import CacheBudget
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.graph_index import GraphIndex
from hippograph.store.index_view import IndexView
from hippograph.store.seam import EVERYWHERE
from testkit.facts import make_fact

pytestmark = pytest.mark.embedded  # the Kùzu store's own read model and statements


def _workload(memory: Memory) -> dict[str, str]:
    """Every write path the service has: entities, tags, sessions, conflicts, links, lifecycle."""
    ids: dict[str, str] = {}
    ids["lisbon"] = memory.remember(
        "Maya lives in Lisbon",
        entities=["Maya"],
        subject="Maya",
        predicate="lives_in",
        object="Lisbon",
        tags=["home"],
        source="user_edit",
    ).id
    ids["porto"] = memory.remember(
        "Maya moved to Porto",
        subject="Maya",
        predicate="lives_in",
        object="Porto",
        tags=["home", "move"],
        source="user_edit",
    ).id
    ids["guess"] = memory.remember("Maya probably lives in Braga", subject="Maya", predicate="lives_in").id
    ids["turn1"] = memory.remember("We chose Postgres for billing", session_id="s1", tags=["db"]).id
    ids["turn2"] = memory.remember("Because Kùzu lacks replication", session_id="s1", tags=["db"]).id
    ids["tea"] = memory.remember("Maya prefers green tea", entities=["Maya", "Green tea"]).id
    memory.link(ids["turn2"], ids["turn1"], "causes")
    memory.link(ids["tea"], ids["lisbon"], "relates_to", weight=0.4)
    ids["fixed"] = memory.correct("Maya prefers jasmine tea", fact_id=ids["tea"]).id
    memory.forget(ids["guess"], reason="a guess")
    memory.confirm(ids["porto"])
    memory.maintain()
    return ids


def test_mirror_matches_the_stored_graph_after_every_kind_of_write(memory: Memory) -> None:
    ids = _workload(memory)

    assert memory.graph.check_mirror(repair=False) == []
    # And the walk sees what was written: the causal link, both ways, and the session chain.
    edges = {(e.type, e.src, e.dst) for e in memory.graph.view(EVERYWHERE).fact_edges([ids["turn1"]])}
    assert ("CAUSES", ids["turn2"], ids["turn1"]) in edges
    assert ("NEXT", ids["turn1"], ids["turn2"]) in edges
    assert (
        memory.graph.view(EVERYWHERE).facts_about(
            memory.entities.resolve("Maya", "global").id,  # type: ignore[union-attr]
            limit=10,
            statuses=("staged", "confirmed"),
        )[0]
        == ids["fixed"]
    )


def test_mirror_survives_a_reopen_unchanged(memory: Memory) -> None:
    ids = _workload(memory)
    before = memory.graph.read.snapshot()
    counts = (memory.graph.read.fact_count(), memory.graph.read.scopes_written())
    settings, embedder = memory.settings, memory.embedder
    memory.close()

    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.graph.read.snapshot() == before
        # The fact count and scopes as the clean close kept them (not scanned), and no longer
        # kept once the file may go stale.
        assert (reopened.graph.read.fact_count(), reopened.graph.read.scopes_written()) == counts
        assert reopened.graph.read.db.execute(
            "SELECT count(*) FROM meta WHERE key = 'fact_count'"
        ).fetchone() == (0,)
        assert reopened.search("where does Maya live").results[0].id == ids["porto"]
    finally:
        reopened.close()


def test_conflict_lookup_follows_status_changes_and_reopening(memory: Memory) -> None:
    ids = _workload(memory)
    key = ("maya", "lives_in", "global")

    # Lisbon was superseded by Porto, the guess was forgotten: Porto alone is active.
    assert [f.id for f in memory.graph.active_facts_with([key])[key]] == [ids["porto"]]
    later = memory.remember(
        "MAYA now lives in Faro", subject="MAYA", predicate="LIVES_IN", object="Faro", source="user_edit"
    )
    assert later.superseded == [ids["porto"]]
    assert [f.id for f in memory.graph.active_facts_with([key])[key]] == [later.id]

    settings, embedder = memory.settings, memory.embedder
    memory.close()
    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert [f.id for f in reopened.graph.active_facts_with([key])[key]] == [later.id]
        assert reopened.graph.check_mirror(repair=False) == []
    finally:
        reopened.close()


def test_a_rolled_back_write_never_reaches_the_mirror(memory: Memory) -> None:
    kept = memory.remember("Kept fact about Ada", entities=["Ada"]).id
    before = memory.graph.read.snapshot()
    fact = memory.graph.get_fact(kept)
    assert fact is not None

    with pytest.raises(RuntimeError), memory.graph.transaction():
        memory.graph.link_facts("RELATES_TO", kept, kept, fact.created_at, relation="self", weight=1.0)
        memory.graph.tag_fact(kept, ["rolled-back"])
        raise RuntimeError("the write fails half way")

    assert memory.graph.read.snapshot() == before
    assert memory.graph.check_mirror(repair=False) == []
    assert memory.graph.view(EVERYWHERE).fact_edges([kept], FACT_EDGES) == []


def test_a_rolled_back_write_of_several_keyed_rows_leaves_nothing(memory: Memory) -> None:
    # A few rows are written one keyed statement each (KuzuSession.for_each): all-or-nothing still.
    kept = memory.remember("Kept fact about Ada", entities=["Ada"]).id
    other = memory.remember("Another fact about Ada", entities=["Ada"]).id
    ada = memory.entities.resolve("Ada", "global")
    assert ada is not None
    before = memory.graph.read.snapshot()

    with pytest.raises(RuntimeError), memory.graph.transaction():
        memory.graph.tag_facts([(kept, "one"), (kept, "two"), (other, "one")])
        memory.graph.link_about_many([(kept, ada.id, "mention"), (other, ada.id, "mention")])
        raise RuntimeError("the write fails half way")

    assert memory.graph.read.snapshot() == before
    assert memory.graph.check_mirror(repair=False) == []


def test_doctor_finds_and_repairs_a_drifted_mirror(memory: Memory) -> None:
    ids = _workload(memory)
    memory.graph.read.set_status(ids["porto"], "retracted")  # simulate drift

    report = memory.doctor()

    assert report["graph_mirror_repaired"] == ["graph index facts: 1 extra, 1 missing"]
    assert memory.graph.check_mirror(repair=False) == []


def test_doctor_finds_and_drops_a_stale_cached_fact(memory: Memory) -> None:
    ids = _workload(memory)
    cached = memory.graph.get_fact(ids["porto"])
    assert cached is not None
    memory.graph._facts.put([dataclasses.replace(cached, confidence=0.1)])  # simulate drift

    assert memory.doctor()["graph_mirror_repaired"] == ["fact cache: 1 stale"]
    fact = memory.graph.get_fact(ids["porto"])
    assert fact is not None and fact.confidence == cached.confidence


def test_mirror_matches_the_stored_graph_after_a_batched_write(memory: Memory) -> None:
    memory.remember_many(
        [
            {"content": "Ada leads the billing team", "entities": ["Ada", "Billing"], "tags": ["team"]},
            {"content": "Ada lives in Oslo", "subject": "Ada", "predicate": "lives_in", "object": "Oslo"},
            {
                "content": "Ada moved to Bergen",
                "subject": "Ada",
                "predicate": "lives_in",
                "object": "Bergen",
                "source": "user_edit",
                "tags": ["team", "move"],
            },
            {"content": "First turn", "session_id": "s9"},
            {"content": "Second turn", "session_id": "s9"},
        ]
    )

    assert memory.graph.check_mirror(repair=False) == []


def test_related_entities_come_strongest_first_and_follow_new_links() -> None:
    model = GraphIndex(":memory:")
    model.load_entities([Entity(id=f"e_{n}", name=n.upper(), type="concept", scope="global") for n in "abc"])
    mirror = IndexView(model, EVERYWHERE)
    model.link_entities("e_a", "e_b", {"weight": 0.5})
    model.link_entities("e_a", "e_c", {"weight": 0.9})
    assert mirror.related_entities(["e_a"], limit=5) == [("e_a", "e_c", 0.9), ("e_a", "e_b", 0.5)]
    model.link_entities("e_b", "e_a", {"weight": 1.0})  # a stronger link, the other way round
    assert mirror.related_entities(["e_a"], limit=1) == [("e_a", "e_b", 1.0)]
    model.delete_entities(["e_b"])
    assert mirror.related_entities(["e_a"], limit=5) == [("e_a", "e_c", 0.9)]


def test_the_fact_cache_keeps_to_its_budget_and_reads_the_rest_from_the_graph(tmp_path: Path) -> None:
    budget = 3_000  # three of these facts (fact_cache.fact_bytes: ~850 B each)
    cache = dataclasses.replace(CacheBudget.split(MEMORY_BUDGET_MIN), facts=budget)
    graph = KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32, cache=cache)
    try:
        facts = [
            make_fact(f"Note {n}: the quarterly review moved to room {n}", id=f"f_{n:02d}") for n in range(12)
        ]
        for fact in facts:  # one commit each, as remembers
            graph.insert_facts([fact])

        held, held_bytes = graph._facts.held_bytes()
        assert 0 < held <= 3 and held_bytes <= budget
        read = graph.get_facts([f.id for f in facts])
        assert [read[f.id].content for f in facts] == [f.content for f in facts]
        assert graph._facts.held_bytes()[1] <= budget
        held = set(graph._facts.get([f.id for f in facts]))
        # A pass over many facts (consolidate) reads them and leaves the cache as it was.
        others = [f.id for f in facts if f.id not in held]
        assert graph.get_facts(others, keep=False) == {fid: read[fid] for fid in others}
        assert set(graph._facts.get([f.id for f in facts])) == held
        assert graph.check_mirror(repair=False) == []
    finally:
        graph.close()


def test_the_entity_index_follows_every_commit_and_doctor_repairs_drift(memory: Memory) -> None:
    _workload(memory)
    stored = {entity.id: entity for entity in memory.graph.all_entities()}
    maya = next(entity for entity in stored.values() if entity.name == "Maya")
    assert memory.entities.get(maya.id) == maya  # mention counts included
    assert memory.graph.check_mirror(repair=False) == []

    with memory.graph.read.lock:  # simulate drift: the index lost Maya, and miscounts another
        memory.graph.read.db.execute("DELETE FROM entity WHERE id = ?", (maya.id,))
        memory.graph.read.db.execute("UPDATE entity SET mentions = mentions + 5 WHERE id != ?", (maya.id,))
    assert memory.entities.resolve("Maya", maya.scope) is None
    repaired = memory.doctor()["graph_mirror_repaired"]
    assert repaired == [f"graph index entities: {len(stored) - 1} extra, {len(stored)} missing"]
    assert memory.entities.resolve("Maya", maya.scope) == maya
    assert {e.id: memory.entities.get(e.id) for e in stored.values()} == stored


def _small_graph(path: Path, start: int, count: int) -> None:
    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:
        people = [Entity(id=f"e_{n}", name=f"Person {n}", type="person", scope="global") for n in range(5)]
        facts = [
            make_fact(f"note {n}", id=f"f_{n:06d}", subject=f"P{n % 5}", predicate="wrote", tags=("t",))
            for n in range(start, start + count)
        ]
        with graph.transaction():
            if start == 0:
                graph.insert_entities(people)
            graph.insert_facts(facts)
            graph.link_about_many([(f.id, f"e_{n % 5}", "subject") for n, f in enumerate(facts)])
            graph.tag_facts([(f.id, "t") for f in facts])
    finally:
        graph.close()


def test_the_index_is_kept_across_a_clean_close_and_built_again_when_it_may_be_stale(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    _small_graph(path, 0, 50)
    index = tmp_path / "graph.kuzu.index"
    shutil.copy(index, tmp_path / "old.index")  # the index as it was after the first close
    _small_graph(path, 50, 30)  # opened from the kept index, and written to

    # A crash leaves an index that no longer says it matches (or one from before later writes):
    # either way the next open builds it from the graph, and it holds all 80 facts.
    shutil.copy(tmp_path / "old.index", index)
    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:
        assert graph.fact_count() == 80
        assert len(graph.view(EVERYWHERE).facts_about("e_1", limit=100, statuses=["staged"])) == 16
        assert graph.check_mirror(repair=False) == []
    finally:
        graph.close()

    index.unlink()  # a file of an older layout is made afresh and built
    old = sqlite3.connect(index)
    old.execute("CREATE TABLE link(seq INTEGER PRIMARY KEY, type TEXT, src TEXT, dst TEXT, props TEXT)")
    old.commit()
    old.close()
    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:
        assert graph.fact_count() == 80 and graph.check_mirror(repair=False) == []
        assert graph.view(EVERYWHERE).fact_edges(["f_000001"]) == []
    finally:
        graph.close()

    index.write_bytes(b"not a database at all" * 100)  # a damaged file is built again too
    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:
        assert graph.fact_count() == 80 and graph.check_mirror(repair=False) == []
    finally:
        graph.close()


def test_a_commit_the_index_missed_makes_the_next_open_build_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "graph.kuzu"
    _small_graph(path, 0, 10)
    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:

        def disk_full(*args: object) -> None:
            raise OSError("No space left on device")

        monkeypatch.setattr(graph.read, "add_fact", disk_full)
        with pytest.raises(OSError, match="No space"):
            graph.insert_facts([make_fact("written while the disk was full", id="f_late")])
        monkeypatch.undo()
        assert graph.read.stale  # the graph has the fact, the index does not
    finally:
        graph.close()

    graph = KuzuGraphStore(path, max_db_size=1 << 32)
    try:
        assert graph.fact_count() == 11 and not graph.read.stale
        assert graph.check_mirror(repair=False) == []
    finally:
        graph.close()
