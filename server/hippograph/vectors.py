"""LanceDB adapter: the only module that speaks Lance.

LanceDB holds, per fact and per entity, the text, its vector and the few columns that
candidate search filters on. It is an index over Kùzu and can always be rebuilt from it:
a table written by another schema version or another embedding model is dropped and
rebuilt at start. Every filter is built from validated values (``_sql_literal``).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree, LabelList

from hippograph.schema import lance_table_spec

log = logging.getLogger(__name__)

_TABLES = ("facts", "entities")
_META_KEY = b"hippograph"
_ARROW_TYPES = {
    "string": pa.string(),
    "string_list": pa.list_(pa.string()),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
# Ids are ours (prefix + hex); anything else in a filter is a bug or an attack.
_ID = re.compile(r"^[a-z]_[0-9a-f]{16}$")
# Compact the fragments small appends leave behind once this many accumulate.
_OPTIMIZE_EVERY = 200
# Below this many rows an exact scan is fast enough; above it, an ANN index pays off.
ANN_MIN_ROWS = 20_000
_KEEP_VERSIONS = timedelta(minutes=1)
_NPROBES = 20
_REFINE = 4
# Scalar indexes named in graph_schema/lance/*.json ("index" on a field). Without them a
# filtered query scans the filter columns: at 100k facts the status/scope prefilter cost
# 8-10 ms of a 20 ms vector query; with bitmaps it costs ~2 ms. Built in well under 1 s.
_SCALAR_INDEXES = {"btree": BTree, "bitmap": Bitmap, "label_list": LabelList}


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def id_list(ids: Iterable[str]) -> str:
    checked = []
    for value in ids:
        if not _ID.match(value):
            raise ValueError(f"not a hippograph id: {value!r}")
        checked.append(_sql_literal(value))
    return "(" + ", ".join(checked) + ")"


@dataclass(frozen=True)
class Hit:
    id: str
    score: float  # cosine similarity for vectors, BM25 for full text
    rank: int  # 1-based


def _sql_time(value: datetime) -> str:
    return f"timestamp '{value.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f')}'"


@dataclass(frozen=True)
class Filter:
    """What candidate search may return; None means no restriction.

    ``after``/``before`` bound a fact's time (event_time if known, else created_at),
    half-open: after <= time < before.
    """

    statuses: Sequence[str] | None = None
    scopes: Sequence[str] | None = None
    kinds: Sequence[str] | None = None
    tags_any: Sequence[str] | None = None
    entity_ids_any: Sequence[str] | None = None
    ids: Sequence[str] | None = None
    after: datetime | None = None
    before: datetime | None = None

    def sql(self) -> str | None:
        clauses = []
        for column, values in (("status", self.statuses), ("scope", self.scopes), ("kind", self.kinds)):
            if values is not None:
                clauses.append(f"{column} IN ({', '.join(_sql_literal(v) for v in values)})")
        for column, values in (("tags", self.tags_any), ("entity_ids", self.entity_ids_any)):
            if values is not None:
                clauses.append(f"array_has_any({column}, [{', '.join(_sql_literal(v) for v in values)}])")
        if self.ids is not None:
            clauses.append(f"id IN {id_list(self.ids)}")
        if self.after is not None:
            clauses.append(f"time >= {_sql_time(self.after)}")
        if self.before is not None:
            clauses.append(f"time < {_sql_time(self.before)}")
        return " AND ".join(clauses) or None


def _arrow_schema(table: str, dim: int, model: str) -> pa.Schema:
    spec = lance_table_spec(table)
    fields = []
    for field in spec["fields"]:
        kind = pa.list_(pa.float32(), dim) if field["type"] == "vector" else _ARROW_TYPES[field["type"]]
        fields.append(pa.field(field["name"], kind, nullable=field["nullable"]))
    meta = {"version": spec["version"], "model": model, "dim": dim}
    return pa.schema(fields, metadata={_META_KEY: json.dumps(meta).encode()})


class VectorStore:
    def __init__(self, path: Path, *, dim: int, model: str) -> None:
        self._db = lancedb.connect(str(path))
        self._dim = dim
        self._lock = threading.Lock()
        self._pending_fragments = 0
        self.rebuilt: set[str] = set()
        self._tables = {name: self._open(name, model) for name in _TABLES}
        for name, table in self._tables.items():
            self._ensure_scalar_indexes(name, table)

    def _open(self, name: str, model: str) -> Any:
        schema = _arrow_schema(name, self._dim, model)
        if name in self._db.list_tables().tables:
            table = self._db.open_table(name)
            if (table.schema.metadata or {}).get(_META_KEY) == schema.metadata[_META_KEY]:
                return table
            log.warning("LanceDB table %r was built for another schema or model: rebuilding it", name)
            self._db.drop_table(name)
            self.rebuilt.add(name)
        table = self._db.create_table(name, schema=schema)
        table.create_index("text", config=FTS())
        return table

    def _ensure_scalar_indexes(self, name: str, table: Any) -> None:
        """Create the scalar indexes the schema asks for that the table lacks (older stores)."""
        have = {column for index in table.list_indices() for column in index.columns}
        for field in lance_table_spec(name)["fields"]:
            kind = field.get("index")
            if kind and field["name"] not in have:
                table.create_index(field["name"], config=_SCALAR_INDEXES[kind]())

    # ------------------------------------------------------------ writes

    def add(self, table: str, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        if not rows:
            return
        records = []
        for row, vector in zip(rows, vectors, strict=True):
            record = dict(row)
            record["vector"] = vector.astype(np.float32)
            for key in ("created_at", "event_time", "time"):
                if isinstance(record.get(key), datetime):
                    record[key] = record[key].astimezone(UTC)
            records.append(record)
        with self._lock:
            self._tables[table].add(records)
            self._pending_fragments += 1
            if self._pending_fragments >= _OPTIMIZE_EVERY:
                self._optimize_locked()

    def set_status(self, ids: Sequence[str], status: str) -> None:
        self.update("facts", ids, {"status": status})

    def update(self, table: str, ids: Sequence[str], values: Mapping[str, Any]) -> None:
        if not ids:
            return
        with self._lock:
            self._tables[table].update(where=f"id IN {id_list(ids)}", values=dict(values))

    def delete(self, table: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self._lock:
            self._tables[table].delete(f"id IN {id_list(ids)}")

    def has_vector_index(self, table: str) -> bool:
        return any("vector" in idx.columns for idx in self._tables[table].list_indices())

    def ensure_vector_index(self, table: str = "facts", min_rows: int = ANN_MIN_ROWS) -> bool:
        """Build an IVF-HNSW index once the table is large; True if one was built now.

        Runs without the write lock: Lance commits the index beside concurrent appends, and
        rows added meanwhile are searched exactly until the next optimize folds them in.
        """
        if self.has_vector_index(table) or self.count(table) < min_rows:
            return False
        self._tables[table].create_index(
            metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ", replace=False
        )
        return True

    def optimize(self, *, closing: bool = False) -> None:
        with self._lock:
            self._optimize_locked(keep=timedelta(seconds=1) if closing else _KEEP_VERSIONS)

    def _optimize_locked(self, keep: timedelta = _KEEP_VERSIONS) -> None:
        for table in self._tables.values():
            # Every append is a Lance version; only this process reads them, so old ones go
            # (kept a minute while serving, so a search in flight never loses its files).
            table.optimize(cleanup_older_than=keep)
        self._pending_fragments = 0

    # ------------------------------------------------------------ reads

    def ids(self, table: str) -> dict[str, str]:
        """id -> status (facts) or type (entities), for reconciliation with the graph."""
        column = "status" if table == "facts" else "type"
        data = self._tables[table].search().select(["id", column]).limit(None).to_arrow()
        return dict(zip(data.column("id").to_pylist(), data.column(column).to_pylist(), strict=True))

    def vector_search(self, table: str, vector: np.ndarray, k: int, where: Filter | None = None) -> list[Hit]:
        query = self._tables[table].search(vector.astype(np.float32)).distance_type("cosine").limit(k)
        # With the ANN index: probe more partitions and re-rank with exact vectors, since
        # scalar quantisation alone reorders close neighbours.
        query = query.nprobes(_NPROBES).refine_factor(_REFINE)
        clause = where.sql() if where else None
        if clause:
            query = query.where(clause, prefilter=True)
        rows = query.select(["id", "_distance"]).to_list()
        return [Hit(r["id"], 1.0 - float(r["_distance"]), i) for i, r in enumerate(rows, 1)]

    def text_search(self, table: str, text: str, k: int, where: Filter | None = None) -> list[Hit]:
        if not text.strip():
            return []
        query = self._tables[table].search(text, query_type="fts").limit(k)
        clause = where.sql() if where else None
        if clause:
            query = query.where(clause, prefilter=True)
        rows = query.select(["id", "_score"]).to_list()
        return [Hit(r["id"], float(r["_score"]), i) for i, r in enumerate(rows, 1)]

    def filter_ids(self, table: str, where: Filter) -> list[Hit]:
        """Rows matching ``where`` (no ranking: score 0, rank in storage order)."""
        clause = where.sql()
        query = self._tables[table].search()
        if clause:
            query = query.where(clause)
        limit = len(where.ids) if where.ids is not None else None
        rows = query.select(["id"]).limit(limit).to_list()
        return [Hit(r["id"], 0.0, i) for i, r in enumerate(rows, 1)]

    def count(self, table: str) -> int:
        return int(self._tables[table].count_rows())
