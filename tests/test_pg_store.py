"""The PostgreSQL store (issue 27), against a real server: its schema made once whoever starts
first, a database newer than this hippograph refused, and each store kept as the embedded one is."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.domain.errors import StoreError
from hippograph.store.backends import open_graph
from hippograph.store.gap_log import KEPT, GapLog
from hippograph.store.pg_database import MIGRATIONS, SCHEMA_VERSION, VECTOR_FACTS_TIME, PgDatabase
from hippograph.store.pg_gaps import PgGapLog
from hippograph.store.pg_graph import PgGraphStore
from hippograph.store.pg_vectors import new_enough
from hippograph.store.seam import GapStore


def test_servers_starting_at_once_make_the_schema_once(pg_url: str) -> None:
    opened: list[PgDatabase] = []
    failed: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(PgDatabase(pg_url))
        except BaseException as err:  # reported below
            failed.append(err)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    assert [db.schema_version() for db in opened] == [SCHEMA_VERSION] * 6
    with opened[0].transaction() as conn:
        assert conn.execute("SELECT count(*) FROM hg_meta").fetchone()[0] == 1
    for db in opened:
        db.close()


def test_a_database_of_a_newer_schema_is_refused_and_left_as_it_is(pg_db: PgDatabase, pg_url: str) -> None:
    with pg_db.transaction() as conn:
        conn.execute("UPDATE hg_meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer than this hippograph's"):
        PgDatabase(pg_url)
    assert pg_db.schema_version() == SCHEMA_VERSION + 1


def test_a_request_lock_another_server_holds_is_waited_for(pg_url: str) -> None:
    first, second = PgDatabase(pg_url), PgDatabase(pg_url)
    order: list[str] = []

    def take() -> None:
        with second.claiming(7):
            order.append("second")

    try:
        with first.claiming(7):
            waiter = threading.Thread(target=take)
            waiter.start()
            waiter.join(0.3)
            order.append("first done")
        waiter.join(5)
        assert order == ["first done", "second"]
    finally:
        first.close()
        second.close()


def test_a_request_lock_lost_with_its_connection_fails_no_call_and_the_next_one_works(pg_url: str) -> None:
    import psycopg

    db = PgDatabase(pg_url)
    try:
        with db.claiming(42), psycopg.connect(pg_url, autocommit=True) as other:
            # The claims' connection killed while the claim is held: the block's result stands.
            killed = other.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 42"
            ).fetchall()
            assert killed == [(True,)]
        with db.claiming(42):  # a new connection
            pass
    finally:
        db.close()


def test_an_unreachable_database_is_a_store_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://someone:hunter2secret@/nowhere?host={tmp_path}&connect_timeout=1"
    with pytest.raises(StoreError) as caught:
        PgDatabase(url, timeout_s=1.0)
    assert "could not open the PostgreSQL store" in str(caught.value)
    assert "hunter2secret" not in str(caught.value)


@pytest.fixture(params=["sqlite", "postgresql"])
def gap_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GapStore]:
    store: GapStore
    if request.param == "sqlite":
        store = GapLog(tmp_path / "gaps.sqlite")
    else:
        store = PgGapLog(request.getfixturevalue("pg_db"))
    yield store
    store.close()


def test_a_question_asked_again_in_other_words_is_counted_once_per_scope(gap_store: GapStore) -> None:
    gap_store.record("global", "Which bank do I use?", "2026-11-01T10:00:00Z")
    gap_store.record("global", "which  BANK do i use?", "2026-11-02T10:00:00Z")
    gap_store.record("project:x", "When is the launch?", "2026-11-03T10:00:00Z")
    assert gap_store.gaps(["global"], limit=10) == [
        ("global", "which  BANK do i use?", 2, "2026-11-02T10:00:00Z")
    ]
    assert [g.scope for g in gap_store.gaps(["global", "project:x"], limit=10)] == ["global", "project:x"]
    assert gap_store.gaps(["project:y"], limit=10) == []


def test_an_older_asking_recorded_late_does_not_turn_the_last_asking_back(gap_store: GapStore) -> None:
    gap_store.record("global", "Which bank do I use?", "2026-11-02T10:00:00Z")
    gap_store.record("global", "Which bank do I use?", "2026-11-01T10:00:00Z")  # another server's, late
    assert gap_store.gaps(["global"], limit=1)[0].last == "2026-11-02T10:00:00Z"


def test_a_scope_keeps_its_most_recent_questions_and_clear_empties_the_log(gap_store: GapStore) -> None:
    for i in range(KEPT + 5):
        gap_store.record("global", f"question {i}", f"2026-11-01T10:{i // 60 % 60:02d}:{i % 60:02d}.{i:06d}Z")
    kept = gap_store.gaps(["global"], limit=2 * KEPT)
    assert len(kept) == KEPT
    assert "question 0" not in {g.question for g in kept}
    gap_store.clear()
    assert gap_store.gaps(["global"], limit=10) == []


def test_servers_asked_the_same_question_at_once_count_every_asking(pg_url: str) -> None:
    stores = [PgGapLog(PgDatabase(pg_url)) for _ in range(4)]

    def record(store: PgGapLog) -> None:
        for i in range(25):
            store.record("global", "Which bank do I use?", f"2026-11-01T10:00:{i:02d}Z")

    threads = [threading.Thread(target=record, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stores[0].gaps(["global"], limit=5)[0].asked == 100


def test_a_server_keeps_as_many_connections_as_set(pg_url: str, tmp_path: Path) -> None:
    graph = open_graph(Settings(data_dir=tmp_path, store_url=pg_url, store_connections=3))
    try:
        assert isinstance(graph, PgGraphStore)
        assert graph.database._pool.max_size == 3
    finally:
        graph.close()


@pytest.mark.parametrize(
    ("version", "enough"),
    [("0.8.0", True), ("0.8.1", True), ("0.10.2", True), ("1.0", True), ("0.7.4", False), ("0.5.1", False)],
)
def test_pgvector_older_than_0_8_is_refused(version: str, enough: bool) -> None:
    assert new_enough(version) is enough


def test_the_facts_times_are_indexed_in_a_new_database_and_in_one_made_before(pg_url: str) -> None:
    from hippograph.store.pg_vectors import PgVectorStore

    def indexed(db: PgDatabase) -> bool:
        with db.transaction() as conn:
            return conn.execute("SELECT to_regclass('hg_vec_facts_time') IS NOT NULL").fetchone()[0]

    db = PgDatabase(pg_url)
    try:
        PgVectorStore(db, dim=8, model="test-model")
        assert indexed(db)
        with db.transaction() as conn:  # as made before the index was
            conn.execute("DROP INDEX hg_vec_facts_time")
            older = str(next(n for n, step in enumerate(MIGRATIONS) if VECTOR_FACTS_TIME in step))
            conn.execute("UPDATE hg_meta SET value = %s WHERE key = 'schema_version'", (older,))
    finally:
        db.close()
    again = PgDatabase(pg_url)
    try:
        assert indexed(again) and again.schema_version() == SCHEMA_VERSION
    finally:
        again.close()
