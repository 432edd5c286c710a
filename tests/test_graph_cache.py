"""No read or write fails for want of the graph engine's page cache, however many writes a
store has taken (issue 22).

Kùzu (and ladybug, its fork) keeps every page a commit changed pinned in its buffer pool until a
checkpoint, and checkpointed by itself only once the WAL passed 16 MB: a remember pins ~30 KB for
~1.3 KB of WAL, so the default 128 MiB pool was full after ~4,000 remembers and every statement
after failed (in the smallest pool, 32 MiB under ladybug: remember #652). These tests use that
pool, so a few hundred writes reproduce what a real user reached in weeks.

(A log left unreplayed by a process that died: tests/e2e/test_graph_cache.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.domain.errors import GraphCacheFull
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.kuzu_session import KuzuSession

_POOL = 32 << 20  # the smallest HIPPOGRAPH_KUZU_BUFFER_POOL_BYTES accepted
_PEOPLE = ["Sarah", "Tomasz", "Priya", "Lee", "Ana", "Omar", "Kenji", "Mia", "Rajesh", "Zoe"]
_THINGS = ["Terraform", "Kafka", "Postgres", "Redis", "React", "Docker", "Rust", "Falcon"]


def test_hundreds_of_single_remembers_about_a_few_hubs_fit_the_smallest_pool(
    settings: Settings, embedder: FastEmbedder
) -> None:
    small = settings.model_copy(update={"kuzu_buffer_pool_bytes": _POOL, "maintenance_interval_s": 0})
    memory = Memory.open(small, embedder=embedder)
    n = 300  # a restart after many small commits; the session-level test below reproduces the failure
    try:
        for i in range(n):
            person, thing = _PEOPLE[i % len(_PEOPLE)], _THINGS[(i // len(_PEOPLE)) % len(_THINGS)]
            memory.remember(f"{person} reviewed {thing} (note {i}, sprint {i % 37}).")
    finally:
        memory.close()

    reopened = Memory.open(small, embedder=embedder)
    try:
        assert reopened.stats()["facts"] == n
        hits = reopened.search("What did Tomasz review in note 211?").results
        assert "note 211," in hits[0].content
        reopened.remember("Zoe moved the Kafka review to Thursday.")
        assert reopened.stats()["facts"] == n + 1
    finally:
        reopened.close()


def test_thousands_of_small_commits_about_hubs_fit_the_smallest_pool(tmp_path: Path) -> None:
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        session.execute("CREATE NODE TABLE Hub(id STRING, n INT64, PRIMARY KEY(id))")
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        session.execute("CREATE REL TABLE ABOUT(FROM Note TO Hub)")
        for hub in range(20):
            session.run("CREATE (:Hub {id: $id, n: 0})", {"id": f"h{hub}"})
        for i in range(3_000):  # without the checkpoint rule: commit #1,747 failed
            with session.transaction():
                session.run(
                    "CREATE (:Note {id: $id, body: $body})", {"id": f"n{i}", "body": f"note {i} " * 10}
                )
                session.run(
                    "MATCH (n:Note {id: $id}), (h:Hub {id: $hub}) CREATE (n)-[:ABOUT]->(h) SET h.n = h.n + 1",
                    {"id": f"n{i}", "hub": f"h{i % 20}"},
                )
        assert session.run("MATCH (h:Hub) RETURN sum(h.n) AS n") == [{"n": 3_000}]
    finally:
        session.close()


def test_a_transaction_too_big_for_the_pool_says_so_and_the_store_stays_usable(tmp_path: Path) -> None:
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    create = "UNWIND range(1, $n) AS i CREATE (:Note {id: $prefix + CAST(i AS STRING), body: $body})"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        # 40 MB of new rows in one go, in a 16 MiB pool:
        with pytest.raises(GraphCacheFull, match="nothing of it was stored") as failed, session.transaction():
            session.run(create, {"n": 40_000, "prefix": "a", "body": "x" * 1000})
        assert "HIPPOGRAPH_KUZU_BUFFER_POOL_BYTES" in str(failed.value)
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 0}]  # rolled back whole
        for part in range(10):  # the same rows in smaller commits fit
            session.run(create, {"n": 4_000, "prefix": f"b{part}_", "body": "x" * 1000})
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 40_000}]
    finally:
        session.close()
