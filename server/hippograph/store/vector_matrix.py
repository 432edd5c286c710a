"""A small table's vectors searched exactly in memory with numpy (``Matrix``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hippograph.store.lance_queries import scan
from hippograph.store.vector_rows import Hit


class Matrix:
    """A small table's ids, scopes and unit vectors, searched exactly (cosine) with numpy.

    Immutable: a write builds a new one, so a search never sees half of a write.
    """

    def __init__(self, ids: list[str], scopes: list[str], vectors: np.ndarray) -> None:
        self.ids = ids
        self.scopes = np.asarray(scopes, dtype=object)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True) if len(vectors) else None
        self.unit = vectors / np.where(norms == 0, 1.0, norms) if norms is not None else vectors

    @classmethod
    def read(cls, table: Any, dim: int, buffered: Mapping[str, Mapping[str, Any]]) -> Matrix:
        """The table's rows, and the ``buffered`` ones (id -> row) not yet written to it."""
        data = scan(table, None, ["id", "scope", "vector"])
        vectors = np.asarray(data.column("vector").combine_chunks().flatten(), dtype=np.float32)
        ids = data.column("id").to_pylist()
        matrix = cls(ids, data.column("scope").to_pylist(), vectors.reshape(-1, dim))
        read = set(ids)
        rows = [r for eid, r in buffered.items() if eid not in read]
        if not rows:
            return matrix
        more = [str(r["id"]) for r in rows], [str(r["scope"]) for r in rows]
        return matrix.added(*more, np.stack([r["vector"] for r in rows]))

    def __len__(self) -> int:
        return len(self.ids)

    def added(self, ids: list[str], scopes: list[str], vectors: np.ndarray) -> Matrix:
        both = np.vstack([self.unit, np.asarray(vectors, dtype=np.float32)])
        return Matrix([*self.ids, *ids], [*self.scopes.tolist(), *scopes], both)

    def without(self, ids: set[str]) -> Matrix:
        keep = [i for i, eid in enumerate(self.ids) if eid not in ids]
        return Matrix([self.ids[i] for i in keep], self.scopes[keep].tolist(), self.unit[keep])

    def search(self, vector: np.ndarray, k: int, scopes: Sequence[str] | None) -> list[Hit]:
        if not self.ids:
            return []
        sims = self.unit @ (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
        if scopes is not None:
            sims = np.where(np.isin(self.scopes, list(scopes)), sims, -np.inf)
        top = np.argsort(-sims, kind="stable")[:k]
        return [Hit(self.ids[i], float(sims[i]), r) for r, i in enumerate(top, 1) if np.isfinite(sims[i])]
