"""Reads of the embedded graph keep no memory: ladybug 0.22 leaks the Python object it makes
for each TIMESTAMP or DATE value it returns (~40 B a value, ~300 B a fact read, 27 MB a
consolidate at 100k facts), so the graph reads times as text (``KuzuSession.returning``)."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hippograph.domain.models import EdgeType, Entity
from hippograph.store.graph import KuzuGraphStore
from testkit.facts import make_fact

pytestmark = pytest.mark.embedded

T0 = datetime(2026, 2, 1, 9, 30, 15, 123456, tzinfo=UTC)


def test_reading_facts_entities_and_edges_again_and_again_keeps_no_memory(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32)
    try:
        timed = dict(event_time=T0, last_accessed=T0, believed_until=T0, expires_at=T0, last_stated=T0)
        facts = [
            dataclasses.replace(make_fact(f"note {i}", id=f"f_{i:016x}", at=T0), **timed) for i in range(100)
        ]
        people = [
            Entity(
                id=f"e_{i:016x}",
                name=f"P{i}",
                type="person",
                scope="global",
                first_seen=T0,
                last_mentioned=T0,
            )
            for i in range(50)
        ]
        with graph.transaction():
            graph.insert_facts(facts)
            graph.insert_entities(people)
        graph.link_facts_many(
            EdgeType.NEXT.value, [(a.id, b.id, T0, {}) for a, b in itertools.pairwise(facts)]
        )

        def read() -> None:
            assert list(graph.all_facts()) == facts
            assert len(list(graph.active_facts())) == 100
            assert graph.entities([p.id for p in people]) == {p.id: p for p in people}
            assert len(graph.all_entities()) == 50
            assert {e.props["created_at"] for e in graph.census.all_edges()} == {T0.replace(tzinfo=None)}

        read()  # statements prepared once
        tracemalloc.start()
        try:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(10):
                read()
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        # 10 rounds of ~1,500 times each: a leak of even 4 B a time would keep 60 KB.
        assert kept < 16_000, f"{kept} bytes kept after reading the same rows again"
    finally:
        graph.close()
