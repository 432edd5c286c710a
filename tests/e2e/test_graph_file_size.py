"""The graph file stays small for a small memory: a store grown bloated by kuzu's checkpoints is
rewritten compactly at close, with everything it held (issue 16: 49 MB for 46 facts)."""

from __future__ import annotations

import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.service.upkeep import COMPACT_FLOOR
from hippograph.store.embed import FastEmbedder
from hippograph.store.schema import graph_schema_version
from hippograph.store.seam import COMPACT_BYTES

pytestmark = pytest.mark.embedded  # the embedded graph's file


def _session(memory: Memory, n: int) -> None:
    """Five facts using every kind of edge: entities, a relation, tags, a session, links, a
    correction and a contradiction, as a user's first conversations might."""
    ids = [
        memory.remember(
            f"Person{n}{i} lives in City{n}{i}",
            subject=f"Person{n}{i}",
            predicate="lives_in",
            object=f"City{n}{i}",
            entities=[f"Person{n}{i}", f"City{n}{i}"],
            tags=[f"tag{i % 2}"],
            session_id=f"chat{n}",
        ).id
        for i in range(5)
    ]
    for relation in ("causes", "derived_from", "relates_to"):
        memory.link(ids[0], ids[1], relation)
    memory.correct(f"Person{n}4 lives in Town{n}4", fact_id=ids[4])
    memory.remember(
        f"Person{n}3 lives in Village{n}3",
        subject=f"Person{n}3",
        predicate="lives_in",
        object=f"Village{n}3",
        confidence=0.5,
    )


def test_a_few_facts_over_several_sessions_keep_the_graph_file_under_16_mib(
    settings: Settings, embedder: FastEmbedder
) -> None:
    exported = ""
    for n in range(4):
        memory = Memory.open(settings, embedder=embedder)
        try:
            _session(memory, n)
            exported = memory.export()["jsonl"]
        finally:
            memory.close()
        # Without the rewrite at close: 29 MiB after the first session, 71 MiB from the third.
        assert settings.graph_file.stat().st_size <= COMPACT_FLOOR == 16 << 20, n

    reopened = Memory.open(settings, embedder=embedder)
    try:
        # Every fact, entity and edge as it was (the first line is the export's header and time).
        assert reopened.export()["jsonl"].splitlines()[1:] == exported.splitlines()[1:]
        assert reopened.graph.schema_version() == graph_schema_version()
        report = reopened.reconcile()
        assert (report.added, report.removed, report.restatused) == (0, 0, 0)
        assert int(reopened.graph.get_meta(COMPACT_BYTES) or 0) > 0  # it was rewritten at least once
        assert reopened.upkeep.compact_graph() is False  # and is not again while it stays small
    finally:
        reopened.close()
