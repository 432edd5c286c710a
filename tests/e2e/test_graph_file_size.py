"""The graph file stays small for a small memory: a store grown bloated by kuzu's checkpoints is
rewritten compactly at close, with everything it held (issue 16: 49 MB for 46 facts)."""

from __future__ import annotations

import time

import pytest

from hippograph.config import Settings
from hippograph.service import memory as memory_module
from hippograph.service import upkeep
from hippograph.service.memory import Memory
from hippograph.service.upkeep import COMPACT_FLOOR
from hippograph.store.embed import FastEmbedder
from hippograph.store.schema import graph_schema_version
from hippograph.store.seam import COMPACT_BYTES, COMPACT_FACTS

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


def test_a_file_swollen_past_what_a_close_can_copy_is_rewritten_by_an_idle_server(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio client kills its server 2-4 s after closing stdin, and 1M facts take minutes to
    copy: a close rewrites only files up to ``CLOSE_COMPACT_MOST``; larger ones are rewritten
    once no call has come for a while. A file as much larger as its facts are more is not swollen."""
    monkeypatch.setattr(upkeep, "COMPACT_FLOOR", 0)
    monkeypatch.setattr(memory_module, "_COMPACT_IDLE_S", 1.0)
    memory = Memory.open(settings, embedder=embedder)
    try:
        _session(memory, 0)
        memory.graph.checkpoint()
        size = settings.graph_file.stat().st_size
        facts = memory.graph.fact_count()
        memory.graph.set_meta(COMPACT_BYTES, str(size // 3))
        memory.graph.set_meta(COMPACT_FACTS, str(facts // 2))  # 2 x size/3 x 2: not swollen
        assert not memory.upkeep.compaction_due()
        memory.graph.set_meta(COMPACT_FACTS, str(facts))  # 2 x size/3: swollen
        assert memory.upkeep.compaction_due()

        assert memory.upkeep.compact_graph(most_bytes=size - 1) is False  # too large for a close
        memory.search("Person00")
        assert memory.compact_when_idle() is False  # a call just ended
        time.sleep(1.1)
        assert memory.compact_when_idle() is True
        assert int(memory.graph.get_meta(COMPACT_BYTES) or 0) == settings.graph_file.stat().st_size
        assert memory.graph.get_meta(COMPACT_FACTS) == str(facts)
        assert not memory.upkeep.compaction_due()
        assert len(memory.search("Person03 lives in").results) > 0
    finally:
        memory.close()
