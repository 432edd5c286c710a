"""One PostgreSQL database holding a memory (issue 27): a server process's connections to it,
and its schema, made or brought up to date on first connect by whichever server gets there first.

``HIPPOGRAPH_STORE_URL=postgresql://user:pass@host:5432/db`` names the database and ``pip install
"hippograph[postgres]"`` brings the driver (psycopg 3 and its pool). Each server process opens a
pool of its own. The schema is versioned in ``hg_meta``: a process that finds it older runs the
missing steps of ``MIGRATIONS`` in one transaction holding an advisory lock, so servers that
start at once wait for each other and the later ones find the work done; a database newer than
this hippograph is refused, as an embedded store of a newer layout is.

What each table holds is said where the store that uses it is written (``pg_gaps``, ...).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hippograph.domain.errors import StoreError
from hippograph.store import pg_text

log = logging.getLogger(__name__)

_CLAIM_POLL_S = 0.01  # how often a claim another server holds is asked for again


# Columns of ids and of hippograph's own words (statuses, kinds, edge types, roles, scopes): the
# planner keeps their statistics. Without them it takes `scope = ANY(...)` for a handful of rows
# and `id = ANY(<40 ids>)` for a fifth of a table, and at 100k facts read whole tables where an
# index finds the rows (a search's p50 666 ms, 270 ms with these, 2026-11-29). Text a user wrote
# (content, names, tags, reasons, terms) is in none of them.
_OWN_VALUES = (
    "id", "fact", "entity", "src", "dst", "a", "b", "topic", "fact_id", "entity_ids",
    "status", "kind", "scope", "type", "role",
)  # fmt: skip


def no_value_statistics(tables_like: str) -> str:
    """SQL that keeps every text, array and json column of the tables named like ``tables_like``
    out of the planner's statistics (``SET STATISTICS 0``), but those of ``_OWN_VALUES``."""
    return f"DO $$ DECLARE c record; BEGIN {_statistics_of(tables_like, own=False, target=0)} END $$;"


def own_value_statistics(tables_like: str) -> str:
    """SQL that gives the ``_OWN_VALUES`` columns of the tables named like ``tables_like`` the
    planner's statistics back (a database made before they were kept), and gathers them."""
    return (
        f"DO $$ DECLARE c record; BEGIN {_statistics_of(tables_like, own=True, target=-1)} "
        "FOR c IN SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        f"AND table_name LIKE '{tables_like}' LOOP EXECUTE format('ANALYZE %I', c.table_name); "
        "END LOOP; END $$;"
    )


def _statistics_of(tables_like: str, *, own: bool, target: int) -> str:
    """A PL/pgSQL loop (over ``c``) setting the statistics target of the text, array and json
    columns of the tables named like ``tables_like``: those of ``_OWN_VALUES``, or the others."""
    return (
        "FOR c IN SELECT table_name, column_name "
        "FROM information_schema.columns WHERE table_schema = current_schema() "
        f"AND table_name LIKE '{tables_like}' AND data_type IN ('text', 'ARRAY', 'jsonb') "
        f"AND column_name {'IN' if own else 'NOT IN'} ({', '.join(repr(c) for c in _OWN_VALUES)}) LOOP "
        f"EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS {target}', "
        "c.table_name, c.column_name); END LOOP;"
    )


VECTOR_FACTS_TIME = "CREATE INDEX IF NOT EXISTS hg_vec_facts_time ON hg_vec_facts (time)"

# A RELATES weight as the walk uses it: 1 if unset, clamped to 0..1 (the graph index's rule).
WALK_WEIGHT = "CASE WHEN weight IS NULL THEN 1.0 ELSE least(greatest(weight, 0.0), 1.0) END"
# Each entity's related entities and the strongest weight between them (either direction), kept
# by triggers on hg_relates in the transaction that changes it: a walk reads an entity's
# strongest few in index order (PgGraphView.related_entities), not all its relations (a hub has
# thousands). A removed relation's pairs are worked out again from the relations left; hg_relates
# is indexed by (src, dst) for that. The triggers take a lock of their own till the transaction
# ends: writes are one at a time today (the writer's lock), and two that were not could each work
# a pair out without the other's change.
_NEIGHBOURS_LOCK = 0x6867_5F6E_6569_6768  # "hg_neigh"


def _strongest(relations: str) -> str:
    """Each pair of ``relations`` (a table of hg_relates rows), both ways, and its strongest weight."""
    return (
        f"SELECT a, b, max(w) FROM (SELECT src AS a, dst AS b, {WALK_WEIGHT} AS w FROM {relations} "
        f"UNION ALL SELECT dst, src, {WALK_WEIGHT} FROM {relations}) x GROUP BY a, b"
    )


_REMOVED_PAIRS = "(SELECT src AS a, dst AS b FROM removed UNION SELECT dst, src FROM removed) p"
NEIGHBOURS = f"""
CREATE TABLE IF NOT EXISTS hg_neighbour (
    a TEXT NOT NULL, b TEXT NOT NULL, w DOUBLE PRECISION NOT NULL, PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS hg_neighbour_strongest ON hg_neighbour (a, w DESC, b DESC);
CREATE INDEX IF NOT EXISTS hg_relates_pair ON hg_relates (src, dst);
DROP INDEX IF EXISTS hg_relates_src;
CREATE OR REPLACE FUNCTION hg_neighbour_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({_NEIGHBOURS_LOCK});
    INSERT INTO hg_neighbour (a, b, w) {_strongest("added")}
    ON CONFLICT (a, b) DO UPDATE SET w = greatest(hg_neighbour.w, excluded.w);
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION hg_neighbour_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({_NEIGHBOURS_LOCK});
    DELETE FROM hg_neighbour n USING {_REMOVED_PAIRS} WHERE n.a = p.a AND n.b = p.b;
    INSERT INTO hg_neighbour (a, b, w)
    SELECT p.a, p.b, max(x.w) FROM {_REMOVED_PAIRS} CROSS JOIN LATERAL (
        SELECT {WALK_WEIGHT} AS w FROM hg_relates WHERE src = p.a AND dst = p.b
        UNION ALL SELECT {WALK_WEIGHT} FROM hg_relates WHERE src = p.b AND dst = p.a
    ) x GROUP BY p.a, p.b;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS hg_relates_added ON hg_relates;
CREATE TRIGGER hg_relates_added AFTER INSERT ON hg_relates REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION hg_neighbour_added();
DROP TRIGGER IF EXISTS hg_relates_removed ON hg_relates;
CREATE TRIGGER hg_relates_removed AFTER DELETE ON hg_relates REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION hg_neighbour_removed();
TRUNCATE hg_neighbour;
INSERT INTO hg_neighbour (a, b, w) {_strongest("hg_relates")};
"""

# Each step brings the schema from version i to i + 1 (list index i); steps are never edited
# once released, only appended.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS hg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS hg_gap (
        scope TEXT NOT NULL, key TEXT NOT NULL, question TEXT NOT NULL, asked INTEGER NOT NULL,
        last TEXT NOT NULL, PRIMARY KEY (scope, key)
    );
    CREATE INDEX IF NOT EXISTS hg_gap_last ON hg_gap (scope, last);
    """,
    """
    CREATE TABLE IF NOT EXISTS hg_topic (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, label TEXT NOT NULL, size INTEGER NOT NULL,
        first TEXT NOT NULL, last TEXT NOT NULL, entities TEXT NOT NULL, central TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS hg_topic_scope ON hg_topic (scope, last);
    CREATE TABLE IF NOT EXISTS hg_member (fact TEXT PRIMARY KEY, topic TEXT NOT NULL, rank INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS hg_member_topic ON hg_member (topic, rank);
    CREATE TABLE IF NOT EXISTS hg_pair (
        a TEXT NOT NULL, b TEXT NOT NULL, scope TEXT NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (a, b)
    );
    CREATE INDEX IF NOT EXISTS hg_pair_scope ON hg_pair (scope, similarity);
    CREATE INDEX IF NOT EXISTS hg_pair_b ON hg_pair (b);
    CREATE TABLE IF NOT EXISTS hg_topic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    """
    CREATE TABLE IF NOT EXISTS hg_graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS hg_fact (
        id TEXT PRIMARY KEY, content TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL, source TEXT NOT NULL, provenance TEXT NOT NULL,
        scope TEXT NOT NULL, created_at TIMESTAMP NOT NULL, valid_from TIMESTAMP NOT NULL,
        valid_until TIMESTAMP, event_time TIMESTAMP, last_accessed TIMESTAMP,
        access_count INTEGER NOT NULL, pinned BOOLEAN NOT NULL, ttl_policy TEXT NOT NULL,
        expires_at TIMESTAMP, subject TEXT, predicate TEXT, object TEXT, tags TEXT[] NOT NULL,
        session_id TEXT, evidence TEXT, status_reason TEXT, believed_until TIMESTAMP,
        prior_status TEXT, corroborations INTEGER NOT NULL, sources TEXT[] NOT NULL,
        last_stated TIMESTAMP, claim_subject TEXT, claim_predicate TEXT
    );
    CREATE INDEX IF NOT EXISTS hg_fact_claim
        ON hg_fact (claim_subject, claim_predicate, scope, created_at, id) WHERE claim_subject IS NOT NULL;
    CREATE INDEX IF NOT EXISTS hg_fact_session ON hg_fact (scope, session_id, created_at, id)
        WHERE session_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS hg_fact_created ON hg_fact (created_at, id);
    CREATE TABLE IF NOT EXISTS hg_entity (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL, type TEXT NOT NULL,
        aliases TEXT[] NOT NULL, summary TEXT NOT NULL, mention_count INTEGER NOT NULL,
        first_seen TIMESTAMP, last_mentioned TIMESTAMP, scope TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS hg_entity_key (
        seq BIGSERIAL PRIMARY KEY, scope TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL,
        UNIQUE (scope, key, id)
    );
    CREATE INDEX IF NOT EXISTS hg_entity_key_id ON hg_entity_key (id);
    CREATE TABLE IF NOT EXISTS hg_entity_first (
        scope TEXT NOT NULL, first TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (scope, first, id)
    );
    CREATE INDEX IF NOT EXISTS hg_entity_first_id ON hg_entity_first (id);
    """,
    """
    CREATE TABLE IF NOT EXISTS hg_about (
        seq BIGSERIAL, fact TEXT NOT NULL, entity TEXT NOT NULL, role TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL, PRIMARY KEY (fact, entity, role)
    );
    CREATE INDEX IF NOT EXISTS hg_about_entity ON hg_about (entity, created_at DESC, fact DESC);
    CREATE TABLE IF NOT EXISTS hg_link (
        seq BIGSERIAL PRIMARY KEY, type TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
        created_at TIMESTAMP, props JSONB NOT NULL
    );
    CREATE INDEX IF NOT EXISTS hg_link_src ON hg_link (src, type);
    CREATE INDEX IF NOT EXISTS hg_link_dst ON hg_link (dst, type);
    CREATE TABLE IF NOT EXISTS hg_relates (
        seq BIGSERIAL PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL, predicate TEXT,
        weight DOUBLE PRECISION, fact_id TEXT, created_at TIMESTAMP
    );
    CREATE INDEX IF NOT EXISTS hg_relates_src ON hg_relates (src);
    CREATE INDEX IF NOT EXISTS hg_relates_dst ON hg_relates (dst);
    CREATE TABLE IF NOT EXISTS hg_tag (
        seq BIGSERIAL, fact TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (fact, tag)
    );
    CREATE INDEX IF NOT EXISTS hg_tag_tag ON hg_tag (tag);
    """,
    """
    CREATE TABLE IF NOT EXISTS hg_receipt (
        id TEXT PRIMARY KEY, operation TEXT NOT NULL, at TIMESTAMPTZ NOT NULL
    );
    CREATE INDEX IF NOT EXISTS hg_receipt_at ON hg_receipt (at);
    CREATE TABLE IF NOT EXISTS hg_reply (id TEXT PRIMARY KEY, result TEXT NOT NULL, at TIMESTAMPTZ NOT NULL);
    CREATE INDEX IF NOT EXISTS hg_reply_at ON hg_reply (at);
    """,
    # A session's latest turn is the one committed last (the writer lock orders commits), which
    # a turn created earlier by a slower writer is not: facts keep the order they were written.
    """
    ALTER TABLE hg_fact ADD COLUMN IF NOT EXISTS seq BIGSERIAL;
    CREATE INDEX IF NOT EXISTS hg_fact_session_seq ON hg_fact (scope, session_id, seq)
        WHERE session_id IS NOT NULL;
    """,
    # ANALYZE copies sample values of each column (most common values, histograms) into
    # pg_statistic, a catalog no purge can rewrite: what a user said stays out of it.
    no_value_statistics(r"hg\_%"),
    # A tag's newest facts walked in index order (PgGraphView.tag_neighbours).
    """
    CREATE INDEX IF NOT EXISTS hg_tag_tag_seq ON hg_tag (tag, seq DESC);
    DROP INDEX IF EXISTS hg_tag_tag;
    """,
    # The tags that start with a prefix (`trigger:`, read by every search) as a range of the index
    # in byte order, whatever the database's collation (PgGraphView.tagged).
    'CREATE INDEX IF NOT EXISTS hg_tag_bytes ON hg_tag ((tag COLLATE "C"));',
    own_value_statistics(r"hg\_%"),
    # The scopes that hold anything, walked in these from one scope to the next (PgGraphView.scopes).
    """
    CREATE INDEX IF NOT EXISTS hg_fact_scope ON hg_fact (scope);
    CREATE INDEX IF NOT EXISTS hg_entity_scope ON hg_entity (scope);
    """,
    # Each term's most in one row, for full text's bounds (pg_text.ranked).
    pg_text.MOST_FILLED,
    # The facts of a time range (a search "these days") found by their time, not by reading every
    # row (~75 ms at 94k facts when none is that recent); tables made later get it with them.
    f"""
    DO $$ BEGIN
    IF to_regclass('hg_vec_facts') IS NOT NULL THEN {VECTOR_FACTS_TIME}; END IF;
    END $$;
    """,
    NEIGHBOURS,
)
SCHEMA_VERSION = len(MIGRATIONS)
# The advisory lock the schema's steps run under (any bigint the database's other users do not
# take): "hg" and the schema's name in ASCII.
_SCHEMA_LOCK = 0x6867_5F73_6368_656D
_VERSION_KEY = "schema_version"


def _driver() -> tuple[Any, Any]:
    """psycopg and psycopg_pool, or a StoreError saying how to get them."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as err:
        missing = f"a PostgreSQL store needs the driver ({err.name} is missing)"
        raise StoreError(f'{missing}: pip install "hippograph[postgres]"') from err
    return psycopg, psycopg_pool


def _where(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}" if "@" in rest else url


class PgDatabase:
    """A pool of connections to one memory's database, its schema made current at open."""

    def __init__(self, url: str, *, max_connections: int = 4, timeout_s: float = 10.0) -> None:
        psycopg, psycopg_pool = _driver()
        self._errors = psycopg.Error
        self._idle = psycopg.pq.TransactionStatus.IDLE
        self.where = _where(url)
        self._url, self._connect, self._timeout_s = url, psycopg.connect, timeout_s
        self._claims: Any = None  # the connection every claim (``claiming``) is held on
        self._claims_lock = threading.Lock()
        self._pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=max_connections, timeout=timeout_s, open=False
        )
        try:
            # One connection first: a database that refuses it fails now, not after the pool's retries.
            psycopg.connect(url, connect_timeout=max(1, int(timeout_s))).close()
            self._pool.open(wait=True, timeout=timeout_s)
            self._migrate()
        except (psycopg_pool.PoolTimeout, psycopg.Error) as err:
            self._pool.close()
            raise StoreError(f"could not open the PostgreSQL store at {self.where}: {err}") from err

    def _failed(self, err: Exception) -> StoreError:
        """A database failure, as a StoreError naming the database (never its password)."""
        return StoreError(f"the PostgreSQL store at {self.where} failed: {err}")

    def close(self) -> None:
        with self._claims_lock:
            if self._claims is not None:
                self._claims.close()
                self._claims = None
        self._pool.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A connection of the pool in one transaction (committed at the end, rolled back on an
        error); a database failure becomes a StoreError naming the database."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                yield conn
        except self._errors as err:
            raise self._failed(err) from err

    @contextmanager
    def statement(self) -> Iterator[Any]:
        """A connection of the pool for statements that are each a transaction of their own
        (autocommit): a single read costs one round trip, not three (BEGIN, the read, COMMIT)."""
        try:
            with self._pool.connection() as conn:
                conn.autocommit = True
                try:
                    yield conn
                finally:
                    # A broken connection cannot be set back (the pool discards it); setting it
                    # would replace the error that broke it.
                    if conn.info.transaction_status == self._idle:
                        conn.autocommit = False
        except self._errors as err:
            raise self._failed(err) from err

    @contextmanager
    def holding(self, key: int) -> Iterator[None]:
        """Hold the advisory lock ``key`` (waiting for any other holder, on any server) on a
        connection of its own until the block ends. For a lock one thread of a process takes
        at a time (the writer's); ``claiming`` is for one that many threads hold at once."""
        with self.statement() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    @contextmanager
    def claiming(self, key: int) -> Iterator[None]:
        """Hold the advisory lock ``key`` until the block ends, waiting for a holder on another
        server: for locks a process holds many of at once (one per write in flight). All of them
        live on one connection outside the pool, so a write waiting for its claim holds no
        connection the writes ahead of it need (each on a pooled connection, four writes in
        flight took the whole pool, and the one holding the writer's lock failed for want of a
        connection to write with). The caller serialises claims of one key within the process."""
        while not self._on_claims("SELECT pg_try_advisory_lock(%s)", key):
            time.sleep(_CLAIM_POLL_S)
        try:
            yield
        finally:
            try:
                self._on_claims("SELECT pg_advisory_unlock(%s)", key)
            except StoreError as err:  # the connection is gone, and the claim with it
                log.warning("could not let go of a request's lock: %s", err)

    def _on_claims(self, query: str, key: int) -> bool:
        """Run a one-value advisory lock function on the claims' connection (made at first use,
        and again after a failure, which lets go of every claim it held)."""
        with self._claims_lock:
            try:
                if self._claims is None:
                    self._claims = self._connect(
                        self._url, autocommit=True, connect_timeout=max(1, int(self._timeout_s))
                    )
                return bool(self._claims.execute(query, (key,)).fetchone()[0])
            except self._errors as err:
                if self._claims is not None:
                    self._claims.close()
                self._claims = None
                raise self._failed(err) from err

    def vacuum_full(self, tables: Sequence[str]) -> None:
        """Rewrite ``tables`` without their dead row versions (after a purge: no deleted text is
        left in their files). Outside any transaction, as VACUUM must run."""
        with self.statement() as conn:
            for table in tables:
                conn.execute(f"VACUUM FULL {table}")

    def schema_version(self) -> int:
        with self.transaction() as conn:
            return _version(conn)

    def _migrate(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            found = _version(conn)
            if found > SCHEMA_VERSION:
                raise StoreError(
                    f"the PostgreSQL store at {self.where} has schema version {found}, newer than this "
                    f"hippograph's {SCHEMA_VERSION}: upgrade hippograph"
                )
            for step in range(found, SCHEMA_VERSION):
                conn.execute(MIGRATIONS[step])
                log.debug("PostgreSQL store at %s: schema version %d", self.where, step + 1)
            if found < SCHEMA_VERSION:
                conn.execute(
                    "INSERT INTO hg_meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = %s",
                    (_VERSION_KEY, str(SCHEMA_VERSION), str(SCHEMA_VERSION)),
                )


def _version(conn: Any) -> int:
    """The schema version the database holds (0: none yet)."""
    if conn.execute("SELECT to_regclass('hg_meta')").fetchone()[0] is None:
        return 0
    row = conn.execute("SELECT value FROM hg_meta WHERE key = %s", (_VERSION_KEY,)).fetchone()
    return int(row[0]) if row else 0
