"""No read or write fails for want of the graph engine's page cache, however many writes a
store has taken (issue 22).

Kùzu (and ladybug, its fork) keeps every page a commit changed pinned in its buffer pool until a
checkpoint, and checkpointed by itself only once the WAL passed 16 MB: a remember pins ~30 KB for
~1.3 KB of WAL, so the default 128 MiB pool was full after ~4,000 remembers and every statement
after failed (in the smallest pool, 32 MiB under ladybug: remember #652). These tests use that
pool, so a few hundred writes reproduce what a real user reached in weeks: those tests, and a
log left unreplayed by a process that died, are slow and live in tests/e2e/test_graph_cache.py.
"""

from __future__ import annotations

import dataclasses
import weakref
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hippograph.domain.errors import GraphCacheFull
from hippograph.domain.models import Fact, FactStatus
from hippograph.store import kuzu_session
from hippograph.store.fact_cache import FactCache
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.graph_copy import POOL_FULL
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.rows import FACT_STATE_COLUMNS
from testkit.facts import make_fact

_POOL = 32 << 20  # the smallest graph page cache (at HIPPOGRAPH_MEMORY_BUDGET_BYTES' minimum)


def test_a_transaction_too_big_for_the_pool_says_so_and_the_store_stays_usable(tmp_path: Path) -> None:
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    create = "UNWIND range(1, $n) AS i CREATE (:Note {id: $prefix + CAST(i AS STRING), body: $body})"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        # 40 MB of new rows in one go, in a 16 MiB pool:
        with pytest.raises(GraphCacheFull, match="nothing of it was stored") as failed, session.transaction():
            session.run(create, {"n": 40_000, "prefix": "a", "body": "x" * 1000})
        assert "HIPPOGRAPH_MEMORY_BUDGET_BYTES" in str(failed.value)
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 0}]  # rolled back whole
        for part in range(10):  # the same rows in smaller commits fit
            session.run(create, {"n": 4_000, "prefix": f"b{part}_", "body": "x" * 1000})
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 40_000}]
    finally:
        session.close()


def _wal(session: KuzuSession) -> int:
    wal = Path(f"{session.path}.wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_checkpoint_comes_when_the_log_grows_not_when_reads_fill_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages read fill the pool but Kùzu evicts them at will: at 100k facts a rule on the pool's
    use checkpointed every ~8 remembers (0.5 s each). What commits changed is what the WAL holds."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    checkpoints: list[int] = []
    checkpoint = KuzuSession.checkpoint
    monkeypatch.setattr(KuzuSession, "checkpoint", lambda s: (checkpoints.append(_wal(s)), checkpoint(s)))
    threshold = _POOL // kuzu_session._WAL_SHARE
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        for part in range(12):  # 72 MB of rows, read below: the pool fills with their pages
            session.run(
                "UNWIND range(1, 3000) AS i CREATE (:Note {id: $p + CAST(i AS STRING), body: $body})",
                {"p": f"r{part}_", "body": "y" * 2000},
            )
        session.checkpoint()
        for _ in range(3):
            session.run("MATCH (n:Note) WHERE n.body STARTS WITH 'y' RETURN count(*) AS n")
        checkpoints.clear()
        written = 0
        while not checkpoints:  # small commits until the log passes its share of the pool
            assert _wal(session) <= threshold
            with session.transaction():
                session.run("CREATE (:Note {id: $id, body: 'z'})", {"id": f"w{written}"})
            written += 1
        assert checkpoints[0] > threshold and _wal(session) < threshold
    finally:
        session.close()


def test_a_checkpoint_comes_when_the_values_set_since_the_last_would_hold_a_share_of_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ladybug keeps each column a transaction SETs as a vector of its own until a checkpoint
    (~29 KB for one value): counting a remember's mentions, a server held ~0.45 MB a remember
    outside the pool, 65-80 MB before the log's share called a checkpoint."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    checkpoints: list[int] = []
    checkpoint = KuzuSession.checkpoint
    monkeypatch.setattr(KuzuSession, "checkpoint", lambda s: (checkpoints.append(_wal(s)), checkpoint(s)))
    per_share = _POOL // kuzu_session._UPDATE_SHARE // (2 * kuzu_session._SET_COLUMN_BYTES)
    try:
        session.execute("CREATE NODE TABLE Entity(id STRING, n INT64, at INT64, PRIMARY KEY(id))")
        session.run("UNWIND range(1, 50) AS i CREATE (:Entity {id: CAST(i AS STRING), n: 0, at: 0})")
        session.checkpoint()
        checkpoints.clear()
        count = "MATCH (e:Entity {id: $id}) SET e.n = e.n + 1, e.at = $at"
        for i in range(per_share):
            with session.transaction():
                session.run(count, {"id": str(i % 50 + 1), "at": i})
        assert checkpoints == []  # two columns a transaction: the share is not passed yet
        with session.transaction():
            session.run(count, {"id": "1", "at": -1})
        # The log is under its share: the values set called the checkpoint.
        assert len(checkpoints) == 1 and checkpoints[0] <= _POOL // kuzu_session._WAL_SHARE
        assert session.run("MATCH (e:Entity) RETURN sum(e.n) AS n") == [{"n": per_share + 1}]
    finally:
        session.close()


def test_a_checkpoint_too_big_for_the_pool_is_done_by_reopening_and_no_write_fails(tmp_path: Path) -> None:
    """The backward edges into a table of few nodes (ABOUT into entities, HAS_TAG into tags) sit
    in one node group, and a checkpoint may rewrite it whole: at 1M facts about 592 entities a
    64 MiB pool could not, every checkpoint after failed, and then every commit (issue 22). Here
    the same at 8 MiB: before, a checkpoint failed after ~4,000 edges into one node."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=8 << 20)
    try:
        session.execute("CREATE NODE TABLE Fact(id STRING, PRIMARY KEY(id))")
        session.execute("CREATE NODE TABLE Entity(id STRING, PRIMARY KEY(id))")
        session.execute("CREATE REL TABLE ABOUT(FROM Fact TO Entity, role STRING)")
        session.run("CREATE (:Entity {id: 'hub'})")
        for part in range(40):
            ids = [f"f{part}_{i}" for i in range(500)]
            with session.transaction():
                session.run("UNWIND $ids AS i CREATE (:Fact {id: i})", {"ids": ids})
                session.run(
                    "UNWIND $ids AS i MATCH (f:Fact {id: i}), (e:Entity {id: 'hub'}) "
                    "CREATE (f)-[:ABOUT {role: 'subject'}]->(e)",
                    {"ids": ids},
                )
        assert session.reopened >= 1
        assert session.run("MATCH (:Fact)-[r:ABOUT]->(:Entity) RETURN count(r) AS n") == [{"n": 20_000}]
    finally:
        session.close()


def test_a_write_the_pool_cannot_hold_grows_the_pool_so_the_same_call_sent_again_fits(tmp_path: Path) -> None:
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=8 << 20)
    create = "UNWIND range(1, $n) AS i CREATE (:Note {id: CAST(i AS STRING), body: $body})"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        with pytest.raises(GraphCacheFull) as full, session.transaction():
            session.run(create, {"n": 5_000, "body": "x" * 2000})
        assert full.value.room_made  # the caller may send it again (the service does)
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 0}]
        grown = session._buffer_pool_bytes
        assert grown > 8 << 20
        for _ in range(4):  # sent again until it fits, as the error says; the pool grows at most 8x
            try:
                with session.transaction():
                    session.run(create, {"n": 5_000, "body": "x" * 2000})
                break
            except GraphCacheFull:
                continue
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 5_000}]
        assert session._buffer_pool_bytes <= 64 << 20
        too_big = create.replace("CAST(i", "'big' + CAST(i")
        made = []
        for _ in range(4):  # 120 MB in one write: room is made until the pool is 8x, then no more
            with pytest.raises(GraphCacheFull) as full, session.transaction():
                session.run(too_big, {"n": 60_000, "body": "x" * 2000})
            made.append(full.value.room_made)
        assert made[-1] is False and session._buffer_pool_bytes == 64 << 20
    finally:
        session.close()


def test_a_checkpoint_failed_in_the_engines_storage_layer_is_done_after_reopening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ladybug 0.22, reopened in its process after a checkpoint too big for its pool, may keep a
    string dictionary in memory that its next checkpoint cannot write, though the file and its
    log are whole: over MCP with a 64 MiB budget, ~4,400 remembers about hubs in, every write
    after failed and the store no longer opened (2026-11-30: bench.growth's corpus, ~4 minutes,
    so not here). The engine's failure is injected; what is tested is that the session reopens,
    checkpoints, keeps every row and goes on writing."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    checkpoint = KuzuSession.checkpoint
    failures = [RuntimeError("Storage exception: String dictionary index is outside the offset table.")]

    def failing_once(s: KuzuSession) -> None:
        if failures:
            raise failures.pop()
        checkpoint(s)

    monkeypatch.setattr(KuzuSession, "checkpoint", failing_once)
    create = "UNWIND range(1, 2000) AS i CREATE (:Note {id: $prefix + CAST(i AS STRING), body: $body})"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        session.run(create, {"prefix": "a", "body": "x" * 200})  # a log past its share: a checkpoint
        assert (failures, session.reopened, _wal(session)) == ([], 1, 0)
        session.run(create, {"prefix": "b", "body": "y" * 200})
        assert session.run("MATCH (n:Note) RETURN count(*) AS n") == [{"n": 4000}]
    finally:
        session.close()


def test_a_reopen_leaves_no_statement_of_the_closed_graph_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ladybug frees a closed database only once none of its statements is referenced: one kept
    past a reopen (the statement whose write led to it) was freed after the new database had
    opened the same file, and the store ended unreadable (64 MiB budget, ~4,500 remembers about
    hubs; 2026-11-30). Here the reopen comes from a write's checkpoint, as it did then."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    reopen, checkpoint = KuzuSession._reopen, KuzuSession.checkpoint
    alive: list[bool] = []
    failures = [RuntimeError("Storage exception: String dictionary has an invalid first offset.")]

    def watched_reopen(s: KuzuSession, *, checkpoint: bool = False) -> None:
        old = [weakref.ref(statement) for statement in s._prepared.values()]
        reopen(s, checkpoint=checkpoint)
        alive.append(any(ref() is not None for ref in old))

    def failing_once(s: KuzuSession) -> None:
        if failures:
            raise failures.pop()
        checkpoint(s)

    monkeypatch.setattr(KuzuSession, "_reopen", watched_reopen)
    monkeypatch.setattr(KuzuSession, "checkpoint", failing_once)
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, body STRING, PRIMARY KEY(id))")
        create = "UNWIND range(1, 2000) AS i CREATE (:Note {id: CAST(i AS STRING), body: $b})"
        session.run(create, {"b": "x" * 200})  # a log past its share: a checkpoint, which fails
        assert alive == [False]
    finally:
        session.close()


class _FullOnce:
    """A connection whose executions of prepared statements find the pool full ``failing``
    times, after ``skip`` of them pass."""

    def __init__(self, conn: Any, failing: int, skip: int = 0) -> None:
        self._conn, self.failing, self.skip, self.sent = conn, failing, skip, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, statement: Any, *params: Any) -> Any:
        if not isinstance(statement, str):
            self.sent += 1
            if self.sent > self.skip and self.failing:
                self.failing -= 1
                raise RuntimeError(f"Buffer manager exception: Unable to allocate memory! The {POOL_FULL}!")
        return self._conn.execute(statement, *params)


def test_a_read_the_full_pool_failed_outside_a_transaction_is_sent_again_once(tmp_path: Path) -> None:
    """After the graph was reopened to checkpoint in a larger pool, the first keyed read failed
    so once (64 MiB budget, the 5k-fact perf store, remember #80 of the bench's; 2026-12-02) and
    the remember that read failed with it; sent again, the read passed. A read changes nothing;
    a write is its caller's to send again (one large enough for the engine's own checkpoint at
    commit may have been stored before it failed)."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    read = "UNWIND $ids AS x MATCH (n:Note {id: x}) RETURN n.id AS id"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, PRIMARY KEY(id))")
        session.run("UNWIND ['a', 'b'] AS i CREATE (:Note {id: i})")
        session._conn = flaky = _FullOnce(session._conn, failing=1)
        assert session.run(read, {"ids": ["a", "b"]}) == [{"id": "a"}, {"id": "b"}]
        assert flaky.sent == 2

        session._conn = flaky = _FullOnce(session._conn, failing=2)  # twice: the caller is told
        with pytest.raises(GraphCacheFull, match="send the call again"):
            session.run(read, {"ids": ["a"]})
        assert flaky.sent == 2
        for write in (session.run, session.transaction):  # a write, alone or in a transaction
            session._conn = flaky = _FullOnce(session._conn, failing=1)
            with pytest.raises(GraphCacheFull):
                if write == session.run:
                    session.run("CREATE (:Note {id: $id})", {"id": "c"})
                else:
                    with session.transaction():
                        session.run("CREATE (:Note {id: $id})", {"id": "c"})
            assert flaky.sent == 1 and session.run(read, {"ids": ["c"]}) == []
    finally:
        session.close()


def test_a_rider_the_full_pool_failed_rolls_its_transaction_back_and_waits_for_the_retry(
    tmp_path: Path,
) -> None:
    """A write's receipt rides on its transaction (``commit_with``). When the receipt's own
    statement failed, the transaction was left open with its commit hooks armed and the receipt
    gone: the retry committed the write without it, and the session's next transaction failed."""
    session = KuzuSession(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    count = "MATCH (n:Note) RETURN count(*) AS n"
    try:
        session.execute("CREATE NODE TABLE Note(id STRING, PRIMARY KEY(id))")
        session.commit_with("CREATE (:Note {id: $id})", {"id": "receipt"})
        session._conn = flaky = _FullOnce(session._conn, failing=1, skip=1)  # the write, then its rider
        with pytest.raises(GraphCacheFull) as full, session.transaction():
            session.run("CREATE (:Note {id: $id})", {"id": "write"})
        assert flaky.sent == 2 and full.value.room_made and session.has_rider()
        assert not session.in_transaction and session.run(count) == [{"n": 0}]  # rolled back whole
        with session.transaction():  # the retry
            session.run("CREATE (:Note {id: $id})", {"id": "write"})
        assert not session.has_rider() and session.run(count) == [{"n": 2}]
    finally:
        session.close()


def test_a_state_change_sets_only_the_fields_that_changed_and_reads_back_whole(tmp_path: Path) -> None:
    """What a transaction SETs stays in the engine's memory until a checkpoint, column by column:
    a superseded fact changes 3 of its 16 lifecycle fields, so 3 are set. A fact the cache does not
    hold, or whose state the open transaction set already, is set whole: the cache holds the
    committed version only, and "unchanged from it" may not be unchanged from the first SET."""
    at = datetime(2026, 2, 1, 9, 30, tzinfo=UTC)
    graph = KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32)
    session = graph._session
    facts = [make_fact(f"Box {i} holds pans", id=f"f_{i:016x}", at=at) for i in range(3)]
    try:
        graph.insert_facts(facts)
        graph.checkpoint()

        def set_columns(*states: Fact) -> int:
            before = session._unsaved_updates
            with graph.transaction():
                for state in states:
                    graph.update_fact_states([state])
            return (session._unsaved_updates - before) // kuzu_session._SET_COLUMN_BYTES

        superseded = dataclasses.replace(
            facts[0], status=FactStatus.SUPERSEDED, status_reason="superseded by f_9", valid_until=at
        )
        assert set_columns(superseded) == 3
        graph._facts = FactCache(1 << 20)  # the cache holds nothing: all of them
        every = len(FACT_STATE_COLUMNS)
        assert set_columns(dataclasses.replace(facts[1], status=FactStatus.CONFIRMED)) == every
        # Set twice in one transaction, back to where it was: the second time whole.
        graph._facts.put([facts[2]])
        confirmed = dataclasses.replace(facts[2], status=FactStatus.CONFIRMED, confidence=0.9)
        assert set_columns(confirmed, dataclasses.replace(facts[2], confidence=0.95)) == 2 + every
        graph.close()
        graph = KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32)  # read from the file
        stored = graph.get_facts([f.id for f in facts])
        assert stored[facts[0].id] == superseded
        assert stored[facts[1].id].status is FactStatus.CONFIRMED
        assert stored[facts[2].id] == dataclasses.replace(facts[2], confidence=0.95)
    finally:
        graph.close()
