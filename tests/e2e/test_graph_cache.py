"""Writes by the thousand in the smallest page cache, and a graph log too big for it left
unreplayed by a process that died (a child ``python -c`` here), which is replayed with a larger
pool or refused saying which setting opens it (issue 22). Slow (20-30 s each): here, not in the
fast half.

(Why the pool filled, and a transaction too big for it: tests/test_graph_cache.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hippograph.config import MEMORY_BUDGET_MIN, Settings
from hippograph.domain.errors import StoreError
from hippograph.service.memory import Memory
from hippograph.store import migrations
from hippograph.store.embed import FastEmbedder
from hippograph.store.kuzu_session import KuzuSession
from tests.test_graph_cache import _POOL

_PEOPLE = ["Sarah", "Tomasz", "Priya", "Lee", "Ana", "Omar", "Kenji", "Mia", "Rajesh", "Zoe"]
_THINGS = ["Terraform", "Kafka", "Postgres", "Redis", "React", "Docker", "Rust", "Falcon"]

_UNCHECKPOINTED = """
import os, sys, ladybug as kuzu
db = kuzu.Database(sys.argv[1], buffer_pool_size=256 << 20, auto_checkpoint=False)
conn = kuzu.Connection(db)
conn.execute("CREATE NODE TABLE Hub(id STRING, n INT64, PRIMARY KEY(id))")
conn.execute("CREATE (:Hub {id: 'h', n: 0})")
for _ in range(int(sys.argv[2])):
    conn.execute("MATCH (h:Hub {id: 'h'}) SET h.n = h.n + 1")
os._exit(0)  # killed: the WAL is left unreplayed, as a crash or an old hippograph left it
"""


def test_a_log_too_big_for_the_pool_is_replayed_with_a_larger_one_then_the_pool_is_as_set(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.kuzu"
    # 1,500 commits each updating one hub: ~25 MB pinned to replay, more than the 16 MiB pool.
    subprocess.run([sys.executable, "-c", _UNCHECKPOINTED, str(path), "1500"], check=True)
    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        assert session.run("MATCH (h:Hub) RETURN h.n AS n") == [{"n": 1500}]
        assert session.run("CALL bm_info() RETURN mem_limit")[0]["mem_limit"] == _POOL
        session.run("MATCH (h:Hub {id: $id}) SET h.n = h.n + 1", {"id": "h"})
    finally:
        session.close()
    assert not Path(f"{path}.wal").exists() or Path(f"{path}.wal").stat().st_size < 1 << 20


def test_a_log_no_pool_doubling_can_replay_is_refused_saying_which_setting_opens_it(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    subprocess.run([sys.executable, "-c", _UNCHECKPOINTED, str(path), "1500"], check=True)
    tiny = 512 << 10  # doubled 5 times: 8 MiB, still less than the ~25 MB the replay pins

    with pytest.raises(StoreError, match="replaying its log needs more than a 8 MiB") as refused:
        KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=tiny)

    assert "HIPPOGRAPH_MEMORY_BUDGET_BYTES" in str(refused.value)
    assert "another hippograph process" not in str(refused.value)
    reopened = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)  # nothing was lost
    try:
        assert reopened.run("MATCH (h:Hub) RETURN h.n AS n") == [{"n": 1500}]
    finally:
        reopened.close()


def test_hundreds_of_single_remembers_about_a_few_hubs_fit_the_smallest_pool(
    settings: Settings, embedder: FastEmbedder
) -> None:
    small = settings.model_copy(
        update={"memory_budget_bytes": MEMORY_BUDGET_MIN, "maintenance_interval_s": 0}
    )
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


def test_a_checkpoint_after_writes_about_a_hub_fits_the_pool_at_any_degree(tmp_path: Path) -> None:
    """Schema v6 keeps ABOUT and HAS_TAG edges on the fact's side only, and v7 relations in rows
    of their own. Before, every edge into an entity or a tag sat in the one node group (2^17
    nodes) of the few entities or tags, and a checkpoint after edges into one of them rewrote
    the lists of those made after it: at 1M facts about 592 entities a 64 MiB pool could not,
    and here (300k facts, half of them about a later entity and with a later tag, 2,000 new
    edges into the first ones, a 16 MiB pool) each checkpoint had to reopen the graph in a
    larger pool. Now they spread over node groups as facts do, and a checkpoint needs what the
    groups it touches need (RELATES edges, entity to entity, failed alike: 1M of them among 600
    entities, 500 more, 32 MiB)."""
    path = tmp_path / "graph.kuzu"
    built = KuzuSession(path, max_db_size=1 << 34, buffer_pool_bytes=512 << 20)
    try:
        migrations.migrate(built)
        built.execute("COPY Fact(id) FROM (UNWIND range(0, 299999) AS i RETURN 'f' + CAST(i AS STRING))")
        built.run("CREATE (:Entity {id: 'hub'}), (:Tag {name: 'busy'})")
        built.run("CREATE (:Entity {id: 'later'}), (:Tag {name: 'later'})")
        half = "UNWIND range(0, 149999) AS i RETURN 'f' + CAST(2 * i AS STRING)"
        built.execute(f"COPY ABOUT FROM ({half}, 'later', 'subject')")
        built.execute(f"COPY HAS_TAG FROM ({half}, 'later')")
        built.execute(f"COPY Relation(id, src, dst, fact_id) FROM ({half}, 'later', 'later', 'f0')")
    finally:
        built.close()
    session = KuzuSession(path, max_db_size=1 << 34, buffer_pool_bytes=16 << 20)
    try:
        for part in range(4):
            with session.transaction():
                for i in range(500):  # one statement a row, as the store writes them (see for_each)
                    session.run(
                        "MATCH (f:Fact {id: $id}) MATCH (e:Entity {id: 'hub'}) MATCH (t:Tag {name: 'busy'}) "
                        "CREATE (f)-[:ABOUT {role: 'object'}]->(e), (f)-[:HAS_TAG]->(t), "
                        "(:Relation {id: 'r' + $id, src: 'hub', dst: 'later', fact_id: $id})",
                        {"id": f"f{(part * 500 + i) * 797 % 300_000}"},  # facts of every node group
                    )
        session.checkpoint()
        assert (session.reopened, session.grown) == (0, 0)
        # Counted from the facts' side (a match keyed on an entity would join every fact).
        about = session.run("MATCH (:Fact)-[r:ABOUT]->(:Entity) RETURN count(r) AS n")
        tagged = session.run("MATCH (:Fact)-[r:HAS_TAG]->(:Tag) RETURN count(r) AS n")
        related = session.run("MATCH (r:Relation) RETURN count(r) AS n")
        assert (about, tagged, related) == ([{"n": 152_000}], [{"n": 152_000}], [{"n": 152_000}])
    finally:
        session.close()
