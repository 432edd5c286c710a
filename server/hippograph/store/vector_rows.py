"""What the vector index holds and how candidate search filters it: rows, filters, hits, vectors.

Every filter is built from validated values (``_sql_literal``, ``id_list``): ids are ours, and
anything else in a filter is a bug or an attack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from hippograph.domain import bitemporal
from hippograph.domain.errors import InternalError
from hippograph.domain.models import Fact

# Ids are ours (prefix + hex); anything else in a filter is a bug or an attack.
_ID = re.compile(r"^[a-z]_[0-9a-f]{16}$")


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def id_list(ids: Iterable[str]) -> str:
    checked = []
    for value in ids:
        if not _ID.match(value):
            raise InternalError(f"not a hippograph id: {value!r}")
        checked.append(_sql_literal(value))
    return "(" + ", ".join(checked) + ")"


def unit(vector: Any) -> np.ndarray:
    """A query vector as ``nearest`` compares it: float32, unit length."""
    query = np.asarray(vector, dtype=np.float32)
    return query / (np.linalg.norm(query) or 1.0)


def cosines(rows: Any, vector: Any) -> dict[str, float]:
    """id -> cosine similarity of ``vector`` to each row's vector (an Arrow table of id, vector;
    empty while a damaged table is being refilled)."""
    ids = rows.column("id").to_pylist()
    if not ids:
        return {}
    stored = np.asarray(rows.column("vector").to_pylist(), dtype=np.float32).reshape(len(ids), -1)
    return dict(zip(ids, map(float, cosines_of(stored, vector)), strict=True))


def cosines_of(stored: np.ndarray, vector: Any) -> np.ndarray:
    """The cosine similarity of ``vector`` to each row of ``stored`` (0 for a zero row)."""
    norms = np.linalg.norm(stored, axis=1)
    sims: np.ndarray = stored @ unit(vector) / np.where(norms > 0, norms, 1.0)
    return sims


def as_stored(vector: Any) -> np.ndarray:
    """A vector as the index holds it (half precision), as float32 for arithmetic."""
    return np.asarray(vector, dtype=np.float16).astype(np.float32)


@dataclass(frozen=True)
class Hit:
    id: str
    score: float  # cosine similarity for vectors, BM25 for full text
    rank: int  # 1-based


def ranked(
    queries: np.ndarray, ids: Sequence[str], stored: Sequence[np.ndarray], asking: Sequence[int], k: int
) -> list[list[Hit]]:
    """For each query (a row of unit vectors), its ``k`` candidates of highest cosine: the
    candidate ``ids`` with their ``stored`` vectors, each proposed for the query numbered in
    ``asking`` (-1: for every query)."""
    sims = queries @ np.stack(stored).T if len(stored) else np.empty((len(queries), 0))
    hits = []
    for q, row in enumerate(sims):
        best = {fid: float(sim) for fid, sim, who in zip(ids, row, asking, strict=True) if who in (q, -1)}
        scored = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        hits.append([Hit(fid, sim, rank) for rank, (fid, sim) in enumerate(scored, 1)])
    return hits


def _sql_time(value: datetime) -> str:
    return f"timestamp '{value.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f')}'"


@dataclass(frozen=True)
class Filter:
    """What candidate search may return; None means no restriction.

    ``after``/``before`` bound a fact's time (``bitemporal.fact_time``: event_time if known,
    else created_at), half-open: after <= time < before.
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

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a row as :func:`fact_row` builds it passes this filter (as ``sql()`` would)."""
        for column, values in (("status", self.statuses), ("scope", self.scopes), ("kind", self.kinds)):
            if values is not None and row[column] not in values:
                return False
        for column, values in (("tags", self.tags_any), ("entity_ids", self.entity_ids_any)):
            if values is not None and not set(values) & set(row[column]):
                return False
        if self.ids is not None and row["id"] not in self.ids:
            return False
        if self.after is not None and row["time"] < self.after:
            return False
        return self.before is None or row["time"] < self.before


def fact_row(fact: Fact, entity_ids: Sequence[str], text: str | None = None) -> dict[str, Any]:
    """A fact's row in the facts table (``text``: what is indexed, if not its content)."""
    return {
        "id": fact.id,
        "text": text or fact.content,
        "kind": fact.kind.value,
        "status": fact.status.value,
        "scope": fact.scope,
        "session_id": fact.session_id,
        "tags": list(fact.tags),
        "entity_ids": list(entity_ids),
        "created_at": fact.created_at,
        "event_time": fact.event_time,
        "time": bitemporal.fact_time(fact),
    }
