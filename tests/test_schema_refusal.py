"""A graph a newer hippograph wrote is refused and left as it was: by the version mark beside it,
or, where there is none (a graph from before the mark, or copied alone), by a read-only look."""

from __future__ import annotations

import hashlib
from pathlib import Path

import ladybug
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import SchemaTooNew, StoreError
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.migrations import version_mark
from hippograph.store.schema import graph_schema_version

pytestmark = pytest.mark.embedded  # the Kùzu graph's schema mark (PostgreSQL's: test_pg_store)


def _digest(data_dir: Path) -> dict[str, str]:
    return {
        str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data_dir.rglob("*"))
        if p.is_file()
    }


def _stored(settings: Settings, embedder: FastEmbedder) -> Path:
    memory = Memory.open(settings, embedder=embedder)
    memory.remember("Dana writes Rust at work")
    memory.close()
    return settings.data_dir / "graph.kuzu"


def _set_graph_version(graph: Path, version: int | str) -> None:
    db = ladybug.Database(str(graph))
    conn = ladybug.Connection(db)
    conn.execute(f"MATCH (m:Meta {{key: 'schema_version'}}) SET m.value = '{version}'")
    conn.close()
    db.close()


def test_an_open_marks_the_schema_version_beside_the_graph(
    settings: Settings, embedder: FastEmbedder
) -> None:
    graph = _stored(settings, embedder)
    assert version_mark(graph).read_text() == str(graph_schema_version())


def test_a_newer_mark_is_refused_without_opening_the_graph(
    settings: Settings, embedder: FastEmbedder
) -> None:
    graph = _stored(settings, embedder)
    version_mark(graph).write_text(str(graph_schema_version() + 1))
    before = _digest(settings.data_dir)
    with pytest.raises(SchemaTooNew, match=f"schema version {graph_schema_version() + 1}"):
        Memory.open(settings, embedder=embedder)
    assert _digest(settings.data_dir) == before


def test_a_newer_graph_without_a_mark_is_refused_untouched(
    settings: Settings, embedder: FastEmbedder
) -> None:
    graph = _stored(settings, embedder)
    _set_graph_version(graph, 99)
    version_mark(graph).unlink()
    before = _digest(settings.data_dir)
    with pytest.raises(SchemaTooNew, match="schema version 99"):
        Memory.open(settings, embedder=embedder)
    assert _digest(settings.data_dir) == before
    assert not version_mark(graph).exists()


def test_a_mark_behind_its_graph_never_lets_the_graph_be_taken_for_ours(
    settings: Settings, embedder: FastEmbedder
) -> None:
    graph = _stored(settings, embedder)
    _set_graph_version(graph, 99)  # the mark still names this version: restored from elsewhere
    with pytest.raises(SchemaTooNew, match="schema version 99"):
        Memory.open(settings, embedder=embedder)
    assert version_mark(graph).read_text() == str(graph_schema_version())
    with pytest.raises(SchemaTooNew):  # and again: the store was closed, not left locked
        Memory.open(settings, embedder=embedder)


def test_a_damaged_schema_version_is_refused_saying_so(settings: Settings, embedder: FastEmbedder) -> None:
    """Seen once on a 1M-fact store (2026-11-29): the Meta table's strings read shifted ('7f')."""
    graph = _stored(settings, embedder)
    _set_graph_version(graph, "7f")
    with pytest.raises(
        StoreError, match="schema version reads '7f', not a number: its Meta table is damaged"
    ):
        Memory.open(settings, embedder=embedder)
