"""The vectors a LanceDB store holds in numpy while they fit their share of the memory budget.

A LanceDB query costs ~3-5 ms whatever the table's size (10 ms of a 31 ms remember at 6k facts,
2026-11-29), numpy ~0.1-0.3 ms on a few thousand rows. Two tables are held:

- the entities (``Matrix``, unit vectors): ``vector_search`` by name;
- the facts (``FactRows``, the vectors as the index stores them, with scope and status):
  ``nearest``, which finds a remember's similar facts, and ``vector_search`` under a filter on
  scope and status only (a search's vector channel), exactly (LanceDB proposes candidates from
  its ANN index, which may miss one).

Each is read from the table on first use and kept in step by the store's writes, under the
store's buffer lock; past its row limit it is dropped and LanceDB answers. A quarter of the
share goes to the entities, the rest to the facts (float32: 1.5 KB a fact at 384 dimensions,
so ~8k facts at the default budget).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hippograph.store.lance_queries import scan
from hippograph.store.vector_matrix import Matrix
from hippograph.store.vector_rows import Filter, Hit, as_stored, cosines_of, unit

_CAPACITY = 1024  # rows a FactRows makes room for at first; it doubles as it fills
# The columns each held table keeps of a row (besides its id): an update of other ones changes nothing.
_HELD_COLUMNS = {
    "entities": frozenset({"scope", "vector"}),
    "facts": frozenset({"scope", "status", "vector"}),
}


class FactRows:
    """Facts' ids, scopes, statuses and stored vectors; rows are appended in place into spare
    room, so a remember copies one row. A reader takes ``_view`` once: a write never changes
    the rows a view covers except a status (which a read racing that write may see either way).

    Scopes and statuses are held as numbers (``_codes``, never reused): a filter is then one
    lookup per row, where comparing strings cost more than the similarities."""

    def __init__(self, dim: int) -> None:
        self._vectors = np.empty((_CAPACITY, dim), dtype=np.float32)
        self._scopes = np.empty(_CAPACITY, dtype=np.int32)
        self._statuses = np.empty(_CAPACITY, dtype=np.int32)
        self._codes: dict[str, int] = {}
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._view: tuple[int, list[str], np.ndarray, np.ndarray, np.ndarray] = (0, [], *self._arrays())

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._vectors, self._scopes, self._statuses

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, rows: Iterable[Mapping[str, Any]], vectors: Iterable[Any]) -> None:
        for row, vector in zip(rows, vectors, strict=True):
            fid = str(row["id"])
            at = self._row.get(fid)
            if at is None:
                at = len(self._ids)
                if at == len(self._vectors):
                    self._grow()
                self._ids.append(fid)
                self._row[fid] = at
            self._vectors[at] = as_stored(vector)
            self._scopes[at], self._statuses[at] = (
                self._code(str(row["scope"])),
                self._code(str(row["status"])),
            )
        self._view = (len(self._ids), self._ids, *self._arrays())

    def _code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes))

    def _admitted(self, codes: np.ndarray, values: Sequence[str]) -> np.ndarray:
        """Which of ``codes`` stand for one of ``values``."""
        lookup = np.zeros(len(self._codes) + 1, dtype=bool)  # codes only grow: the view's are below
        lookup[[self._codes[v] for v in values if v in self._codes]] = True
        admitted: np.ndarray = lookup[codes]
        return admitted

    def _grow(self) -> None:
        size = 2 * len(self._vectors)
        vectors = np.empty((size, self._vectors.shape[1]), dtype=np.float32)
        scopes, statuses = np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int32)
        n = len(self._ids)
        vectors[:n], scopes[:n], statuses[:n] = self._vectors[:n], self._scopes[:n], self._statuses[:n]
        self._vectors, self._scopes, self._statuses = vectors, scopes, statuses

    def restate(self, ids: Iterable[str], status: str) -> None:
        for fid in ids:
            at = self._row.get(fid)
            if at is not None:
                self._statuses[at] = self._code(status)

    def nearest(
        self, queries: np.ndarray, k: int, scopes: Sequence[str] | None, statuses: Sequence[str] | None
    ) -> list[list[Hit]]:
        """For each query (unit, float32), the ``k`` admitted rows of highest cosine with their
        stored vector, ties by id (as ``vector_rows.ranked``)."""
        n, ids, vectors, row_scopes, row_statuses = self._view
        sims = queries @ vectors[:n].T
        keep = np.ones(n, dtype=bool)
        if scopes is not None:
            keep &= self._admitted(row_scopes[:n], scopes)
        if statuses is not None:
            keep &= self._admitted(row_statuses[:n], statuses)
        sims[:, ~keep] = -np.inf
        hits = []
        for row in sims:
            cut = np.partition(row, -k)[-k] if n > k else -np.inf
            found = [(float(row[i]), ids[i]) for i in np.flatnonzero((row >= cut) & keep)]
            found.sort(key=lambda pair: (-pair[0], pair[1]))
            hits.append([Hit(fid, sim, rank) for rank, (sim, fid) in enumerate(found[:k], 1)])
        return hits

    def similarities(self, ids: Sequence[str], vector: np.ndarray) -> dict[str, float]:
        """id -> cosine of ``vector`` with each of ``ids`` held (as ``vector_rows.cosines``)."""
        n, _, vectors, _, _ = self._view
        rows = {fid: at for fid in ids if (at := self._row.get(fid)) is not None and at < n}
        sims = cosines_of(vectors[list(rows.values())], vector)
        return dict(zip(rows, map(float, sims), strict=True))

    @classmethod
    def read(cls, table: Any, dim: int, buffered: Mapping[str, Mapping[str, Any]]) -> FactRows:
        """The table's rows, then the ``buffered`` ones (id -> row) not yet written to it."""
        data = scan(table, None, ["id", "scope", "status", "vector"])
        held = cls(dim)
        vectors = np.asarray(data.column("vector").combine_chunks().flatten(), dtype=np.float32)
        ids, scopes, statuses = (data.column(name).to_pylist() for name in ("id", "scope", "status"))
        held._extend(ids, scopes, statuses, vectors.reshape(-1, dim))
        held.add(buffered.values(), (r["vector"] for r in buffered.values()))
        return held

    def _extend(self, ids: list[str], scopes: list[str], statuses: list[str], vectors: np.ndarray) -> None:
        """Rows read from the table (stored vectors, ids not held yet) in one step: row by row,
        6k facts took ~45 ms of a first search or remember."""
        start, end = len(self._ids), len(self._ids) + len(ids)
        while len(self._vectors) < end:
            self._grow()
        self._vectors[start:end] = vectors
        self._scopes[start:end] = [self._code(scope) for scope in scopes]
        self._statuses[start:end] = [self._code(status) for status in statuses]
        self._row.update(zip(ids, range(start, end), strict=True))
        self._ids.extend(ids)
        self._view = (len(self._ids), self._ids, *self._arrays())


class HeldVectors:
    """The entities' ``Matrix`` and the facts' ``FactRows`` of one store; the caller locks."""

    def __init__(self, budget_bytes: int, dim: int) -> None:
        self._dim = dim
        row_bytes = 4 * dim
        self._limit = {
            "entities": budget_bytes // 4 // row_bytes,
            "facts": budget_bytes * 3 // 4 // row_bytes,
        }
        self._held: dict[str, Any] = {}  # table -> Matrix / FactRows, or None: too many rows

    def known(self, table: str) -> bool:
        """Whether ``table`` was read (held, or found too large) since it was last forgotten."""
        return table in self._held

    def held(self, table: str) -> Matrix | FactRows | None:
        """The table held; None when it is too large or was forgotten since ``known``."""
        held: Matrix | FactRows | None = self._held.get(table)
        return held

    def get(
        self,
        table: str,
        source: Any,
        buffered: Mapping[str, Mapping[str, Any]],
        statuses: Mapping[str, str],
    ) -> Matrix | FactRows | None:
        """The table held, read now if not yet from ``source`` (its LanceDB table), its
        ``buffered`` rows and the ``statuses`` set on written facts but not yet written; None
        when it has more rows than its limit."""
        if table not in self._held:
            if source.count_rows() + len(buffered) > self._limit[table]:
                self._held[table] = None
            elif table == "entities":
                self._held[table] = Matrix.read(source, self._dim, buffered)
            else:
                facts = self._held[table] = FactRows.read(source, self._dim, buffered)
                for fid, status in statuses.items():
                    facts.restate([fid], status)
        return self.held(table)

    def added(self, table: str, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        held = self._held.get(table)
        if held is None:
            return
        if table == "entities":
            more = [str(r["id"]) for r in rows], [str(r["scope"]) for r in rows]
            held = self._held[table] = held.added(*more, np.asarray(vectors, dtype=np.float32))
        else:
            held.add(rows, vectors)
        if len(held) > self._limit[table]:
            self._held[table] = None

    def updated(self, table: str, ids: Iterable[str], values: Mapping[str, Any]) -> None:
        """After an update of ``values`` on rows: a status is set in place, a changed vector or
        scope drops the table (read again on next use), other columns change nothing held."""
        touched = _HELD_COLUMNS[table] & set(values)
        if touched == {"status"}:
            self.restated(ids, values["status"])
        elif touched:
            self.forget(table)

    def restated(self, ids: Iterable[str], status: str) -> None:
        if (facts := self._held.get("facts")) is not None:
            facts.restate(ids, status)

    def deleted(self, table: str, ids: Iterable[str]) -> None:
        if table == "entities" and (held := self._held.get(table)) is not None:
            self._held[table] = held.without(set(ids))
        else:
            self.forget(table)

    def forget(self, *tables: str) -> None:
        """Drop what is held of ``tables`` (all without): read again on next use."""
        for table in tables or list(self._held):
            self._held.pop(table, None)


def held_search(
    held: Matrix | FactRows | None, vector: np.ndarray, k: int, where: Filter | None
) -> list[Hit] | None:
    """A vector search's ``k`` best rows from a held table, exactly, or None where LanceDB must
    answer: no table held, or a filter on more than scope (entities) or scope and status (facts).
    ~0.3 ms at 6k facts where a LanceDB query for a search's 120 candidates took ~8 (2026-11-30)."""
    scopes, statuses = (where.scopes, where.statuses) if where else (None, None)
    if where is not None and where != Filter(statuses=statuses, scopes=scopes):
        return None
    if isinstance(held, Matrix) and statuses is None:
        return held.search(vector, k, scopes)
    if isinstance(held, FactRows):
        return held.nearest(unit(vector)[None], k, scopes, statuses)[0]
    return None
