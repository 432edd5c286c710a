"""The vector and text index in the memory's PostgreSQL database: ``hg_vec_facts`` and
``hg_vec_entities``, the rows ``vector_rows`` describes, with pgvector's half-precision vectors
and a full-text column, searched under the same filters as the embedded LanceDB index.

The tables' vector width is the model's, so they are made at open, not by a schema step:
``hg_meta`` records the model and width they were made for, and a store opened for another
model finds them made afresh (``rebuilt``: reconcile refills them from the graph), as the
embedded index does. Writes go straight to the database (no write-behind buffer: every server
reads what any server wrote). Vector search is exact until ``ensure_vector_index`` has built an
HNSW index; with one, a filtered search scans on (``hnsw.iterative_scan``) until it has its k
rows. Full text is ranked by BM25 over the embedded index's terms (``pg_text``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from hippograph.domain.errors import InternalError, StoreError
from hippograph.store import pg_text
from hippograph.store.fact_times import READ, FactTimes, aligned, from_rows
from hippograph.store.pg_database import VECTOR_FACTS_TIME, PgDatabase, no_value_statistics
from hippograph.store.vector_neighbours import Neighbours, nearest, quantised
from hippograph.store.vector_rows import Filter, Hit, as_stored, cosines_of, ranked, unit

_TABLES = {"facts": "hg_vec_facts", "entities": "hg_vec_entities"}
_STATE = {"facts": "status", "entities": "type"}  # what ids() reports of each row
_COLUMNS = {
    "facts": (
        "id TEXT PRIMARY KEY, text TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, "
        "scope TEXT NOT NULL, session_id TEXT, tags TEXT[] NOT NULL, entity_ids TEXT[] NOT NULL, "
        "created_at TIMESTAMPTZ NOT NULL, event_time TIMESTAMPTZ, time TIMESTAMPTZ NOT NULL"
    ),
    "entities": "id TEXT PRIMARY KEY, text TEXT NOT NULL, type TEXT NOT NULL, scope TEXT NOT NULL",
}
_FIELDS = {
    "facts": (
        "id", "text", "kind", "status", "scope", "session_id", "tags", "entity_ids", "created_at",
        "event_time", "time",
    ),
    "entities": ("id", "text", "type", "scope"),
}  # fmt: skip
_MODEL_KEY = "vectors_model"
_LAYOUT = "bm25 terms"  # tables made before the text was kept as terms are made afresh
_TABLES_LOCK = 0x6867_5F76_6563_7473  # "hg_vects": made or made afresh by one server at a time
_ANN_MIN_ROWS = 5_000  # as the embedded index: below, an exact scan is a few ms
_EF_SEARCH = 100
_EF_SEARCH_MAX = 1000  # pgvector's bound; past it the iterative scan goes on until k rows are found
# Vectors travel as arrays of reals (no type adapter to register on each connection): cast here.
_HALFVEC = "%s::real[]::halfvec"


# pgvector's first version with halfvec (0.7) and hnsw.iterative_scan (0.8).
PGVECTOR_LEAST = (0, 8, 0)


def new_enough(version: str) -> bool:
    """Whether pgvector ``version`` ("0.8.1", "0.10.0") is PGVECTOR_LEAST or newer."""
    parts = tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:3])
    return parts + (0,) * (3 - len(parts)) >= PGVECTOR_LEAST


class PgVectorStore:
    """The index of facts' and entities' vectors and text in the memory's database."""

    def __init__(self, db: PgDatabase, *, dim: int, model: str) -> None:
        self._db, self._dim = db, dim
        self.write_failed = False  # writes are not buffered: a failed one raises to its caller
        self.fold_wanted = threading.Event()  # never set: PostgreSQL keeps its indexes current
        self.refilling: set[str] = set()
        self.rebuilt: set[str] = set()
        made_for = f"{model} ({dim}), {_LAYOUT}"
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_TABLES_LOCK,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            (version,) = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            if not new_enough(version):
                raise StoreError(
                    f"the PostgreSQL store at {db.where} has pgvector {version}; hippograph needs "
                    f"{'.'.join(map(str, PGVECTOR_LEAST))} or newer (half-precision vectors, filtered "
                    "HNSW scans): ALTER EXTENSION vector UPDATE, after installing a newer pgvector"
                )
            row = conn.execute("SELECT value FROM hg_meta WHERE key = %s", (_MODEL_KEY,)).fetchone()
            if row is None or row[0] != made_for:  # hg_vec_terms came with _LAYOUT: made here
                conn.execute(pg_text.SCHEMA)
                conn.execute(no_value_statistics("hg_vec_terms"))
                for name in _TABLES:
                    self._make(conn, name)
                conn.execute(
                    "INSERT INTO hg_meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = %s",
                    (_MODEL_KEY, made_for, made_for),
                )
                self.rebuilt = set(_TABLES) if row is not None else set()

    def _make(self, conn: Any, name: str) -> None:
        table = _TABLES[name]
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(
            f"CREATE TABLE {table} ({_COLUMNS[name]}, vector halfvec({self._dim}) NOT NULL, "
            "terms TEXT[] NOT NULL)"
        )
        conn.execute(f"CREATE INDEX {table}_terms ON {table} USING gin (terms)")
        conn.execute(no_value_statistics(table))
        pg_text.forget_counts(conn, table)
        conn.execute(f"CREATE INDEX {table}_scope ON {table} (scope)")
        if name == "facts":
            conn.execute(VECTOR_FACTS_TIME)

    def close(self) -> None:
        """Nothing of its own to close: the database is the memory's."""

    # ------------------------------------------------------------ writes

    def add(self, table: str, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        """Write rows (a row of an id already there replaces it)."""
        if not rows:
            return
        fields, name = _FIELDS[table], _TABLES[table]
        terms = [pg_text.terms(str(row["text"])) for row in rows]
        values = [
            (*(_value(row.get(f)) for f in fields), _array(v), t)
            for row, v, t in zip(rows, vectors, terms, strict=True)
        ]
        updates = ", ".join(f"{f} = excluded.{f}" for f in (*fields[1:], "vector", "terms"))
        marks = ", ".join(["%s"] * len(fields) + [_HALFVEC, "%s"])
        with self._db.transaction() as conn, conn.cursor() as cur:
            replaced = cur.execute(
                f"SELECT terms FROM {name} WHERE id = ANY(%s)", ([row["id"] for row in rows],)
            ).fetchall()
            pg_text.count(conn, name, [r[0] for r in replaced], -1)
            cur.executemany(
                f"INSERT INTO {name} ({', '.join(fields)}, vector, terms) VALUES ({marks}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                values,
            )
            pg_text.count(conn, name, terms, 1)

    def set_status(self, ids: Sequence[str], status: str) -> None:
        self.update("facts", ids, {"status": status})

    def update(self, table: str, ids: Sequence[str], values: Mapping[str, Any]) -> None:
        if not ids or not values:
            return
        unknown = set(values) - set(_FIELDS[table][2:])  # not the id, nor the text (``add``)
        if unknown:
            raise InternalError(f"no such column of the {table} index: {sorted(unknown)}")
        sets = ", ".join(f"{column} = %s" for column in values)
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE {_TABLES[table]} SET {sets} WHERE id = ANY(%s)",
                (*(_value(v) for v in values.values()), list(ids)),
            )

    def delete(self, table: str, ids: Sequence[str]) -> None:
        if ids:
            name = _TABLES[table]
            with self._db.transaction() as conn:
                gone = conn.execute(f"DELETE FROM {name} WHERE id = ANY(%s) RETURNING terms", (list(ids),))
                pg_text.count(conn, name, [r[0] for r in gone.fetchall()], -1)

    def erase(self, facts: Sequence[str], entities: Sequence[str]) -> None:
        """Delete rows so that nothing of them is left in the tables' files (a purge): the rows go,
        then both tables are rewritten (VACUUM FULL), so no dead row version keeps their text."""
        self.delete("facts", facts)
        self.delete("entities", entities)
        self._db.vacuum_full([*_TABLES.values(), "hg_vec_terms"])

    def flush(self) -> None:
        """Nothing is buffered: every write is in the database when it returns."""

    def optimize(self, *, closing: bool = False, when_due: bool = False) -> bool:
        """Nothing to fold: PostgreSQL keeps its indexes current with every write."""
        return False

    def ensure_vector_index(self, table: str = "facts", min_rows: int = _ANN_MIN_ROWS) -> bool:
        """Build the HNSW index once the table has ``min_rows``; True if one was built now."""
        name = _TABLES[table]
        with self._db.transaction() as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"{name}_hnsw",)).fetchone()[0] is not None:
                return False
            if self._count(conn, name) < min_rows:
                return False
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {name}_hnsw ON {name} USING hnsw (vector halfvec_cosine_ops)"
            )
            # The planner weighs the index against reading the rows by how many the filter keeps.
            conn.execute(f"ANALYZE {name}")
        return True

    def damaged(self) -> dict[str, str]:
        """None: the database keeps its own files whole (and says so when it cannot)."""
        return {}

    def rebuild(self, names: Iterable[str]) -> None:
        """Create these tables afresh, empty, for reconcile to fill (then clear ``refilling``)."""
        with self._db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_TABLES_LOCK,))
            for name in names:
                self._make(conn, name)
                self.rebuilt.add(name)
                self.refilling.add(name)

    # ------------------------------------------------------------ reads

    def ids(self, table: str) -> dict[str, str]:
        """id -> status (facts) or type (entities), for reconciliation with the graph."""
        with self._db.transaction() as conn:
            rows = conn.execute(f"SELECT id, {_STATE[table]} FROM {_TABLES[table]}").fetchall()
        return {str(rid): str(state) for rid, state in rows}

    def count(self, table: str) -> int:
        with self._db.transaction() as conn:
            return self._count(conn, _TABLES[table])

    @staticmethod
    def _count(conn: Any, name: str) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0])

    def versions(self) -> str:
        """What the index holds, to compare at the next open: its row counts (the database is
        shared, so another server's writes change it between a close and an open)."""
        return f"facts={self.count('facts')} entities={self.count('entities')}"

    def similarities(self, table: str, ids: Sequence[str], vector: np.ndarray) -> dict[str, float]:
        """Cosine similarity of ``vector`` to each of these rows (ids not indexed are left out)."""
        if not ids:
            return {}
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT id, vector::real[] FROM {_TABLES[table]} WHERE id = ANY(%s)", (list(ids),)
            ).fetchall()
        if not rows:
            return {}
        sims = cosines_of(np.stack([_floats(v) for _, v in rows]), vector)
        return {str(rid): float(sim) for (rid, _), sim in zip(rows, sims, strict=True)}

    def vector_search(self, table: str, vector: np.ndarray, k: int, where: Filter | None = None) -> list[Hit]:
        rows = self._nearest_rows(table, vector, k, where, with_vectors=False)
        return [Hit(str(rid), 1.0 - float(distance), rank) for rank, (rid, distance) in enumerate(rows, 1)]

    def nearest(self, table: str, vectors: np.ndarray, k: int, where: Filter) -> list[list[Hit]]:
        """For each of ``vectors``, the ``k`` rows nearest it, with their exact cosine similarity
        to the stored (half-precision) vectors."""
        if not len(vectors):
            return []
        queries = np.stack([unit(v) for v in vectors])
        ids: list[str] = []
        stored: list[np.ndarray] = []
        asking: list[int] = []
        for q, query in enumerate(queries):
            for rid, _, vector in self._nearest_rows(table, query, k, where, with_vectors=True):
                ids.append(str(rid))
                stored.append(as_stored(_floats(vector)))
                asking.append(q)
        return ranked(queries, ids, stored, asking, k)

    def _nearest_rows(
        self, table: str, vector: np.ndarray, k: int, where: Filter | None, *, with_vectors: bool
    ) -> list[Any]:
        """(id, cosine distance[, the stored vector as reals]) of the ``k`` rows nearest ``vector``
        (the vectors only when asked: reading them back costs more than the search)."""
        clause, params = _where(where)
        stored = ", vector::real[]" if with_vectors else ""
        with self._db.transaction() as conn:
            conn.execute(
                "SET LOCAL hnsw.iterative_scan = relaxed_order; "
                f"SET LOCAL hnsw.ef_search = {min(_EF_SEARCH_MAX, max(_EF_SEARCH, k))}"
            )
            return list(
                conn.execute(
                    f"SELECT id, vector <=> {_HALFVEC} AS distance{stored} FROM {_TABLES[table]} "
                    f"{clause} ORDER BY distance LIMIT %s",
                    (_array(unit(vector)), *params, k),
                ).fetchall()
            )

    def start_text_search(
        self, table: str, text: str, k: int, where: Filter | None = None
    ) -> Callable[[], list[Hit]]:
        """``text_search``, run when the call returned is (the server's round trip is no cheaper
        begun early from another thread)."""
        return functools.partial(self.text_search, table, text, k, where)

    def text_search(self, table: str, text: str, k: int, where: Filter | None = None) -> list[Hit]:
        """The ``k`` rows whose text best matches ``text``'s terms, by BM25 (``pg_text``)."""
        terms = pg_text.terms(text)
        if not terms:
            return []
        clause, params = _where(where, pg_text.CANDIDATES)
        with self._db.transaction() as conn:
            rows = pg_text.ranked(conn, _TABLES[table], clause, params, terms, k)
        return [Hit(str(rid), float(score), rank) for rank, (rid, score) in enumerate(rows, 1)]

    def neighbours(self, table: str, where: Filter, k: int) -> Neighbours:
        """Each row ``where`` admits, and its ``k`` nearest others among them by cosine: what
        topics are found from (``vector_neighbours``)."""
        clause, params = _where(where)
        ids: list[str] = []
        parts: list[np.ndarray] = []
        with self._db.transaction() as conn, conn.cursor(name="hg_neighbours") as cur:
            cur.execute(f"SELECT id, vector::real[] FROM {_TABLES[table]} {clause} ORDER BY id", params)
            while batch := cur.fetchmany(4096):
                ids += [str(rid) for rid, _ in batch]
                parts.append(quantised(np.stack([_floats(v) for _, v in batch])))
        units = np.concatenate(parts) if parts else np.empty((0, self._dim), dtype=np.int8)
        return nearest(ids, units, k)

    def fact_times(self, table: str, where: Filter, ids: Sequence[str]) -> FactTimes:
        """When each of ``ids`` happened and was stored, and its session (``store.fact_times``),
        read a batch at a time."""
        clause, params = _where(where)
        parts: list[pa.Table] = []
        with self._db.transaction() as conn, conn.cursor(name="hg_fact_times") as cur:
            cur.execute(f"SELECT {', '.join(READ)} FROM {_TABLES[table]} {clause}", params)
            while batch := cur.fetchmany(4096):
                parts.append(from_rows(batch))
        return aligned(pa.concat_tables(parts) if parts else from_rows([]), ids)


def _value(value: Any) -> Any:
    """A row's value as the database takes it: times in UTC."""
    return value.astimezone(UTC) if isinstance(value, datetime) else value


def _floats(vector: Any) -> np.ndarray:
    """A stored vector, read as ``real[]``, as float32."""
    return np.asarray(vector, dtype=np.float32)


def _array(vector: Any) -> list[float]:
    """A vector as the database takes it: a ``real[]`` (cast to ``halfvec``: ``_HALFVEC``)."""
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


def _where(where: Filter | None, *more: str) -> tuple[str, list[Any]]:
    """``where`` as a WHERE clause with parameters (and ``more`` conditions)."""
    clauses: list[str] = list(more)
    params: list[Any] = []
    if where is not None:
        for column, values in (("status", where.statuses), ("scope", where.scopes), ("kind", where.kinds)):
            if values is not None:
                clauses.append(f"{column} = ANY(%s)")
                params.append(list(values))
        for column, values in (("tags", where.tags_any), ("entity_ids", where.entity_ids_any)):
            if values is not None:
                clauses.append(f"{column} && %s::text[]")
                params.append(list(values))
        if where.ids is not None:
            clauses.append("id = ANY(%s)")
            params.append(list(where.ids))
        if where.after is not None:
            clauses.append("time >= %s")
            params.append(where.after.astimezone(UTC))
        if where.before is not None:
            clauses.append("time < %s")
            params.append(where.before.astimezone(UTC))
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params
